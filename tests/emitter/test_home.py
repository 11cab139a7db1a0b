"""The home: private folders (parents too), atomic private files, temp files never left behind."""

from __future__ import annotations

import os
import stat

import pytest

from planlineage import home


def test_home_and_missing_parents_are_created_0700_whatever_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        target = tmp_path / "a" / "b" / "c"
        home.make_private_dir(target)
    finally:
        os.umask(old)
    for folder in (tmp_path / "a", tmp_path / "a" / "b", target):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_write_private_is_0600_and_atomic(tmp_path):
    path = tmp_path / "h" / "f.json"
    home.write_private(path, b"one")
    home.write_private(path, b"two")
    assert path.read_bytes() == b"two" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["f.json"]


def test_failed_write_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "h" / "job.json"
    path.mkdir(parents=True)  # os.replace onto a directory fails after the data was written
    with pytest.raises(OSError):
        home.write_private(path, b"SELECT 'FAKE-secret'")
    assert [p.name for p in path.parent.iterdir()] == ["job.json"]
