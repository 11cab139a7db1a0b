"""Configuration loading: profiles, user-rule templates and resolvers; clear ConfigErrors."""

from __future__ import annotations

from pathlib import Path

import pytest

from planlineage.registry import ConfigError, IdentityConfig, load_config, resolve


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "identity.toml"
    path.write_text(text)
    return path


def test_defaults():
    cfg = load_config(None)
    assert isinstance(cfg, IdentityConfig)
    assert (cfg.profile, cfg.metalake, dict(cfg.rules), cfg.resolvers) == ("openlineage", None, {}, ())


def test_gravitino_needs_metalake():
    with pytest.raises(ConfigError) as err:
        load_config(None, profile="gravitino")
    assert str(err.value) == "the gravitino identity profile needs a metalake name (dataset namespace)"
    assert load_config(None, profile="gravitino", metalake="ml").metalake == "ml"


def test_unknown_profile():
    with pytest.raises(ConfigError) as err:
        load_config(None, profile="marquez")
    assert str(err.value) == "unknown identity profile 'marquez' (known: openlineage, gravitino)"


def test_missing_file(tmp_path):
    path = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}: identity configuration file not found"


def test_bad_toml(tmp_path):
    path = _write(tmp_path, "[connectors.doris\nnamespace = 1\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}: not valid TOML: ")


@pytest.mark.parametrize(
    "rule,problem",
    [
        (
            'namespace = "doris://{fenodes"\nname = "{table.identifier}"',
            "namespace template 'doris://{fenodes': unclosed '{' at position 8",
        ),
        (
            'namespace = "doris://{fenodes}"\nname = "{$tabel}"',
            "name template '{$tabel}': unknown table field '{$tabel}' (known: {$table}, {$catalog}, {$database}, {$object})",
        ),
        (
            'namespace = "doris://{}"\nname = "x"',
            "namespace template 'doris://{}': empty placeholder '{}' at position 8",
        ),
        (
            'namespace = "doris://{fe nodes}"\nname = "x"',
            "namespace template 'doris://{fe nodes}': invalid placeholder '{fe nodes}' at position 8: an option key may hold only letters, digits, '_', '.' and '-', a table field starts with '$'",
        ),
        (
            'namespace = "doris://x}"\nname = "x"',
            "namespace template 'doris://x}': unmatched '}' at position 9 (write '}}' for a literal brace)",
        ),
        (
            'namespace = "doris://{password}"\nname = "x"',
            "namespace template 'doris://{password}': placeholder '{password}' names a secret option",
        ),
        ('namespace = "doris://{fenodes}"', "missing 'name' template"),
        ('name = "x"', "missing 'namespace' template"),
        ('namespace = ""\nname = "x"', "'namespace' must be a non-empty string template"),
        ('namespace = "d://{a}"\nname = "x"\nnmae = "y"', "unknown key(s) nmae (expected namespace, name)"),
    ],
)
def test_malformed_rule_names_file_connector_and_problem(tmp_path, rule, problem):
    path = _write(tmp_path, f"[connectors.doris]\n{rule}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}: [connectors.doris]: {problem}"


def test_unknown_top_level_key(tmp_path):
    path = _write(tmp_path, '[connector.doris]\nnamespace = "x"\nname = "y"\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert (
        str(err.value) == f"{path}: unknown top-level key(s) connector "
        "(expected [connectors.*], [dataset.namespaceResolvers.*], [tables.*])"
    )


@pytest.mark.parametrize(
    "body,problem",
    [
        (
            'type = "hostlist2"\nhosts = ["a"]',
            "resolver 'r': type must be one of hostList, pattern, patternGroup (got 'hostlist2')",
        ),
        ('type = "hostList"', 'resolver \'r\': hosts must be a list of strings, e.g. ["k1", "k2"] or [k1;k2]'),
        ('type = "hostList"\nhosts = ["a"]\nhost = "b"', "resolver 'r': unknown setting(s) host"),
        (
            'type = "pattern"\nregex = "("',
            "resolver 'r': invalid regex '(': missing ), unterminated subpattern at position 0",
        ),
        (
            'type = "patternGroup"\nregex = "(?<c>a)"\nmatchingGroup = "d"',
            "resolver 'r': matchingGroup must name a group of the regex",
        ),
    ],
)
def test_bad_resolver(tmp_path, body, problem):
    path = _write(tmp_path, f"[dataset.namespaceResolvers.r]\n{body}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}: dataset.namespaceResolvers: {problem}"


def test_resolver_type_is_case_insensitive():
    cfg = load_config(
        None,
        properties={
            "openlineage.dataset.namespaceResolvers.c.type": "HOSTLIST",
            "openlineage.dataset.namespaceResolvers.c.hosts": "[h1]",
        },
    )
    assert (
        resolve({"connector": "kafka", "properties.bootstrap.servers": "h1:9092", "topic": "t"}, config=cfg)
        .datasets[0]
        .namespace
        == "kafka://c:9092"
    )


def test_flat_properties_errors():
    with pytest.raises(ConfigError) as err:
        load_config(
            None,
            properties={"dataset.namespaceResolvers.c.type": "hostList", "dataset.namespaceResolvers.c.hosts": "h1"},
        )
    assert (
        str(err.value)
        == '<properties>: dataset.namespaceResolvers: resolver \'c\': hosts must be a list of strings, e.g. ["k1", "k2"] or [k1;k2]'
    )
    with pytest.raises(ConfigError) as err:
        load_config(None, properties={"dataset.namespaceResolvers.a.b.type": "hostList"})
    assert (
        str(err.value)
        == "<properties>: dataset.namespaceResolvers: property 'dataset.namespaceResolvers.a.b.type': expected dataset.namespaceResolvers.<name>.<setting>"
    )


def test_flat_properties_ignore_other_keys_and_blank_values():
    cfg = load_config(
        None, properties={"openlineage.transport.type": "http", "openlineage.dataset.namespaceResolvers.c.schema": "  "}
    )
    with pytest.raises(ConfigError):
        # 'c' has no type: the blank schema is skipped, so the resolver is incomplete
        load_config(None, properties={"openlineage.dataset.namespaceResolvers.c.hosts": "[a]"})
    assert cfg.resolvers == ()


def test_first_changing_resolver_wins(tmp_path):
    path = _write(
        tmp_path,
        '[dataset.namespaceResolvers.first]\ntype = "hostList"\nhosts = ["nomatch", "h1"]\n'
        '[dataset.namespaceResolvers.second]\ntype = "hostList"\nhosts = ["h1"]\n',
    )
    res = resolve(
        {"connector": "kafka", "properties.bootstrap.servers": "h1:9092", "topic": "t"}, config=load_config(path)
    )
    assert res.datasets[0].namespace == "kafka://first:9092"


def test_cdc_source_and_jdbc_read_meet():
    cdc = resolve({"connector": "mysql-cdc", "hostname": "DB.prod", "database-name": "shop", "table-name": "orders"})
    jdbc = resolve({"connector": "jdbc", "url": "jdbc:mysql://db.prod:3306/shop", "table-name": "orders"})
    assert (
        [(d.namespace, d.name) for d in cdc.datasets]
        == [(d.namespace, d.name) for d in jdbc.datasets]
        == [("mysql://db.prod:3306", "shop.orders")]
    )
