"""The attempt protocol through the readers and the commands: the field's rules, what each protocol's
figures are, compare refusing mixed protocols, import --protocol, and the commands that assume
independent attempts (plan --pilot, budget) refusing or relabelling the others."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.conftest import base_row, write_jsonl
from tests.importers.conftest import tau_bench, write
from trialbook.analysis import score_file
from trialbook.cli import main
from trialbook.ledger import LedgerStore, ledger_rows, read_ledger


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# 12 tasks x 3 attempts; task i passes first at attempt i % 4 (3: never), so success within k
# rounds is the share of tasks whose first pass is below k: 3/12, 6/12, 9/12 (first principles)
FIRST_PASS = [i % 4 for i in range(12)]


def _rows(protocol: str | None, run_id: str = "r", **extra: Any) -> list[dict[str, Any]]:
    rows = []
    for i, first in enumerate(FIRST_PASS):
        for a in range(3):
            row = base_row(
                f"t{i}", a, passed=a >= first, k=3, run_id=run_id, dataset_id="d", **extra
            )
            if protocol is not None:
                row["protocol"] = protocol
            rows.append(row)
    return rows


def test_a_repair_ledger_is_scored_as_rounds(tmp_path: Path) -> None:
    (score,) = score_file(write_jsonl(tmp_path / "l.jsonl", _rows("repair"))).runs
    assert score.protocol == "repair"
    assert {k: m.estimate for k, m in score.metrics.items()} == {
        "within@1": 3 / 12,
        "within@2": 6 / 12,
        "within@3": 9 / 12,
    }
    assert score.variance is None  # rounds are not exchangeable draws of one task


def test_an_independent_ledger_keeps_pass_at_k_and_says_when_unrecorded(tmp_path: Path) -> None:
    (said,) = score_file(write_jsonl(tmp_path / "a.jsonl", _rows("independent"))).runs
    (unsaid,) = score_file(write_jsonl(tmp_path / "b.jsonl", _rows(None))).runs
    assert said.metrics.keys() == unsaid.metrics.keys()
    assert "pass^3" in said.metrics
    assert said.protocol == "independent"
    assert unsaid.protocol is None
    assert any("protocol not recorded" in n for n in unsaid.notes)
    assert not any("protocol" in n for n in said.notes)
    doc = json.loads(run("score", str(tmp_path / "b.jsonl"), "--format", "json").output)
    assert doc["runs"][0]["protocol"] is None


def test_a_human_selected_run_reports_the_delivered_success(tmp_path: Path) -> None:
    rows = _rows("human-selected")
    for row in rows:  # the person picked the last attempt of each task
        row["selected"] = row["attempt_index"] == 2
    (score,) = score_file(write_jsonl(tmp_path / "l.jsonl", rows)).runs
    assert list(score.metrics) == ["delivered"]
    assert score.metrics["delivered"].estimate == 9 / 12  # the tasks whose attempt 2 passed
    text = run("score", str(tmp_path / "l.jsonl")).output
    assert "delivered success (picked attempt)" in text.splitlines()[0]


def test_a_protocol_that_varies_within_a_run_or_is_unknown_is_refused(tmp_path: Path) -> None:
    rows = _rows("repair")
    rows[5]["protocol"] = "independent"
    result = run("score", str(write_jsonl(tmp_path / "mixed.jsonl", rows)))
    assert result.exit_code == 2
    assert "field 'protocol'" in result.output
    assert "must not vary within a run" in result.output
    assert "%" not in result.output
    rows[5]["protocol"] = "retry"
    result = run("score", str(write_jsonl(tmp_path / "bad.jsonl", rows)))
    assert result.exit_code == 2
    assert "field 'protocol': must be one of independent, repair, human-selected" in result.output


def test_compare_refuses_mixed_protocols_and_labels_them_when_told(tmp_path: Path) -> None:
    base = write_jsonl(tmp_path / "base.jsonl", _rows("independent", "base"))
    cand = write_jsonl(tmp_path / "cand.jsonl", _rows("repair", "cand"))
    refused = run("compare", str(base), str(cand))
    assert refused.exit_code == 2
    lines = refused.output.strip().splitlines()
    assert len(lines) == 1
    assert "attempt protocols differ (baseline independent, candidate repair)" in lines[0]
    assert "--mixed-protocols" in lines[0]
    told = run("compare", str(base), str(cand), "--mixed-protocols", "--format", "json")
    assert told.exit_code == 0, told.output
    doc = json.loads(told.output)
    assert doc["metric"] == "pass@1 vs within@1"
    assert doc["protocols"] == {"baseline": "independent", "candidate": "repair"}
    # pass@1 of the baseline: mean over tasks of c/n; within@1 of the candidate: 3/12
    passes = [3 - first for first in FIRST_PASS]
    assert doc["baseline"]["estimate"] == sum(c / 3 for c in passes) / 12
    assert doc["candidate"]["estimate"] == 3 / 12
    text = run("compare", str(base), str(cand), "--mixed-protocols").output
    assert "MIXED PROTOCOLS" in text


def test_compare_of_two_repair_runs_compares_rounds(tmp_path: Path) -> None:
    base = write_jsonl(tmp_path / "base.jsonl", _rows("repair", "base"))
    cand = write_jsonl(tmp_path / "cand.jsonl", _rows("repair", "cand"))
    doc = json.loads(run("compare", str(base), str(cand), "--format", "json").output)
    assert doc["metric"] == "within@1"
    refused = run("compare", str(base), str(cand), "--metric", "pass^2")
    assert refused.exit_code == 2
    assert "no meaning for rounds of repair" in refused.output


def test_plan_refuses_a_repair_pilot_and_budget_labels_rounds(tmp_path: Path) -> None:
    pilot = write_jsonl(tmp_path / "pilot.jsonl", _rows("repair"))
    refused = run("plan", "--tasks", "50", "--runs", "1", "--effect", "0.1", "--pilot", str(pilot))
    assert refused.exit_code == 2
    assert refused.output.strip().splitlines() == [
        "trialbook: error: --pilot: run 'r' is a repair run: a pilot's between- and within-task variance "
        "assumes independent attempts"
    ]
    budget = run("budget", str(pilot))
    assert budget.exit_code == 0, budget.output
    assert "success within b rounds" in budget.output


def test_import_records_the_protocol_on_rows_and_run(tmp_path: Path) -> None:
    source = write(tmp_path / "tau.json", tau_bench({0: [1.0, 0.0], 1: [0.0, 0.0]}))
    db = tmp_path / "l.db"
    done = run("import", "tau-bench", str(source), "--ledger", str(db), "--run-id", "plain")
    assert done.exit_code == 0, done.output
    assert "(protocol: independent)" in done.output
    told = run(
        "import", "tau-bench", str(source), "--ledger", str(db), "--run-id", "picked",
        "--protocol", "repair",
    )  # fmt: skip
    assert told.exit_code == 0, told.output
    assert "(protocol: repair)" in told.output
    with LedgerStore(db, readonly=True) as store:
        records = {r.record.run_id: r.record.protocol for r in store.runs()}
    assert records == {"plain": "independent", "picked": "repair"}
    rows = list(ledger_rows(read_ledger(db)))
    assert {(r["run_id"], r["protocol"]) for r in rows} == {
        ("plain", "independent"),
        ("picked", "repair"),
    }
    # a jsonl file without the field: filled by --protocol, and exported with it
    plain = write_jsonl(tmp_path / "old.jsonl", _rows(None, "old"))
    assert (
        "not recorded (read as independent)"
        in run("import", "jsonl", str(plain), "--ledger", str(tmp_path / "a.db")).output
    )
    filled = run(
        "import", "jsonl", str(plain), "--ledger", str(tmp_path / "b.db"),
        "--protocol", "human-selected",
    )  # fmt: skip
    assert filled.exit_code == 0, filled.output
    out = tmp_path / "out.jsonl"
    run("export", str(tmp_path / "b.db"), "--format", "jsonl", "-o", str(out))
    assert {json.loads(line)["protocol"] for line in out.read_text().splitlines()} == {
        "human-selected"
    }
    # a file's own word is never overwritten
    own = write_jsonl(tmp_path / "own.jsonl", _rows("repair", "own"))
    clash = run(
        "import", "jsonl", str(own), "--ledger", str(tmp_path / "c.db"), "--protocol", "independent"
    )
    assert clash.exit_code == 2
    assert "its rows record protocol repair" in clash.output
    assert (
        not (tmp_path / "c.db").exists()
        or not sqlite3.connect(tmp_path / "c.db")
        .execute("SELECT count(*) FROM sqlite_master WHERE name = 'attempts'")
        .fetchone()[0]
    )


def test_a_sequential_comparison_refuses_repair_runs(tmp_path: Path) -> None:
    base = write_jsonl(tmp_path / "base.jsonl", _rows("repair", "base"))
    cand = write_jsonl(tmp_path / "cand.jsonl", _rows("repair", "cand"))
    refused = run("compare", str(base), str(cand), "--sequential")
    assert refused.exit_code == 2
    assert refused.output.strip().splitlines() == [
        "trialbook: error: --sequential: run 'base' is a repair run: a sequential comparison of "
        "per-task pass rates assumes independent attempts"
    ]


def test_dropping_an_infra_error_round_does_not_renumber_the_rounds_after_it(
    tmp_path: Path,
) -> None:
    # issue 26 item 3: task x's rounds are fail, infra error, pass. Dropped from the denominator,
    # the infra error still took round 1: x is solved within 3 rounds, not 2, and within@3 stays
    # (task y passes at round 0). Over the two tasks: within@1 = 1/2, within@2 = 1/2, within@3 = 2/2.
    def row(task: str, a: int, passed: bool, status: str) -> dict[str, Any]:
        return base_row(task, a, passed=passed, k=3, status=status, protocol="repair")

    rows = [
        row("x", 0, False, "failed"),
        row("x", 1, False, "infra_error"),
        row("x", 2, True, "passed"),
        *(row("y", a, True, "passed") for a in range(3)),
    ]
    path = write_jsonl(tmp_path / "l.jsonl", rows)
    for drop in (False, True):
        doc = json.loads(
            run("score", str(path), "--format", "json", *(["--drop-infra-errors"] * drop)).output
        )
        (scored,) = doc["runs"]
        got = {k: m["estimate"] for k, m in scored["metrics"].items()}
        assert got == {"within@1": 1 / 2, "within@2": 1 / 2, "within@3": 2 / 2}, drop
