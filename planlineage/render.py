"""What `extract` prints for one script's lineage, in each `--format`: the same text whether the
command line renders it or the warm planner renders it for the command line (planner.warm_extract)."""

from __future__ import annotations

import json

from planlineage.planner.protocol import Format

FORMATS: tuple[Format, ...] = ("json", "table", "dot")


def render(lineage, fmt: str, script_name: str) -> str:
    """The whole output, its last newline included; `script_name`: the script as the user named it
    (the DOT graph's title)."""
    if fmt == "json":
        return json.dumps(lineage.to_json_dict(), indent=2) + "\n"
    if fmt == "dot":
        from planlineage.graph import script_dot

        return script_dot(lineage, script_name)
    return render_table(lineage) + "\n"


def render_table(lineage) -> str:
    def datasets(table) -> str:
        if not table.datasets:
            return "(no dataset)"
        return ", ".join(f"{d.namespace} {d.name}" for d in table.datasets)

    from planlineage.engines import of_document

    engine = of_document(lineage)
    version = getattr(lineage, engine.version_field)
    lines = [f"{engine.display_name} {version}, {lineage.runtime_mode}: {len(lineage.sinks)} sink(s)"]
    for sink in lineage.sinks:
        lines.append("")
        lines.append(f"{sink.table} [{sink.connector}]  {datasets(sink)}")
        for source in sink.inputs:
            lines.append(f"  <- {source.table} [{source.connector}]  {datasets(source)}")
        if not sink.inputs:
            lines.append("  <- (no table: constant values)")
        if sink.columns is not None:  # asked for (--columns)
            lines.extend(_column_lines(sink.columns))
    for warning in lineage.warnings:
        lines.append(f"WARN {warning}")
    for stand_in in lineage.stand_ins:
        lines.append(f"STAND-IN {stand_in.kind} {stand_in.name}: {stand_in.reason}")
    return "\n".join(lines)


def _column_lines(columns) -> list[str]:
    """A sink's column lineage, one line per sink column: each source column with how it gets
    there (OpenLineage's transformation type/subtype), in the sink's column order."""
    if not columns:
        return ["  columns: (none found)"]
    lines = ["  columns:"]
    width = max(len(name) for name in columns)
    for name, sources in columns.items():
        reached = ", ".join(f"{source.table}.{source.column}{_how(source)}" for source in sources)
        lines.append(f"    {name:<{width}} <- {reached or '(no source column: constant values)'}")
    return lines


def _how(source) -> str:
    kinds = [
        "/".join(part for part in (t.type, t.subtype) if part) + (" masking" if t.masking else "")
        for t in source.transformations
    ]
    return f" ({', '.join(kinds)})" if kinds else ""
