"""Events printed as JSON lines, for trying planlineage out.

Mirrors openlineage-python's ``ConsoleTransport`` (one ``Serde.to_json`` line per event), but
writes to a stream (standard error by default, so a command's own standard output stays clean)
instead of an INFO log record that an unconfigured logging setup would drop.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any, ClassVar

from openlineage.client.serde import Serde

from planlineage.emitter.transports.base import Config, Delivered, Outcome, RetryLater, Transport


@dataclass
class ConsoleConfig(Config):
    stream: IO[str] | None = field(default=None, repr=False)

    @classmethod
    def from_dict(cls, options: Mapping[str, Any]) -> ConsoleConfig:
        return cls(stream=options.get("stream"))


class ConsoleTransport(Transport):
    kind: ClassVar[str] = "console"
    config_class: ClassVar[type[Config]] = ConsoleConfig

    def __init__(self, config: ConsoleConfig) -> None:
        self.config = config

    def send(self, payload: str | Mapping[str, Any], timeout: float | None = None) -> Outcome:
        try:
            event = json.loads(payload) if isinstance(payload, str) else dict(payload)
            stream = self.config.stream or sys.stderr
            stream.write(Serde.to_json(event) + "\n")
            stream.flush()
        except Exception as error:
            return RetryLater(f"cannot print the event: {type(error).__name__}")
        return Delivered()
