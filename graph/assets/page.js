// planlineage lineage page: behaviour for an SVG that Python already drew.
// All event text goes through textContent / createTextNode: never innerHTML.
(function () {
  "use strict";
  const SVGNS = "http://www.w3.org/2000/svg";
  const HEIGHT = 34;
  const data = JSON.parse(document.getElementById("graph-data").textContent);
  const svg = document.getElementById("graph");
  const panel = document.getElementById("details");
  const nodes = new Map();
  svg.querySelectorAll("#nodes g.node").forEach((g) => nodes.set(g.dataset.id, g));
  const groups = Array.from(svg.querySelectorAll("#groups g.group"));
  const edges = Array.from(svg.querySelectorAll("#edges path.edge"));
  const out = new Map();
  const inc = new Map();
  const push = (map, k, v) => { if (!map.has(k)) map.set(k, []); map.get(k).push(v); };
  data.edges.forEach(([a, b]) => { push(out, a, b); push(inc, b, a); });

  // -- side panel -------------------------------------------------------------------------------
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function table(headers, rows) {
    const t = el("table");
    const head = el("tr");
    headers.forEach((h) => head.appendChild(el("th", h)));
    t.appendChild(head);
    rows.forEach((r) => {
      const tr = el("tr");
      r.forEach((c) => tr.appendChild(el("td", c)));
      t.appendChild(tr);
    });
    return t;
  }
  function section(title, child) {
    panel.appendChild(el("h3", title));
    panel.appendChild(child);
  }
  function link(text, id) {
    const a = el("a", text);
    a.addEventListener("click", () => select(id, true));
    return a;
  }
  function transformations(list) {
    return (list || []).map((t) => [t.type, t.subtype].filter(Boolean).join("/")).join(", ");
  }
  function showDetails(id) {
    const d = data.details[id];
    panel.replaceChildren();
    if (!d) return;
    panel.appendChild(el("h2", d.name));
    panel.appendChild(el("div", (d.kind === "job" ? "job in " : "dataset in ") + d.namespace, "hint"));
    const facets = d.facets || {};
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
      section("run states" + older, table(["event", "time", "runId"], d.runs.map((r) => [r.eventType, r.eventTime, r.runId])));
    }
    if (facets.schema && Array.isArray(facets.schema.fields)) {
      section("schema", table(["column", "type"], facets.schema.fields.map((f) => [f.name, f.type || ""])));
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
  function select(id, scroll) {
    svg.querySelectorAll(".selected").forEach((n) => n.classList.remove("selected"));
    const node = nodes.get(id) || document.getElementById(id);
    if (node) {
      node.classList.add("selected");
      if (scroll) node.scrollIntoView({ block: "center", inline: "center" });
    }
    if (node && node.dataset.kind === "agg") showAggregate(node);
    else showDetails(id);
  }
  function showAggregate(node) {
    panel.replaceChildren();
    panel.appendChild(el("h2", node.dataset.ns));
    panel.appendChild(el("div", "collapsed namespace", "hint"));
    const list = el("ul");
    node.dataset.members.split(" ").forEach((m) => {
      const li = el("li");
      li.appendChild(el("span", data.details[m].name));
      list.appendChild(li);
    });
    section("datasets", list);
  }
  svg.addEventListener("click", (ev) => {
    const g = ev.target.closest("g.node");
    if (g) select(g.dataset.id, false);
  });
  svg.addEventListener("keydown", (ev) => {
    const g = ev.target.closest("g.node");
    if (g && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); select(g.dataset.id, false); }
  });

  // -- search ---------------------------------------------------------------------------------
  const search = document.getElementById("search");
  search.addEventListener("input", () => {
    const q = search.value.trim().toLowerCase();
    let first = null;
    nodes.forEach((g, id) => {
      const d = data.details[id];
      const hit = q !== "" && (d.name.toLowerCase().includes(q) || d.namespace.toLowerCase().includes(q));
      g.classList.toggle("hit", hit);
      g.classList.toggle("dim", q !== "" && !hit);
      if (hit && !first && !g.classList.contains("hidden")) first = g;
    });
    edges.forEach((e) => e.classList.toggle("dim", q !== ""));
    if (first) first.scrollIntoView({ block: "center", inline: "center" });
  });

  // -- filter by job --------------------------------------------------------------------------
  const jobFilter = document.getElementById("job-filter");
  function reach(starts, map) {
    const seen = new Set(starts);
    const todo = Array.from(starts);
    while (todo.length) {
      (map.get(todo.pop()) || []).forEach((n) => { if (!seen.has(n)) { seen.add(n); todo.push(n); } });
    }
    return seen;
  }
  function applyFilter(name) {
    let visible = null;
    if (name) {
      const starts = new Set();
      Object.entries(data.details).forEach(([id, d]) => {
        if (d.kind !== "job" || !(d.name === name || d.name.startsWith(name + "."))) return;
        if (nodes.has(id)) starts.add(id);
        const group = groups.find((g) => g.dataset.id === id);
        if (group) group.dataset.children.split(" ").forEach((c) => starts.add(c));
      });
      if (starts.size === 0) return false;
      visible = new Set([...reach(starts, out), ...reach(starts, inc)]);
    }
    nodes.forEach((g, id) => g.classList.toggle("hidden", visible !== null && !visible.has(id)));
    groups.forEach((g) => {
      const kids = g.dataset.children.split(" ");
      g.classList.toggle("hidden", visible !== null && !kids.some((k) => visible.has(k)));
    });
    redraw();
    return true;
  }
  jobFilter.addEventListener("change", () => {
    const known = applyFilter(jobFilter.value.trim());
    jobFilter.classList.toggle("invalid", !known);
    jobFilter.title = known ? "" : "no job of that name";
  });
  document.getElementById("clear-filter").addEventListener("click", () => {
    jobFilter.value = "";
    jobFilter.classList.remove("invalid");
    applyFilter("");
  });

  // -- collapse by namespace ------------------------------------------------------------------
  const collapsed = new Set();
  const aggLayer = document.getElementById("collapsed");
  const geometry = (g) => ({ x: +g.dataset.x, y: +g.dataset.y, w: +g.dataset.w });
  function redraw() {
    aggLayer.replaceChildren();
    const rep = new Map();
    const boxes = new Map();
    const buckets = new Map();
    nodes.forEach((g, id) => {
      const folded = g.dataset.kind === "dataset" && collapsed.has(g.dataset.ns) && !g.classList.contains("hidden");
      g.classList.toggle("folded", folded);
      if (!folded) { boxes.set(id, geometry(g)); return; }
      const key = g.dataset.ns + "\u0000" + g.dataset.layer;
      if (!buckets.has(key)) buckets.set(key, []);
      buckets.get(key).push(id);
    });
    let n = 0;
    buckets.forEach((members, key) => {
      const ns = key.split("\u0000")[0];
      const geo = members.map((m) => geometry(nodes.get(m)));
      const box = { x: Math.min(...geo.map((b) => b.x)), y: Math.min(...geo.map((b) => b.y)), w: Math.max(...geo.map((b) => b.w)) };
      const id = "agg" + n++;
      const g = document.createElementNS(SVGNS, "g");
      g.setAttribute("class", "node agg");
      g.setAttribute("id", id);
      g.dataset.id = id;
      g.dataset.kind = "agg";
      g.dataset.ns = ns;
      g.dataset.members = members.join(" ");
      const rect = document.createElementNS(SVGNS, "rect");
      [["x", box.x], ["y", box.y], ["width", box.w], ["height", HEIGHT], ["rx", 12]].forEach(([k, v]) => rect.setAttribute(k, v));
      const t1 = document.createElementNS(SVGNS, "text");
      t1.setAttribute("x", box.x + 12); t1.setAttribute("y", box.y + 15); t1.setAttribute("class", "name");
      t1.textContent = ns;
      const t2 = document.createElementNS(SVGNS, "text");
      t2.setAttribute("x", box.x + 12); t2.setAttribute("y", box.y + 28); t2.setAttribute("class", "sub");
      t2.textContent = members.length + " dataset(s)";
      g.append(rect, t1, t2);
      aggLayer.appendChild(g);
      boxes.set(id, box);
      members.forEach((m) => rep.set(m, id));
    });
    edges.forEach((e) => {
      const a = rep.get(e.dataset.a) || e.dataset.a;
      const b = rep.get(e.dataset.b) || e.dataset.b;
      const hidden = nodes.get(e.dataset.a).classList.contains("hidden") || nodes.get(e.dataset.b).classList.contains("hidden");
      e.classList.toggle("hidden", hidden);
      const p = boxes.get(a);
      const q = boxes.get(b);
      if (hidden || !p || !q) return;
      const x1 = p.x + p.w, y1 = p.y + HEIGHT / 2, x2 = q.x, y2 = q.y + HEIGHT / 2;
      const bend = Math.max(40, (x2 - x1) / 2);
      e.setAttribute("d", `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`);
    });
  }
  document.querySelectorAll("input.collapse-ns").forEach((box) => {
    box.addEventListener("change", () => {
      if (box.checked) collapsed.add(box.value); else collapsed.delete(box.value);
      redraw();
    });
  });

  // The page can be opened on one job (lineage.html#job=NAME), with namespaces collapsed
  // (#collapse=NS1,NS2), a search (#q=TEXT) or a node's facets (#node=ID).
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("job")) { jobFilter.value = hash.get("job"); applyFilter(hash.get("job")); }
  if (hash.get("collapse")) hash.get("collapse").split(",").forEach((ns) => {
    const box = Array.from(document.querySelectorAll("input.collapse-ns")).find((b) => b.value === ns);
    if (box) { box.checked = true; collapsed.add(ns); }
  });
  if (collapsed.size) redraw();
  if (hash.get("q")) { search.value = hash.get("q"); search.dispatchEvent(new Event("input")); }
  if (hash.get("node")) select(hash.get("node"), true);
  document.documentElement.dataset.ready = "true";
})();
