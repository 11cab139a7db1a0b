"""Identity of catalog tables (Paimon, Iceberg, Hive, JDBC, Hudi): vectors, and the unknown type."""

import pytest

from planlineage.registry import load_config, resolve

T = "planlineage.catalog-type"
P = "planlineage.catalog."


def catalog(kind, table, **props):
    options = {"connector": kind, T: kind, **{P + k.replace("_", "-"): v for k, v in props.items()}}
    return resolve(options, table=table)


def named(resolution):
    return [(d.namespace, d.name, [(s.namespace, s.name) for s in d.symlinks]) for d in resolution.datasets]


VECTORS = [
    # Paimon: {warehouse}/{db}.db/{table}, named as a file location
    (
        ("paimon", "lake.ods.users", {"warehouse": "s3://bucket/wh"}),
        [("s3://bucket", "wh/ods.db/users", [("s3://bucket", "lake.ods.users")])],
    ),
    (
        ("paimon", "p.dw.t", {"warehouse": "hdfs://nn:8020/paimon/", "metastore": "hive", "uri": "thrift://hms:9083"}),
        [("hdfs://nn:8020", "/paimon/dw.db/t", [("hdfs://nn:8020", "p.dw.t"), ("hive://hms:9083", "dw.t")])],
    ),
    (
        ("paimon", "p.dw.t", {"warehouse": "file:///tmp/paimon"}),
        [("file", "/tmp/paimon/dw.db/t", [("file", "p.dw.t")])],
    ),
    # Iceberg: the Hive catalog (its default type) puts a table under {warehouse}/{db}.db/
    (
        (
            "iceberg",
            "ice.sales.orders",
            {"uri": "thrift://hms-1:9083,thrift://hms-2:9083", "warehouse": "s3a://lake/wh"},
        ),
        [
            (
                "s3://lake",
                "wh/sales.db/orders",
                [("s3://lake", "ice.sales.orders"), ("hive://hms-1:9083", "sales.orders")],
            )
        ],
    ),
    (
        ("iceberg", "ice.sales.orders", {"catalog_type": "hadoop", "warehouse": "hdfs://nn:8020/warehouse/path"}),
        [("hdfs://nn:8020", "/warehouse/path/sales/orders", [("hdfs://nn:8020", "ice.sales.orders")])],
    ),
    # Hive catalog: the metastore's name of the table
    (
        ("hive", "h.crm.users", {"hive.metastore.uris": "thrift://meta.prod:9083"}),
        [("hive://meta.prod:9083", "crm.users", [("hive://meta.prod:9083", "h.crm.users")])],
    ),
    # JDBC catalog: the registry's jdbc rule on base-url + database
    (
        ("jdbc", "pg.shop.public.orders", {"base_url": "jdbc:postgresql://pg.prod:5432/"}),
        [],  # four parts: not a catalog.database.table identifier
    ),
    (
        ("jdbc", "my.shop.orders", {"base_url": "jdbc:mysql://My.Db:3306", "username": "app"}),
        [("mysql://my.db:3306", "shop.orders", [])],  # no TABLE symlink: openlineage-flink's JDBC visitor gives none
    ),
    # Hudi's DFS catalog
    (("hudi", "hu.db1.t1", {"catalog.path": "s3a://b/hudi"}), [("s3://b", "hudi/db1/t1", [("s3://b", "hu.db1.t1")])]),
]


@pytest.mark.parametrize("given,expected", VECTORS)
def test_catalog_table_vectors(given, expected):
    kind, table, props = given
    assert named(catalog(kind, table, **props)) == expected


def test_a_metastore_uri_from_a_readable_hive_conf_dir(tmp_path):
    (tmp_path / "hive-site.xml").write_text(
        "<configuration><property><name>hive.metastore.uris</name>"
        "<value>thrift://hms.prod:9083</value></property></configuration>"
    )
    res = catalog("hive", "h.db.t", hive_conf_dir=str(tmp_path))
    assert named(res) == [("hive://hms.prod:9083", "db.t", [("hive://hms.prod:9083", "h.db.t")])]
    res = catalog("hive", "h.db.t", hive_conf_dir=str(tmp_path / "absent"))
    assert res.datasets == [] and "metastore address" in res.warnings[0]


def test_iceberg_connector_tables_name_like_its_catalog():
    options = {
        "connector": "iceberg",
        "catalog-name": "c",
        "catalog-type": "hadoop",
        "warehouse": "hdfs://nn:8020/wh",
        "catalog-database": "db",
        "catalog-table": "t",
    }
    assert named(resolve(options, table="default_catalog.default_database.x"))[0][:2] == ("hdfs://nn:8020", "/wh/db/t")


def test_catalogs_that_keep_locations_elsewhere_give_no_guess():
    res = catalog("iceberg", "ice.db.t", catalog_type="rest", uri="https://rest.prod/api", warehouse="s3://w")
    assert res.datasets == [] and "keeps table locations in the catalog" in res.warnings[0]


def test_an_unknown_catalog_type_warns_and_guesses_nothing():
    res = catalog("acme-lake", "a.db.t", endpoint="https://lake.acme")
    assert res.datasets == []
    assert res.warnings == [
        "table a.db.t: no identity rule for catalog type 'acme-lake'; only the Flink table is known"
    ]


def test_gravitino_profile_names_catalog_tables_by_metalake():
    config = load_config(None, profile="gravitino", metalake="prod_lake")
    options = {"connector": "paimon", T: "paimon", P + "warehouse": "s3://bucket/wh"}
    (dataset,) = resolve(options, table="lake.ods.users", config=config).datasets
    assert (dataset.namespace, dataset.name) == ("prod_lake", "lake.ods.users")
    assert [(s.namespace, s.name, s.type) for s in dataset.symlinks] == [("s3://bucket", "wh/ods.db/users", "LOCATION")]


def test_catalog_secrets_never_reach_an_identity():
    res = catalog("jdbc", "my.shop.orders", base_url="jdbc:mysql://app:hunter2-FAKE@db:3306", password="hunter2-FAKE")
    assert "hunter2-FAKE" not in repr(res)
    assert named(res)[0][:2] == ("mysql://db:3306", "shop.orders")


def test_rules_file_table_schemas_are_read_in_order_and_checked(tmp_path):
    from planlineage.registry import ConfigError

    rules = tmp_path / "rules.toml"
    rules.write_text('[tables."lake.ods.t"]\ncolumns = { b = "INT", a = "STRING" }\n')
    assert load_config(rules).schemas == {"lake.ods.t": {"b": "INT", "a": "STRING"}}
    rules.write_text('[tables."t"]\ncolumns = { a = "INT" }\n')
    with pytest.raises(ConfigError, match="catalog.database.table"):
        load_config(rules)
