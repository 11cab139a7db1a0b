"""Two nodes watch one StreamPark while sharing one PostgreSQL state store (planlineage.store):
one leads, every transition is reported once; when the leader is killed, the other takes over
from the shared cursor and snapshot within two poll intervals."""

from __future__ import annotations

import itertools
import os
import signal
import time

from console import FINISHED, RUNNING
from lineages import ONE_SINK, exactly_once, types
from servers import ADMIN_PASSWORD

from planlineage.store.leadership import leaders
from planlineage.store.postgres import PostgresStore

INTERVAL = 1.0
_names = itertools.count()


def wait_for(predicate, timeout: float = 40.0, what: str = "condition"):
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_two_watchers_on_one_shared_store_report_once_and_the_survivor_takes_over(
    streampark, watch, gravitino, pg_server, worker_dir, tmp_path
):
    sp = streampark("dev")
    store_db = f"lineage_store_{os.getpid()}_{next(_names)}"
    with pg_server.admin() as conn:
        conn.execute(f"CREATE DATABASE {store_db}")
    store_url = f"postgresql://postgres:{ADMIN_PASSWORD}@127.0.0.1:{pg_server.port}/{store_db}"
    (tmp_path / "b").mkdir()
    other = type(watch)(tmp_path / "b" / "home", tmp_path / "b", gravitino, worker_dir)
    for node, name in ((watch, "node-a"), (other, "node-b")):
        node.env.update(PLANLINEAGE_STORE=store_url, PLANLINEAGE_NODE=name)
        node.recorded()
    c = sp.console
    app = c.create_app("orders", ONE_SINK)
    daemons = {"node-a": watch.daemon(sp.url, "--interval", str(INTERVAL))}
    daemons["node-b"] = other.daemon(sp.url, "--interval", str(INTERVAL))
    store = PostgresStore(store_url, tmp_path)
    try:
        wait_for(lambda: leaders(store) and leaders(store)[0].alive, what="a leader")
        time.sleep(2 * INTERVAL)  # the leader's baseline poll
        c.start(app)
        c.set_state(app, RUNNING)
        wait_for(lambda: types(gravitino, "streampark.orders") == ["START", "RUNNING"], what="START, RUNNING")
        first = leaders(store)[0].node
        daemons.pop(first).send_signal(signal.SIGKILL)  # the leader dies without handing over
        killed = time.monotonic()
        wait_for(lambda: leaders(store)[0].node != first, timeout=10, what="the other node taking the lead")
        assert time.monotonic() - killed <= 2 * INTERVAL + 1.0  # 2 intervals, plus a poll's own time
        c.set_state(app, FINISHED)
        wait_for(lambda: types(gravitino, "streampark.orders") == ["START", "RUNNING", "COMPLETE"], what="COMPLETE")
        time.sleep(3 * INTERVAL)  # more polls by the new leader: nothing is sent again
        assert types(gravitino, "streampark.orders") == ["START", "RUNNING", "COMPLETE"]
        exactly_once(gravitino)
    finally:
        store.close()
        for process in daemons.values():
            process.send_signal(signal.SIGTERM)
            process.wait(30)
    # the one that stood by said so, naming the leader, and said when it took over
    survivor = {"node-a": watch, "node-b": other}[next(iter(daemons))]
    said = survivor.log.read_text()
    assert f"another watcher on node {first} (pid " in said and "this one stands by and takes over within 2s" in said
    assert "this watcher leads now" in said
