"""docs/configuration.md lists exactly what the code reads: every setting with its environment
name and default, and every PLANLINEAGE_ / OPENLINEAGE_ variable a product module or the test
suite reads by name. A setting or variable added without a row (or a row left after its code is
gone) fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from test_layout import product_modules

from planlineage import settings

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
VARIABLE = re.compile(r"(?:PLANLINEAGE|OPENLINEAGE)_[A-Z0-9_]+")


def _rows() -> list[list[str]]:
    """The cells of every table row of the page (header and rule rows left out)."""
    rows = []
    for line in DOC.splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows[1:]


def _named_in_code(paths) -> set[str]:
    """Variable names that stand alone as a string constant: what os.environ is read with."""
    found = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and VARIABLE.fullmatch(node.value):
                found.add(node.value)
    return found


def _documented_variables(columns: int = 2) -> set[str]:
    """Variables named in the first ``columns`` cells of a row (the setting and variable columns;
    an old name still read is named in the meaning column of its new name's row)."""
    return {name for row in _rows() for cell in row[:columns] for name in re.findall(rf"`({VARIABLE.pattern})`", cell)}


def test_every_setting_has_a_row_with_its_environment_name_and_default():
    rows = {row[0].strip("`"): row for row in _rows() if row[0].startswith("`lineage.")}
    assert set(rows) == set(settings.SETTINGS), "docs/configuration.md's settings table is not the code's"
    for key, setting in settings.SETTINGS.items():
        row = rows[key]
        assert row[1] == f"`{settings.env_name(key)}`", key
        if setting.default is not None:
            assert f"`{setting.default}`" in row[2], f"{key}: default {setting.default!r} not in its row"
        else:
            assert row[2].startswith("none"), f"{key} has no default: its row must say none"
        assert row[3], f"{key}: no meaning given"


def test_every_variable_the_product_reads_is_documented():
    read = _named_in_code(product_modules().values())
    missing = read - _documented_variables(columns=4)
    assert not missing, f"variables read by the code but not in docs/configuration.md: {sorted(missing)}"


def test_no_documented_variable_is_stale():
    known = _named_in_code([*product_modules().values(), *ROOT.joinpath("tests").rglob("*.py")])
    known |= {settings.env_name(key) for key in settings.SETTINGS}
    stale = _documented_variables() - known
    assert not stale, f"documented but read nowhere: {sorted(stale)}"


def test_readme_is_a_front_door_whose_links_all_resolve():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200, "README.md is the front door: keep it to 200 lines, the rest in docs/"
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    linked = set()
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            path = (page.parent / target).resolve()
            assert path.exists(), f"{page.relative_to(ROOT)} links to {target}, which does not exist"
            linked.add(path)
    unreachable = [p.name for p in pages[1:] if p.resolve() not in linked]
    assert not unreachable, f"docs pages no page links to: {unreachable}"
