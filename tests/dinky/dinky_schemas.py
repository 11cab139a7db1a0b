"""Dinky's tables as the tests create them, per generation and dialect, written from the facts in
docs/dinky.md (read from DataLinkDC/dinky's Flyway baseline ``V20240506.1.0.2__baseline.sql`` for
MySQL and PostgreSQL, and the 1.3.0 migration that adds ``is_delete``).  Only the columns the
console writes in the scenarios and the watcher reads, plus enough neighbours to keep the shape.

Generations: ``"1.2"`` (1.0.2 baseline to 1.2.x: no soft delete) and ``"1.3"`` (``is_delete`` on
the task, job-instance, history, cluster and fragment tables).
"""

from __future__ import annotations

# Column kind -> (MySQL, PostgreSQL).
TYPES = {
    "id": ("int not null auto_increment", "serial"),
    "int": ("int default null", "int"),
    "bigint": ("bigint default null", "bigint"),
    "str": ("varchar(255) default null", "varchar(255)"),
    "str50": ("varchar(50) default null", "varchar(50)"),
    "text": ("mediumtext", "text"),
    "bool": ("tinyint(1) default 0", "boolean default false"),
    "enabled": ("tinyint(1) not null default 1", "boolean not null default true"),
    "small": ("tinyint(4) default 1", "smallint default 1"),
    "ts": ("datetime not null default current_timestamp", "timestamp not null default current_timestamp"),
    "ts_null": ("datetime default null", "timestamp"),
}

TABLES = {
    "dinky_task": [
        ("id", "id"), ("name", "str"), ("tenant_id", "int"), ("dialect", "str50"), ("type", "str50"),
        ("fragment", "bool"), ("statement_set", "bool"), ("batch_model", "bool"), ("cluster_id", "int"),
        ("cluster_configuration_id", "int"), ("env_id", "int"), ("config_json", "text"), ("step", "int"),
        ("job_instance_id", "bigint"), ("enabled", "enabled"), ("create_time", "ts"), ("update_time", "ts"),
        ("version_id", "int"), ("statement", "text"),
    ],
    "dinky_job_instance": [
        ("id", "id"), ("name", "str"), ("tenant_id", "int"), ("task_id", "int"), ("step", "int"),
        ("cluster_id", "int"), ("jid", "str50"), ("status", "str50"), ("history_id", "int"),
        ("create_time", "ts"), ("update_time", "ts"), ("finish_time", "ts_null"), ("duration", "bigint"),
        ("error", "text"), ("failed_restart_count", "int"),
    ],
    "dinky_history": [
        ("id", "id"), ("tenant_id", "int"), ("cluster_id", "int"), ("job_id", "str"), ("job_name", "str"),
        ("status", "int"), ("type", "str50"), ("statement", "text"), ("error", "text"), ("start_time", "ts_null"),
        ("end_time", "ts_null"), ("task_id", "int"),
    ],
    "dinky_cluster": [
        ("id", "id"), ("tenant_id", "int"), ("name", "str"), ("type", "str50"), ("hosts", "text"),
        ("version", "str50"), ("status", "int"), ("enabled", "enabled"), ("create_time", "ts"),
    ],
    "dinky_fragment": [
        ("id", "id"), ("name", "str50"), ("tenant_id", "int"), ("fragment_value", "text"), ("enabled", "small"),
        ("create_time", "ts"), ("update_time", "ts"),
    ],
}  # fmt: skip


def ddl(generation: str, dialect: str) -> list[str]:
    mysql = dialect == "mysql"
    statements = []
    for table, columns in TABLES.items():
        lines = [f"{quote(dialect, n)} {TYPES[k][0 if mysql else 1]}" for n, k in columns]
        if generation == "1.3":
            lines.append(
                f"{quote(dialect, 'is_delete')} {'tinyint(1) default 0' if mysql else 'boolean default false'}"
            )
        lines.append(f"primary key ({quote(dialect, 'id')})")
        tail = " engine=innodb default charset=utf8mb4" if mysql else ""
        statements.append(f"create table {quote(dialect, table)} ({', '.join(lines)}){tail}")
    return statements


def quote(dialect: str, name: str) -> str:
    return f"`{name}`" if dialect == "mysql" else f'"{name}"'
