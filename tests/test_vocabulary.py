"""One word per concept: "worker" once meant four things (warm planner, compile service, claim
holder, backfill thread). Product code says each by its name; the old spellings that still work
live in planlineage/deprecated.py only, each read and said once, until the release it names."""

from __future__ import annotations

import re
import subprocess
import sys

from test_layout import FOLDERS, ROOT

from planlineage import deprecated
from planlineage.cli.main import COMMANDS

OLD_WORD = re.compile(r"worker", re.IGNORECASE)


def test_the_old_word_stands_in_deprecated_py_only():
    found = []
    for folder in FOLDERS.values():
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in (".py", ".java", ".toml") or path.name == "deprecated.py":
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if OLD_WORD.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == [], "say warm planner, compile service, claim holder or backfill thread:\n" + "\n".join(found)


def test_every_old_variable_still_works_and_says_so_once(capsys):
    for new, old in deprecated.ENVIRONMENT.items():
        assert deprecated.environ(new, {old: "7"}) == "7"
        assert deprecated.environ(new, {old: "7"}) == "7"
        assert deprecated.environ(new, {new: "1", old: "7"}) == "1"  # the new name wins
        assert deprecated.environ(new, {}) is None
        said = capsys.readouterr().err
        assert said.count(old) == 1 and new in said and deprecated.REMOVED_IN in said


def test_old_command_names_are_accepted_unlisted_and_say_their_new_name(tmp_path):
    for old, new in deprecated.COMMANDS.items():
        assert COMMANDS[old] == (COMMANDS[new][0], None)  # its new name's module, no help line
        done = subprocess.run(
            [sys.executable, "-m", "planlineage", old, "status"],
            capture_output=True,
            text=True,
            timeout=60,
            env={
                "PATH": "/usr/bin:/bin",
                "PLANLINEAGE_PLANNER_DIR": str(tmp_path / "planners"),
                "PYTHONPATH": ":".join(sys.path),
            },
        )
        assert done.returncode == 0, done.stderr
        assert f"`planlineage {old}` is deprecated" in done.stderr and f"`planlineage {new}`" in done.stderr
    listing = subprocess.run(
        [sys.executable, "-m", "planlineage", "--help"], capture_output=True, text=True, timeout=60
    )
    assert not any(re.search(rf"\b{old}\b", listing.stdout) for old in deprecated.COMMANDS)
