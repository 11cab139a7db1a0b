"""The lineage graph as Graphviz DOT: `planlineage graph --format dot`, `extract --format dot`.

Left to right like the page; jobs are boxes, datasets rounded boxes labelled `name` over
`namespace`; a STATEMENT SET parent is a cluster around its child jobs; datasets of a split are
red and joined by a dashed red edge without arrow (it is not lineage).
"""

from __future__ import annotations

from planlineage.printable import visible

from .model import LineageGraph


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _lines(*lines: str) -> str:
    """A quoted label of these lines, each with its control characters escaped (an event's name
    must not put an escape sequence on a terminal or a NUL byte in a file)."""
    return _quote("\n".join(visible(line) for line in lines))


def render_dot(graph: LineageGraph, title: str = "lineage") -> str:
    ids: dict[tuple[str, tuple[str, str]], str] = {}
    lines = [
        f"digraph {_lines(title)} {{",
        "  rankdir=LR;",
        '  node [fontname="monospace", fontsize=11];',
        '  edge [color="#7a8496"];',
    ]
    split_of = graph.split_of()
    for i, (key, dataset) in enumerate(sorted(graph.datasets.items())):
        ids[("dataset", key)] = f"d{i}"
        colour = ', color="#d93025", penwidth=2' if key in split_of else ""
        lines.append(f"  d{i} [shape=box, style=rounded, label={_lines(dataset.name, dataset.namespace)}{colour}];")
    hidden = graph.group_only()
    children = graph.children()
    in_cluster = {c for cs in children.values() for c in cs}
    job_lines: dict[tuple[str, str], str] = {}
    for i, (key, job) in enumerate(sorted(graph.jobs.items())):
        if key in hidden:
            continue
        ids[("job", key)] = f"j{i}"
        job_lines[key] = (
            f'j{i} [shape=box, style=filled, fillcolor="#e8f0fe", label={_lines(job.name, job.namespace)}];'
        )
    for n, (parent, kids) in enumerate(sorted(children.items())):
        lines.append(f"  subgraph cluster_{n} {{")
        lines.append(f'    label={_lines("STATEMENT SET " + parent[1])}; style=dashed; color="#9aa3b2";')
        for kid in sorted(kids):
            if kid in job_lines:
                lines.append("    " + job_lines[kid])
        lines.append("  }")
    for key, line in sorted(job_lines.items()):
        if key not in in_cluster:
            lines.append("  " + line)
    for key, job in sorted(graph.jobs.items()):
        if key in hidden:
            continue
        for d in sorted(job.inputs):
            lines.append(f"  {ids[('dataset', d)]} -> {ids[('job', key)]};")
        for d in sorted(job.outputs):
            lines.append(f"  {ids[('job', key)]} -> {ids[('dataset', d)]};")
    for keys, reason in graph.splits:
        first = ids[("dataset", keys[0])]
        for other in keys[1:]:
            lines.append(
                f'  {first} -> {ids[("dataset", other)]} [dir=none, style=dashed, color="#d93025", '
                f"constraint=false, label={_quote('split')}, tooltip={_lines(reason)}];"
            )
    lines.append("}")
    return "\n".join(lines) + "\n"


def lineage_to_graph(lineage, job_name: str, job_namespace: str = "planlineage") -> LineageGraph:
    """One script's lineage document as the graph of the events planlineage would report for it."""
    from planlineage.emitter import events as ev

    from .model import from_events

    built = ev.build_events(
        lineage, job_name=job_name, job_namespace=job_namespace, run_id=ev.new_run_id(), event_type="START"
    )
    return from_events([ev.to_dict(e) for e in built])


def script_dot(lineage, script: str) -> str:
    """`extract job.sql --format dot`: the script's jobs (named after the file) and datasets."""
    from pathlib import Path

    name = "stdin" if script == "-" else Path(script).stem
    return render_dot(lineage_to_graph(lineage, name), title=name)
