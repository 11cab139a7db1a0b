"""What ``planlineage store status`` reports: backend, schema version, runs, outbox, leases, leaders."""

from __future__ import annotations

from typing import Any

from planlineage.store import leadership, migrations
from planlineage.store.node import node_of


def collect(store) -> dict[str, Any]:
    """The store's state as plain data (reads only: creates nothing)."""

    def read(conn) -> dict[str, Any]:
        now = conn.clock()
        runs: dict[str, int] = {}
        for row in conn.execute(
            "SELECT CASE WHEN lineage IS NULL THEN 'COMPILING' ELSE COALESCE(platform_state, 'SUBMITTED') END "
            "AS state, COUNT(*) AS n FROM runs GROUP BY 1 ORDER BY 1"
        ):
            runs[row["state"]] = int(row["n"])
        outbox = {
            row["status"]: int(row["n"])
            for row in conn.execute("SELECT status, COUNT(*) AS n FROM outbox GROUP BY status ORDER BY status")
        }
        if outbox.get("parked"):  # why: access (401/403…), event (refused body), capped (retries spent)
            for row in conn.execute(
                "SELECT parked, COUNT(*) AS n FROM outbox WHERE status = 'parked' GROUP BY parked ORDER BY parked"
            ):
                outbox[f"parked {row['parked']}"] = int(row["n"])
        leases: dict[str, dict[str, int]] = {}
        for what, table in (("outbox", "outbox"), ("compile", "compile_jobs")):
            for row in conn.execute(
                f"SELECT claimed_by, COUNT(*) AS n FROM {table} WHERE claim_until >= ? GROUP BY claimed_by", (now,)
            ):
                per_node = leases.setdefault(node_of(row["claimed_by"]), {})
                per_node[what] = per_node.get(what, 0) + int(row["n"])
        expired = conn.execute("SELECT COUNT(*) FROM compile_jobs WHERE claim_until < ?", (now,)).fetchone()[0]
        return {"runs": runs, "outbox": outbox, "leases": leases, "compile_jobs_expired": int(expired)}

    version = store.schema_version()
    body = store.read(read, default=None) if version else None
    if body is None:
        body = {"runs": {}, "outbox": {}, "leases": {}, "compile_jobs_expired": 0}
    return {
        "backend": store.dialect,
        "store": store.describe(),
        "schema_version": version,
        "schema_latest": migrations.LATEST,
        **body,
        "outbox": {"pending": 0, "parked": 0, **body["outbox"]},
        "leaders": [
            {"name": item.name, "node": item.node, "holder": item.holder, "seconds_left": round(item.seconds_left, 1)}
            for item in (leadership.leaders(store) if version else [])
        ],
    }


def render(data: dict[str, Any]) -> str:
    lines = [
        f"backend         {data['store']}",
        f"schema version  {data['schema_version']} (this planlineage: {data['schema_latest']})",
        "runs            " + (", ".join(f"{k} {v}" for k, v in data["runs"].items()) or "none"),
        "outbox          " + ", ".join(f"{k} {v}" for k, v in data["outbox"].items()),
    ]
    if data["leases"]:
        for node, held in sorted(data["leases"].items()):
            lines.append(f"leases          {node}: " + ", ".join(f"{k} {v}" for k, v in sorted(held.items())))
    else:
        lines.append("leases          none")
    if data["compile_jobs_expired"]:
        lines.append(f"                {data['compile_jobs_expired']} compile job(s) wait for a node to take them over")
    for item in data["leaders"]:
        state = f"lease {item['seconds_left']} s left" if item["seconds_left"] >= 0 else "lease expired"
        lines.append(f"leader          {item['name']}: {item['node']} ({item['holder']}, {state})")
    if not data["leaders"]:
        lines.append("leader          none")
    return "\n".join(lines)
