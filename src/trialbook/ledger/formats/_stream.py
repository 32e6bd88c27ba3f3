"""JSONL and CSV ledgers tallied in bounded chunks: memory that grows with the tasks, not the file.

The file is read a chunk of whole lines at a time (32 MiB of JSONL, 8 MiB of CSV). Each chunk goes through the
fast readers of its format (the C reader or pyarrow for JSONL, pyarrow for CSV), which check the
chunk's rows by :func:`~trialbook.ledger._rules.check_rules`, and is then folded into per-run,
per-task tallies (:class:`~trialbook.ledger._fold.FileFold`), which check the rules that span
chunks. The tallies are the same, to the bit, as those of the file read whole.

The chunked read only ever accepts. At the first chunk a fast reader declines (a broken rule, a
value it does not read exactly, an imported run with ``not_recorded``, a CSV row over several
lines) or a rule across chunks that breaks, the file is read whole, the way :func:`read_ledger`
reads it: every problem named with its line, nothing scored, the same messages as ever.
"""

from __future__ import annotations

import codecs
import contextlib
import re
from collections.abc import Callable, Collection, Generator, Iterator
from pathlib import Path

from trialbook.background import Background
from trialbook.errors import ArgumentError
from trialbook.ledger._fold import FileFold
from trialbook.ledger._table import Ledger
from trialbook.ledger._tally import RunTally, TallyOfLedger
from trialbook.ledger.formats._csv import _read_csv_fast
from trialbook.ledger.formats._jsonl import _read_jsonl_fast, _read_jsonl_native

__all__ = ["CHUNK_BYTES", "CSV_CHUNK_BYTES", "StreamTallies", "chunks"]

CHUNK_BYTES = 32 << 20
"""Bytes of JSONL read at a time (a chunk is that much, cut back to its last whole line)."""
CSV_CHUNK_BYTES = 8 << 20
"""Bytes of CSV read at a time: a CSV row is about a third of its JSONL line, and pyarrow's tables
of a 32 MiB chunk held 430 MB at 1,000,000 rows where 8 MiB chunks hold 270 MB (and read faster)."""


def chunks(path: Path, chunk_bytes: int = CHUNK_BYTES) -> Generator[memoryview, None, None]:
    """The file in pieces of whole lines (each ends at a newline, but perhaps the last), a byte
    order mark at the start left out.

    The pieces are views of one buffer, reused: each is valid until the next is asked for (the
    readers copy what they keep). A line longer than the buffer grows it.
    """
    with path.open("rb", buffering=0) as fh:
        head = fh.read(len(codecs.BOM_UTF8)) or b""
        carried = b"" if head == codecs.BOM_UTF8 else head
        buf = bytearray(max(chunk_bytes, len(carried) + 1))
        buf[: len(carried)] = carried
        start = len(carried)
        while True:
            if start == len(buf):  # one line fills the buffer: a larger one
                buf = buf + bytearray(len(buf))
            view = memoryview(buf)
            read = fh.readinto(view[start:])
            end = start + (read or 0)
            if not read:
                if end:
                    yield view[:end]
                return
            cut = buf.rfind(b"\n", 0, end)
            if cut < 0:
                start = end
                continue
            yield view[: cut + 1]
            rest = end - cut - 1
            buf[:rest] = buf[cut + 1 : end]  # the same length: no resize under the view
            start = rest


_SOMETHING = re.compile(rb"\S")


def _jsonl_chunk(data: memoryview, source: str) -> Ledger | None:
    fast = _read_jsonl_native(data, source, None)
    if fast is None:
        fast = _read_jsonl_fast(bytes(data), source, None)
    return fast


def _parsed(path: Path, source: str, chunk_bytes: int) -> Iterator[tuple[Ledger | None, int]]:
    """Each chunk that holds a row, read by the fast readers (None where they decline), with its
    length; the next chunk is read and parsed on a second thread while the caller folds this one
    (the C reader parses without the interpreter's lock). A chunk's Ledger holds no view of the
    buffer the pieces share, so the next piece may overwrite it."""
    pieces = chunks(path, chunk_bytes)  # a generator: closed below, after the read ahead

    def next_chunk() -> tuple[Ledger | None, int] | None:
        for data in pieces:
            if _SOMETHING.search(data):  # blank lines hold no row
                return _jsonl_chunk(data, source), len(data)
        return None

    ahead = Background(next_chunk)
    try:
        while (item := ahead.result()) is not None:
            ahead = Background(next_chunk)
            yield item
    finally:
        # a caller that stops early (a chunk declined, a rule across chunks broken, or its own
        # error, which must be the one raised) leaves one chunk read ahead: waited for, so that
        # the file is closed after it, and dropped with whatever it raised; the whole read that
        # follows a decline reads that chunk again and names any problem in it
        with contextlib.suppress(Exception):
            ahead.result()
        pieces.close()


def _fold_jsonl(path: Path, fold: FileFold, chunk_bytes: int) -> bool:
    for chunk, size in _parsed(path, fold.source, chunk_bytes):
        if chunk is None or chunk.recorded("not_recorded"):
            return False
        fold.fold(chunk, size)
        if fold.broken:
            return False
    return True


def _fold_csv(path: Path, fold: FileFold, chunk_bytes: int) -> bool:
    header: bytes | None = None
    for piece in chunks(path, chunk_bytes):
        data = bytes(piece)
        if header is None:
            end = data.find(b"\n")
            header, data = data[: end + 1], data[end + 1 :]
        if not _SOMETHING.search(data):
            continue
        chunk = _read_csv_fast(header + data, fold.source, None)
        if chunk is None or chunk.recorded("not_recorded"):
            return False
        fold.fold(chunk, len(data))
        if fold.broken:
            return False
    import pyarrow as pa  # read the chunks: pyarrow's pool hands back what their tables held

    pa.default_memory_pool().release_unused()
    return True


class StreamTallies:
    """:class:`~trialbook.ledger.Tallies` of a JSONL or CSV file, read chunk by chunk (see the
    module's docstring); a file the chunked read declines is read whole by ``read_whole``, which
    raises :class:`~trialbook.errors.LedgerError` naming every problem of an invalid one."""

    def __init__(
        self,
        path: Path,
        default_run: str,
        read_whole: Callable[[Path, str], Ledger],
        *,
        chunk_bytes: int | None = None,
    ) -> None:
        self._path, self._default_run, self._read_whole = path, default_run, read_whole
        self._ledger: Ledger | None = None
        self.whole: TallyOfLedger | None = None
        """The tallies of the file read whole, when the chunked read declined it."""
        fold = FileFold(str(path), default_run, path.stat().st_size)
        csv = path.suffix.lower() == ".csv"
        folder = _fold_csv if csv else _fold_jsonl
        size = chunk_bytes or (CSV_CHUNK_BYTES if csv else CHUNK_BYTES)
        if not (folder(path, fold, size) and fold.finish()):
            self.whole = TallyOfLedger(self._rows_read())
        self._fold = fold

    def _rows_read(self) -> Ledger:
        if self._ledger is None:
            self._ledger = self._read_whole(self._path, self._default_run)
        return self._ledger

    @property
    def source(self) -> str:
        return str(self._path)

    def run_ids(self) -> tuple[str, ...]:
        if self.whole is not None:
            return self.whole.run_ids()
        return tuple(self._fold.runs)

    def has_run(self, run_id: str) -> bool:
        return run_id in self.run_ids()

    def tally(
        self, run_id: str, *, drop_status: str | None = None, set_aside: Collection[str] = ()
    ) -> RunTally:
        if self.whole is not None:
            return self.whole.tally(run_id, drop_status=drop_status, set_aside=set_aside)
        fold = self._fold.runs.get(run_id)
        if fold is None:
            known = ", ".join(repr(r) for r in self._fold.runs)
            raise ArgumentError(
                f"run {run_id!r} is not in {self.source} (runs: {known})", argument="run"
            )
        return fold.tally(drop_status=drop_status, set_aside=set_aside)

    def rows(self, run_id: str) -> Ledger:
        """The run's rows, read whole (for a question tallies cannot answer)."""
        return self._rows_read().run(run_id)

    def close(self) -> None:
        """Nothing to release (the file is closed once read)."""

    def __enter__(self) -> StreamTallies:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
