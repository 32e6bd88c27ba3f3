"""Random ledgers scored from a ``.db``, a JSONL file and a CSV file give the same JSON, to the bit.

Some attempts were run again (``retry``): their earlier infra_error rows stay in the ledger and
count in no figure, on every path alike.
JSONL and CSV are read whole (the in-memory ledger, the expected JSON) and in chunks of one line,
of a few lines and of the whole file (``formats/_stream.py``; the last is what ``score_file``
reads), and none of the chunked reads may decline these valid files.

The ``.db`` is read three ways, each checked here: the columns the store kept of the rows it wrote
(``trialbook import``), SQLite's ``GROUP BY`` over a store another tool filled with plain sqlite3,
and the same over a bare table another tool created (every rule checked in SQL). None of them may
fall back on the precise row-by-row read for these valid ledgers.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.ledger.tally._foreign import bare_db, own_schema_db
from trialbook import report as render
from trialbook.analysis import ScoreOptions, score_file, score_tallies
from trialbook.ledger import (
    CheckVerdict,
    Tallies,
    TallyOfLedger,
    checks_text,
    import_files,
    read_ledger,
    write_ledger_file,
)
from trialbook.ledger.formats._stream import StreamTallies
from trialbook.ledger.store import StoreTallies

STATUS = {(True, False): "passed", (False, True): "timed_out", (False, False): "failed"}


@st.composite
def ledgers(draw: st.DrawFn) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    optional = draw(st.sets(st.sampled_from(["stratum", "weight", "score", "cost", "tokens",
                                             "tool_calls", "cache_hit", "stamps", "status",
                                             "error", "selected", "protocol",
                                             "checks"])))  # fmt: skip
    for r in range(draw(st.integers(1, 3))):
        k = draw(st.integers(1, 5))
        late = draw(st.booleans())  # the run's grader judges after a timeout
        protocol = draw(st.sampled_from(["independent", "repair"]))  # one per run
        for t in range(draw(st.integers(1, 6))):
            indices = draw(st.lists(st.integers(0, k - 1), min_size=1, max_size=k, unique=True))
            # fault:/regression: strata are fault cases: their own table, out of the headline
            stratum = draw(
                st.sampled_from(
                    [None, "repair", "greenfield", "fault:lost-receipt", "regression:x"]
                )
            )
            chosen = draw(st.sampled_from([None, *indices]))  # the attempt a selector delivered
            weight = draw(st.sampled_from([None, 0.5, 2.0, 3.25]))
            for a in indices:
                passed, timed_out = draw(st.booleans()), draw(st.booleans())
                if passed and timed_out and not late:
                    timed_out = False
                infra = not passed and not timed_out and draw(st.integers(0, 5)) == 0
                row: dict[str, Any] = {
                    "run_id": f"run-{r}",
                    "system": f"agent-{r % 2}",
                    "task_id": f"task-{t}",
                    "attempt_index": a,
                    "k_budget": k,
                    "timeout_s": 60.0,
                    "elapsed_s": draw(st.floats(0, 600, allow_nan=False, allow_infinity=False)),
                    "passed": passed,
                    "timed_out": timed_out,
                    "helper_calls": draw(st.integers(0, 3)),
                    "oracle_leak": draw(st.integers(0, 30)) == 0,
                }
                if late:
                    row["graded_after_timeout"] = True
                if "protocol" in optional:
                    row["protocol"] = protocol
                if "checks" in optional and draw(st.integers(0, 3)):
                    row["checks"] = checks_text(
                        {
                            name: CheckVerdict(
                                draw(st.booleans()), draw(st.sampled_from([None, "thin", "gone"]))
                            )
                            for name in draw(
                                st.sets(st.sampled_from(["exists", "supported"]), min_size=1)
                            )
                        }
                    )
                if "status" in optional:
                    row["status"] = (
                        "infra_error"
                        if infra
                        else "passed"
                        if passed
                        else STATUS[(False, timed_out)]
                    )
                if "stratum" in optional and stratum is not None:
                    row["stratum"] = stratum
                if "weight" in optional and weight is not None:
                    row["weight"] = weight
                if "score" in optional:
                    row["score"] = draw(st.floats(0, 1, allow_nan=False))
                if "cost" in optional and draw(st.integers(0, 4)):
                    row["cost"] = draw(st.floats(0, 3, allow_nan=False))
                if "tokens" in optional:
                    row["tokens_in"] = draw(st.integers(0, 10**6))
                    row["tokens_out"] = draw(st.integers(0, 10**5))
                if "tool_calls" in optional and draw(st.booleans()):
                    row["tool_calls"] = draw(st.integers(0, 40))
                if "error" in optional and not passed and draw(st.integers(0, 3)):
                    row["error"] = draw(st.sampled_from(["exit 1", "no output", "boom"]))
                if "selected" in optional:
                    row["selected"] = a == chosen
                if "cache_hit" in optional and draw(st.booleans()):
                    row["cache_hit"] = draw(st.booleans())
                if "stamps" in optional:
                    second = draw(st.integers(0, 50))
                    row["started_at"] = f"2026-11-30T10:00:{second:02d}.250+00:00"
                    row["finished_at"] = f"2026-11-30T10:01:{second:02d}Z"
                # an attempt the harness lost, run again: its infra_error rows stay, superseded
                again = draw(st.integers(0, 2)) if "status" in optional else 0
                for retry in range(again):
                    lost = {**row, "passed": False, "timed_out": False, "status": "infra_error"}
                    lost.update(oracle_leak=False, lost=True, error="harness error: node died")
                    lost.pop("score", None)
                    if "selected" in lost:
                        lost["selected"] = False
                    if retry:
                        lost["retry"] = retry
                    rows.append(lost)
                if again:
                    row["retry"] = again
                rows.append(row)
    return draw(st.permutations(rows))


def _doc(path: Path | Tallies, **kw: Any) -> str:
    options = ScoreOptions(resamples=200, **kw.pop("options", {}))
    if isinstance(path, Path):
        report = score_file(path, options=options, **kw)
    else:
        report = score_tallies(path, options=options, **kw)
    doc = render.score_to_dict(report)
    doc.pop("source", None)
    return json.dumps(doc)


def _whole(path: Path, default_run: str) -> Any:
    return read_ledger(path, default_run=default_run)


def _never_precise(self: StoreTallies, run_id: str) -> Any:
    raise AssertionError(f"run {run_id!r} of a valid ledger was read the precise way")


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=ledgers(), drop=st.booleans(), one=st.booleans())
def test_db_jsonl_and_csv_score_alike(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[dict[str, Any]],
    drop: bool,
    one: bool,
) -> None:
    tmp = tmp_path_factory.mktemp("diff")
    jsonl = tmp / "l.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ledger = read_ledger(jsonl)
    csv = tmp / "l.csv"
    write_ledger_file(ledger, "csv", csv)
    kept = tmp / "kept.db"
    import_files(kept, [ledger])
    plain = own_schema_db(tmp / "plain.db", rows)
    bare = bare_db(tmp / "bare.db", rows)
    run = rows[-1]["run_id"] if one else None
    kw: dict[str, Any] = {"run": run, "options": {"drop_infra_errors": drop}}
    # the file read in chunks of one line and of a few lines (score_file: the default, in one)
    chunked = [StreamTallies(p, p.stem, _whole, chunk_bytes=size)
               for p in (jsonl, csv) for size in (1, 97)]  # fmt: skip
    if any(r.get("retry") for r in rows):
        # which row of a re-run attempt counts is the whole read's rule (ledger/_fold.py)
        assert all(source.whole is not None for source in chunked), "a re-run was folded"
    else:
        assert all(source.whole is None for source in chunked), "a valid file was read whole"
    try:
        expected = _doc(TallyOfLedger(ledger), **dict(kw))  # the file read whole, in memory
    except Exception as exc:  # e.g. every attempt of a run quarantined: each must say the same
        for path in (jsonl, csv, kept, plain, bare, *chunked):
            with pytest.raises(type(exc), match=str(exc).split(":")[0]):
                _doc(path, **dict(kw))
        return
    for source in chunked:
        assert _doc(source, **dict(kw)) == expected, source.source
    with pytest.MonkeyPatch.context() as patch:  # this example's only (the fixture is shared)
        if not any("selected" in r or "checks" in r or ":" in str(r.get("stratum")) for r in rows):
            # selection and fault tables read the rows themselves; the tallies never need to
            patch.setattr(StoreTallies, "_precise", _never_precise)
        for path in (jsonl, csv, kept, plain, bare):
            assert _doc(path, **dict(kw)) == expected, path.name


def test_the_kept_columns_are_what_reading_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [
        {"run_id": "r", "task_id": f"t{t}", "attempt_index": a, "k_budget": 3, "timeout_s": 9.0,
         "elapsed_s": 0.1 * (t + a), "passed": (t + a) % 2 == 0, "timed_out": False,
         "helper_calls": 0, "oracle_leak": False}
        for t in range(4) for a in range(3)
    ]  # fmt: skip
    jsonl = tmp_path / "l.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "l.db"
    import_files(db, [read_ledger(jsonl)])
    conn = sqlite3.connect(db)
    (blobs,) = conn.execute("SELECT count(*) FROM attempt_columns").fetchone()
    conn.close()
    assert blobs == 1
    monkeypatch.setattr(StoreTallies, "_tally", lambda *_: pytest.fail("the SQL path was taken"))
    monkeypatch.setattr(StoreTallies, "_precise", _never_precise)
    assert _doc(db) == _doc(jsonl)


def test_a_checks_rate_is_the_same_to_the_last_bit_however_the_source_coded_its_tasks(
    tmp_path: Path,
) -> None:
    # Found by the property above: run b's row names task-3 first in the file, so the file codes
    # task-3 first; the store, which inserts run a's rows first, codes task-0 first. A check's
    # per-task shares were summed in code order: the SE and the interval then differed in the
    # last bits between the two sources of the same rows.
    from tests.conftest import base_row

    rows = [base_row("task-3", 0, passed=False, k=2, run_id="b")]
    for task in range(5):
        for attempt in range(2):
            passed = task == 3 and attempt == 0
            row = base_row(f"task-{task}", attempt, passed=passed, k=2, run_id="a")
            row["checks"] = json.dumps({"supported": {"passed": passed, "reason": None}})
            rows.append(row)
    jsonl = tmp_path / "l.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    plain = own_schema_db(tmp_path / "plain.db", rows)
    assert _doc(plain, run="a") == _doc(jsonl, run="a")
