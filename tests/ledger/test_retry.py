"""A re-run attempt counts once, by its highest retry; the rows it superseded stay, in no figure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.conftest import base_row
from trialbook import report as render
from trialbook.analysis import ScoreOptions, score_file
from trialbook.cli import main
from trialbook.ledger import import_files, ledger_from_rows, read_ledger

LOST = {"status": "infra_error", "error": "harness error: its node died", "lost": True}


def _rows() -> list[dict[str, Any]]:
    """Task a: attempt 1 lost twice, then passed on its retry 2; task b: attempt 0 lost, then
    failed on retry 1; the rest ordinary. Rows of other attempts between them, as a run writes."""

    def row(task: str, i: int, passed: bool, **extra: Any) -> dict[str, Any]:
        status = {"status": "passed" if passed else "failed"}
        return base_row(task, i, passed=passed, k=2, run_id="r", **{**status, **extra})

    return [
        row("a", 0, False),
        row("a", 1, False, **LOST),
        row("b", 0, False, **LOST),
        row("a", 1, False, retry=1, **LOST),
        row("b", 1, True),
        row("b", 0, False, retry=1),
        row("a", 1, True, retry=2),
    ]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _score(path: Path) -> dict[str, Any]:
    doc = render.score_to_dict(score_file(path, options=ScoreOptions(resamples=200)))
    doc.pop("source")
    return doc


def test_only_the_highest_retry_of_each_attempt_counts(tmp_path: Path) -> None:
    rows = _rows()
    ledger = ledger_from_rows(rows, "l.jsonl")
    assert ledger.superseded().tolist() == [False, True, True, True, False, False, False]
    assert len(ledger.run("r")) == 4 == len(ledger.latest())
    assert len(ledger.run("r", superseded=True)) == 7
    assert ledger.reruns() == 2  # a's attempt 1 and b's attempt 0
    # the scorecard of the ledger is that of the rows that count, plus the words about re-runs
    full = _score(_write(tmp_path / "full.jsonl", rows))
    counting = [r for r, gone in zip(rows, ledger.superseded().tolist(), strict=True) if not gone]
    plain = [{k: v for k, v in r.items() if k != "retry"} for r in counting]
    bare = _score(_write(tmp_path / "bare.jsonl", plain))
    (run,), (bare_run,) = full["runs"], bare["runs"]
    assert (run["reruns"], bare_run["reruns"]) == (2, 0)
    assert "2 attempt(s) re-run after an infrastructure error (retry)" in run["notes"]
    for key in ("metrics", "rates", "per_task", "infra_errors", "failures", "attempts", "tasks"):
        assert run[key] == bare_run[key], key
    assert run["infra_errors"] == {"attempts": 0, "dropped": False}  # the lost rows count nowhere


def test_a_db_scores_re_runs_as_its_jsonl_does_and_export_keeps_every_row(tmp_path: Path) -> None:
    jsonl = _write(tmp_path / "l.jsonl", _rows())
    db = tmp_path / "l.db"
    import_files(db, [read_ledger(jsonl)])
    assert _score(db) == _score(jsonl)
    out = tmp_path / "all.jsonl"
    result = CliRunner().invoke(
        main, ["export", str(db), "--run", "r", "--format", "jsonl", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(exported) == 7  # the superseded rows too: export is the ledger, whole
    assert sorted(r.get("retry") or 0 for r in exported) == [0, 0, 0, 0, 1, 1, 2]


def test_the_terminal_scorecard_says_how_many_attempts_were_re_run(tmp_path: Path) -> None:
    jsonl = _write(tmp_path / "l.jsonl", _rows())
    result = CliRunner().invoke(main, ["score", str(jsonl)])
    assert result.exit_code == 0, result.output
    assert "2 attempt(s) re-run after an infrastructure error (retry)" in " ".join(
        result.output.split()
    )
