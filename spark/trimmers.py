"""openlineage-spark's dataset name trimmers (since 1.39.0), ported from openlineage-java.

openlineage-spark reduces every input and output dataset of an event (DatasetReducer, through
DatasetReducerUtils in OpenLineageRunEventBuilder): a name whose last folder is a partition or a
date is cut back to the folder above it, repeatedly, and what was cut off is kept in the
dataset's ``subset`` facet (a LocationSubsetCondition listing the untrimmed names). Reading
``landing/metrics/2024-03-01`` and ``…/2024-03-02`` is one dataset ``landing/metrics``; a
planlineage that named two would split one table into two nodes of a shared graph.

The default trimmers (DatasetConfig.DEFAULT_DATASET_NAME_TRIMMERS), each deciding on the name's
last folder(s):

* DateTrimmer: a valid date (``yyyy-MM-dd``, ``dd.MM.yyyy``, ``yyyyMMdd``, parsed as
  java.time's SMART resolver does: day 1-31, clamped to the month) and nothing else than digits,
  one ``T``, one ``Z``, blanks, ``:``, ``.`` and ``-``: ``20250722T901Z``;
* KeyValueTrimmer: exactly one ``=`` (``dt=2024-03-01``, ``hour=05``);
* MultiDirDateTrimmer: ``…/yyyy/MM`` or ``…/yyyy/MM/dd`` (the folders' concatenation parses);
* YearMonthTrimmer: ``yyyyMM`` or ``yyyy-MM``.

Settings (openlineage-spark reads them from the application's Spark conf when it starts):
``spark.openlineage.dataset.disabledTrimmers`` and ``…extraTrimmers``, each a ``;``-separated
list of class names. A trimmer is disabled when the setting *contains* its class name (the
producer's own test, a substring one). An extra trimmer is user code planlineage cannot run:
it is named in a warning.

Java's semantics are kept where they decide a name: String.split drops trailing empty strings,
``\\d`` and ``\\s`` are ASCII only, the candidate date is removed as a regular expression
(replaceFirst). tests/sparkwalk/trimmer-vectors.json holds the real classes' answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

PACKAGE = "io.openlineage.client.dataset.partition.trimmer."
DISABLED = "spark.openlineage.dataset.disabledTrimmers"
EXTRA = "spark.openlineage.dataset.extraTrimmers"
SEPARATOR = "/"


def _java_split(name: str) -> list[str]:
    """String.split("/"): trailing empty strings removed (all of them, even every part)."""
    parts = name.split(SEPARATOR)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _has_multiple_directories(name: str) -> bool:
    if SEPARATOR not in name:
        return False
    return len(_java_split(name[1:] if name.startswith(SEPARATOR) else name)) > 1


def _last_part(name: str) -> str:
    """DatasetNameTrimmer.getLastPart: the last folder, trailing slashes ignored."""
    if SEPARATOR not in name:
        return name
    stripped = name.rstrip(SEPARATOR)
    return name[stripped.rindex(SEPARATOR) :].replace(SEPARATOR, "")


def _remove_last_part(name: str) -> str:
    return name[: name.rindex(SEPARATOR)]


def _year(text: str) -> int | None:
    """`yyyy` of a DateTimeFormatter pattern: a year of era, so 0000 does not parse."""
    value = int(text)
    return value if value >= 1 else None


def _year_month(year: str, month: str) -> bool:
    return _year(year) is not None and 1 <= int(month) <= 12


def _date(year: str, month: str, day: str) -> bool:
    # ResolverStyle.SMART: the day is checked against 1-31 only, then clamped to the month's end.
    return _year_month(year, month) and 1 <= int(day) <= 31


_DIGITS = "[0-9]"
#: DateTrimmer's formats in the order its HashMap yields them (the keys' String.hashCode buckets:
#: dd.MM.yyyy and yyyyMMdd share bucket 7 in insertion order, yyyy-MM-dd is in 10); the first
#: candidate that parses decides.
_DATE_FORMATS: list[tuple[re.Pattern[str], Callable[[str], bool]]] = [
    (re.compile(rf"{_DIGITS}{{2}}\.{_DIGITS}{{2}}\.{_DIGITS}{{4}}"), lambda c: _date(c[6:10], c[3:5], c[0:2])),
    (re.compile(f"{_DIGITS}{{8}}"), lambda c: _date(c[0:4], c[4:6], c[6:8])),
    (re.compile(f"{_DIGITS}{{4}}-{_DIGITS}{{2}}-{_DIGITS}{{2}}"), lambda c: _date(c[0:4], c[5:7], c[8:10])),
]
_JAVA_BLANK = re.compile(r"[ \t\n\x0b\f\r]")


def _date_can_trim(name: str) -> bool:
    if not _has_multiple_directories(name):
        return False
    last = _last_part(name)
    for pattern, parses in _DATE_FORMATS:
        for match in pattern.finditer(last):
            candidate = match.group()
            if not parses(candidate):
                continue
            rest = re.sub(candidate, "", last, count=1)  # replaceFirst: the candidate is a regex
            rest = rest.replace("T", "", 1).replace("Z", "", 1)
            rest = _JAVA_BLANK.sub("", rest).replace(":", "").replace(".", "").replace("-", "")
            return re.sub(_DIGITS, "", rest) == ""
    return False


def _key_value_can_trim(name: str) -> bool:
    return _has_multiple_directories(name) and _last_part(name).count("=") == 1


_YEAR_MONTH = re.compile(f"({_DIGITS}{{4}})({_DIGITS}{{2}})")
_YEAR_MONTH_DASHED = re.compile(f"({_DIGITS}{{4}})-({_DIGITS}{{2}})")
_YEAR_MONTH_DAY = re.compile(f"({_DIGITS}{{4}})({_DIGITS}{{2}})({_DIGITS}{{2}})")


def _year_month_can_trim(name: str) -> bool:
    if not _has_multiple_directories(name):
        return False
    last = _last_part(name)
    return any(
        (found := pattern.fullmatch(last)) is not None and _year_month(*found.groups())
        for pattern in (_YEAR_MONTH, _YEAR_MONTH_DASHED)
    )


def _multi_dir_year_month(dirs: list[str]) -> bool:
    if len(dirs) < 3:
        return False
    found = _YEAR_MONTH.fullmatch(dirs[-2] + dirs[-1])
    return found is not None and _year_month(*found.groups())


def _multi_dir_date(dirs: list[str]) -> bool:
    if len(dirs) < 4:
        return False
    found = _YEAR_MONTH_DAY.fullmatch(dirs[-3] + dirs[-2] + dirs[-1])
    return found is not None and _date(*found.groups())


def _multi_dir_can_trim(name: str) -> bool:
    dirs = _java_split(name[1:] if name.startswith(SEPARATOR) else name)
    return _multi_dir_year_month(dirs) or _multi_dir_date(dirs)


def _multi_dir_trim(name: str) -> str:
    # Its own trim splits the whole name (a leading "/" is an empty first folder).
    dirs = _java_split(name)
    if _multi_dir_year_month(dirs):
        return SEPARATOR.join(dirs[:-2])
    if _multi_dir_date(dirs):
        return SEPARATOR.join(dirs[:-3])
    return name


@dataclass(frozen=True)
class Trimmer:
    class_name: str
    can_trim: Callable[[str], bool]
    cut: Callable[[str], str] = _remove_last_part

    def trim(self, name: str) -> str:
        return self.cut(name) if self.can_trim(name) else name


DEFAULT_TRIMMERS = (
    Trimmer(PACKAGE + "DateTrimmer", _date_can_trim),
    Trimmer(PACKAGE + "KeyValueTrimmer", _key_value_can_trim),
    Trimmer(PACKAGE + "MultiDirDateTrimmer", _multi_dir_can_trim, _multi_dir_trim),
    Trimmer(PACKAGE + "YearMonthTrimmer", _year_month_can_trim),
)


@dataclass(frozen=True)
class NameTrimming:
    """The trimmers a job's conf leaves on, and what of the conf planlineage cannot follow."""

    trimmers: tuple[Trimmer, ...] = DEFAULT_TRIMMERS
    warnings: tuple[str, ...] = field(default=())

    def trim(self, name: str) -> str:
        """DatasetIdentifier.withTrimmedName: every trimmer in turn, until none trims any more."""
        trimmed = name
        again = True
        while again:
            again = False
            for trimmer in self.trimmers:
                if trimmer.can_trim(trimmed):
                    trimmed = trimmer.trim(trimmed)
                    again = True
        return trimmed


def name_trimming(conf: Mapping[str, str]) -> NameTrimming:
    """DatasetConfig.getDatasetNameTrimmers over the job's Spark conf."""
    disabled = conf.get(DISABLED)
    warnings = []
    known = {trimmer.class_name for trimmer in DEFAULT_TRIMMERS}
    for class_name in (conf.get(EXTRA) or "").split(";"):
        class_name = class_name.strip()
        if class_name and class_name not in known:
            warnings.append(
                f"{EXTRA} names {class_name}, a trimmer class planlineage cannot run: dataset names it "
                "would trim differ from openlineage-spark's"
            )
    trimmers = tuple(t for t in DEFAULT_TRIMMERS if disabled is None or t.class_name not in disabled)
    return NameTrimming(trimmers, tuple(warnings))


_SUBSET_SCHEMA = "https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json#/$defs/"


def subset_facet(locations: list[str], output: bool = False) -> dict:
    """The facet openlineage-spark 1.53.0 puts on a dataset whose name it trimmed, as its events
    carry it (tests/conformance case 25): `inputFacets.subset` with an `inputCondition`, or on an
    output `outputFacets.subset` with an `outputCondition`, each a LocationSubsetCondition listing
    the untrimmed names of the one dataset. For the event builder (emitter/), which adds
    `_producer`."""
    condition = {"type": "location", "locations": list(locations)}
    if output:
        return {"_schemaURL": _SUBSET_SCHEMA + "OutputSubsetOutputDatasetFacet", "outputCondition": condition}
    return {"_schemaURL": _SUBSET_SCHEMA + "InputSubsetInputDatasetFacet", "inputCondition": condition}
