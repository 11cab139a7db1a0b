"""`planlineage graph`: argument parsing and writing of the lineage page or DOT (planlineage.graph)."""

from __future__ import annotations

import sys
from pathlib import Path

EXIT_OK = 0
EXIT_FAILED = 2


def configure(name: str, parser) -> None:
    graph = parser
    graph.add_argument(
        "--events", nargs="+", action="extend", default=[], metavar="FILE", help="OpenLineage events as JSON lines"
    )
    graph.add_argument("--state", action="store_true", help="also the runs planlineage recorded (read-only)")
    graph.add_argument("--job", help="only this job (or STATEMENT SET), with everything upstream and downstream")
    graph.add_argument("--rules", help="a rules TOML file whose namespace resolvers count for splits")
    graph.add_argument("--out", help="the file to write (lineage.html); DOT goes to standard output without it")
    graph.add_argument("--format", choices=["html", "dot"], default="html")
    graph.set_defaults(run=cmd_graph)


def cmd_graph(args) -> int:
    from planlineage.doctor import UnreadableInput
    from planlineage.graph import build, render_dot, render_html

    if not args.events and not args.state:
        print("planlineage graph: give --events FILE… and/or --state (the runs planlineage recorded).", file=sys.stderr)
        return EXIT_FAILED
    if args.format == "html" and not args.out:
        print("planlineage graph: give --out lineage.html (the page is one file).", file=sys.stderr)
        return EXIT_FAILED
    try:
        graph = build(args.events, state=args.state, job=args.job, rules=args.rules)
    except UnreadableInput as error:
        print(f"planlineage graph: {error}", file=sys.stderr)
        return EXIT_FAILED
    except KeyError:
        print(f"planlineage graph: no job named {args.job!r} (nor a STATEMENT SET of that name).", file=sys.stderr)
        return EXIT_FAILED
    if not graph.jobs and not graph.datasets:
        print("planlineage graph: nothing to draw: the inputs hold no job and no dataset.", file=sys.stderr)
        return EXIT_FAILED
    text = render_html(graph) if args.format == "html" else render_dot(graph)
    if not args.out:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as error:
        print(f"planlineage graph: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
        return EXIT_FAILED
    print(
        f"wrote {args.out}: {len(graph.jobs)} job(s), {len(graph.datasets)} dataset(s), {len(graph.splits)} split(s)",
        file=sys.stderr,
    )
    return EXIT_OK
