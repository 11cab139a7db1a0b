"""What the lineage page is drawn from, declared once for `graph` and `ui` alike (a module of its
own: a command's module imports no other command's module, so `ui --help` loads no `graph`)."""

from __future__ import annotations


def add_inputs(parser) -> None:
    """Event files and the recorded runs."""
    parser.add_argument(
        "--events", nargs="+", action="extend", default=[], metavar="FILE", help="OpenLineage events as JSON lines"
    )
    parser.add_argument("--state", action="store_true", help="also the runs planlineage recorded (read-only)")
