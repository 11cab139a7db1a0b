"""The planlineage home: where it is, how its folders and files are made, what it has to tell.

* ``$PLANLINEAGE_HOME``, default ``platformdirs.user_data_dir("planlineage")``.
* Every folder planlineage creates on the way to it is 0700 (not the umask's choice): the home
  holds the lineage token and, briefly, raw SQL.
* Small files are written atomically and private (:func:`write_private`): a temporary file in
  the same folder, 0600 from its creation, renamed over the target; removed on every error.
* Notices (:func:`add_notice`): something every later command must say once on stderr until
  the user has dealt with it (a corrupt file moved aside, for example).  A notice about a file
  lasts as long as that file exists.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

NOTICES = "notices.json"


def home_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    configured = env.get("PLANLINEAGE_HOME")
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("planlineage"))


def make_private_dir(folder: Path) -> Path:
    """Create ``folder`` and each missing parent with mode 0700 (the umask would loosen them)."""
    missing = []
    current = folder
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        os.chmod(path, 0o700)  # mkdir's mode is filtered through the umask
    return folder


def write_private(path: Path, data: bytes, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically, 0600; the temporary file never stays behind.

    ``durable=False`` skips the ``fsync``: for a file no more durable than the SQLite row next to
    it (WAL with ``synchronous=NORMAL`` does not sync each commit), on a path where 20 concurrent
    syncs would make the callers wait on the disk."""
    make_private_dir(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temporary, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            temporary.unlink()
        except OSError:
            pass
        raise


def write_private_json(path: Path, data: Any) -> None:
    write_private(path, json.dumps(data, sort_keys=True, indent=1).encode("utf-8"))


# -- notices ------------------------------------------------------------------------------------

_said: set[str] = set()


def _notices_path(home: Path | None) -> Path:
    return (home or home_dir()) / NOTICES


def notices(home: Path | None = None) -> list[dict[str, str]]:
    """The notices still standing (their file still exists)."""
    try:
        data = json.loads(_notices_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, list):
        return []
    return [n for n in data if isinstance(n, dict) and n.get("message") and Path(str(n.get("file", ""))).exists()]


def add_notice(message: str, file: Path, home: Path | None = None) -> None:
    """Remember ``message`` (secret-free) for every later command while ``file`` exists."""
    try:
        standing = notices(home)
        standing.append({"message": message, "file": str(file)})
        write_private_json(_notices_path(home), standing)
    except OSError:
        pass  # the current command still says it; the file being moved aside is the record


def say_notices(home: Path | None = None, stream=None) -> None:
    """Print each standing notice once per process on stderr."""
    stream = stream or sys.stderr
    for notice in notices(home):
        if notice["message"] in _said:
            continue
        _said.add(notice["message"])
        try:
            print(f"planlineage: {notice['message']}", file=stream)
        except Exception:
            pass


def mark_said(message: str) -> None:
    """The current process already printed ``message``."""
    _said.add(message)
