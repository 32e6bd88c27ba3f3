"""A small ledger of two runs on one suite, whose every figure can be worked out by hand.

Four tasks x five attempts per run (1 = pass), strata repair (A, B) and greenfield (C, D):

    base: A 11111  B 1111T  C 1100I  D 00000     (T: timed out, I: infrastructure error)
    cand: A 11110  B 11111  C 11100  D 10000

so the per-task pass@1 (passes / attempts) moves A 100% -> 80%, B 80% -> 100%, C 40% -> 60%,
D 0% -> 20%: one task worse on the candidate, three better. Base's attempt 0 of task A kept its
raw output (``transcript``, relative to the ledger's folder, as the harness writes it).
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import matrix_rows, write_jsonl

OUTCOMES = {
    "base": {"A": "11111", "B": "1111T", "C": "1100I", "D": "00000"},
    "cand": {"A": "11110", "B": "11111", "C": "11100", "D": "10000"},
}
TRANSCRIPT = "runs.transcripts/base/A/0.1"


def two_runs(folder: Path) -> Path:
    """Write the ledger (``runs.jsonl``) and base A#0's kept output into ``folder``."""
    rows = []
    for run, tasks in OUTCOMES.items():
        run_rows = matrix_rows(
            {t: [o == "1" for o in seq] for t, seq in tasks.items()},
            run_id=run,
            system=f"toy-{run}",
            dataset_id="suite-1",
        )
        for r in run_rows:
            seq = tasks[r["task_id"]]
            r["stratum"] = "repair" if r["task_id"] in "AB" else "greenfield"
            r["cost"] = 0.02
            r["status"] = "passed" if r["passed"] else "failed"
            mark = seq[r["attempt_index"]]
            if mark == "T":
                r.update(timed_out=True, status="timed_out", elapsed_s=60.0)
            elif mark == "I":
                r.update(status="infra_error", error="sandbox could not start")
        rows += run_rows
    rows[0]["transcript"] = TRANSCRIPT
    kept = folder / TRANSCRIPT
    kept.mkdir(parents=True)
    (kept / "agent.out").write_text("the agent said hello\n")
    return write_jsonl(folder / "runs.jsonl", rows)
