"""The store's schema, as numbered steps applied in order, the same steps on both backends.

A step is applied once: SQLite records the version reached in ``PRAGMA user_version`` (inside
the write transaction that applies it), PostgreSQL in the table ``schema_version`` of the
store's own schema (inside one transaction holding an advisory lock, so two nodes starting at
once apply each step once).  Steps run on the first write of a process, or by hand with
``planlineage store migrate``.  A store whose version is newer than this code knows is refused
(an older node must not write into a newer layout): upgrade planlineage on that node.

A step is one tuple of statements for both backends, or a dict of them per dialect where the SQL
cannot be shared (SQLite rebuilds a table to change a constraint, PostgreSQL alters it).
Add a step at the end; never edit a released one.  ``{serial}``, ``{float}`` and ``{bigint}`` are
filled per backend (:data:`planlineage.store.dialect.DDL`).
"""

from __future__ import annotations

from planlineage.store.dialect import POSTGRESQL, SQLITE, ddl

# Past runs reported once (planlineage.history.ledger): a second replay and a live watcher skip them.
HISTORY_RUNS = """CREATE TABLE IF NOT EXISTS history_runs (
    run_key    TEXT PRIMARY KEY,
    run_id     TEXT NOT NULL,
    app_id     TEXT NOT NULL,
    started_at TEXT NOT NULL,
    how        TEXT NOT NULL,
    recorded   TEXT NOT NULL
)"""
# Runs a resubmission replaced: their recorded transitions, then ABORT if still open (lifecycle.runs).
_CLOSING = """CREATE TABLE IF NOT EXISTS closing (
    run_id     TEXT PRIMARY KEY,
    app_id     TEXT NOT NULL,
    job_name   TEXT NOT NULL,
    namespace  TEXT NOT NULL,
    lineage    TEXT NOT NULL,
    sql        TEXT,
    pending    TEXT NOT NULL DEFAULT '[]',
    abort      INTEGER NOT NULL DEFAULT 1,
    created    TEXT NOT NULL,
    closed_at  TEXT NOT NULL
)"""
# The compile job of a submission (raw SQL: the compile needs it; the row is deleted once the run
# has its lineage), leased to the node compiling it; one row per leadership (the StreamPark watcher).
_LEASE_TABLES = (
    """CREATE TABLE IF NOT EXISTS compile_jobs (
        run_id      TEXT PRIMARY KEY,
        app_id      TEXT NOT NULL,
        job         TEXT NOT NULL,
        attempts    INTEGER NOT NULL DEFAULT 0,
        claimed_by  TEXT,
        claim_until {float},
        created     TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS leaders (
        name        TEXT PRIMARY KEY,
        holder      TEXT NOT NULL,
        lease_until {float} NOT NULL,
        acquired    TEXT NOT NULL,
        renewed     TEXT NOT NULL
    )""",
)
# Settings every node shares; a node's SQLite file has none (they live in the node's file).
_SHARED_SETTINGS = """CREATE TABLE IF NOT EXISTS settings (
    key     TEXT PRIMARY KEY,
    value   TEXT NOT NULL,
    updated TEXT NOT NULL
)"""

# Step 6: the outbox with a backend per row (SQLite rebuilds the table: its UNIQUE and CHECK change).
_PARKED_KINDS = "parked IS NULL OR parked IN ('access', 'event', 'capped', 'backend')"
_OUTBOX_PER_BACKEND = f"""CREATE TABLE outbox (
    id           {{serial}},
    backend      TEXT NOT NULL DEFAULT '',
    run_id       TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    event_type   TEXT NOT NULL,
    job_name     TEXT NOT NULL,
    payload      TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'parked')),
    parked       TEXT CHECK ({_PARKED_KINDS}),
    attempts     INTEGER NOT NULL DEFAULT 0,
    first_failed {{float}},
    next_attempt {{float}},
    last_error   TEXT,
    created      TEXT NOT NULL,
    claimed_by   TEXT,
    claim_until  {{float}},
    UNIQUE (backend, run_id, job_name, event_type)
)"""
_OUTBOX_V5_COLUMNS = (
    "id, run_id, seq, event_type, job_name, payload, status, parked, attempts, first_failed, next_attempt, "
    "last_error, created, claimed_by, claim_until"
)
# A run's rows by seq whatever their backend: queueing reads a run's last seq and whether an event
# is queued at any backend; a claim looks at the run's earlier rows (a few per backend).
_OUTBOX_INDEXES = (
    "CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (status, backend, id)",
    "CREATE INDEX IF NOT EXISTS outbox_run ON outbox (run_id, seq)",
)

# Step 7: what the outbox knows of each backend as a whole (planlineage.emitter.outbox_health): a
# wait it asked for (Retry-After), a wait it earned by hanging (timeouts), since when it fails.
_OUTBOX_BACKENDS = """CREATE TABLE IF NOT EXISTS outbox_backends (
    backend       TEXT PRIMARY KEY,
    not_before    {float},
    failing_since {float},
    probe_at      {float},
    timeouts      INTEGER NOT NULL DEFAULT 0,
    reason        TEXT
)"""

# Step 8: why a run was dropped without lineage (planlineage.lifecycle.drop_reasons), for a watcher
# to say; written with the drop, removed by the watcher that says it (or after a week).
_DROPPED_RUNS = """CREATE TABLE IF NOT EXISTS dropped_runs (
    run_id  TEXT PRIMARY KEY,
    app_id  TEXT NOT NULL,
    reason  TEXT NOT NULL,
    dropped {float} NOT NULL
)"""

# Step 9: the tables of step 4 belong to every platform watcher, not StreamPark alone; an app's key
# is a job's key (a StreamPark app, a Dinky task, a SQL Gateway job).
_WATCH_RENAMES = (
    "ALTER TABLE streampark_watch RENAME TO watch_cursors",
    "ALTER TABLE streampark_apps RENAME TO watch_jobs",
    "ALTER TABLE watch_jobs RENAME COLUMN app_key TO job_key",
    "ALTER TABLE streampark_compiles RENAME TO watch_compiles",
    "ALTER TABLE watch_compiles RENAME COLUMN app_key TO job_key",
)
# PostgreSQL keeps a renamed table's primary-key index under its old name; SQLite renames its own.
_WATCH_KEY_RENAMES = (
    "ALTER INDEX IF EXISTS streampark_watch_pkey RENAME TO watch_cursors_pkey",
    "ALTER INDEX IF EXISTS streampark_apps_pkey RENAME TO watch_jobs_pkey",
    "ALTER INDEX IF EXISTS streampark_compiles_pkey RENAME TO watch_compiles_pkey",
)

# Step 10: the SQL Gateway proxy's sessions (planlineage.gateway.ledger documents them): each
# session's properties and statements in order, so a restarted proxy continues a session its client
# keeps using, and the job ids already handed to the lineage side, so none is handed over twice.
_GATEWAY_TABLES = (
    """CREATE TABLE IF NOT EXISTS gateway_sessions (
        gateway    TEXT NOT NULL,
        session    TEXT NOT NULL,
        properties TEXT NOT NULL DEFAULT '{{}}',
        opened     INTEGER NOT NULL DEFAULT 1,
        created    {float} NOT NULL,
        used       {float} NOT NULL DEFAULT 0,
        PRIMARY KEY (gateway, session)
    )""",
    """CREATE TABLE IF NOT EXISTS gateway_statements (
        gateway   TEXT NOT NULL,
        session   TEXT NOT NULL,
        seq       INTEGER NOT NULL,
        kind      TEXT NOT NULL,
        statement TEXT NOT NULL,
        operation TEXT,
        recorded  {float} NOT NULL,
        PRIMARY KEY (gateway, session, seq)
    )""",
    """CREATE TABLE IF NOT EXISTS gateway_jobs_seen (
        job_id    TEXT PRIMARY KEY,
        gateway   TEXT NOT NULL,
        session   TEXT NOT NULL,
        operation TEXT NOT NULL,
        seen      {float} NOT NULL
    )""",
)

MIGRATIONS: list[tuple[int, str, tuple[str, ...] | dict[str, tuple[str, ...]]]] = [
    (
        1,
        "runs and the outbox (version-1 SQLite files also hold a settings table, read once by the settings)",
        (
            """CREATE TABLE IF NOT EXISTS runs (
                app_id         TEXT PRIMARY KEY,
                run_id         TEXT NOT NULL,
                job_name       TEXT NOT NULL,
                namespace      TEXT NOT NULL,
                lineage        TEXT,
                sql            TEXT,
                platform_state TEXT,
                last_event     TEXT,
                pending        TEXT NOT NULL DEFAULT '[]',
                created        TEXT NOT NULL,
                updated        TEXT NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS outbox (
                id          {serial},
                run_id      TEXT NOT NULL,
                seq         INTEGER NOT NULL,
                event_type  TEXT NOT NULL,
                job_name    TEXT NOT NULL,
                payload     TEXT NOT NULL,
                status      TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'rejected')),
                attempts    INTEGER NOT NULL DEFAULT 0,
                last_error  TEXT,
                created     TEXT NOT NULL,
                claimed_by  TEXT,
                claim_until {float},
                UNIQUE (run_id, job_name, event_type)
            )""",
            "CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (status, id)",
            "CREATE INDEX IF NOT EXISTS outbox_run ON outbox (run_id, seq)",
        ),
    ),
    (
        2,
        "outbox per run: backoff columns, parked instead of rejected; runs being closed",
        {
            # SQLite cannot change a CHECK constraint: the table is rebuilt and its rows carried
            # over (rejected rows become parked 'access', as they were refused for access).
            SQLITE: (
                "ALTER TABLE outbox RENAME TO outbox_v1",
                "DROP INDEX IF EXISTS outbox_pending",
                "DROP INDEX IF EXISTS outbox_run",
                """CREATE TABLE outbox (
                    id           {serial},
                    run_id       TEXT NOT NULL,
                    seq          INTEGER NOT NULL,
                    event_type   TEXT NOT NULL,
                    job_name     TEXT NOT NULL,
                    payload      TEXT NOT NULL,
                    status       TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'parked')),
                    parked       TEXT CHECK (parked IS NULL OR parked IN ('access', 'event', 'capped')),
                    attempts     INTEGER NOT NULL DEFAULT 0,
                    first_failed {float},
                    next_attempt {float},
                    last_error   TEXT,
                    created      TEXT NOT NULL,
                    claimed_by   TEXT,
                    claim_until  {float},
                    UNIQUE (run_id, job_name, event_type)
                )""",
                "CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (status, id)",
                "CREATE INDEX IF NOT EXISTS outbox_run ON outbox (run_id, seq)",
                """INSERT INTO outbox (id, run_id, seq, event_type, job_name, payload, status, parked, attempts,
                                       last_error, created)
                   SELECT id, run_id, seq, event_type, job_name, payload,
                          CASE status WHEN 'rejected' THEN 'parked' ELSE 'pending' END,
                          CASE status WHEN 'rejected' THEN 'access' END, attempts, last_error, created
                   FROM outbox_v1""",
                "DROP TABLE outbox_v1",
                _CLOSING,
            ),
            POSTGRESQL: (
                "ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_status_check",
                "ALTER TABLE outbox ADD COLUMN parked TEXT "
                "CHECK (parked IS NULL OR parked IN ('access', 'event', 'capped')), "
                "ADD COLUMN first_failed {float}, ADD COLUMN next_attempt {float}",
                "UPDATE outbox SET status = 'parked', parked = 'access' WHERE status = 'rejected'",
                "ALTER TABLE outbox ADD CONSTRAINT outbox_status_check CHECK (status IN ('pending', 'parked'))",
                _CLOSING,
            ),
        },
    ),
    (
        3,
        "compile jobs and leadership leases shared by the nodes; shared settings (PostgreSQL)",
        {SQLITE: _LEASE_TABLES, POSTGRESQL: (_SHARED_SETTINGS, *_LEASE_TABLES)},
    ),
    (
        4,
        "the StreamPark watcher's cursor, snapshot and compiles",
        (
            # planlineage.watch.ledger documents these (renamed by step 9); on a shared store every node's
            # watcher continues from the same cursor when it takes the lead.
            """CREATE TABLE IF NOT EXISTS streampark_watch (
                source  TEXT PRIMARY KEY,
                cursor  {bigint} NOT NULL,
                updated TEXT NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS streampark_apps (
                source     TEXT NOT NULL,
                app_key    TEXT NOT NULL,
                state      INTEGER,
                job_id     TEXT NOT NULL DEFAULT '',
                run_job_id TEXT,
                lost_since {float},
                lost_sent  INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (source, app_key)
            )""",
            """CREATE TABLE IF NOT EXISTS streampark_compiles (
                run_id   TEXT PRIMARY KEY,
                source   TEXT NOT NULL,
                app_key  TEXT NOT NULL,
                job_name TEXT NOT NULL,
                started  {float} NOT NULL
            )""",
        ),
    ),
    (
        5,
        "past runs a platform recorded that were reported (history replay and live watchers)",
        # planlineage.history.ledger documents it: a second replay and a live watcher skip them.
        (HISTORY_RUNS,),
    ),
    (
        6,
        "the outbox per backend: one delivery cursor per transport of a composite",
        {
            # A row's backend is the name of the composite transport it goes to; '' is an event
            # queued for whichever transport is configured (planlineage.emitter.outbox_rows fans it
            # out).  Every row before this step keeps '', so a single transport delivers it as before.
            SQLITE: (
                "ALTER TABLE outbox RENAME TO outbox_v5",
                "DROP INDEX IF EXISTS outbox_pending",
                "DROP INDEX IF EXISTS outbox_run",
                _OUTBOX_PER_BACKEND,
                *_OUTBOX_INDEXES,
                f"INSERT INTO outbox ({_OUTBOX_V5_COLUMNS}, backend) SELECT {_OUTBOX_V5_COLUMNS}, '' FROM outbox_v5",
                "DROP TABLE outbox_v5",
            ),
            POSTGRESQL: (
                "ALTER TABLE outbox ADD COLUMN backend TEXT NOT NULL DEFAULT ''",
                "ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_run_id_job_name_event_type_key",
                "ALTER TABLE outbox ADD CONSTRAINT outbox_backend_run_id_job_name_event_type_key "
                "UNIQUE (backend, run_id, job_name, event_type)",
                "ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_parked_check",
                f"ALTER TABLE outbox ADD CONSTRAINT outbox_parked_check CHECK ({_PARKED_KINDS})",
                "DROP INDEX IF EXISTS outbox_pending",
                "DROP INDEX IF EXISTS outbox_run",
                *_OUTBOX_INDEXES,
            ),
        },
    ),
    (7, "the outbox's backends as a whole: Retry-After, timeouts, failing since", (_OUTBOX_BACKENDS,)),
    (8, "why a run was dropped without lineage, for the watchers to say", (_DROPPED_RUNS,)),
    (
        9,
        "the platform watchers' tables under platform-neutral names (watch_cursors, watch_jobs, watch_compiles)",
        # planlineage.watch.ledger documents them: every platform adapter (StreamPark, Dinky, the SQL
        # Gateway) keeps its cursor, snapshot and compiles there.  Renamed in place: rows are kept.
        {SQLITE: _WATCH_RENAMES, POSTGRESQL: (*_WATCH_RENAMES, *_WATCH_KEY_RENAMES)},
    ),
    (10, "the SQL Gateway proxy's sessions, statements and the job ids it handed over", _GATEWAY_TABLES),
]

LATEST = MIGRATIONS[-1][0]


class NewerSchemaError(Exception):
    pass


def steps_after(version: int, dialect: str) -> list[tuple[int, str, list[str]]]:
    """The steps a store at ``version`` still needs, with their statements for ``dialect``."""
    if version > LATEST:
        raise NewerSchemaError(
            f"the store's schema is version {version}, newer than this planlineage knows ({LATEST}): "
            "upgrade planlineage on this node"
        )
    steps = []
    for number, text, statements in MIGRATIONS:
        if number > version:
            own = statements[dialect] if isinstance(statements, dict) else statements
            steps.append((number, text, [ddl(s, dialect) for s in own]))
    return steps
