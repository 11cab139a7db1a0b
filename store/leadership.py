"""Leadership among nodes: one holder at a time per name, by a lease row in the store.

Made for the StreamPark watcher (every node runs it, one leads), usable by anything that must run
on one node only.  A lease row (table ``leaders``) rather than a PostgreSQL advisory lock: it
works on both backends, shows who leads (``planlineage store status``), and outlives no one (a
session lock held by a hung-but-connected process would never pass on; a lease runs out).

The watcher's loop, with ``interval`` its poll interval::

    leadership = Leadership(store, "streampark-watch", interval=interval)
    while running:
        if leadership.acquire():            # takes a free or expired lease, or renews our own
            poll_once()                      # only the leader polls and reports
            sleep(interval)
        else:
            sleep(leadership.follower_poll)  # followers look twice per interval
    leadership.release()                     # on SIGTERM: the next node takes over at once

The lease lasts 1.5 intervals and the leader renews it every interval, so a healthy leader keeps
it; when the leader dies its lease runs out at most 1.5 intervals after its last renewal and a
follower, checking every half interval, takes over within 2 intervals.  Times are the store's
clock, so nodes whose clocks drift agree.  A leader whose ``acquire``/``renew`` answers False has
lost the lease (e.g. it stalled past it) and must stop reporting before its next poll.
"""

from __future__ import annotations

from dataclasses import dataclass

from planlineage.clock import utc_now
from planlineage.store.node import new_holder, node_of


@dataclass(frozen=True)
class Leader:
    name: str
    holder: str
    node: str
    lease_until: float
    acquired: str
    renewed: str
    seconds_left: float  # negative: expired, the next candidate takes over

    @property
    def alive(self) -> bool:
        return self.seconds_left >= 0


class Leadership:
    def __init__(self, store, name: str, *, interval: float, holder: str | None = None):
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.store = store
        self.name = name
        self.interval = float(interval)
        self.holder = holder or new_holder()

    @property
    def lease_seconds(self) -> float:
        return 1.5 * self.interval

    @property
    def follower_poll(self) -> float:
        return self.interval / 2

    def acquire(self) -> bool:
        """Take the lead if it is free or expired, or extend ours; whether we lead now."""

        def take(conn) -> bool:
            now = conn.clock()
            stamp = utc_now()
            conn.execute(
                "INSERT INTO leaders (name, holder, lease_until, acquired, renewed) "
                "VALUES (:name, :holder, :until, :stamp, :stamp) "
                "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until, "
                "acquired = CASE WHEN leaders.holder = excluded.holder "
                "THEN leaders.acquired ELSE excluded.acquired END, "
                "renewed = excluded.renewed "
                "WHERE leaders.holder = excluded.holder OR leaders.lease_until < :now",
                {
                    "name": self.name,
                    "holder": self.holder,
                    "until": now + self.lease_seconds,
                    "stamp": stamp,
                    "now": now,
                },
            )
            row = conn.execute("SELECT holder FROM leaders WHERE name = ?", (self.name,)).fetchone()
            return row is not None and row["holder"] == self.holder

        return bool(self.store.write(take, exclusive=False))

    def renew(self) -> bool:
        """Extend our lease; False if we no longer lead (stop acting as the leader)."""

        def extend(conn) -> bool:
            cursor = conn.execute(
                "UPDATE leaders SET lease_until = ?, renewed = ? WHERE name = ? AND holder = ? AND lease_until >= ?",
                (conn.clock() + self.lease_seconds, utc_now(), self.name, self.holder, conn.clock()),
            )
            return cursor.rowcount == 1

        return bool(self.store.write(extend, exclusive=False))

    def release(self) -> None:
        """Give the lead up (a clean stop): another node takes over at its next look."""
        if self.store.exists():
            self.store.write(
                lambda c: c.execute("DELETE FROM leaders WHERE name = ? AND holder = ?", (self.name, self.holder)),
                exclusive=False,
            )

    def leader(self) -> Leader | None:
        return leader(self.store, self.name)


def leaders(store) -> list[Leader]:
    """Every leadership row, with the seconds its lease has left (store clock)."""

    def read(conn) -> list[Leader]:
        now = conn.clock()
        return [
            Leader(
                name=r["name"],
                holder=r["holder"],
                node=node_of(r["holder"]),
                lease_until=float(r["lease_until"]),
                acquired=r["acquired"],
                renewed=r["renewed"],
                seconds_left=float(r["lease_until"]) - now,
            )
            for r in conn.execute("SELECT * FROM leaders ORDER BY name")
        ]

    return store.read(read, default=[])


def leader(store, name: str) -> Leader | None:
    """Who leads ``name`` (possibly with an expired lease), or None."""
    return next((item for item in leaders(store) if item.name == name), None)
