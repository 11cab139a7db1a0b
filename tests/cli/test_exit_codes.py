"""One exit-code table (planlineage.errors.ExitCode), the one docs/commands.md shows, and the one
place (cli.main.failed) that turns a store or settings error into its line and its code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from planlineage.cli.main import main
from planlineage.errors import MEANINGS, ExitCode, PlanlineageError, SettingError, StoreError

COMMANDS_DOC = Path(__file__).resolve().parents[2] / "docs" / "commands.md"


def documented_table() -> list[str]:
    """The rows of docs/commands.md's table under `## Exit codes`."""
    text = COMMANDS_DOC.read_text(encoding="utf-8")
    section = text.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| code ")]


def test_the_documented_exit_codes_are_the_table():
    expected = [f"| {int(code)} | `{name}` | {MEANINGS[name]} |" for name, code in ExitCode.__members__.items()]
    assert documented_table() == expected, "docs/commands.md's exit-code table, as it should read:\n" + "\n".join(
        expected
    )


def test_every_name_of_the_table_has_a_meaning_and_a_number_has_one_name_per_meaning():
    assert set(MEANINGS) == set(ExitCode.__members__)
    assert all(meaning and "\n" not in meaning for meaning in MEANINGS.values())
    # the two meanings EXIT_FAILED had (1 in cli.main, 2 in graph, ui and store) have two names
    assert ExitCode.CONNECTION_CLOSED == 1 and ExitCode.INPUT == 2 and ExitCode.STORE == 2


def test_every_error_a_user_reads_derives_from_the_one_base_and_carries_a_code_of_the_table():
    from planlineage import errors

    classes = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, BaseException)]
    assert len(classes) > 15
    for kind in classes:
        assert issubclass(kind, PlanlineageError), kind
        assert kind.exit_code in set(ExitCode), kind


@pytest.fixture
def home(tmp_path, monkeypatch):
    for name in [n for n in __import__("os").environ if n.startswith(("PLANLINEAGE_", "OPENLINEAGE"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PLANLINEAGE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_an_unusable_store_is_said_once_by_main_with_its_code(home, monkeypatch, capsys):
    # a store URL of an unknown scheme: StoreError from open_store, no connection attempted
    monkeypatch.setenv("PLANLINEAGE_STORE", "mysql://db.invalid/planlineage")
    assert main(["store", "status"]) == ExitCode.STORE == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("planlineage: PLANLINEAGE_STORE: ") and err.count("\n") == 1


def test_an_unknown_setting_is_an_input_error_said_by_main(home, capsys):
    assert main(["settings", "get", "lineage.no-such-key"]) == ExitCode.INPUT
    assert re.fullmatch(r"planlineage: unknown setting 'lineage.no-such-key' \(known: .*\)\n", capsys.readouterr().err)


def test_a_setting_without_a_value_is_not_set(home, capsys):
    assert main(["settings", "get", "lineage.address"]) == ExitCode.NOT_SET == 1
    assert capsys.readouterr().out == ""


def test_the_store_and_settings_errors_are_input_and_store_codes():
    assert SettingError("x").exit_code == 2 and isinstance(SettingError("x"), ValueError)
    assert StoreError("x").exit_code == ExitCode.STORE


def test_watch_with_an_unusable_store_says_it_in_one_line_not_a_traceback(home, monkeypatch, capsys):
    # before the one handler, open_store()'s StoreError left `watch` as a traceback (exit 1)
    monkeypatch.setenv("PLANLINEAGE_STORE", "mysql://db.invalid/planlineage")
    assert main(["watch", "--once", "--streampark-db", "postgresql://planlineage@127.0.0.1:1/streampark"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("planlineage: PLANLINEAGE_STORE: store URL scheme 'mysql' is not supported")
    assert err.count("\n") == 1


def test_the_one_line_an_error_ends_with_hides_secrets_and_escapes_control_characters(capsys):
    """cli.main.failed says every command's errors: a driver's or a platform's text in a message
    (a store URL with its password, an option's value, a terminal escape from a database) is
    masked and escaped there, as the watcher's own lines were before it said its store errors."""
    from planlineage.cli.main import failed

    error = StoreError("state store postgresql://lineage:s3cret@db:5432/x: FATAL password=hunter2 \x1b[2J\nnext")
    assert failed(error) == ExitCode.STORE
    said = capsys.readouterr().err
    assert "s3cret" not in said and "hunter2" not in said and "\x1b" not in said
    assert said.startswith("planlineage: state store postgresql://lineage:") and "db:5432/x" in said
    assert said.count("\n") == 2 and said.endswith("next\n")  # its lines kept, each escaped
