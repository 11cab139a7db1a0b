"""The one fail-open wrapper of the lifecycle: a lineage problem never fails or delays a job's
submission; it becomes one redacted warning line and a fallback value."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from planlineage.emitter.store import StoreError
from planlineage.emitter.transports import TransportConfigError
from planlineage.emitter.transports.base import scrub, short

log = logging.getLogger("planlineage.emitter")
F = TypeVar("F", bound=Callable[..., Any])


def fail_open(what: str, fallback: Any = None) -> Callable[[F], F]:
    """The one fail-open wrapper (library functions here and the lifecycle commands): any problem
    becomes one redacted line, ``planlineage: <what> skipped: <reason>``, and ``fallback``."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except KeyboardInterrupt:
                raise
            except (StoreError, TransportConfigError, OSError) as error:
                reason = str(error)
            except Exception as error:  # fail-open: never a traceback, never a failed submission
                reason = f"{type(error).__name__}: {error}"
            log.warning("planlineage: %s skipped: %s", what, short(scrub(reason), 240))
            return fallback

        return wrapper  # type: ignore[return-value]

    return decorate
