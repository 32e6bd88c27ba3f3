"""What every importer shares: reading a source file whole or not at all, and naming what is wrong.

A malformed source file is a :class:`LedgerError` whose every line names the file, the record (its
position in the file's list, and the task where known) and the field, e.g.
``results.json: record 17 (task 'a'): field 'reward': expected a number, got "x"``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from trialbook.errors import LedgerError, Problem
from trialbook.ledger import NOT_RECORDABLE, SourceFile

__all__ = [
    "Record",
    "attempt_row",
    "expand",
    "fail",
    "head",
    "load_json",
    "raise_problems",
    "records",
    "seconds_between",
    "show",
    "source_file",
    "too_large",
]

MAX_BYTES = 2 * 1024**3
"""No source file larger than this is read, whatever bound an import sets (a JSON document is
read whole)."""


def fail(path: Path | str, message: str) -> LedgerError:
    """One problem with a whole file."""
    return LedgerError([Problem(0, message, str(path))])


def show(value: object) -> str:
    """A value as JSON, cut to 40 characters, for messages."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def source_file(path: Path) -> SourceFile:
    """The file's path as given and the SHA-256 of its bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return SourceFile(str(path), digest.hexdigest())


def expand(paths: Sequence[Path], suffixes: tuple[str, ...]) -> list[Path]:
    """The files to read: each path given, a folder replaced by its files with one of ``suffixes``
    (sorted by name, not recursive). An absent path or an empty folder is an error naming it."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in suffixes)
            if not found:
                raise fail(path, f"folder holds no {' or '.join(suffixes)} file")
            out.extend(found)
        elif path.is_file():
            out.append(path)
        elif path.exists():
            raise fail(path, "is not a regular file")
        else:
            raise fail(path, "no such file")
    return out


def too_large(path: Path, what: str, limit: int) -> LedgerError:
    """The one line for a source past the import's bound (``ImportOptions.max_bytes``):
    ``what`` it holds, e.g. ``"holds 70,000,000 bytes"``."""
    return fail(
        path,
        f"{what}, past the {limit / 1024**2:g} MiB a source may hold: not read "
        "(trialbook import --max-source-mib raises the bound)",
    )


def load_json(path: Path, limit: int) -> Any:
    """The parsed JSON document; a truncated or invalid file is one problem naming its position.
    A file of more than ``limit`` bytes is refused before it is read.

    NaN and infinity literals are refused (JSON has none; Python's parser would accept them).
    """
    size = path.stat().st_size
    if size > min(limit, MAX_BYTES):
        raise too_large(path, f"holds {size:,} bytes", min(limit, MAX_BYTES))
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise fail(path, f"not UTF-8 text (byte {exc.start})") from None

    def constant(name: str) -> None:
        raise ValueError(f"{name} is not a JSON number")

    try:
        return json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise fail(
            path, f"not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise fail(path, f"not valid JSON: {exc}") from None


class Record:
    """One record of a source file and typed access to its fields; each mistake is collected as a
    problem naming file, record and field (raise them all with :meth:`Problems.check`)."""

    def __init__(
        self, data: object, path: Path, where: str, problems: list[Problem], task: str | None = None
    ) -> None:
        self.path, self.where, self.problems, self.task = path, where, problems, task
        self.data: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
        self.ok = isinstance(data, Mapping)
        if not self.ok:
            self._add(None, f"expected an object, got {show(data)}")

    def _add(self, name: str | None, message: str) -> None:
        label = f"{self.where} (task {self.task!r})" if self.task else self.where
        field = f"field {name!r}: " if name else ""
        self.problems.append(Problem(0, f"{label}: {field}{message}", str(self.path)))
        self.ok = False

    def has(self, name: str) -> bool:
        """Whether the field is present and not null."""
        return self.data.get(name) is not None

    def _get(self, name: str, required: bool) -> Any:
        if name not in self.data or self.data[name] is None:
            if required:
                self._add(name, "missing" if name not in self.data else "is null")
            return None
        return self.data[name]

    def text(self, name: str, *, required: bool = True, ids: bool = False) -> str | None:
        """A string (an integer too when ``ids``: tau-bench numbers its tasks)."""
        value = self._get(name, required)
        if value is None:
            return None
        if ids and isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str) or (required and not value.strip()):
            self._add(name, f"expected {'an id' if ids else 'a string'}, got {show(value)}")
            return None
        return value

    def number(self, name: str, *, required: bool = True, low: float | None = None) -> float | None:
        """A finite number (an integer is a number), at least ``low`` when given."""
        value = self._get(name, required)
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            self._add(name, f"expected a number, got {show(value)}")
            return None
        if low is not None and value < low:
            self._add(name, f"must be >= {low:g}, got {show(value)}")
            return None
        return float(value)

    def integer(self, name: str, *, required: bool = True, low: int | None = None) -> int | None:
        """A whole number (JSON integer), at least ``low`` when given."""
        value = self._get(name, required)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self._add(name, f"expected a whole number, got {show(value)}")
            return None
        if low is not None and value < low:
            self._add(name, f"must be >= {low}, got {value}")
            return None
        return value

    def flag(self, name: str, *, required: bool = True) -> bool | None:
        """true or false."""
        value = self._get(name, required)
        if value is None:
            return None
        if not isinstance(value, bool):
            self._add(name, f"expected true or false, got {show(value)}")
            return None
        return value

    def obj(self, name: str, *, required: bool = True) -> Record | None:
        """A nested object, as a record of its own (problems name ``name.field``)."""
        value = self._get(name, required)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self._add(name, f"expected an object, got {show(value)}")
            return None
        return Record(value, self.path, f"{self.where}: {name}", self.problems, self.task)

    def items(self, name: str, *, required: bool = True) -> list[Any] | None:
        """A list."""
        value = self._get(name, required)
        if value is None:
            return None
        if not isinstance(value, list):
            self._add(name, f"expected a list, got {show(value)}")
            return None
        return value

    def problem(self, message: str, name: str | None = None) -> None:
        """Record a problem of this record (e.g. a value outside the source's documented set)."""
        self._add(name, message)


def records(
    items: Iterable[object], path: Path, problems: list[Problem], *, label: str = "record"
) -> Iterator[Record]:
    """Each item of a list as a :class:`Record` named ``record N`` (1-based)."""
    for i, item in enumerate(items, 1):
        yield Record(item, path, f"{label} {i}", problems)


def raise_problems(problems: list[Problem]) -> None:
    """Raise the collected problems, if any."""
    if problems:
        raise LedgerError(problems)


def attempt_row(**fields: object) -> dict[str, object]:
    """A ledger row of the values a source recorded (None: not recorded, left out). Every
    not-recordable required field left out is named in ``not_recorded``: nothing is invented."""
    row = {k: v for k, v in fields.items() if v is not None}
    lacking = [n for n in NOT_RECORDABLE if n not in row]
    if lacking:
        row["not_recorded"] = ",".join(lacking)
    return row


def head(path: Path, size: int = 4096) -> str:
    """The first bytes of a .json file as text, for detection ('' when not a readable .json file)."""
    if path.suffix.lower() != ".json" or not path.is_file():
        return ""
    try:
        with path.open("rb") as fh:
            return fh.read(size).decode("utf-8", "replace")
    except OSError:
        return ""


def seconds_between(start: str | None, end: str | None) -> float | None:
    """Seconds from one ISO 8601 timestamp to another; None when either is absent, has no UTC
    offset or the end is before the start (a duration the source does not really record)."""
    if start is None or end is None:
        return None
    try:
        a, b = datetime.fromisoformat(start), datetime.fromisoformat(end)
    except ValueError:
        return None
    if a.tzinfo is None or b.tzinfo is None or b < a:
        return None
    return (b - a).total_seconds()
