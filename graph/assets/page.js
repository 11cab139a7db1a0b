// planlineage lineage page: draws the graph Python laid out (view.py's data), only what is in view.
// All event text goes through textContent / createTextNode: never innerHTML.
(function () {
  "use strict";
  const SVGNS = "http://www.w3.org/2000/svg";
  const HEIGHT = 34;
  const ROW = 46, TOP = 40, GROUP_GAP = 26, LAYER_GAP = 90; // layout.py's: a filtered view is laid out alike
  const DETAIL_MAX = 1500; // more nodes in view than this: drawn as an overview (shapes, no names)
  const MIN_K = 0.005, MAX_K = 4, FIT_MAX_K = 1.25, PAD = 30;
  const POLL_MS = 2000;
  const body = document.body;
  const svg = document.getElementById("graph");
  const viewport = document.getElementById("viewport");
  const canvas = document.getElementById("canvas");
  const panel = document.getElementById("details");
  const layer = {};
  ["overview", "groups", "edges", "nodes", "collapsed", "columns"].forEach((n) => { layer[n] = document.getElementById(n); });
  const modeHint = document.getElementById("mode");
  const search = document.getElementById("search");
  const jobFilter = document.getElementById("job-filter");
  const depthBox = document.getElementById("depth");

  let data = null;
  const byId = new Map();
  const groupById = new Map();
  let out = new Map(), inc = new Map();
  let view = { x: 0, y: 0, k: 1 };
  let shown = null; // Set of node ids passing the job filter and depth, or null: all
  let hits = null; // Set of ids matching the search, or null
  let version = 0; // bumped whenever the data or what is shown changes
  let focus = new Set(); // the filtered job's own nodes and the selection: drawn with names even in the overview
  let selected = null;
  let column = null; // {id, name}: the selected dataset column
  let columnView = null; // {cols: Map id -> Set(column), edges: [[srcId, srcCol, dstId, dstCol, how]]}
  const collapsed = new Set();
  const drawnNodes = new Map();
  const drawnEdges = new Map();
  let token = null;
  let etag = null;
  let around = null; // a large estate's part asked of `planlineage ui` (a node id), or null: its first picture
  let refit = false;
  let pollNow = null; // asks the server at once (the served page) // the next data is another part: fit it
  // what is drawn: the whole layout, or (job filter, depth) the nodes shown laid out on their own
  let scene = { nodes: [], byId, edges: [], groups: [] };

  // -- helpers ----------------------------------------------------------------------------------
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function sv(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, v));
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const push = (map, k, v) => { if (!map.has(k)) map.set(k, []); map.get(k).push(v); };

  // -- data -------------------------------------------------------------------------------------
  function load(next) {
    const first = data === null;
    data = next;
    byId.clear(); groupById.clear();
    out = new Map(); inc = new Map();
    data.nodes.forEach((n) => byId.set(n.id, n));
    data.groups.forEach((g) => groupById.set(g.id, g));
    data.edges.forEach((e) => { push(out, e[0], e[1]); push(inc, e[1], e[0]); });
    document.getElementById("counts").textContent = data.counts;
    document.getElementById("focus").textContent = data.focus ? data.focus.text : "";
    const list = document.getElementById("job-names");
    list.replaceChildren(...data.jobs.map((j) => { const o = document.createElement("option"); o.value = j; return o; }));
    const nsList = document.getElementById("ns-list");
    nsList.replaceChildren(...data.namespaces.map((ns) => {
      const label = el("label");
      const box = el("input");
      box.type = "checkbox"; box.className = "collapse-ns"; box.value = ns; box.checked = collapsed.has(ns);
      box.addEventListener("change", () => { if (box.checked) collapsed.add(ns); else collapsed.delete(ns); version++; writeHash(); draw(); });
      label.append(box, document.createTextNode(" " + ns));
      return label;
    }));
    drawnNodes.forEach((g) => g.remove()); drawnNodes.clear();
    drawnEdges.forEach((p) => p.remove()); drawnEdges.clear();
    if (selected && !byId.has(selected) && !groupById.has(selected)) selected = null;
    if (column && !byId.has(column.id)) column = null;
    computeShown();
    computeColumns();
    if (first || refit) fit(); else draw();
    refit = false;
    if (selected && !first) showDetails(selected);
  }

  // -- view: pan, zoom, fit ---------------------------------------------------------------------
  function size() { return { w: canvas.clientWidth, h: canvas.clientHeight }; }
  function boundsOf(ids) {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    ids.forEach((id) => {
      const n = scene.byId.get(id);
      if (!n) return;
      x0 = Math.min(x0, n.x); y0 = Math.min(y0, n.y - (n.group ? 24 : 0));
      x1 = Math.max(x1, n.x + n.w); y1 = Math.max(y1, n.y + HEIGHT + (column ? 14 : 0));
    });
    return x0 === Infinity ? null : { x0, y0, x1, y1 };
  }
  function fitTo(ids) {
    const b = boundsOf(ids);
    if (!b) { draw(); return; }
    const { w, h } = size();
    const k = Math.max(MIN_K, Math.min(FIT_MAX_K, (w - 2 * PAD) / (b.x1 - b.x0), (h - 2 * PAD) / (b.y1 - b.y0)));
    view = { k, x: (w - (b.x1 - b.x0) * k) / 2 - b.x0 * k, y: (h - (b.y1 - b.y0) * k) / 2 - b.y0 * k };
    draw();
  }
  // the visible subgraph centred and scaled: the search's hits, else what the filters show
  function fit() {
    if (hits && hits.size) fitTo(hits);
    else fitTo(shown || data.nodes.map((n) => n.id));
  }
  function zoomAt(factor, cx, cy) {
    const k = Math.max(MIN_K, Math.min(MAX_K, view.k * factor));
    view = { k, x: cx - (cx - view.x) * (k / view.k), y: cy - (cy - view.y) * (k / view.k) };
    schedule();
  }
  let pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  }
  svg.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = svg.getBoundingClientRect();
    zoomAt(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y, moved: false, id: ev.pointerId };
  });
  svg.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    if (!drag.moved) { drag.moved = true; svg.setPointerCapture(drag.id); svg.classList.add("panning"); }
    view.x = drag.vx + dx; view.y = drag.vy + dy;
    schedule();
  });
  function endDrag(ev) {
    if (!drag) return;
    const moved = drag.moved;
    if (moved) { svg.releasePointerCapture(drag.id); svg.classList.remove("panning"); }
    drag = null;
    if (!moved && ev.type === "pointerup") {
      const g = ev.target.closest && ev.target.closest("g.node, g.col-chip");
      if (g && g.classList.contains("col-chip")) return;
      if (g) select(g.dataset.id);
    }
  }
  svg.addEventListener("pointerup", endDrag);
  svg.addEventListener("pointercancel", endDrag);
  const center = () => { const { w, h } = size(); return [w / 2, h / 2]; };
  document.getElementById("zoom-in").addEventListener("click", () => zoomAt(1.4, ...center()));
  document.getElementById("zoom-out").addEventListener("click", () => zoomAt(1 / 1.4, ...center()));
  document.getElementById("fit").addEventListener("click", fit);
  new ResizeObserver(() => { if (data) schedule(); }).observe(canvas);

  // -- drawing ----------------------------------------------------------------------------------
  function isShown(id) { return shown === null || shown.has(id); }
  function folded(n) { return n.kind === "dataset" && collapsed.has(n.ns); }
  function nodeClasses(n) {
    const c = ["node", n.kind];
    if (n.state) c.push("state-" + n.state);
    if (n.split) c.push("split");
    if (n.id === selected) c.push("selected");
    if (hits) c.push(hits.has(n.id) ? "hit" : "dim");
    if (columnView && columnView.cols.has(n.id)) c.push("col-lit");
    return c.join(" ");
  }
  function makeNode(n) {
    const g = sv("g", { id: n.id, tabindex: "0" });
    g.dataset.id = n.id; g.dataset.kind = n.kind; g.dataset.ns = n.ns;
    g.append(
      sv("rect", { x: n.x, y: n.y, width: n.w, height: HEIGHT, rx: n.kind === "job" ? 4 : 12 }),
      sv("text", { x: n.x + 12, y: n.y + 15, class: "name" }, n.label),
      sv("text", { x: n.x + 12, y: n.y + 28, class: "sub" }, n.sub),
      sv("title", {}, n.name + "\n" + n.ns + (n.state ? "\nlast run: " + n.state : "") + (n.error ? "\n" + n.error : "")),
    );
    return g;
  }
  function draw() {
    if (!data) return;
    viewport.setAttribute("transform", `translate(${view.x},${view.y}) scale(${view.k})`);
    const { w, h } = size();
    const m = 60 / view.k;
    const gx0 = -view.x / view.k - m, gy0 = -view.y / view.k - m;
    const gx1 = (w - view.x) / view.k + m, gy1 = (h - view.y) / view.k + m;
    const inView = (x0, y0, x1, y1) => x1 >= gx0 && x0 <= gx1 && y1 >= gy0 && y0 <= gy1;
    const visibleNodes = [];
    scene.nodes.forEach((n) => {
      if (isShown(n.id) && !folded(n) && inView(n.x, n.y, n.x + n.w, n.y + HEIGHT)) visibleNodes.push(n);
    });
    if (visibleNodes.length > DETAIL_MAX) { drawOverview(visibleNodes, inView); return; }
    svg.dataset.mode = "detail";
    if (overviewVersion !== -1) { layer.overview.replaceChildren(); overviewVersion = -1; }
    modeHint.textContent = "";
    const want = new Set(visibleNodes.map((n) => n.id));
    drawnNodes.forEach((g, id) => { if (!want.has(id)) { g.remove(); drawnNodes.delete(id); } });
    visibleNodes.forEach((n) => {
      let g = drawnNodes.get(n.id);
      if (!g) { g = makeNode(n); drawnNodes.set(n.id, g); layer.nodes.appendChild(g); }
      g.setAttribute("class", nodeClasses(n));
    });
    const agg = drawCollapsed(inView);
    const wantEdges = new Set();
    scene.edges.forEach((e, i) => {
      if (!isShown(e[0]) || !isShown(e[1])) return;
      const a = scene.byId.get(e[0]), b = scene.byId.get(e[1]);
      if (folded(a) || folded(b)) return;
      const bb = e[3];
      if (inView(bb[0], bb[1], bb[2], bb[3])) wantEdges.add(i);
    });
    drawnEdges.forEach((p, i) => { if (!wantEdges.has(i)) { p.remove(); drawnEdges.delete(i); } });
    wantEdges.forEach((i) => {
      let p = drawnEdges.get(i);
      const e = scene.edges[i];
      if (!p) {
        p = sv("path", { d: e[2], "marker-end": "url(#arrow)" });
        p.dataset.a = e[0]; p.dataset.b = e[1];
        drawnEdges.set(i, p); layer.edges.appendChild(p);
      }
      p.setAttribute("class", "edge" + (hits ? " dim" : ""));
    });
    agg.edges.forEach((d) => layer.collapsed.prepend(sv("path", { class: "edge", d, "marker-end": "url(#arrow)" })));
    layer.groups.replaceChildren();
    scene.groups.forEach((grp) => {
      if (!grp.children.some((c) => isShown(c))) return;
      if (!grp.boxes.some(([x, y, bw, bh]) => inView(x, y, x + bw, y + bh))) return;
      const g = sv("g", { id: grp.id, class: "group node" + (grp.id === selected ? " selected" : "") });
      g.dataset.id = grp.id; g.dataset.kind = "group"; g.dataset.children = grp.children.join(" ");
      grp.boxes.forEach(([x, y, bw, bh]) => g.appendChild(sv("rect", { x, y, width: bw, height: bh, rx: 8 })));
      const [x, y] = grp.boxes[0];
      g.appendChild(sv("text", { x: x + 8, y: y + 15, class: "name" }, grp.name));
      g.appendChild(sv("title", {}, "STATEMENT SET " + grp.name + ": " + grp.children.length + " job(s)"));
      layer.groups.appendChild(g);
    });
    drawColumns();
  }
  // The overview holds every shown node and edge (not only those in view): built once per change of
  // the data or the filters, so panning and zooming it only moves the transform.
  let overviewVersion = -1;
  function drawOverview(visibleNodes, inView) {
    svg.dataset.mode = "overview";
    drawnNodes.forEach((g) => g.remove()); drawnNodes.clear();
    drawnEdges.forEach((p) => p.remove()); drawnEdges.clear();
    layer.groups.replaceChildren(); layer.collapsed.replaceChildren(); layer.columns.replaceChildren();
    if (overviewVersion !== version) {
      overviewVersion = version;
      const paths = new Map();
      scene.nodes.forEach((n) => {
        if (!isShown(n.id) || folded(n)) return;
        let cls = "node " + n.kind + (n.state ? " state-" + n.state : "") + (n.split ? " split" : "");
        if (hits) cls += hits.has(n.id) ? " hit" : " dim";
        if (!paths.has(cls)) paths.set(cls, []);
        paths.get(cls).push(`M${n.x},${n.y}h${n.w}v${HEIGHT}h${-n.w}z`);
      });
      const edgeParts = [];
      scene.edges.forEach((e) => { if (isShown(e[0]) && isShown(e[1])) edgeParts.push(e[2]); });
      const parts = [sv("path", { class: "edge overview-edge", d: edgeParts.join(" ") })];
      paths.forEach((d, cls) => { const g = sv("g", { class: cls }); g.appendChild(sv("path", { d: d.join(" ") })); parts.push(g); });
      layer.overview.replaceChildren(...parts);
    }
    let named = 0;
    const namedIds = [...focus, ...(hits ? Array.from(hits).slice(0, 200) : [])];
    namedIds.forEach((id) => {
      const n = scene.byId.get(id);
      if (!n || drawnNodes.has(id) || !isShown(id) || !inView(n.x, n.y, n.x + n.w, n.y + HEIGHT)) return;
      const g = makeNode(n);
      g.setAttribute("class", nodeClasses(n));
      drawnNodes.set(id, g); layer.nodes.appendChild(g); named++;
    });
    svg.dataset.named = String(named);
    modeHint.textContent = visibleNodes.length + " nodes in view: zoom in, filter or search to read their names";
  }
  function drawCollapsed(inView) {
    layer.collapsed.replaceChildren();
    const result = { edges: [] };
    if (!collapsed.size) return result;
    const buckets = new Map();
    scene.nodes.forEach((n) => {
      if (!folded(n) || !isShown(n.id)) return;
      push(buckets, n.ns + "\u0000" + n.layer, n);
    });
    const rep = new Map();
    const boxes = new Map();
    let i = 0;
    buckets.forEach((members, key) => {
      const ns = key.split("\u0000")[0];
      const box = { x: Math.min(...members.map((b) => b.x)), y: Math.min(...members.map((b) => b.y)), w: Math.max(...members.map((b) => b.w)) };
      const id = "agg" + i++;
      members.forEach((m) => rep.set(m.id, id));
      boxes.set(id, box);
      if (!inView(box.x, box.y, box.x + box.w, box.y + HEIGHT)) return;
      const g = sv("g", { id, class: "node agg" });
      g.dataset.id = id; g.dataset.kind = "agg"; g.dataset.ns = ns; g.dataset.members = members.map((m) => m.id).join(" ");
      g.append(
        sv("rect", { x: box.x, y: box.y, width: box.w, height: HEIGHT, rx: 12 }),
        sv("text", { x: box.x + 12, y: box.y + 15, class: "name" }, ns),
        sv("text", { x: box.x + 12, y: box.y + 28, class: "sub" }, members.length + " dataset(s)"),
      );
      layer.collapsed.appendChild(g);
    });
    const seen = new Set();
    scene.edges.forEach((e) => {
      if (!rep.has(e[0]) && !rep.has(e[1])) return;
      if (!isShown(e[0]) || !isShown(e[1])) return;
      const a = rep.get(e[0]) || e[0], b = rep.get(e[1]) || e[1];
      if (seen.has(a + " " + b)) return;
      seen.add(a + " " + b);
      const p = boxes.get(a) || scene.byId.get(a), q = boxes.get(b) || scene.byId.get(b);
      const x1 = p.x + p.w, y1 = p.y + HEIGHT / 2, x2 = q.x, y2 = q.y + HEIGHT / 2;
      const bend = Math.max(40, (x2 - x1) / 2);
      result.edges.push(`M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`);
    });
    return result;
  }

  // -- column lineage ---------------------------------------------------------------------------
  function computeColumns() {
    columnView = null;
    if (!column) return;
    const cols = new Map();
    const edges = [];
    const addCol = (id, c) => { if (!cols.has(id)) cols.set(id, new Set()); cols.get(id).add(c); };
    addCol(column.id, column.name);
    const todo = [[column.id, column.name]];
    const seen = new Set([column.id + "\u0000" + column.name]);
    const external = [];
    // the same table under another spelling (a doctor's split): the job that wrote it may have
    // named it so, and its column lineage is there; the walk goes on through every spelling
    const spellings = (id) => {
      const d = data.details[id];
      return [id, ...((d && d.split && d.split.others) || []).map((o) => o.id).filter((o) => o && byId.has(o))];
    };
    while (todo.length) {
      const [id, c] = todo.pop();
      const rows = [];
      spellings(id).forEach((same) => {
        const own = (data.columns[same] || {})[c];
        if (same !== id && (own || (byId.get(same).columns || []).includes(c))) addCol(same, c);
        (own || []).forEach((row) => rows.push(row));
      });
      rows.forEach(([src, ns, name, field, how]) => {
        if (!src) { external.push([ns, name, field, how, id, c]); return; }
        addCol(src, field);
        edges.push([src, field, id, c, how]);
        const k = src + "\u0000" + field;
        if (!seen.has(k)) { seen.add(k); todo.push([src, field]); }
      });
    }
    columnView = { cols, edges, external };
  }
  function drawColumns() {
    layer.columns.replaceChildren();
    if (!columnView) return;
    columnView.edges.forEach(([src, sc, dst, dc, how]) => {
      const a = scene.byId.get(src), b = scene.byId.get(dst);
      if (!a || !b || !isShown(src) || !isShown(dst)) return;
      const x1 = a.x + a.w, y1 = a.y + HEIGHT + 7, x2 = b.x, y2 = b.y + HEIGHT + 7;
      const bend = Math.max(40, Math.abs(x2 - x1) / 2);
      const p = sv("path", { class: "col-edge", d: `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`, "marker-end": "url(#arrow)" });
      p.dataset.from = src + "." + sc; p.dataset.to = dst + "." + dc;
      layer.columns.appendChild(p);
      if (how) {
        const t = sv("text", { class: "col-how", x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 3, "text-anchor": "middle" }, how);
        t.dataset.from = src + "." + sc; t.dataset.to = dst + "." + dc;
        layer.columns.appendChild(t);
      }
    });
    columnView.cols.forEach((names, id) => {
      const n = scene.byId.get(id);
      if (!n || !isShown(id)) return;
      let x = n.x + 8;
      Array.from(names).forEach((c) => {
        const mine = id === column.id && c === column.name;
        const g = sv("g", { class: "col-chip" + (mine ? " col-selected" : " col-hit") });
        g.dataset.id = id; g.dataset.column = c;
        const w = Math.max(24, c.length * 6.2 + 10);
        g.append(sv("rect", { x, y: n.y + HEIGHT + 1, width: w, height: 12, rx: 3 }), sv("text", { x: x + 5, y: n.y + HEIGHT + 10.5 }, c));
        layer.columns.appendChild(g);
        x += w + 4;
      });
    });
  }
  function selectColumn(id, name) {
    column = { id, name };
    computeColumns();
    fitTo(Array.from(columnView.cols.keys()));
    showDetails(selected);
    writeHash();
  }

  // -- filters: job, depth around the selection, search -----------------------------------------
  function reach(starts, map, limit) {
    const seen = new Set(starts);
    let frontier = Array.from(starts);
    for (let hop = 0; frontier.length && (limit === 0 || hop < limit); hop++) {
      const next = [];
      frontier.forEach((id) => (map.get(id) || []).forEach((n) => { if (!seen.has(n)) { seen.add(n); next.push(n); } }));
      frontier = next;
    }
    return seen;
  }
  function startsOf(id) {
    const g = groupById.get(id);
    return g ? new Set(g.children) : new Set([id]);
  }
  function jobStarts(name) {
    const starts = new Set();
    data.nodes.forEach((n) => { if (n.kind === "job" && (n.name === name || n.name.startsWith(name + "."))) starts.add(n.id); });
    data.groups.forEach((g) => { if (g.name === name) g.children.forEach((c) => starts.add(c)); });
    return starts;
  }
  function computeShown() {
    version++;
    shown = null;
    focus = new Set(selected && byId.has(selected) ? [selected] : []);
    const name = jobFilter.value.trim();
    jobFilter.classList.remove("invalid");
    jobFilter.title = "";
    if (name) {
      const starts = jobStarts(name);
      starts.forEach((id) => focus.add(id));
      const elsewhere = !starts.size && indexed((row) => row[1] === "job" && row[3] === name);
      if (starts.size) shown = new Set([...reach(starts, out, 0), ...reach(starts, inc, 0)]);
      else if (elsewhere.length && api && around !== elsewhere[0][0]) goAround(elsewhere[0][0]);
      else if (elsewhere.length) { jobFilter.classList.add("invalid"); jobFilter.title = "not in this page: planlineage graph --job " + name + " draws it"; }
      else { jobFilter.classList.add("invalid"); jobFilter.title = "no job of that name"; }
    }
    const depth = +depthBox.value;
    if (depth > 0 && selected) {
      const starts = startsOf(selected);
      const near = new Set([...reach(starts, out, depth), ...reach(starts, inc, depth)]);
      shown = shown === null ? near : new Set([...near].filter((id) => shown.has(id)));
    }
    const q = search.value.trim().toLowerCase();
    hits = null;
    if (q) {
      hits = new Set();
      data.nodes.forEach((n) => {
        if (isShown(n.id) && (n.name.toLowerCase().includes(q) || n.ns.toLowerCase().includes(q))) hits.add(n.id);
      });
    }
    showElsewhere(q);
    buildScene();
  }
  // -- a large estate: the page holds a part of it; the search looks through the index of all --------
  function indexed(test) { return (data.index || []).filter((row) => !byId.has(row[0]) && test(row)); }
  const found = document.getElementById("found");
  function showElsewhere(q) {
    found.replaceChildren();
    const rows = q ? indexed((row) => row[3].toLowerCase().includes(q) || row[2].toLowerCase().includes(q)) : [];
    found.hidden = !rows.length;
    if (!rows.length) return;
    found.appendChild(el("div", rows.length + " more match(es) outside this picture" + (api ? ": pick one to draw its part" : ""), "hint"));
    const list = el("ul");
    rows.slice(0, 40).forEach(([id, kind, ns, name]) => {
      const li = el("li");
      if (api) {
        const b = el("button", name, "elsewhere");
        b.type = "button"; b.title = kind + " in " + ns; b.dataset.id = id;
        b.addEventListener("click", () => goAround(id));
        li.appendChild(b);
      } else {
        li.appendChild(el("span", name + " — planlineage graph " + (kind === "job" ? "--job " + name : "--namespace " + ns) + " draws it"));
      }
      list.appendChild(li);
    });
    found.appendChild(list);
  }
  function goAround(id) {
    around = id; selected = id; refit = true; etag = null;
    writeHash();
    if (pollNow) pollNow();
  }
  // A filtered view is laid out on its own (whole-graph places left its labels ~7 px high): the
  // layers it uses side by side, each layer's shown nodes stacked in their whole-graph order.
  function buildScene() {
    drawnNodes.forEach((g) => g.remove()); drawnNodes.clear();
    drawnEdges.forEach((p) => p.remove()); drawnEdges.clear();
    if (shown === null) { scene = { nodes: data.nodes, byId, edges: data.edges, groups: data.groups }; return; }
    const layers = new Map();
    data.nodes.forEach((n) => { if (shown.has(n.id)) push(layers, n.layer, n); });
    const nodes = [], placed = new Map();
    let x = 20;
    Array.from(layers.keys()).sort((a, b) => a - b).forEach((l) => {
      const column = layers.get(l).sort((a, b) => a.y - b.y);
      let y = TOP, previous = null, widest = 0;
      column.forEach((n, i) => {
        const group = n.group || null;
        if (i && group !== previous) y += GROUP_GAP;
        const m = Object.assign({}, n, { x, y });
        nodes.push(m); placed.set(n.id, m);
        widest = Math.max(widest, n.w);
        y += ROW; previous = group;
      });
      x += widest + LAYER_GAP;
    });
    const edges = [];
    data.edges.forEach((e) => {
      const a = placed.get(e[0]), b = placed.get(e[1]);
      if (!a || !b) return;
      const x1 = a.x + a.w, y1 = a.y + HEIGHT / 2, x2 = b.x, y2 = b.y + HEIGHT / 2;
      const bend = Math.max(40, Math.abs(x2 - x1) / 2);
      edges.push([e[0], e[1], `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`,
        [Math.min(x1, x2) - bend, Math.min(y1, y2), Math.max(x1, x2) + bend, Math.max(y1, y2)]]);
    });
    const groups = [];
    data.groups.forEach((grp) => {
      const perLayer = new Map();
      grp.children.forEach((c) => { const k = placed.get(c); if (k) push(perLayer, k.x, k); });
      if (!perLayer.size) return;
      const boxes = Array.from(perLayer.values()).map((ks) => {
        const x0 = Math.min(...ks.map((k) => k.x)) - 8, y0 = Math.min(...ks.map((k) => k.y)) - 24;
        const x1 = Math.max(...ks.map((k) => k.x + k.w)) + 8, y1 = Math.max(...ks.map((k) => k.y)) + HEIGHT + 10;
        return [x0, y0, x1 - x0, y1 - y0];
      });
      groups.push(Object.assign({}, grp, { boxes }));
    });
    scene = { nodes, byId: placed, edges, groups };
  }
  function apply() { computeShown(); fit(); writeHash(); }
  search.addEventListener("input", apply);
  jobFilter.addEventListener("change", apply);
  depthBox.addEventListener("change", apply);
  document.getElementById("clear-filter").addEventListener("click", () => { jobFilter.value = ""; apply(); });

  // -- selection and the facets panel -----------------------------------------------------------
  function select(id) {
    selected = id;
    drawnNodes.forEach((g, nid) => g.classList.toggle("selected", nid === id));
    if (+depthBox.value > 0) { computeShown(); fit(); } else draw();
    const agg = document.getElementById(id);
    if (agg && agg.dataset.kind === "agg") showAggregate(agg); else showDetails(id);
    writeHash();
  }
  function table(headers, rows) {
    const t = el("table");
    const head = el("tr");
    headers.forEach((h) => head.appendChild(el("th", h)));
    t.appendChild(head);
    rows.forEach((r) => {
      const tr = el("tr");
      r.forEach((c) => tr.appendChild(c instanceof Node ? (() => { const td = el("td"); td.appendChild(c); return td; })() : el("td", c)));
      t.appendChild(tr);
    });
    return t;
  }
  function section(title, child) { panel.appendChild(el("h3", title)); panel.appendChild(child); }
  function link(text, id) {
    const a = el("a", text);
    a.addEventListener("click", () => { select(id); fitTo([id]); });
    return a;
  }
  function columnButton(id, name) {
    const b = el("button", name, "column-pick" + (column && column.id === id && column.name === name ? " picked" : ""));
    b.type = "button";
    b.title = "show the upstream columns of " + name;
    b.addEventListener("click", () => selectColumn(id, name));
    return b;
  }
  function transformations(list) {
    return (list || []).map((t) => [t.type, t.subtype].filter(Boolean).join("/")).join(", ");
  }
  function showDetails(id) {
    panel.replaceChildren();
    const d = data.details[id];
    if (!d) { panel.appendChild(el("p", "Click a job or dataset to see its facets.", "hint")); return; }
    panel.appendChild(el("h2", d.name));
    panel.appendChild(el("div", (d.kind === "job" ? "job in " : "dataset in ") + d.namespace, "hint"));
    const facets = d.facets || {};
    const node = byId.get(id);
    if (node && node.state) {
      const s = el("div", null, "state state-" + node.state);
      s.appendChild(el("strong", "last run: " + node.state));
      if (node.error) s.appendChild(el("pre", node.error, "error"));
      panel.appendChild(s);
    }
    if (column && columnView && (columnView.cols.has(id) || column.id === id)) {
      const rows = columnView.edges.map(([src, sc, dst, dc, how]) => [byId.get(src).name + " ." + sc, byId.get(dst).name + " ." + dc, how]);
      columnView.external.forEach(([ns, name, field, how, dst, dc]) => rows.push([ns + " " + name + " ." + field, byId.get(dst).name + " ." + dc, how]));
      const box = el("div");
      box.appendChild(el("p", "upstream of " + byId.get(column.id).name + " ." + column.name, "hint"));
      box.appendChild(table(["from", "to", "how"], rows));
      const clear = el("button", "clear column", "column-clear");
      clear.type = "button";
      clear.addEventListener("click", () => { column = null; computeColumns(); draw(); showDetails(selected); writeHash(); });
      box.appendChild(clear);
      section("column lineage shown", box);
    }
    if (d.split) {
      const box = el("div", null, "split-box");
      box.appendChild(el("strong", "Split: "));
      box.appendChild(document.createTextNode(d.split.reason));
      const list = el("ul");
      d.split.others.forEach((o) => {
        const li = el("li");
        li.appendChild(o.id ? link(o.namespace + " " + o.name, o.id) : el("span", o.namespace + " " + o.name));
        list.appendChild(li);
      });
      box.appendChild(list);
      section("same table as", box);
    }
    if (d.children && d.children.length) {
      const list = el("ul");
      d.children.forEach((c) => list.appendChild(el("li", c)));
      section("STATEMENT SET jobs", list);
    }
    if (d.parent) panel.appendChild(el("div", "part of " + d.parent[1], "hint"));
    if (d.runs && d.runs.length) {
      const older = d.runsDropped ? " (the latest " + d.runs.length + "; " + d.runsDropped + " older not kept)" : "";
      section("run states" + older, table(["event", "time", "runId", "error"], d.runs.map((r) => [r.eventType, r.eventTime, r.runId, r.error || ""])));
    }
    if (facets.schema && Array.isArray(facets.schema.fields)) {
      section("schema", table(["column", "type"], facets.schema.fields.map((f) => [d.kind === "dataset" ? columnButton(id, f.name) : f.name, f.type || ""])));
    }
    if (facets.columnLineage && facets.columnLineage.fields) {
      const rows = [];
      Object.entries(facets.columnLineage.fields).forEach(([col, f]) => {
        (f.inputFields || []).forEach((i) => rows.push([col, i.namespace + " " + i.name + " ." + i.field, transformations(i.transformations)]));
      });
      section("column lineage", table(["column", "from", "how"], rows));
    }
    if (facets.sql && facets.sql.query) section("SQL" + (facets.sql.dialect ? " (" + facets.sql.dialect + ")" : ""), el("pre", facets.sql.query));
    if (facets.jobType) {
      section("job type", el("div", [facets.jobType.integration, facets.jobType.processingType, facets.jobType.jobType].filter(Boolean).join(" · ")));
    }
    if (facets.symlinks && Array.isArray(facets.symlinks.identifiers)) {
      section("symlinks", table(["type", "namespace", "name"], facets.symlinks.identifiers.map((s) => [s.type, s.namespace, s.name])));
    }
    if (d.producers && d.producers.length) {
      const list = el("ul");
      d.producers.forEach((p) => list.appendChild(el("li", p)));
      section("reported by", list);
    }
    const rest = Object.keys(facets).filter((k) => !["schema", "columnLineage", "sql", "jobType", "symlinks"].includes(k));
    if (rest.length) {
      const other = {};
      rest.forEach((k) => { other[k] = facets[k]; });
      section("other facets", el("pre", JSON.stringify(other, null, 2)));
    }
  }
  function showAggregate(node) {
    panel.replaceChildren();
    panel.appendChild(el("h2", node.dataset.ns));
    panel.appendChild(el("div", "collapsed namespace", "hint"));
    const list = el("ul");
    node.dataset.members.split(" ").forEach((m) => list.appendChild(el("li", data.details[m].name)));
    section("datasets", list);
  }
  svg.addEventListener("keydown", (ev) => {
    const g = ev.target.closest("g.node");
    if (g && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); select(g.dataset.id); }
  });

  // -- the facets panel: collapsible, resizable, beside the graph (never over it) -----------------
  const main = document.getElementById("main");
  const toggle = document.getElementById("panel-toggle");
  let panelWidth = 380;
  function setPanel(width, open) {
    panelWidth = Math.max(220, Math.min(width, Math.round(main.clientWidth * 0.7)));
    main.style.setProperty("--panel", (open ? panelWidth : 34) + "px");
    main.classList.toggle("panel-closed", !open);
    toggle.setAttribute("aria-expanded", String(open));
    toggle.textContent = open ? "⟩" : "⟨";
    toggle.setAttribute("aria-label", open ? "collapse the facets panel" : "open the facets panel");
  }
  toggle.addEventListener("click", () => setPanel(panelWidth, main.classList.contains("panel-closed")));
  const resizer = document.getElementById("resizer");
  resizer.addEventListener("pointerdown", (ev) => {
    resizer.setPointerCapture(ev.pointerId);
    const move = (e) => setPanel(main.getBoundingClientRect().right - e.clientX, true);
    const up = () => { resizer.removeEventListener("pointermove", move); resizer.removeEventListener("pointerup", up); };
    resizer.addEventListener("pointermove", move);
    resizer.addEventListener("pointerup", up);
  });
  resizer.addEventListener("keydown", (ev) => {
    if (ev.key === "ArrowLeft") setPanel(panelWidth + 20, true);
    if (ev.key === "ArrowRight") setPanel(panelWidth - 20, true);
  });

  // -- the URL keeps the view: #job=NAME&node=ID&depth=N&q=TEXT&collapse=NS,NS&column=NAME ---------
  function writeHash() {
    const p = new URLSearchParams();
    if (jobFilter.value.trim()) p.set("job", jobFilter.value.trim());
    if (selected) p.set("node", selected);
    if (+depthBox.value > 0) p.set("depth", depthBox.value);
    if (search.value.trim()) p.set("q", search.value.trim());
    if (collapsed.size) p.set("collapse", Array.from(collapsed).join(","));
    if (column) { p.set("column", column.name); if (column.id !== selected) p.set("columnOf", column.id); }
    if (around) p.set("around", around);
    const text = p.toString();
    if (text !== location.hash.slice(1)) history.replaceState(null, "", text ? "#" + text : location.pathname + location.search);
  }
  function readHash() {
    const hash = new URLSearchParams(location.hash.slice(1));
    if (hash.get("token")) {
      token = hash.get("token");
      try { sessionStorage.setItem("planlineage-token", token); } catch (e) { /* storage off: keep it in memory */ }
      hash.delete("token");
      history.replaceState(null, "", hash.toString() ? "#" + hash.toString() : location.pathname);
    }
    jobFilter.value = hash.get("job") || "";
    search.value = hash.get("q") || "";
    const depth = hash.get("depth");
    if (depth && Array.from(depthBox.options).some((o) => o.value === depth)) depthBox.value = depth;
    (hash.get("collapse") || "").split(",").filter(Boolean).forEach((ns) => collapsed.add(ns));
    selected = hash.get("node") || null;
    around = hash.get("around") || null;
    if (hash.get("column")) column = { id: hash.get("columnOf") || selected, name: hash.get("column") };
  }
  window.addEventListener("hashchange", () => {
    if (!data) return;
    const before = around;
    readHash();
    if (around !== before) { goAround(around); return; } computeShown(); computeColumns(); fit(); if (selected) showDetails(selected);
  });

  // -- start: the embedded data, or the served JSON polled for new runs and states ------------------
  function start(next) {
    load(next);
    if (selected) showDetails(selected);
    if (columnView) fitTo(Array.from(columnView.cols.keys()));
    document.documentElement.dataset.ready = "true";
  }
  readHash();
  setPanel(panelWidth, true);
  const embedded = document.getElementById("graph-data");
  const api = body.dataset.api;
  const live = document.getElementById("live");
  if (embedded) start(JSON.parse(embedded.textContent));
  else if (api) {
    if (!token) { try { token = sessionStorage.getItem("planlineage-token"); } catch (e) { token = null; } }
    // the inputs' status comes with every answer (304 too): "live", or unreadable since when, the
    // graph kept and drawn as stale
    const status = (r) => {
      const problem = r.headers.get("X-Lineage-Problem");
      const stale = r.headers.get("X-Lineage-Status") === "unreadable";
      body.classList.toggle("stale", stale);
      live.classList.toggle("problem", stale);
      live.textContent = stale
        ? "inputs unreadable since " + (r.headers.get("X-Lineage-Since") || "?") + ": " + decodeURIComponent(problem || "") + " (the graph shown is the last one read)"
        : "live";
    };
    let timer = null, asked = 0;
    const poll = () => {
      const ask = ++asked;
      clearTimeout(timer);
      const headers = {};
      if (token) headers.Authorization = "Bearer " + token;
      if (etag) headers["If-None-Match"] = etag;
      fetch(api + (around ? "?around=" + encodeURIComponent(around) : ""), { headers, cache: "no-store" })
        .then((r) => {
          if (ask !== asked) return null; // a later question (another part) was asked meanwhile
          if (r.status === 304) { status(r); return null; }
          if (r.status === 401) { live.textContent = "no access: open the URL `planlineage ui` printed (it holds the token)"; return null; }
          if (!r.ok) { live.textContent = "server answered " + r.status; return null; }
          etag = r.headers.get("ETag");
          status(r);
          return r.json();
        })
        .then((next) => { if (next && ask === asked) { if (data === null) start(next); else load(next); } })
        .catch(() => { live.textContent = "server not reachable: retrying"; body.classList.add("stale"); })
        .finally(() => { if (ask === asked) timer = setTimeout(poll, POLL_MS); });
    };
    pollNow = poll;
    poll();
  }
})();
