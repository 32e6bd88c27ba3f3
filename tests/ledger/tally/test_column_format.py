"""Schema 12: the kept column blobs of format 2 keep a column of one repeated value once; format 1
blobs (schemas 7 to 11) still read; a blob that does not read back as its rows is never trusted,
the run is read from the table instead (ledger/store/_columns.py)."""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import base_row, write_jsonl
from trialbook import report as render
from trialbook.analysis import ScoreOptions, score_file
from trialbook.ledger import import_files, read_ledger
from trialbook.ledger.store import StoreTallies
from trialbook.ledger.store import _columns as columns


def _rows(run: str = "r", tasks: int = 4, k: int = 3) -> list[dict[str, Any]]:
    # system, k_budget, timeout_s, helper_calls, oracle_leak, cost and tokens_in are one value in
    # every row; task_id, attempt_index, elapsed_s and passed vary
    return [
        base_row(f"t{t}", a, passed=(t + a) % 2 == 0, k=k, run_id=run, system="s",
                 elapsed_s=0.25 * t + a, cost=0.0125, tokens_in=1200)
        for t in range(tasks)
        for a in range(k)
    ]  # fmt: skip


def _doc(path: Path, run: str | None = None) -> str:
    doc = render.score_to_dict(score_file(path, run=run, options=ScoreOptions(resamples=200)))
    doc.pop("source")
    return json.dumps(doc)


def _header(blob: bytes) -> dict[str, Any]:
    (size,) = struct.unpack("<I", blob[4:8])
    return dict(json.loads(blob[8 : 8 + size]))


def _store(tmp_path: Path, rows: list[dict[str, Any]]) -> tuple[Path, Path]:
    jsonl = write_jsonl(tmp_path / "l.jsonl", rows)
    db = tmp_path / "l.db"
    import_files(db, [read_ledger(jsonl)])
    return jsonl, db


def _blobs(db: Path) -> list[tuple[int, bytes]]:
    conn = sqlite3.connect(db)
    try:
        return [
            (int(i), bytes(b)) for i, b in conn.execute("SELECT id, columns FROM attempt_columns")
        ]
    finally:
        conn.close()


def _replace_blob(db: Path, blob_id: int, value: object) -> None:
    """What another tool can do to the file: drop the append-only trigger and rewrite a blob."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DROP TRIGGER attempt_columns_no_update")
    conn.execute("UPDATE attempt_columns SET columns = ? WHERE id = ?", (value, blob_id))
    conn.close()


def test_a_column_of_one_value_is_kept_once_and_reads_back_as_that_value_per_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jsonl, db = _store(tmp_path, _rows())
    [(_, blob)] = _blobs(db)
    assert blob[:4] == b"TBC2"
    spans = {span[0]: span for span in _header(blob)["arrays"]}
    same = {name for name, span in spans.items() if span[4:] == ["same"]}
    assert same == {"run_id", "system", "k_budget", "timeout_s", "timed_out", "helper_calls",
                    "oracle_leak", "cost", "tokens_in"}  # fmt: skip
    assert {"task_id", "attempt_index", "elapsed_s", "passed", "id"}.isdisjoint(same)
    for name in same:  # one value's bytes, not one per row
        assert spans[name][3] == np.dtype(spans[name][1]).itemsize
    with StoreTallies(db) as tallies:
        kept = tallies.rows("r")
    assert kept.values["k_budget"].strides == (0,)
    assert not kept.values["k_budget"].flags.writeable
    assert kept.values["k_budget"].tolist() == [3] * 12
    assert kept.text("system").tolist() == ["s"] * 12
    monkeypatch.setattr(StoreTallies, "_tally", lambda *_: pytest.fail("the SQL path was taken"))
    assert _doc(db) == _doc(jsonl)


def test_zero_and_minus_zero_are_not_one_value(tmp_path: Path) -> None:
    # the same bits, not equal numbers: a sum of -0.0 and 0.0 differs in its sign from all -0.0
    rows = _rows(tasks=1, k=2)
    rows[0]["cost"], rows[1]["cost"] = 0.0, -0.0
    _, db = _store(tmp_path, rows)
    [(_, blob)] = _blobs(db)
    spans = {span[0]: span for span in _header(blob)["arrays"]}
    assert spans["cost"][4:] == []
    with StoreTallies(db) as tallies:
        assert np.signbit(tallies.rows("r").values["cost"]).tolist() == [False, True]


def test_a_format_1_blob_of_an_older_store_still_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _rows()
    jsonl = write_jsonl(tmp_path / "l.jsonl", rows)
    db = tmp_path / "l.db"
    # format 1 is format 2 with no column kept once, under its own magic
    with monkeypatch.context() as m:
        m.setattr(columns, "_MAGIC", b"TBC1")
        m.setattr(columns, "_same", lambda arr: False)
        import_files(db, [read_ledger(jsonl)])
    [(_, blob)] = _blobs(db)
    assert blob[:4] == b"TBC1"
    assert all(len(span) == 4 for span in _header(blob)["arrays"])
    monkeypatch.setattr(StoreTallies, "_tally", lambda *_: pytest.fail("the SQL path was taken"))
    assert _doc(db) == _doc(jsonl)


def test_format_1_never_marks_a_column_kept_once(tmp_path: Path) -> None:
    _, db = _store(tmp_path, _rows())
    [(blob_id, blob)] = _blobs(db)
    _replace_blob(db, blob_id, b"TBC1" + blob[4:])  # format 2's spans under format 1's magic
    with StoreTallies(db) as tallies:
        assert tallies._kept("r") is None


def _damaged(blob: bytes) -> list[tuple[str, object]]:
    header = _header(blob)
    size = struct.unpack("<I", blob[4:8])[0]

    def with_header(change: Any) -> bytes:
        h = json.loads(json.dumps(header))
        change(h)
        text = json.dumps(h).encode()
        text += b" " * (size - len(text))
        assert len(text) == size, "the test's header no longer fits its span"
        return blob[:8] + text + blob[8 + size :]

    def span(name: str, item: int, value: object) -> Any:
        def change(h: dict[str, Any]) -> None:
            next(s for s in h["arrays"] if s[0] == name)[item] = value

        return change

    def label(h: dict[str, Any]) -> None:
        h["labels"]["task_id"] = h["labels"]["task_id"][:1]  # codes past the labels

    return [
        ("text", "TBC2 not a blob"),
        ("number", 12),
        ("magic", b"XXXX" + blob[4:]),
        ("header", blob[:8] + b"{" * size + blob[8 + size :]),
        ("cut short", blob[: len(blob) // 2]),
        ("unknown column", with_header(span("elapsed_s", 0, "elapsed"))),
        ("wrong type", with_header(span("elapsed_s", 1, "<i8"))),
        ("wrong length", with_header(span("elapsed_s", 3, 8))),
        ("bad mark", with_header(span("system", 4, "many"))),
        ("codes past labels", with_header(label)),
        ("rows", with_header(lambda h: h.update(rows=11))),
    ]


@pytest.mark.parametrize("case", range(11))
def test_a_damaged_blob_is_never_trusted_the_run_is_read_from_its_rows(
    tmp_path: Path, case: int
) -> None:
    jsonl, db = _store(tmp_path, _rows())
    [(blob_id, blob)] = _blobs(db)
    name, value = _damaged(blob)[case]
    _replace_blob(db, blob_id, value)
    with StoreTallies(db) as tallies:
        assert tallies._kept("r") is None, name
    assert _doc(db) == _doc(jsonl), name


def test_a_blob_of_other_rows_is_never_trusted(tmp_path: Path) -> None:
    # a well-formed blob of two runs' worth of rows swapped: its row count and last id are not
    # those the table says it keeps
    rows = _rows("a") + _rows("b", tasks=2)
    jsonl, db = _store(tmp_path, rows)
    (a_id, _a_blob), (_b_id, b_blob) = _blobs(db)
    _replace_blob(db, a_id, b_blob)
    with StoreTallies(db) as tallies:
        assert tallies._kept("a") is None
        assert tallies._kept("b") is not None
    assert _doc(db, "a") == _doc(jsonl, "a")


def test_a_kept_run_packed_again_keeps_its_columns_of_one_value(tmp_path: Path) -> None:
    # a Ledger read from format 2 holds such a column as one value seen per row (stride 0), as a
    # column nobody recorded is held: packing it again must still keep it
    _, db = _store(tmp_path, _rows())
    with StoreTallies(db) as tallies:
        kept = tallies.rows("r")
    assert kept.codes["system"].strides == (0,)
    recorded = columns._recorded(kept)
    assert {"system", "k_budget", "cost", "tokens_in"} <= set(recorded)
    assert "dataset_id" not in recorded
    assert "score" not in recorded
