"""``planlineage gateway``: the transparent proxy in front of a Flink SQL Gateway (planlineage.gateway)."""

from __future__ import annotations

import sys

from planlineage.errors import ExitCode

#: Seconds Ctrl-C waits for the recorder to write down the calls it was still given.
DRAIN_SECONDS = 30.0


def _say(line: str) -> None:
    from planlineage.printable import visible
    from planlineage.registry.secrets import redact_text

    print(f"planlineage gateway: {visible(redact_text(line))}", file=sys.stderr, flush=True)


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6; ``:PORT`` is loopback) as ``(host, port)``."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen {value!r}: give HOST:PORT, e.g. 127.0.0.1:8084 (port 0 picks a free one)")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


def cmd_gateway(args) -> int:
    from planlineage.gateway.proxy import GatewayProxy, Upstream

    try:
        listen = parse_listen(args.listen)
        upstream = Upstream(args.sql_gateway)
    except ValueError as error:
        _say(str(error))
        return ExitCode.INPUT
    recorder, lineage_line, stop_lineage = _lineage(upstream, args)
    try:
        server = GatewayProxy(listen, upstream, recorder)
    except OSError as error:
        _say(f"cannot listen on {args.listen}: {error.strerror or error} (is the port in use?)")
        if recorder is not None:
            recorder.close(0)
        stop_lineage()
        return ExitCode.INPUT
    _say(f"listening on {server.url}, forwarding to {upstream.url}")
    _say(lineage_line)
    _stop_on_sigterm()
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        upstream.close()
        _stop(recorder, stop_lineage)
    return ExitCode.OK


def _stop(recorder, stop_lineage) -> None:
    if recorder is None:
        _say("stopped")
        return
    queued = recorder.pending()
    left = recorder.close(DRAIN_SECONDS)
    stop_lineage()
    if left:
        _say(f"stopped; {left} of {queued} call(s) still queued were not recorded (the store did not keep up)")
    else:
        _say(f"stopped; the {queued} call(s) still queued were recorded in the store" if queued else "stopped")


def _lineage(upstream, args):
    """``(recorder or None, the line saying whether lineage is on and from where, stop())``.

    With lineage off the proxy is a plain proxy: no recorder, no store opened, nothing written."""
    from planlineage.settings import Settings
    from planlineage.store.sqlite import StoreError

    try:
        settings = Settings()
        config = settings.config()
    except StoreError as error:
        return None, f"lineage off: the state store cannot be used ({error}); a plain proxy, nothing recorded", _nothing
    if not config.configured:
        return None, f"lineage off: {config.why_off()}; a plain proxy, nothing recorded", _nothing
    from planlineage.gateway.recorder import Recorder
    from planlineage.store import open_store

    try:
        store = open_store()
        on_job, stop = lineage_side(store, settings, args.jobmanager)
    except StoreError as error:  # fail-open: the clients are served all the same
        return None, f"lineage off: the state store cannot be used ({error}); a plain proxy, nothing recorded", _nothing
    recorder = Recorder(
        upstream.url, store, on_job, upstream.ask_version, retention=config.limits.gateway_session_retention
    )
    where = f"; job states from {args.jobmanager}" if args.jobmanager else ""
    return recorder, f"lineage on: {config.target()}; sessions kept in {store.describe()}{where}", stop


def lineage_side(store, settings, jobmanager: str | None):
    """``(on_job, stop)``: the lineage side's hand-over for each job a session submitted.

    :class:`planlineage.gateway.submissions.Lineage` compiles the session's script, sends START
    per sink and follows the job at the JobManager (``--jobmanager``, else the one the session's
    configuration names); :meth:`~planlineage.gateway.submissions.Lineage.job_submitted` never
    raises and records each job id once.  The recorder calls it from its background thread."""
    from planlineage.gateway.submissions import Lineage

    lineage = Lineage(store, settings, jobmanager, say=_say)
    lineage.start_following()
    return lineage.job_submitted, lineage.stop


def _nothing() -> None:
    return None


def _stop_on_sigterm() -> None:
    """SIGTERM (a service manager's stop) ends the proxy as Ctrl-C does: the queue drained."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def configure(name: str, parser) -> None:
    parser.add_argument(
        "--listen",
        required=True,
        metavar="HOST:PORT",
        help="the address clients connect to instead of the gateway, e.g. 127.0.0.1:8084 (port 0 picks a free one)",
    )
    parser.add_argument(
        "--sql-gateway",
        required=True,
        metavar="URL",
        help="the Flink SQL Gateway's REST address every call is forwarded to, e.g. http://127.0.0.1:8083",
    )
    parser.add_argument(
        "--jobmanager",
        default=None,
        metavar="URL",
        help="the Flink JobManager's REST address, to follow each submitted job's state (RUNNING, COMPLETE, "
        "FAIL, ABORT); default: the one the gateway's configuration names",
    )
    parser.set_defaults(run=cmd_gateway)
