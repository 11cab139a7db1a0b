"""``planlineage store status`` and ``planlineage store migrate``: the operator's view of the store."""

from __future__ import annotations

import json

from planlineage.errors import ExitCode


def cmd_store(args) -> int:
    """A store that cannot be used is a StoreError, said once by cli.main with its exit code."""
    from planlineage.store import open_store, status

    store = open_store()
    if args.store_command == "migrate":
        before, after = store.migrate()
        if before == after:
            print(f"{store.describe()}: schema at version {after}, nothing to do")
        else:
            print(f"{store.describe()}: schema migrated from version {before} to {after}")
        return ExitCode.OK
    data = status.collect(store)
    print(json.dumps(data, indent=2) if args.json else status.render(data))
    return ExitCode.OK


def configure(name: str, parser) -> None:
    store = parser
    store_commands = store.add_subparsers(dest="store_command", required=True)
    status = store_commands.add_parser(
        "status", help="backend, schema version, runs by state, outbox, leases per node, leaders"
    )
    status.add_argument("--json", action="store_true", help="machine-readable")
    store_commands.add_parser("migrate", help="create or upgrade the store's tables (also done on first use)")
    store.set_defaults(run=cmd_store)
