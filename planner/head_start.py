"""A cold planner started before it is needed: ``extract SCRIPT`` without a warm planner.

The command's own work before its first compile (importing the pipeline, the document model and
the registry, splitting the script, building the request) used to run before the planner's JVM
started (its class-data archive, then Flink's planner classes).  Started on a thread as soon as
the command knows that no warm planner answers, the JVM boots while the command works, on the
other core: a cold extract took 1.43 s instead of 1.53 s (median wall, 2 cores, quiet machine;
docs/performance.md).

A :class:`HeadStart` is a ``JobCompiler`` (``provisioned`` and ``compile``) for
:func:`planlineage.pipeline.extract`; errors of the start (a version that cannot be provisioned, a
JVM that does not start) are raised where the pipeline asks for them, as a planner it started
itself would raise them.  A script that needs no compile closes the JVM unused.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from planlineage.planner.protocol import CompileAnswer, CompileRequest

if TYPE_CHECKING:
    from planlineage.planner.compiler import Planner
    from planlineage.planner.provision import Provisioned


class HeadStart:
    """Provisions ``flink_version`` and starts its planner on a thread, at once."""

    def __init__(self, flink_version: str | None):
        self._version = flink_version
        self._provisioned: Provisioned | None = None
        self._planner: Planner | None = None
        self._error: BaseException | None = None
        self._provision_done = threading.Event()
        self._start_done = threading.Event()
        self._closed = False
        self._lock = threading.Lock()
        threading.Thread(target=self._start, name="planner-head-start", daemon=True).start()

    def _start(self) -> None:
        from planlineage.planner.compiler import Planner
        from planlineage.planner.provision import ensure

        try:
            provisioned = self._provisioned = ensure(self._version)
            self._provision_done.set()
            planner = Planner(provisioned)
            with self._lock:
                if self._closed:  # the command ended before the JVM was up
                    planner.close()
                else:
                    self._planner = planner
        except BaseException as error:  # raised in the caller's thread, where it asks
            self._error = error
        finally:
            self._provision_done.set()
            self._start_done.set()

    @property
    def provisioned(self) -> Provisioned:
        self._provision_done.wait()
        if self._provisioned is None:
            assert self._error is not None
            raise self._error
        return self._provisioned

    def compile(self, request: CompileRequest, timeout: float = 120.0) -> CompileAnswer:
        self._start_done.wait()
        if self._planner is None:
            assert self._error is not None
            raise self._error
        return self._planner.compile(request, timeout=timeout)

    def close(self) -> None:
        """Stops the JVM, started or still starting (then it is stopped once it is up)."""
        with self._lock:
            self._closed = True
            planner, self._planner = self._planner, None
        if planner is not None:
            planner.close()

    def __enter__(self) -> HeadStart:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
