"""A path that still holds a platform's variable (`${path}`) names no storage: no dataset, and a
warning that says which variable nothing substituted (it was reported as a dataset named
`${path}` without a word)."""

from __future__ import annotations

import pytest

from planlineage.registry import resolve


@pytest.mark.parametrize("connector", ["filesystem", "hudi"])
@pytest.mark.parametrize("path", ["${path}", "s3://lake/${env}/orders", "file:///data/${day}"])
def test_an_unsubstituted_variable_in_a_path_is_warned_and_names_nothing(connector, path):
    found = resolve({"connector": connector, "path": path, "format": "csv"}, "default_catalog.default_database.t")
    assert found.datasets == []
    (warning,) = found.warnings
    assert "nothing substituted" in warning and "${" in warning and "no dataset" in warning


def test_a_dollar_that_is_no_variable_is_a_path():
    found = resolve({"connector": "filesystem", "path": "s3://lake/$tmp/orders"}, "t")
    assert [(d.namespace, d.name) for d in found.datasets] == [("s3://lake", "$tmp/orders")]
