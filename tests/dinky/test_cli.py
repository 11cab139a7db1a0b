"""`planlineage watch` arguments for Dinky: the URL forms, the password's source, the errors."""

from __future__ import annotations

import contextlib
import io

import pytest

from planlineage.cli.main import main
from planlineage.dinky import PLATFORM
from planlineage.errors import PlatformUrlError
from planlineage.watch.url import parse


def test_dinky_jdbc_url_is_parsed_as_for_streampark_and_named_dinky():
    target = parse(
        "jdbc:mysql://db:3306/dinky?useUnicode=true&user=dk&password=FAKE-url-pw", platform=PLATFORM, flag="--dinky-db"
    )
    assert (target.dialect, target.host, target.port, target.database, target.user) == (
        "mysql",
        "db",
        3306,
        "dinky",
        "dk",
    )
    assert target.masked() == "mysql://dk:***@db:3306/dinky" and "FAKE-url-pw" not in repr(target)
    with pytest.raises(PlatformUrlError, match="Dinky's default H2 database cannot be read from outside the console"):
        parse("jdbc:h2:mem:dinky", platform=PLATFORM, flag="--dinky-db")


def test_watch_without_any_database_says_both_flags(monkeypatch, tmp_path):
    for name in ("PLANLINEAGE_STREAMPARK_DB", "PLANLINEAGE_DINKY_DB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PLANLINEAGE_HOME", str(tmp_path / "home"))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["watch", "--once"])
    assert code == 2
    assert "no database given: pass --streampark-db URL and/or --dinky-db URL" in err.getvalue()
    assert "Traceback" not in err.getvalue()
    with contextlib.redirect_stderr(err):
        code = main(["watch", "--once", "--dinky-db", "mysql://u@h/d", "--dinky-timezone", "Mars/Olympus"])
    assert code == 2 and "--dinky-timezone 'Mars/Olympus': not a time zone" in err.getvalue()
