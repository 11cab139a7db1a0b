"""The settings as one typed value (planlineage.config): read once, read again when they change,
each limit read as its reader always read it, and no secret in its repr."""

from __future__ import annotations

import os

from planlineage.config import SCRIPT_MAX_BYTES, SQL_FACET_MAX_BYTES, Config, defaults
from planlineage.settings import Settings

TOKEN = "FAKE-gravitino-token-0123456789"
UI_TOKEN = "FAKE-ui-token-abcdefghijklmnop"


def test_the_typed_settings_say_what_the_keys_say(store):
    settings = Settings(store, environ={"PLANLINEAGE_LINEAGE_FLINK_LISTENER": "yes"})
    settings.set("lineage.address", "http://127.0.0.1:8090/")
    settings.set("lineage.token", TOKEN)
    settings.set("lineage.metalake", "lake")
    config = settings.config()
    assert isinstance(config, Config) and config.configured
    assert (config.transport, config.transport_origin) == ("gravitino", "default")
    assert config.address == "http://127.0.0.1:8090"  # validated and normalised once, when set
    assert (config.token, config.namespace, config.flink_listener, config.flink_runs) == (TOKEN, "lake", True, "auto")
    assert config.profile == "openlineage" and config.platform_job_names is True
    assert settings.transport_options() == ("gravitino", {"address": "http://127.0.0.1:8090", "token": TOKEN})
    settings.set("lineage.transport", "http")
    assert settings.transport_options()[1]["address"] == "http://127.0.0.1:8090"  # one name, whatever the kind


def test_read_once_and_again_when_a_setting_changes(store):
    settings = Settings(store, environ={})
    first = settings.config()
    assert settings.config() is first  # nothing changed: not read again
    Settings(store, environ={}).set("lineage.address", "http://127.0.0.1:8090")  # another process's change
    again = settings.config()
    assert again is not first and again.configured and not first.configured


def test_a_variable_of_the_environment_is_read_again_too(store):
    environ = {"PLANLINEAGE_LINEAGE_SQL_MAX_BYTES": "100"}
    settings = Settings(store, environ=environ)
    assert settings.config().limits.sql_max_bytes == 100
    environ["PLANLINEAGE_LINEAGE_SQL_MAX_BYTES"] = "200"
    assert settings.config().limits.sql_max_bytes == 200


def test_each_limit_is_read_as_its_reader_read_it(store):
    unreadable = {
        "PLANLINEAGE_LINEAGE_SQL_MAX_BYTES": "lots",
        "PLANLINEAGE_LINEAGE_SCRIPT_MAX_BYTES": "0",  # 0: the default cap, never "no script at all"
        "PLANLINEAGE_LINEAGE_COMPILE_PLANNERS": "-3",
        "PLANLINEAGE_LINEAGE_HISTORY_RATE": "0",
        "PLANLINEAGE_LINEAGE_HISTORY_THREADS": "x",
        "PLANLINEAGE_LINEAGE_RETRY_BACKOFF": "0",  # 0 is a backoff: retried at once
        "PLANLINEAGE_LINEAGE_RETRY_ATTEMPTS": "0",  # at least one attempt
        "PLANLINEAGE_LINEAGE_RETRY_MAX_AGE": "-1",
    }
    limits = Settings(store, environ=unreadable).config().limits
    assert (limits.sql_max_bytes, limits.script_max_bytes) == (SQL_FACET_MAX_BYTES, SCRIPT_MAX_BYTES)
    assert (limits.compile_planners, limits.history_rate, limits.history_max_runs) == (0, 20.0, 1000)
    assert limits.history_threads_or_cores() == (os.cpu_count() or 1)
    assert (limits.retry_backoff, limits.retry_attempts, limits.retry_max_age) == (0.0, 1, 86400.0)
    assert defaults().limits == Settings(store, environ={}).config().limits


def test_no_secret_in_its_repr(store):
    settings = Settings(store, environ={"PLANLINEAGE_LINEAGE_UI_TOKEN": UI_TOKEN})
    settings.set("lineage.address", "http://127.0.0.1:8090")
    settings.set("lineage.token", TOKEN)
    settings.set("lineage.transport-options", '{"config": {"sasl.password": "FAKE-kafka-secret"}}')
    shown = repr(settings.config())
    assert TOKEN not in shown and UI_TOKEN not in shown and "FAKE-kafka-secret" not in shown
    assert "token='(set)'" in shown and "ui_token='(set)'" in shown and "http://127.0.0.1:8090" in shown
