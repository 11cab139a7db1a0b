"""The engines behind the one interface: every engine the picker names provides what
planlineage.engine.Engine says, its versions come from its data files, and the picker loads no
engine's stages."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from planlineage import engines
from planlineage.engine import Engine

#: `name==version --hash=sha256:<digest>`, one digest per file the release publishes.
PINNED_AND_HASHED = re.compile(r"[\w.-]+==[\w.]+( --hash=sha256:[0-9a-f]{64})+")
MEMBERS = sorted({name for name in vars(Engine) if not name.startswith("_")} | set(Engine.__annotations__))


@pytest.mark.parametrize("name", engines.NAMES)
def test_each_engine_provides_the_whole_interface(name):
    engine = engines.get(name)
    assert engine.name == name
    assert [m for m in MEMBERS if not hasattr(engine, m)] == []
    for method in ("job_type", "versions", "provision", "installed", "check_version", "secret_options"):
        assert callable(getattr(engine, method))
    for method in ("split", "compile", "lineage"):
        assert list(inspect.signature(getattr(engine, method)).parameters)[-1] in ("script", "job")
    assert engine.default_minor in engine.versions()


def test_an_unknown_engine_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown engine 'hive': one of flink, spark"):
        engines.get("hive")


@pytest.mark.parametrize("name", engines.NAMES)
def test_versions_are_the_data_files_of_the_engine(name):
    engine = engines.get(name)
    package = f"planlineage.{name}_versions"
    files = {e.name[: -len(".toml")]: e for e in resources.files(package).iterdir() if e.name.endswith(".toml")}
    assert set(engine.versions()) == set(files)
    for minor, described in engine.versions().items():
        data = tomllib.loads(files[minor].read_text(encoding="utf-8"))
        assert described.version == data["version"] and described.version.startswith(minor + ".")
        assert described.requirements == tuple(data["requirements"])
        assert described.build_requirements == tuple(data.get("build_requirements", ()))
        # every requirement, and what builds a source distribution, is pinned to one release and to
        # the sha256 of each of its files: a version file says exactly which bytes are installed
        for line in (*described.requirements, *described.build_requirements):
            assert PINNED_AND_HASHED.fullmatch(line), (name, minor, line)


def test_documents_name_their_engine_by_the_version_they_set():
    from planlineage.document import JobLineage

    assert engines.of_document(JobLineage(flink_version="2.3.0")).name == "flink"
    assert engines.of_document(JobLineage(spark_version="3.5.9")).name == "spark"
    assert engines.of_document({"spark_version": "4.0.5", "sinks": []}).name == "spark"
    assert engines.of_document(JobLineage()).name == engines.DEFAULT


def test_the_picker_and_the_engines_facts_load_none_of_their_stages():
    code = (
        "import sys\n"
        "from planlineage import engines\n"
        "for e in engines.every():\n"
        "    (e.name, e.display_name, e.single_target_has_parent, e.integration, e.job_type(True), e.default_minor)\n"
        "print(sorted(m for m in sys.modules if m.startswith('planlineage')))\n"
        "print('typing' in sys.modules, 'dataclasses' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    modules, slow = result.stdout.splitlines()
    assert ast.literal_eval(modules) == [
        "planlineage",
        "planlineage.engines",
        "planlineage.planner",
        "planlineage.planner.engine",
        "planlineage.planner.versions",
        "planlineage.spark",
        "planlineage.spark.engine",
        "planlineage.spark.versions",
    ]
    assert slow == "False False"


@pytest.mark.parametrize("minor", sorted(engines.get("spark").versions()))
def test_a_spark_version_installs_in_hash_checking_mode_with_its_verified_build_tools_first(
    minor, tmp_path, monkeypatch
):
    """PySpark is only published as a source distribution: it is built with the version file's
    hash-pinned setuptools (no build isolation, which would fetch an unverified one), and every
    file is refused unless its sha256 is listed. Nothing is downloaded: the steps are recorded."""
    from planlineage import version_venvs
    from planlineage.errors import ProvisionError
    from planlineage.spark import provision

    monkeypatch.setenv(provision.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(version_venvs, "installer", lambda: ["pip"])
    commands: list[tuple[list[str], list[str]]] = []

    def run(self, command, what, **_):  # what each step would install, read before the failed build is removed
        listed = Path(command[command.index("-r") + 1]).read_text().splitlines() if "-r" in command else []
        commands.append((command, listed))

    monkeypatch.setattr(version_venvs.VenvCache, "run", run)
    with pytest.raises(ProvisionError, match="Spark's jars are missing"):  # nothing was really installed
        provision.ensure(minor, progress=lambda line: None)
    build, install = commands[1:]
    spark = engines.get("spark").versions()[minor]
    for (command, listed), lines in ((build, spark.build_requirements), (install, spark.requirements)):
        assert "--require-hashes" in command and "--no-deps" in command, command
        assert listed == list(lines) and lines
    assert "--no-build-isolation" in install[0]
    assert [line.split("==")[0] for line in spark.requirements] == ["pyspark", "py4j"]
    assert [line.split("==")[0] for line in spark.build_requirements] == ["setuptools"]


def test_a_changed_spark_version_file_provisions_the_version_again():
    import dataclasses

    from planlineage.spark import provision

    spark = engines.get("spark").versions()["3.5"]
    other_hash = dataclasses.replace(spark, requirements=(spark.requirements[0][:-1] + "0", *spark.requirements[1:]))
    other_builder = dataclasses.replace(spark, build_requirements=())
    assert len({provision._fingerprint(v) for v in (spark, other_hash, other_builder)}) == 3


def test_the_public_extract_functions_stay_functions_once_every_stage_is_imported():
    """``from planlineage.spark import extract`` (docs/spark-sql.md) is the function: a submodule
    of the package named ``extract`` would replace it as soon as anything imported that module
    (the engine does, on its first compile), and the documented call would raise
    "'module' object is not callable"."""
    # The modules of this checkout's engine folders (an installed copy may hold files an earlier
    # install left behind, which are not this code's).
    modules = [
        f"planlineage.{folder}.{path.stem}"
        for folder in ("spark", "planner")
        for path in sorted((Path(__file__).resolve().parents[1] / folder).glob("*.py"))
        if path.stem != "__init__"
    ]
    code = (
        f"import importlib\nfor name in {modules!r}:\n    importlib.import_module(name)\n"
        "from planlineage.spark import extract\n"
        "import planlineage.pipeline\n"
        "print(callable(extract), callable(planlineage.pipeline.extract))\n"
    )
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
