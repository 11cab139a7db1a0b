"""Events appended to a local file, one JSON document per line.

Wraps openlineage-python's ``FileTransport`` in append mode (``log_file_path`` = the configured
file), so the lines are exactly what that library writes. The file is only opened when an event is
sent; its parent folder is created then.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from openlineage.client.transport.file import FileConfig as OLFileConfig
from openlineage.client.transport.file import FileTransport as OLFileTransport

from planlineage.emitter.transports.base import (
    Config,
    Delivered,
    Outcome,
    RetryLater,
    Transport,
    short,
)
from planlineage.errors import TransportConfigError


@dataclass
class FileConfig(Config):
    path: str

    def __post_init__(self) -> None:
        if not self.path or "://" in self.path:
            raise TransportConfigError("the file transport needs a local file path (lineage.file)")
        self.path = os.path.abspath(os.path.expanduser(self.path))

    @classmethod
    def from_dict(cls, options: Mapping[str, Any]) -> FileConfig:
        path = options.get("path") or options.get("file") or options.get("log_file_path")
        if not path:
            raise TransportConfigError("the file transport needs lineage.file")
        return cls(path=str(path))


class FileTransport(Transport):
    kind: ClassVar[str] = "file"
    config_class: ClassVar[type[Config]] = FileConfig

    def __init__(self, config: FileConfig) -> None:
        self.config = config
        self._inner = OLFileTransport(OLFileConfig(log_file_path=config.path, append=True))

    def describe(self) -> str:
        return f"file {self.config.path}"

    def send(self, payload: str | Mapping[str, Any], timeout: float | None = None) -> Outcome:
        try:
            event = json.loads(payload) if isinstance(payload, str) else dict(payload)
            os.makedirs(os.path.dirname(self.config.path), exist_ok=True)
            self._inner.emit(event)  # type: ignore[arg-type]  # Serde.to_json accepts the plain dict
        except Exception as error:
            cause = error.__cause__ or error
            return RetryLater(short(f"cannot write {self.config.path}: {type(cause).__name__}"))
        return Delivered()
