"""--flink-home: which jars of a Flink installation are compiled with."""

import pytest

from planlineage.errors import FlinkHomeError
from planlineage.planner.cluster_jars import cluster_jars


def test_lib_jars_and_opt_connectors_without_flinks_own(tmp_path):
    lib, opt = tmp_path / "lib", tmp_path / "opt"
    lib.mkdir()
    opt.mkdir()
    for name in [
        "flink-dist-1.20.1.jar",
        "flink-table-api-java-uber-1.20.1.jar",
        "flink-table-runtime-1.20.1.jar",
        "flink-table-planner-loader-1.20.1.jar",
        "flink-csv-1.20.1.jar",
        "flink-json-1.20.1.jar",
        "flink-connector-files-1.20.1.jar",
        "flink-cep-1.20.1.jar",
        "log4j-core-2.17.1.jar",
        "flink-sql-connector-kafka-3.3.0-1.20.jar",
        "paimon-flink-1.20-1.0.jar",
        "acme-udfs.jar",
        "README.txt",
    ]:
        (lib / name).write_text("")
    for name in [
        "flink-python-1.20.1.jar",
        "flink-sql-client-1.20.1.jar",
        "flink-s3-fs-hadoop-1.20.1.jar",
        "flink-table-planner_2.12-1.20.1.jar",
        "flink-sql-connector-hive-3.1.3_2.12-1.20.1.jar",
        "flink-sql-avro-1.20.1.jar",
        "some-tool.jar",
    ]:
        (opt / name).write_text("")
    assert [p.split("/")[-2] + "/" + p.split("/")[-1] for p in cluster_jars(str(tmp_path))] == [
        "lib/acme-udfs.jar",
        "lib/flink-sql-connector-kafka-3.3.0-1.20.jar",
        "lib/paimon-flink-1.20-1.0.jar",
        "opt/flink-sql-avro-1.20.1.jar",
        "opt/flink-sql-connector-hive-3.1.3_2.12-1.20.1.jar",
    ]


def test_no_flink_home_no_jars_and_a_wrong_one_says_what_to_pass(tmp_path):
    assert cluster_jars(None) == []
    with pytest.raises(FlinkHomeError, match="has no lib/ folder"):
        cluster_jars(str(tmp_path))
