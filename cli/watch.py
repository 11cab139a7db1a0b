"""``planlineage watch``: argument parsing and rendering for the StreamPark watcher."""

from __future__ import annotations

import os
import sys

EXIT_OK = 0
EXIT_USAGE = 2


def _say(line: str) -> None:
    try:
        print(f"planlineage watch: {line}", file=sys.stderr, flush=True)
    except Exception:
        pass


def cmd_watch(args) -> int:
    from planlineage.settings import Settings
    from planlineage.store import open_store
    from planlineage.store.sqlite import StoreError
    from planlineage.streampark import url
    from planlineage.streampark.connection import SourceError
    from planlineage.streampark.watcher import Options, Watcher, run_forever, selection

    try:
        target = url.parse(
            args.streampark_db or os.environ.get(url.URL_ENV, ""),
            user=args.db_user,
            password=os.environ.get(url.PASSWORD_ENV) or None,
        )
        selection(args.apps)
        since, zone = _history_options(args)
    except (url.UrlError, ValueError) as error:
        _say(str(error))
        return EXIT_USAGE
    options = Options(
        apps=args.apps,
        workspace=args.streampark_workspace,
        lost_grace=args.lost_grace,
        charset=args.streampark_charset,
        verbose=args.verbose,
        zone=zone,
    )
    store = open_store()  # the node's store: with a shared one, every node's watcher shares the cursor
    settings = Settings(store)
    if args.check:
        from planlineage.streampark.check import check

        report = check(target, settings, options)
        for line in report.lines:
            print(line)
        for problem in report.problems:
            print(f"PROBLEM: {problem}")
        return EXIT_OK if report.ok else EXIT_USAGE
    try:
        if not settings.configured():
            _say("lineage is not configured, nothing to do: planlineage settings set lineage.address URL")
            return EXIT_USAGE
    except StoreError as error:
        _say(str(error))
        return EXIT_USAGE
    watcher = Watcher(target, store, settings, options, say=_say)
    if not args.once:
        _say(f"watching {target.masked()} every {args.interval:g}s")
        with _provisioning_shown():
            run_forever(watcher, args.interval)
        return EXIT_OK
    try:
        with _provisioning_shown():
            if args.history:  # planlineage.history.replay takes any platform's PastRun records
                from planlineage.streampark.history import replay_history

                replay_history(watcher, since, args.timeout)
                return EXIT_OK
            watcher.poll()
            watcher.settle(args.timeout)
    except (SourceError, StoreError) as error:  # fail-open: one line, exit 0
        _say(str(error))
    finally:
        watcher.close()
    return EXIT_OK


def _history_options(args):
    """``(--since as a date, --streampark-timezone)``; ValueError says what is wrong."""
    from datetime import UTC, date
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if (args.history or args.since) and not args.once:
        raise ValueError("--history replays once: add --once (then run the watcher as usual)")
    if args.since and not args.history:
        raise ValueError("--since applies to --history: add --history")
    try:
        since = date.fromisoformat(args.since) if args.since else None
    except ValueError:
        raise ValueError(f"--since {args.since!r}: give a day as YYYY-MM-DD") from None
    try:
        zone = UTC if args.streampark_timezone in ("UTC", "utc") else ZoneInfo(args.streampark_timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"--streampark-timezone {args.streampark_timezone!r}: not a time zone (Asia/Shanghai, UTC)"
        ) from None
    return since, zone


def _provisioning_shown():
    """The compile service provisions a Flink or Spark version on first use (a download of
    hundreds of MB, a minute or more): its steps and download progress are said here too."""
    from planlineage.planner.provision import cache_root as flink_cache
    from planlineage.spark.provision import cache_root as spark_cache
    from planlineage.version_venvs import ProgressFollower

    return ProgressFollower([flink_cache(), spark_cache()], _say)


def configure(name: str, parser) -> None:
    from planlineage.streampark import DEFAULT_INTERVAL, DEFAULT_LOST_GRACE, DEFAULT_TIMEOUT

    watch = parser
    watch.add_argument(
        "--streampark-db",
        default=None,
        metavar="URL",
        help="postgresql://user@host:5432/db, mysql://user@host:3306/db or StreamPark's jdbc: URL "
        "(default $PLANLINEAGE_STREAMPARK_DB); password from $PLANLINEAGE_STREAMPARK_PASSWORD",
    )
    watch.add_argument("--db-user", default=None, help="the database user (when the URL has none)")
    watch.add_argument("--check", action="store_true", help="check the connection, schema, apps and grants; exit 0/2")
    watch.add_argument("--once", action="store_true", help="one poll, wait for its compiles and deliveries, exit")
    watch.add_argument("--interval", type=float, default=DEFAULT_INTERVAL, help="seconds between polls (default 5)")
    watch.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="--once: longest wait (default 120 s)")
    watch.add_argument(
        "--apps", default="all", help="all (default), flagged, or ids flink:<id>,spark:<id> (lineage_enable wins)"
    )
    watch.add_argument("--streampark-workspace", default=None, metavar="DIR", help="the console's workspace.local")
    watch.add_argument("--streampark-charset", default="utf-8", help="the console JVM's default charset")
    watch.add_argument(
        "--lost-grace", type=float, default=DEFAULT_LOST_GRACE, help="seconds LOST must last to be reported (300)"
    )
    watch.add_argument("--verbose", action="store_true", help="also print skipped apps and ignored states")
    watch.add_argument(
        "--history", action="store_true", help="with --once: replay the past runs StreamPark recorded, each once"
    )
    watch.add_argument("--since", default=None, metavar="YYYY-MM-DD", help="--history: runs started that day or later")
    watch.add_argument(
        "--streampark-timezone", default="UTC", metavar="ZONE", help="the console's time zone (its times have none)"
    )
    watch.set_defaults(run=cmd_watch)
