"""`planlineage graph`: argument parsing and writing of the lineage page or DOT (planlineage.graph)."""

from __future__ import annotations

import sys
from pathlib import Path

from planlineage.errors import ExitCode


def configure(name: str, parser) -> None:
    from planlineage.cli.page_inputs import add_inputs

    graph = parser
    add_inputs(graph)
    graph.add_argument("--job", help="only this job (or STATEMENT SET), with everything upstream and downstream")
    graph.add_argument(
        "--namespace",
        metavar="NS",
        help="only the jobs of this job namespace, or that read or write a dataset of it, with their datasets",
    )
    graph.add_argument(
        "--max-nodes",
        type=int,
        default=None,
        metavar="N",
        help="draw at most N jobs and datasets whole (default 5000); over it, the busiest part is drawn with a search "
        "over all, and --job/--namespace draw another part",
    )
    graph.add_argument("--rules", help="a rules TOML file whose namespace resolvers count for splits")
    graph.add_argument("--out", help="the file to write (lineage.html); DOT goes to standard output without it")
    graph.add_argument(
        "--format", choices=["html", "dot"], default="html", help="html: the page (default, needs --out); dot: Graphviz"
    )
    graph.set_defaults(run=cmd_graph)


def cmd_graph(args) -> int:
    from planlineage.cli.page_inputs import missing, nothing_given, resolve
    from planlineage.errors import UnreadableInput
    from planlineage.graph import MAX_NODES, build, drawn_nodes, page_data, render_dot, render_html
    from planlineage.printable import visible

    if nothing_given(args):
        print(missing("graph"), file=sys.stderr)
        return ExitCode.INPUT
    if args.format == "html" and not args.out:
        print("planlineage graph: give --out lineage.html (the page is one file).", file=sys.stderr)
        return ExitCode.INPUT
    limit = MAX_NODES if args.max_nodes is None else args.max_nodes
    if limit < 1:
        print("planlineage graph: --max-nodes must be at least 1.", file=sys.stderr)
        return ExitCode.INPUT
    try:
        inputs = resolve(args)
        graph = build(
            inputs.files,
            state=args.state,
            job=args.job,
            rules=args.rules,
            namespace=args.namespace,
            events=inputs.events,
        )
    except UnreadableInput as error:
        print(f"planlineage graph: {visible(str(error))}", file=sys.stderr)
        return ExitCode.INPUT
    except KeyError as unknown:
        if args.namespace and unknown.args == (args.namespace,):
            print(f"planlineage graph: no job or dataset in namespace {args.namespace!r}.", file=sys.stderr)
        else:
            print(f"planlineage graph: no job named {args.job!r} (nor a STATEMENT SET of that name).", file=sys.stderr)
        return ExitCode.INPUT
    if not graph.jobs and not graph.datasets:
        print("planlineage graph: nothing to draw: the inputs hold no job and no dataset.", file=sys.stderr)
        return ExitCode.INPUT
    nodes = drawn_nodes(graph)
    data = page_data(graph, limit=limit) if args.format == "html" else None
    if nodes > limit:  # a first picture, never nothing: the busiest part, and a search over all
        print(
            f"planlineage graph: {nodes} nodes ({nodes - len(graph.datasets)} jobs, {len(graph.datasets)} datasets) "
            f"are more than a graph draws whole (--max-nodes {limit}): drew the busiest part"
            f"{' (the page searches all of them)' if data else ''}; draw another part with --job NAME (one job or "
            "STATEMENT SET, with everything upstream and downstream) or --namespace NS (the jobs of a job namespace, "
            "or that read or write a dataset namespace such as kafka://broker:9092), or raise --max-nodes.",
            file=sys.stderr,
        )
    if data is not None:
        text = render_html(graph, data=data)
    else:
        from planlineage.graph.focus import focus_graph

        text = render_dot(focus_graph(graph, limit=limit)[0])
    if not args.out:
        sys.stdout.write(text)
        return ExitCode.OK
    try:
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as error:
        print(f"planlineage graph: cannot write {visible(args.out)}: {error.strerror or error}", file=sys.stderr)
        return ExitCode.INPUT
    from planlineage.graph.view import summary

    print(f"wrote {visible(args.out)}: {summary(graph)}", file=sys.stderr)  # the page's header says the same
    return ExitCode.OK
