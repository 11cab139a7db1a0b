"""One error model: every user-facing error carries its exit code, and main() alone prints it."""

import json

import pytest

from planlineage import errors
from planlineage.cli.main import main
from planlineage.pipeline import ExtractError
from planlineage.planner.compiler import PlannerError
from planlineage.planner.provision import ProvisionError
from planlineage.planner.warm import WarmPlannerError
from planlineage.registry import ConfigError


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ExtractError, 2),
        (ConfigError, 2),
        (ProvisionError, 3),
        (PlannerError, 3),
        (errors.PlannerTimeout, 3),
        (WarmPlannerError, 3),
    ],
)
def test_each_error_says_whose_problem_it_is(error, code):
    assert issubclass(error, errors.PlanlineageError)
    assert error("x").exit_code == code


def test_errors_keep_their_historical_bases_and_import_paths():
    assert issubclass(ConfigError, ValueError)
    assert issubclass(ProvisionError, RuntimeError) and issubclass(PlannerError, RuntimeError)
    assert issubclass(errors.PlannerTimeout, PlannerError)
    assert ExtractError("bad", 7).line == 7


def test_main_prints_one_line_and_returns_the_input_exit_code(capsys):
    assert main(["identity", "not json"]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == "planlineage: the options are not a JSON object of strings (Expecting value: line 1 column 1 (char 0)).\n"
    )


def test_a_rules_problem_is_an_input_error_not_an_options_error(capsys):
    assert main(["identity", "{}", "--profile", "gravitino"]) == 2
    assert capsys.readouterr().err == (
        "planlineage: the gravitino identity profile needs a metalake name (dataset namespace)\n"
    )


def test_an_unreadable_script_is_an_input_error(tmp_path, capsys):
    assert main(["extract", str(tmp_path / "missing.sql")]) == 2
    assert (
        capsys.readouterr().err == f"planlineage: cannot read {tmp_path / 'missing.sql'}: No such file or directory.\n"
    )


def test_an_unsupported_version_is_an_environment_error(tmp_path, capsys):
    script = tmp_path / "job.sql"
    script.write_text("INSERT INTO t SELECT 1;")
    assert main(["extract", str(script), "--flink-version", "9.9"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("planlineage: Flink 9.9 is not supported; supported versions: 1.15 (1.15.4)")
    assert err.count("\n") == 1


def test_an_empty_folder_is_an_input_error(tmp_path, capsys):
    assert main(["extract", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"planlineage: no .sql scripts found in {tmp_path}\n"


@pytest.mark.parametrize("text", ["", "\n  \n", "-- a script whose statements were all commented out\n/* ; */\n"])
def test_a_script_without_a_statement_is_an_input_error(tmp_path, capsys, text):
    script = tmp_path / "job.sql"
    script.write_text(text)
    assert main(["extract", str(script), "--format", "json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"planlineage: {script} holds no SQL statement (it is empty or only comments): nothing to analyse.\n"


@pytest.mark.parametrize(
    "text",
    [
        "CREATE TABLE t (a INT) WITH ('connector' = 'datagen');\n",
        "CREATE TABLE t (a INT) WITH ('connector' = 'datagen');\nSELECT a FROM t;\n",
    ],
)
def test_a_script_that_writes_no_table_says_it_has_no_lineage_and_exits_0(tmp_path, capsys, text):
    script = tmp_path / "job.sql"
    script.write_text(text)
    # Flink 1.14 reads tables from the text (no planner to provision): the note is the command's
    assert main(["extract", str(script), "--format", "json", "--flink-version", "1.14"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["sinks"] == []
    assert err.endswith(
        f"planlineage: {script} writes no table (no INSERT, STATEMENT SET or CREATE TABLE AS), so it has no "
        "lineage: the output lists no sink.\n"
    )
