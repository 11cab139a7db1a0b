"""``planlineage watch``: argument parsing and rendering for the StreamPark and Dinky watchers."""

from __future__ import annotations

import os
import sys

from planlineage.errors import ExitCode


def _say(line: str) -> None:
    """One line of the watcher's to the terminal. Task and app names, SQL and jar addresses come
    from the platform's database: a name may hold a terminal escape (clear the screen, hide the
    lines before it) and an `ADD JAR` address a password or a signed query, so every line is
    redacted and its control characters escaped, whoever wrote it."""
    try:
        from planlineage.printable import visible
        from planlineage.registry.secrets import redact_text

        shown = "\n".join(visible(part) for part in redact_text(str(line)).split("\n"))
        print(f"planlineage watch: {shown}", file=sys.stderr, flush=True)
    except Exception:
        pass


def cmd_watch(args) -> int:
    from planlineage.errors import PlatformUrlError, SourceError, StoreError
    from planlineage.settings import Settings
    from planlineage.store import open_store
    from planlineage.streampark import URL_ENV
    from planlineage.streampark.watcher import Options, Watcher, selection
    from planlineage.watch.loop import run_forever

    streampark_url = args.streampark_db or os.environ.get(URL_ENV, "")
    dinky_url = args.dinky_db or os.environ.get("PLANLINEAGE_DINKY_DB", "")
    try:
        targets = _targets(streampark_url, dinky_url, args.db_user)
        selection(args.apps)
        since, zone = _history_options(args)
    except (PlatformUrlError, ValueError) as error:
        _say(str(error))
        return ExitCode.INPUT
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
        ok = True
        for target in targets:
            report = _check(target, settings, options, args)
            for line in report.lines:
                print(line)
            for problem in report.problems:
                print(f"PROBLEM: {problem}")
            ok = ok and report.ok
        return ExitCode.OK if ok else ExitCode.INPUT
    config = settings.config()  # a store that cannot be used: said by cli.main, exit 2
    if not config.configured:
        _say(f"nothing to do: {config.why_off()}")
        return ExitCode.INPUT
    watchers = [
        Watcher(target, store, settings, options, say=_say)
        if target.platform == "StreamPark"
        else _dinky_watcher(target, store, settings, args)
        for target in targets
    ]
    if not args.once:
        _say(f"watching {', '.join(t.masked() for t in targets)} every {args.interval:g}s")
        with _provisioning_shown():
            run_forever(watchers, args.interval)
        return ExitCode.OK
    with _provisioning_shown():
        for watcher in watchers:
            try:
                if args.history:  # planlineage.history.replay takes any platform's PastRun records
                    _replay_history(watcher, since, args.timeout)
                    continue
                watcher.poll()
                watcher.settle(args.timeout)
            except (SourceError, StoreError) as error:  # fail-open: one line, exit 0
                _say(str(error))
            finally:
                watcher.close()
    return ExitCode.OK


def _replay_history(watcher, since, timeout: float) -> None:
    if watcher.platform == "StreamPark":
        from planlineage.streampark.history import replay_history
    else:
        from planlineage.dinky.history import replay_history
    replay_history(watcher, since, timeout)


def _targets(streampark_url: str, dinky_url: str, user: str | None) -> list:
    """The databases to watch: StreamPark's, Dinky's, or both (raises ``PlatformUrlError``)."""
    from planlineage import dinky, streampark
    from planlineage.streampark.address import parse
    from planlineage.watch import url

    if not streampark_url.strip() and not dinky_url.strip():
        raise url.PlatformUrlError(
            "no database given: pass --streampark-db URL and/or --dinky-db URL "
            f"(or set {streampark.URL_ENV} / {dinky.URL_ENV})"
        )
    targets = []
    if streampark_url:
        targets.append(parse(streampark_url, user=user, password=os.environ.get(streampark.PASSWORD_ENV) or None))
    if dinky_url:
        password = os.environ.get(dinky.PASSWORD_ENV) or None
        targets.append(
            url.parse(
                dinky_url, user=user, password=password, platform=dinky.PLATFORM, flag="--dinky-db", env=dinky.URL_ENV
            )
        )
    return targets


def _dinky_watcher(target, store, settings, args):
    from planlineage.dinky.watcher import Watcher

    return Watcher(target, store, settings, _dinky_options(args), say=_say)


def _dinky_options(args):
    from planlineage.dinky.watcher import Options

    zone = _zone(args.dinky_timezone, "--dinky-timezone")
    return Options(lost_grace=args.lost_grace, flink_version=args.dinky_flink_version, verbose=args.verbose, zone=zone)


def _check(target, settings, options, args):
    if target.platform == "StreamPark":
        from planlineage.streampark.check import check

        return check(target, settings, options)
    from planlineage.dinky.check import check as dinky_check

    return dinky_check(target, settings, _dinky_options(args))


def _history_options(args):
    """``(--since as a date, --streampark-timezone)``; ValueError says what is wrong (also
    about ``--dinky-timezone``)."""
    from datetime import date

    if (args.history or args.since) and not args.once:
        raise ValueError("--history replays once: add --once (then run the watcher as usual)")
    if args.since and not args.history:
        raise ValueError("--since applies to --history: add --history")
    try:
        since = date.fromisoformat(args.since) if args.since else None
    except ValueError:
        raise ValueError(f"--since {args.since!r}: give a day as YYYY-MM-DD") from None
    _zone(args.dinky_timezone, "--dinky-timezone")
    return since, _zone(args.streampark_timezone, "--streampark-timezone")


def _zone(name: str, flag: str):
    from datetime import UTC
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return UTC if name in ("UTC", "utc") else ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{flag} {name!r}: not a time zone (Asia/Shanghai, UTC)") from None


def _provisioning_shown():
    """The compile service provisions a Flink or Spark version on first use (a download of
    hundreds of MB, a minute or more): its steps and download progress are said here too."""
    from planlineage.planner.provision import cache_root as flink_cache
    from planlineage.spark.provision import cache_root as spark_cache
    from planlineage.version_venvs import ProgressFollower

    return ProgressFollower([flink_cache(), spark_cache()], _say)


def configure(name: str, parser) -> None:
    from planlineage.watch import DEFAULT_INTERVAL, DEFAULT_LOST_GRACE, DEFAULT_TIMEOUT

    watch = parser
    watch.add_argument(
        "--streampark-db",
        default=None,
        metavar="URL",
        help="postgresql://user@host:5432/db, mysql://user@host:3306/db or StreamPark's jdbc: URL "
        "(default $PLANLINEAGE_STREAMPARK_DB); password from $PLANLINEAGE_STREAMPARK_PASSWORD",
    )
    watch.add_argument(
        "--dinky-db",
        default=None,
        metavar="URL",
        help="Dinky's database, in the same forms (default $PLANLINEAGE_DINKY_DB); password from "
        "$PLANLINEAGE_DINKY_PASSWORD; may be given with --streampark-db",
    )
    watch.add_argument(
        "--dinky-flink-version",
        default=None,
        metavar="V",
        help="the Flink version Dinky was built for, for tasks whose cluster records none",
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
        "--history", action="store_true", help="with --once: replay the past runs StreamPark/Dinky recorded, each once"
    )
    watch.add_argument("--since", default=None, metavar="YYYY-MM-DD", help="--history: runs started that day or later")
    watch.add_argument(
        "--streampark-timezone", default="UTC", metavar="ZONE", help="the console's time zone (its times have none)"
    )
    watch.add_argument(
        "--dinky-timezone", default="UTC", metavar="ZONE", help="Dinky's time zone (its times have none)"
    )
    watch.set_defaults(run=cmd_watch)
