"""The chunked read of JSONL and CSV ledgers (``formats/_stream.py``, ``_fold.py``): the same JSON
as the file read whole, with chunk boundaries everywhere, and every bad input refused with the
messages of the whole read, whether the broken rule lies within one chunk or across chunks."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_score_cli import BAD_CASES
from tests.conftest import base_row, write_jsonl
from trialbook import report as render
from trialbook.analysis import ScoreOptions, score_tallies
from trialbook.errors import LedgerError
from trialbook.ledger import TallyOfLedger, read_ledger
from trialbook.ledger.formats._stream import CHUNK_BYTES, StreamTallies, chunks

CHUNKS = [1, 97, CHUNK_BYTES]  # one line a chunk, a few lines, the whole of a small file


def _read_whole(path: Path, default_run: str) -> Any:
    return read_ledger(path, default_run=default_run)


def stream(path: Path, chunk: int) -> StreamTallies:
    return StreamTallies(path, path.stem, _read_whole, chunk_bytes=chunk)


def doc(source: Any, **options: Any) -> str:
    report = score_tallies(source, options=ScoreOptions(resamples=200, **options))
    return json.dumps(render.score_to_dict(report))


def _csv_text(rows: list[dict[str, Any]]) -> str:
    names = list(dict.fromkeys(k for r in rows for k in r))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(names)
    for r in rows:
        writer.writerow(
            ["" if r.get(n) is None else str(r[n]).lower() if isinstance(r[n], bool) else r[n]
             for n in names]
        )  # fmt: skip
    return out.getvalue()


def _runs(named: bool = True) -> list[dict[str, Any]]:
    """Two runs interleaved, strata, weights, scores, costs on some rows, errors, infra errors."""
    rows = []
    for a in range(4):
        for t in range(5):
            for run in ("r1", "r2"):
                passed = (t + a) % 3 == 0
                infra = not passed and (t * a) % 5 == 1
                row = base_row(
                    f"t{t}", a, passed=passed, k=4, elapsed_s=0.1 * (t + 1) + a / 7,
                    status="passed" if passed else "infra_error" if infra else "failed",
                    stratum="repair" if t % 2 else "greenfield", weight=1.0 + t,
                    score=0.25 * (a % 4), tokens_in=10 * t + a,
                )  # fmt: skip
                if named:
                    row["run_id"] = run
                if a % 2:
                    row["cost"] = 0.013 * (t + 1)
                if not passed and t % 2:
                    row["error"] = f"exit {t}"
                rows.append(row)
                if not named:
                    break
    return rows


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("named", [True, False])
@pytest.mark.parametrize("drop", [False, True])
def test_chunks_give_the_whole_file_json(tmp_path: Path, fmt: str, named: bool, drop: bool) -> None:
    rows = _runs(named)
    path = tmp_path / f"l.{fmt}"
    text = _csv_text(rows) if fmt == "csv" else "".join(json.dumps(r) + "\n" for r in rows)
    # a byte order mark, blank lines and CRLF line ends: what the whole read accepts too
    lines = text.split("\n")
    lines.insert(3, "")
    data = "\ufeff" + "\r\n".join(lines) if fmt == "jsonl" else "\ufeff" + "\n".join(lines)
    path.write_text(data, encoding="utf-8")
    expected = doc(TallyOfLedger(read_ledger(path)), drop_infra_errors=drop)
    for chunk in CHUNKS:
        source = stream(path, chunk)
        assert source.whole is None, f"chunk {chunk}: the chunked read declined a valid file"
        assert doc(source, drop_infra_errors=drop) == expected, chunk


def test_a_file_the_fast_readers_decline_is_read_whole_with_the_same_result(
    tmp_path: Path,
) -> None:
    # an imported run's unrecorded fields go the precise way (it alone sees a value given for one)
    rows = [
        {**base_row(f"t{t}", a, passed=(t + a) % 2 == 0, k=3), "helper_calls": None,
         "not_recorded": "helper_calls"}
        for t in range(3) for a in range(3)
    ]  # fmt: skip
    path = write_jsonl(tmp_path / "imported.jsonl", rows)
    source = stream(path, 1)
    assert source.whole is not None
    assert doc(source) == doc(TallyOfLedger(read_ledger(path)))


def _refusal(path: Path, chunk: int | None) -> list[str]:
    read = (lambda: read_ledger(path)) if chunk is None else (lambda: stream(path, chunk))
    with pytest.raises(LedgerError) as caught:
        read()
    return [p.render() for p in caught.value.details]


def _write(path: Path, rows: Any) -> Path:
    if isinstance(rows, bytes):
        path.write_bytes(rows)
    elif isinstance(rows, str):
        path.write_text(rows)
    else:
        write_jsonl(path, rows)
    return path


@pytest.mark.parametrize("chunk", [1, CHUNK_BYTES])
@pytest.mark.parametrize("case", list(BAD_CASES))
def test_every_bad_input_is_refused_with_the_whole_reads_messages(
    tmp_path: Path, case: str, chunk: int
) -> None:
    rows, message = BAD_CASES[case]
    path = _write(tmp_path / "bad.jsonl", rows)
    got = _refusal(path, chunk)
    assert got == _refusal(path, None)
    assert any(message in line for line in got), got


# rules only rows in different chunks can break (each row is a chunk of its own at size 1)
ACROSS: dict[str, tuple[list[dict[str, Any]], str]] = {
    "system varying within a run": (
        [base_row("t1", 0, passed=True, system="a"), base_row("t2", 0, passed=True, system="b")],
        "field 'system': 'b' differs from 'a' on line 1",
    ),
    "dataset varying within a run": (
        [base_row("t1", 0, passed=True), base_row("t2", 0, passed=True, dataset_id="d")],
        "field 'dataset_id': 'd' differs from null on line 1",
    ),
    "graded_after_timeout varying": (
        [base_row("t1", 0, passed=True, graded_after_timeout=True), base_row("t2", 0, passed=True)],
        "field 'graded_after_timeout'",
    ),
    "weight varying within a task": (
        [
            base_row("t1", 0, passed=True, weight=1.0),
            base_row("t2", 0, passed=True),
            base_row("t1", 1, passed=True, weight=2.0),
        ],
        "field 'weight': 2 differs from 1 on line 1",
    ),
    "stratum varying within a task": (
        [base_row("t1", 0, passed=True, stratum="x"), base_row("t1", 1, passed=True)],
        "field 'stratum': null differs from 'x' on line 1",
    ),
    "duplicate far apart": (
        [base_row(f"t{i}", 0, passed=True) for i in range(30)] + [base_row("t3", 0, passed=False)],
        "bad.jsonl:31: run 'bad', task 't3': attempt_index 0 duplicates line 4",
    ),
    "run named only later": (
        [base_row("t1", 0, passed=True), base_row("t2", 0, passed=True, run_id="r")],
        "bad.jsonl:1: field 'run_id': missing while other rows name their run",
    ),
    "k varying in another run's chunk": (
        [
            base_row("t1", 0, passed=True, run_id="a", k=2),
            base_row("t1", 0, passed=True, run_id="b", k=3),
            base_row("t2", 1, passed=True, run_id="a", k=3),
        ],
        "bad.jsonl:3: run 'a', task 't2': field 'k_budget': 3 differs from 2 on line 1",
    ),
}


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("chunk", [1, CHUNK_BYTES])
@pytest.mark.parametrize("case", list(ACROSS))
def test_rules_across_chunks_are_checked(tmp_path: Path, case: str, chunk: int, fmt: str) -> None:
    rows, message = ACROSS[case]
    path = tmp_path / f"bad.{fmt}"
    if fmt == "csv":
        path.write_text(_csv_text(rows))
        # a CSV row's line is one more (the header is line 1): the lines are the whole read's
        message = re.sub(r"line \d+", "line", re.sub(r"^bad\.jsonl:\d+: ", "", message))
        got = [re.sub(r"line \d+", "line", g) for g in _refusal(path, chunk)]
        assert got == [re.sub(r"line \d+", "line", g) for g in _refusal(path, None)]
        assert any(message in line for line in got), got
        return
    write_jsonl(path, rows)
    got = _refusal(path, chunk)
    assert got == _refusal(path, None)
    assert any(message in line for line in got), got


def test_chunks_are_whole_lines_whatever_the_size(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    data = b"\xef\xbb\xbf" + b"".join(b'{"a": %d}\n' % i for i in range(50)) + b'{"last": 1}'
    path.write_bytes(data)
    for size in (1, 2, 3, 5, 64, 1 << 20):
        pieces = [bytes(p) for p in chunks(path, size)]
        assert b"".join(pieces) == data[3:], size
        assert all(p.endswith(b"\n") for p in pieces[:-1]), size


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("chunk", CHUNKS)
def test_an_imported_run_is_never_folded_a_contradiction_in_it_is_refused(
    tmp_path: Path, fmt: str, chunk: int
) -> None:
    # every required field has its value, so the fast readers accept the rows; only the whole read
    # sees that 'not_recorded' names a field the row records, which is a contradiction (rules of
    # docs/ledger.md, "Imported runs"): folded, the run would have been scored
    rows = [
        {**base_row(f"t{t}", a, passed=(t + a) % 2 == 0, k=2), "not_recorded": "helper_calls"}
        for t in range(3)
        for a in range(2)
    ]
    path = tmp_path / f"imported.{fmt}"
    if fmt == "csv":
        path.write_text(_csv_text(rows))
    else:
        write_jsonl(path, rows)
    with pytest.raises(LedgerError, match="contradiction: field 'helper_calls' has a value"):
        read_ledger(path)
    with pytest.raises(LedgerError, match="contradiction: field 'helper_calls' has a value"):
        doc(stream(path, chunk))
