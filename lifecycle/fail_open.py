"""The one fail-open wrapper of the lifecycle: a lineage problem never fails or delays a job's
submission; it becomes one redacted warning line and a fallback value.

It wraps the commands a platform runs for every job, so it loads nothing until a problem occurs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from planlineage import lazylog
from planlineage.errors import StoreError, TransportConfigError

log = lazylog.getLogger(__name__)  # logging loads only when something is logged
F = TypeVar("F", bound=Callable[..., Any])


def _reason(error: Exception) -> str:
    """A store, transport-configuration or OS problem says itself; anything else is named by type."""
    if isinstance(error, (StoreError, TransportConfigError, OSError)):
        return str(error)
    return f"{type(error).__name__}: {error}"


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
            except Exception as error:  # fail-open: never a traceback, never a failed submission
                try:
                    from planlineage.emitter.transports.base import scrub, short

                    message = short(scrub(_reason(error)), 240)
                except Exception:  # even the wording failed: say no more than the type
                    message = type(error).__name__
            log.warning("planlineage: %s skipped: %s", what, message)
            return fallback

        return wrapper  # type: ignore[return-value]

    return decorate
