"""The jars of a StreamPark SQL job, resolved from the console's workspace (real databases)."""

from __future__ import annotations

import json
from datetime import datetime

from servers import WATCH_PASSWORD

from planlineage.streampark import jars, reads
from planlineage.streampark.address import parse
from planlineage.streampark.schema import detect
from planlineage.watch.connection import Source

KAFKA = "mvnrepo/org/apache/flink/flink-connector-kafka/3.3.0-1.20/flink-connector-kafka-3.3.0-1.20.jar"


def _touch(root, relative):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    return str(path)


def test_dependency_json_team_resources_groups_and_the_yarn_application_lib(streampark, tmp_path):
    sp = streampark("dev")
    c = sp.console
    ws = tmp_path / "workspace-local"
    udf, kafka, team = _touch(ws, "uploads/udf.jar"), _touch(ws, KAFKA), _touch(ws, "uploads/100000/team-lib.jar")
    c.insert(
        "t_resource",
        {"resource_name": "team-lib", "resource_type": 3, "resource": json.dumps({"jar": ["team-lib.jar"]}),
         "engine_type": 1, "creator_id": 100000, "team_id": 100000, "create_time": datetime.now()},
    )  # fmt: skip
    library = c.new_id("t_resource")
    c.insert(
        "t_resource",
        {"resource_name": "bundle", "resource_type": 4, "resource": json.dumps([str(library)]), "engine_type": 1,
         "creator_id": 100000, "team_id": 100000, "create_time": datetime.now()},
    )  # fmt: skip
    group = c.new_id("t_resource")
    dependency = {
        "pom": [{"groupId": "org.apache.flink", "artifactId": "flink-connector-kafka", "version": "3.3.0-1.20"}],
        "jar": ["udf.jar", "gone.jar"],
    }
    app = c.create_app("with_jars", "INSERT INTO o SELECT 1", deploy_mode=4, dependency=json.dumps(dependency))
    c.execute("UPDATE t_flink_sql SET team_resource = %s WHERE app_id = %s", (json.dumps([str(group)]), app))
    lib = [_touch(ws, f"workspace/{app}/lib/{name}") for name in ("a-connector.jar", "b-format.jar")]
    c.starting(app)  # the candidate becomes the effective SQL

    with Source(parse(sp.url, password=WATCH_PASSWORD)) as source:
        schema = detect(source)
        found = next(a for a in reads.apps(source, schema) if a.id == app)
        row = reads.effective_sql(source, schema, found)
        resolved = jars.resolve(source, schema, found, row, str(ws))
        assert resolved.paths == [udf, kafka, team, *lib]
        assert resolved.warnings == [f"uploaded jar gone.jar not found at {ws / 'uploads' / 'gone.jar'}"]

        unknown = jars.resolve(source, schema, found, row, None)
        assert unknown.paths == []
        assert unknown.warnings == [
            "the job has dependencies but the console's workspace is unknown: pass --streampark-workspace"
        ]


def test_a_yarn_application_job_without_dependencies_gets_no_workspace_warning(streampark):
    sp = streampark("dev")
    c = sp.console
    bare = c.create_app("bare_yarn_app", "INSERT INTO o SELECT 1", deploy_mode=4)
    empty = c.create_app("empty_deps", "INSERT INTO o SELECT 1", deploy_mode=4, dependency='{"pom":[],"jar":[]}')
    with_jar = c.create_app("with_jar", "INSERT INTO o SELECT 1", dependency=json.dumps({"jar": ["udf.jar"]}))
    for app in (bare, empty, with_jar):
        c.starting(app)
    with Source(parse(sp.url, password=WATCH_PASSWORD)) as source:
        schema = detect(source)
        by_id = {a.id: a for a in reads.apps(source, schema)}
        warned = {
            app: jars.resolve(source, schema, by_id[app], reads.effective_sql(source, schema, by_id[app]), None)
            for app in (bare, empty, with_jar)
        }
    assert warned[bare].warnings == [] and warned[empty].warnings == []
    assert warned[with_jar].warnings == [
        "the job has dependencies but the console's workspace is unknown: pass --streampark-workspace"
    ]
