"""Lineage settings: store, environment overrides, masking, `configured()`."""

from __future__ import annotations

import pytest

from planlineage.errors import SettingError
from planlineage.settings import SETTINGS, Settings, env_name, masked

TOKEN = "gravitino-token-0123456789"


def test_env_names():
    assert env_name("lineage.address") == "PLANLINEAGE_LINEAGE_ADDRESS"
    assert env_name("lineage.flink-listener") == "PLANLINEAGE_LINEAGE_FLINK_LISTENER"
    assert set(SETTINGS) >= {
        "lineage.address",
        "lineage.token",
        "lineage.namespace",
        "lineage.flink-listener",
        "lineage.profile",
        "lineage.metalake",
        "lineage.rules",
        "lineage.transport",
        "lineage.endpoint",
        "lineage.file",
    }


def test_defaults_without_a_store(store):
    settings = Settings(store, environ={})
    assert settings.get("lineage.namespace") == "planlineage"
    assert settings.get("lineage.transport") == "gravitino"
    assert settings.config().flink_listener is False
    assert settings.get("lineage.address") is None
    assert settings.configured() is False
    assert settings.list()["lineage.namespace"] == ("planlineage", "default")
    assert not store.exists()


def test_set_get_list_unset(store):
    settings = Settings(store, environ={})
    settings.set("lineage.address", "http://gravitino:8090/")
    settings.set("lineage.flink-listener", "YES")
    assert settings.get("lineage.address") == "http://gravitino:8090"
    assert settings.get("lineage.flink-listener") == "true"
    assert settings.list()["lineage.address"] == ("http://gravitino:8090", "store")
    assert settings.configured() is True
    settings.unset("lineage.address")
    assert settings.get("lineage.address") is None and settings.configured() is False
    settings.set("lineage.namespace", "prod")
    settings.set("lineage.namespace", "")  # empty value unsets
    assert settings.list()["lineage.namespace"] == ("planlineage", "default")


def test_env_overrides_store(store):
    Settings(store, environ={}).set("lineage.address", "http://stored:8090")
    env = {"PLANLINEAGE_LINEAGE_ADDRESS": "http://from-env:8090", "PLANLINEAGE_LINEAGE_FLINK_LISTENER": "on"}
    settings = Settings(store, environ=env)
    assert settings.get("lineage.address") == "http://from-env:8090"
    assert settings.source("lineage.address") == ("http://from-env:8090", "env")
    assert settings.config().flink_listener is True  # "on", from the environment


def test_env_override_from_process_environment(store, monkeypatch):
    monkeypatch.setenv("PLANLINEAGE_LINEAGE_ADDRESS", "http://127.0.0.1:8090")
    settings = Settings(store)
    assert settings.configured() is True
    assert not store.exists()


@pytest.mark.parametrize(
    "key, value",
    [
        ("lineage.unknown", "x"),
        ("lineage.address", "gravitino:8090"),
        ("lineage.transport", "no such kind"),
        ("lineage.transport", "my..Transport"),
        ("lineage.transport-options", "[1, 2]"),
        ("lineage.flink-listener", "maybe"),
    ],
)
def test_invalid_settings_are_refused_without_writing(store, key, value):
    with pytest.raises(SettingError):
        Settings(store, environ={}).set(key, value)
    assert not store.exists()


def test_configured_per_transport(store):
    def settings(**env):
        return Settings(store, environ={f"PLANLINEAGE_LINEAGE_{k.upper()}": v for k, v in env.items()})

    assert settings().configured() is False
    assert settings(address="http://x:1").configured() is True
    assert settings(transport="http").configured() is False
    assert settings(transport="http", address="http://x:1").configured() is True
    assert settings(transport="file").configured() is False
    assert settings(transport="file", file="/tmp/events.jsonl").configured() is True
    assert settings(transport="console").configured() is True
    assert settings(token=TOKEN).configured() is False  # a token alone is not an address


def test_masked_never_prints_the_token():
    shown = masked("lineage.token", TOKEN)
    assert shown == "grav…" and TOKEN not in shown
    assert masked("lineage.token", "short") == "…"
    assert masked("lineage.token", None) == "(unset)"
    assert masked("lineage.namespace", "prod") == "prod"
    address = masked("lineage.address", "http://admin:hunter22@gravitino:8090")
    assert "hunter22" not in address and "gravitino:8090" in address


def test_list_masked_hides_the_token(store):
    settings = Settings(store, environ={"PLANLINEAGE_LINEAGE_TOKEN": TOKEN})
    listed = settings.list_masked()
    assert listed["lineage.token"] == ("grav…", "env")
    assert TOKEN not in repr(listed)


def test_job_namespace_and_transport_options(store):
    settings = Settings(store, environ={"PLANLINEAGE_LINEAGE_METALAKE": "lake"})
    assert settings.config().namespace == "lake"
    settings.set("lineage.namespace", "explicit")
    assert settings.config().namespace == "explicit"
    settings.set("lineage.address", "http://127.0.0.1:8090")
    settings.set("lineage.token", TOKEN)
    assert settings.transport_options() == ("gravitino", {"address": "http://127.0.0.1:8090", "token": TOKEN})
    settings.set("lineage.transport", "http")
    assert settings.transport_options()[1]["endpoint"] == "api/v1/lineage"
    settings.set("lineage.transport", "file")
    settings.set("lineage.file", "/tmp/e.jsonl")
    assert settings.transport_options() == ("file", {"path": "/tmp/e.jsonl"})


def test_a_kept_settings_object_sees_what_another_process_set(store):
    watcher = Settings(store, environ={})  # as `watch` keeps one for its life
    assert watcher.get("lineage.namespace") == "planlineage"
    Settings(store, environ={}).set("lineage.namespace", "platform")  # `settings set`, elsewhere
    assert watcher.get("lineage.namespace") == "platform"
    Settings(store, environ={}).unset("lineage.namespace")
    assert watcher.get("lineage.namespace") == "planlineage"


def test_an_unchanged_settings_file_is_read_once_per_settings_object(store, monkeypatch):
    settings = Settings(store, environ={})
    settings.set("lineage.address", "http://127.0.0.1:9")
    reads = []
    original = type(settings.path).read_bytes

    def counting(path):
        reads.append(path)
        return original(path)

    monkeypatch.setattr(type(settings.path), "read_bytes", counting)
    for key in ("lineage.address", "lineage.namespace", "lineage.transport", "lineage.sql-max-bytes"):
        settings.get(key)
    assert reads == [settings.path]  # a compile asks for several settings: one read, not one each


def test_a_ui_token_that_a_few_guesses_find_is_refused(tmp_path):
    from planlineage.errors import SettingError
    from planlineage.settings import normalize

    with pytest.raises(SettingError, match="at least 16 characters"):
        normalize("lineage.ui-token", "x")
    with pytest.raises(SettingError, match="at least 16 characters"):
        normalize("lineage.ui-token", "fifteen-chars!!")
    assert normalize("lineage.ui-token", "sixteen-chars!!!") == "sixteen-chars!!!"
