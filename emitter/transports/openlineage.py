"""Any transport openlineage-python's own factory builds, answering the outbox's outcomes.

One adapter for every kind the library knows (``kafka``, ``http`` with its auth providers and
compression, ``file``, ``console``, ``msk_iam``, ``datadog``, ...) and for a user's own transport,
named as the library documents it: the dotted path of a ``Transport`` subclass as ``type``.  The
library's ``emit`` raises or returns; :meth:`OpenLineageTransport.send` never raises and answers
:class:`Delivered` / :class:`RetryLater` / :class:`Rejected`:

* an HTTP status (``requests.HTTPError``) as planlineage's own http transport classifies it
  (:func:`planlineage.emitter.transports.http.classify`); a refused or failed connection, and a
  library ``RetryError``, retry later; a read timeout retries later as a possible repeat;
* any other exception retries later (nothing known to be wrong with the event: the outbox's
  attempts and age caps park it in the end);
* the library has no per-call timeout: ``emit`` runs on a daemon thread and a send that is not
  done by its deadline answers ``RetryLater(timed_out=True)``; the next send waits for that
  thread within its own deadline first, so sends never overlap.

Kafka is acknowledged delivery: the library's producer (its ``config``, ``topic``, ``messageKey``)
sends the event under the key the library's client sets (:func:`message_key`), and the send
answers Delivered only when the broker acknowledged it; a message still queued at the deadline is
purged (a plain RetryLater: it never left), one in flight is a possible repeat.

The library's http transport retries inside ``emit`` (5 times by default); the outbox retries
with its own backoff, so unless the configuration gives ``retry`` itself, one attempt is made.
The event is passed to a transport as a plain dict (as the library's ``Serde`` takes it).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from planlineage import openlineage_config
from planlineage.emitter.transport_kinds import FACTORY_KEY
from planlineage.emitter.transports.base import (
    Config,
    Delivered,
    Outcome,
    Rejected,
    RetryLater,
    Transport,
    safe_address,
    scrub,
    short,
)
from planlineage.emitter.transports.http import classify
from planlineage.errors import TransportConfigError

#: Kinds whose library transport needs confluent-kafka (the extra ``kafka``).
KAFKA_KINDS = ("kafka", "msk-iam")
#: The logger librdkafka's own lines go to (this module's child: routed and redacted like its records).
KAFKA_LOGGER = f"{__name__}.kafka"
DEFAULT_TIMEOUT = 10.0  # a send without a deadline still ends
_ONE_ATTEMPT = {"total": 0, "status_forcelist": []}  # a status arrives as a status, not a RetryError


class _RedactSecrets(logging.Filter):
    """Scrubs the configured secrets from what the library logs: its http transport logs its whole
    config (a URL's user info, custom headers) at DEBUG, its kafka transport its delivery errors."""

    secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            known = sorted(self.secrets, key=len, reverse=True)
            text = record.getMessage()
            clean = scrub(text, *known)
            if clean != text:
                record.msg, record.args = clean, ()
            if record.exc_info:
                record.exc_text = scrub(logging.Formatter().formatException(record.exc_info), *known)
                record.exc_info = None
        except Exception:  # a log line is never worth a failure
            pass
        return True


_REDACT = _RedactSecrets()


def _guard_library_logs(secrets: list[str]) -> None:
    """Every logger of the library (made when its modules were imported) scrubs these secrets."""
    _RedactSecrets.secrets.update(secrets)
    for name in list(logging.Logger.manager.loggerDict):
        if name.startswith("openlineage") or name == KAFKA_LOGGER:
            logger = logging.getLogger(name)
            if _REDACT not in logger.filters:
                logger.addFilter(_REDACT)


def without_marker(options: Any) -> Any:
    """The options as the library reads them: planlineage's factory marker left out, nested too."""
    if isinstance(options, Mapping):
        return {k: without_marker(v) for k, v in options.items() if k != FACTORY_KEY}
    if isinstance(options, list):
        return [without_marker(v) for v in options]
    return options


def known_kinds() -> list[str]:
    """The kinds the library's factory builds by name (a dotted class path is built too)."""
    from openlineage.client.transport import get_default_factory

    return sorted(get_default_factory().transports)


def message_key(event: Mapping[str, Any]) -> str | None:
    """The Kafka key openlineage-python's ``KafkaTransport`` sets (1.54, ``_get_message_key``): a
    run event is keyed by its root parent's job, else its parent's job, else its own job
    (``run:<namespace>/<name>``, so that a job's runs and a parent's children share a partition
    and keep their order); a dataset event by ``dataset:<namespace>/<name>``, a job event by
    ``job:<namespace>/<name>``."""
    job = event.get("job") if isinstance(event.get("job"), Mapping) else None
    if isinstance(event.get("run"), Mapping) and job is not None:
        parent = (event["run"].get("facets") or {}).get("parent")
        if isinstance(parent, Mapping):
            root = parent.get("root") if isinstance(parent.get("root"), Mapping) else None
            chosen = (root or parent).get("job")
            if isinstance(chosen, Mapping) and chosen.get("namespace") and chosen.get("name"):
                return f"run:{chosen['namespace']}/{chosen['name']}"
        return f"run:{job.get('namespace')}/{job.get('name')}"
    if isinstance(event.get("dataset"), Mapping):
        return f"dataset:{event['dataset'].get('namespace')}/{event['dataset'].get('name')}"
    if job is not None:
        return f"job:{job.get('namespace')}/{job.get('name')}"
    return None


@dataclass
class LibraryConfig(Config):
    """The library's own options of one transport (``type`` and the rest, as in openlineage.yml)."""

    options: dict[str, Any] = field(repr=False)

    @classmethod
    def from_dict(cls, options: Mapping[str, Any]) -> LibraryConfig:
        if not str(options.get("type") or "").strip():
            raise TransportConfigError("an OpenLineage transport needs its type (kafka, http, a class path, ...)")
        return cls(options=without_marker(dict(options)))

    def __repr__(self) -> str:
        return f"LibraryConfig({openlineage_config.masked_text(json.dumps(self.options, default=str))})"


class OpenLineageTransport(Transport):
    kind: ClassVar[str] = "openlineage"
    config_class: ClassVar[type[Config]] = LibraryConfig

    def __init__(self, config: LibraryConfig) -> None:
        self.config = config
        self.type = str(config.options["type"]).strip()
        self._secrets = openlineage_config.secrets(config.options)
        self._sending: threading.Thread | None = None
        self._broker_errors: list[Any] = []
        self._inner = self._build()

    @classmethod
    def of(cls, kind: str, options: Mapping[str, Any] | None) -> OpenLineageTransport:
        return cls(LibraryConfig.from_dict({**dict(options or {}), "type": kind}))

    def _say(self, text: str) -> str:
        return short(scrub(text, *self._secrets))

    def _build(self) -> Any:
        if openlineage_config.disabled(os.environ):
            raise TransportConfigError(f"{openlineage_config.DISABLED_ENV} is true: nothing is sent")
        if self.type in KAFKA_KINDS:
            try:
                import confluent_kafka  # noqa: F401 - the library's producer; asked here to name the extra
            except ImportError:
                raise TransportConfigError(
                    f"the {self.type} transport needs confluent-kafka: pip install 'planlineage[kafka]'"
                ) from None
        from openlineage.client.transport import get_default_factory

        factory = get_default_factory()
        _guard_library_logs(self._secrets)
        if "." not in self.type and self.type not in factory.transports:
            raise TransportConfigError(
                f"unknown transport {self.type!r}: openlineage-python builds {', '.join(known_kinds())}, "
                "or a Transport class named by its dotted path (package.module.Class)"
            )
        options = dict(self.config.options)
        if self.type == "http" and "retry" not in options:
            options["retry"] = dict(_ONE_ATTEMPT)
        if self.type in KAFKA_KINDS and isinstance(options.get("config"), Mapping):
            # the producer tells of a broker it cannot reach here (it retries on its own meanwhile);
            # librdkafka's own lines go to planlineage's log, not to the platform's stderr
            options["config"] = {
                "log_level": 2,
                "logger": logging.getLogger(KAFKA_LOGGER),
                **options["config"],
                "error_cb": self._broker_errors.append,
            }
        try:
            return factory.create(options)
        except ImportError:
            raise TransportConfigError(
                self._say(f"the transport class {self.type} cannot be imported: check its path and its package")
            ) from None
        except Exception as error:
            raise TransportConfigError(
                self._say(f"the {self.type} transport cannot be built from its options: {error}")
            ) from None

    def describe(self) -> str:
        url = self.config.options.get("url")
        if isinstance(url, str):
            return f"{self.type} {safe_address(url)}"
        if self.type in KAFKA_KINDS:
            return f"{self.type} topic {self.config.options.get('topic')}"
        return self.type

    # -- sending --------------------------------------------------------------------------------

    def send(self, payload: str | Mapping[str, Any], timeout: float | None = None) -> Outcome:
        end = time.monotonic() + (timeout if timeout is not None else DEFAULT_TIMEOUT)
        try:
            event = json.loads(payload) if isinstance(payload, str) else dict(payload)
        except ValueError:
            return Rejected("the event is not JSON", 400)
        if self.type in KAFKA_KINDS and getattr(self._inner, "producer", None) is not None:
            return self._send_kafka(event, end)
        return self._send_threaded(event, end)

    def _send_threaded(self, event: dict[str, Any], end: float) -> Outcome:
        where = self.describe()
        previous = self._sending
        if previous is not None and previous.is_alive():
            previous.join(max(0.0, end - time.monotonic()))
            if previous.is_alive():
                # this event never left: the backend is as good as unreachable (the pass stops)
                return RetryLater(f"{where}: the previous send has not ended yet")
        result: list[Outcome] = []
        sending = threading.Thread(
            target=lambda: result.append(self._emit(event)), name=f"openlineage-{self.type}", daemon=True
        )
        self._sending = sending
        sending.start()
        sending.join(max(0.0, end - time.monotonic()))
        if sending.is_alive() or not result:
            return RetryLater(f"{where} did not answer in time", timed_out=True)
        return result[0]

    def _emit(self, event: dict[str, Any]) -> Outcome:
        where = self.describe()
        try:
            self._inner.emit(event)
        except Exception as error:
            return self._outcome(error, where)
        return Delivered()

    def _outcome(self, error: Exception, where: str) -> Outcome:
        try:
            import requests
        except ImportError:  # the library needs it; a custom transport may not
            requests = None  # type: ignore[assignment]
        if requests is not None:
            response = getattr(error, "response", None)
            if isinstance(error, requests.HTTPError) and response is not None:
                status = response.status_code
                if classify(status) == "retry":
                    return RetryLater(f"{where} answered HTTP {status}", status)
                return Rejected(f"{where} rejected the event (HTTP {status})", status)
            if isinstance(error, requests.ConnectTimeout):
                return RetryLater(f"{where} unreachable: no connection in time")
            if isinstance(error, requests.Timeout):
                return RetryLater(f"{where} did not answer in time", timed_out=True)
            if isinstance(error, requests.ConnectionError | requests.exceptions.RetryError):
                return RetryLater(self._say(f"{where} unreachable: {type(error).__name__}"))
        return RetryLater(self._say(f"{where}: {type(error).__name__}: {error}"))

    def _send_kafka(self, event: dict[str, Any], end: float) -> Outcome:
        from confluent_kafka import KafkaError, KafkaException
        from openlineage.client.serde import Serde

        inner = self._inner
        where = self.describe()
        acks: list[Any] = []
        self._broker_errors.clear()
        try:
            inner.producer.produce(
                topic=inner.topic,
                key=inner.message_key or message_key(event),
                value=Serde.to_json(event).encode("utf-8"),
                on_delivery=lambda error, message: acks.append(error),
            )
        except BufferError:
            return RetryLater(f"{where}: the producer's queue is full")
        except KafkaException as error:
            return self._kafka_outcome(error.args[0] if error.args else None, where)
        while not acks and time.monotonic() < end:
            inner.producer.poll(min(0.1, max(0.0, end - time.monotonic())))
        if acks:
            return self._kafka_outcome(acks[0], where)
        # No acknowledgement in time: a message still queued is taken back (it never left); one
        # already sent may yet be written, so resending it is a possible repeat.
        inner.producer.purge(in_queue=True, in_flight=False, blocking=False)
        inner.producer.poll(0)
        never_left = bool(acks) and acks[0] is not None and acks[0].code() == KafkaError._PURGE_QUEUE
        down = any(getattr(e, "code", lambda: None)() == KafkaError._ALL_BROKERS_DOWN for e in self._broker_errors)
        if never_left or down:
            return RetryLater(f"{where}: no broker acknowledged the event in time (none reachable)")
        return RetryLater(f"{where}: the broker did not acknowledge the event in time", timed_out=True)

    def _kafka_outcome(self, error: Any, where: str) -> Outcome:
        if error is None:
            return Delivered()
        from confluent_kafka import KafkaError

        code = error.code()
        name = self._say(f"{error.name()}: {error.str()}")
        if code in (KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.INVALID_RECORD):
            return Rejected(
                f"{where} refused the event ({name})", 413 if code == KafkaError.MSG_SIZE_TOO_LARGE else 400
            )
        refusals = (
            KafkaError.TOPIC_AUTHORIZATION_FAILED,
            KafkaError.CLUSTER_AUTHORIZATION_FAILED,
            KafkaError.SASL_AUTHENTICATION_FAILED,
            KafkaError._AUTHENTICATION,
            KafkaError._INVALID_ARG,
        )
        if code in refusals:  # the configuration is refused: parked until it changes
            return Rejected(f"{where} refused access ({name})")
        return RetryLater(f"{where} did not take the event ({name})")

    def close(self) -> None:
        producer = getattr(self._inner, "producer", None)
        try:
            if producer is not None:  # a purged message is kept in the outbox, sent again later
                producer.purge(in_queue=True, in_flight=True, blocking=False)
                producer.flush(0)
                self._inner.producer = None
            else:
                self._inner.close(0)
        except Exception:  # closing never makes a lineage problem worse
            pass
