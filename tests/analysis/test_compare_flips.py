"""compare lists the tasks that changed in each direction, and leaves fault cases out."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import matrix_rows, write_jsonl
from trialbook.analysis import compare_runs
from trialbook.report import compare_markdown, compare_to_dict


def test_flipped_tasks_in_each_direction(tmp_path: Path) -> None:
    # one attempt each: a and b flip fail -> pass, c flips pass -> fail, d and e stay
    base = {"a": [0], "b": [0], "c": [1], "d": [1], "e": [0]}
    cand = {"a": [1], "b": [1], "c": [0], "d": [1], "e": [0]}
    rows = matrix_rows(base, run_id="r1") + matrix_rows(cand, run_id="r2")
    path = write_jsonl(tmp_path / "runs.jsonl", rows)
    c = compare_runs(f"{path}:r1", f"{path}:r2")
    assert c.improved_tasks == ("a", "b")
    assert c.worsened_tasks == ("c",)
    assert [(t.task_id, t.baseline, t.candidate) for t in c.per_task][:3] == [
        ("a", 0.0, 1.0),
        ("b", 0.0, 1.0),
        ("c", 1.0, 0.0),
    ]
    assert compare_to_dict(c)["flipped"] == {"improved": ["a", "b"], "worsened": ["c"]}
    md = compare_markdown(c)
    assert md.startswith("### DECISION: ")
    assert "- **fail -> pass** (2): `a`, `b`" in md
    assert "- **pass -> fail** (1): `c`" in md


def test_fault_cases_are_left_out_of_the_comparison(tmp_path: Path) -> None:
    base = matrix_rows({"a": [0, 1], "b": [1, 1]}, run_id="r1")
    base += matrix_rows({"f": [1, 1]}, run_id="r1", stratum="fault:lost-receipt")
    cand = matrix_rows({"a": [1, 1], "b": [1, 1]}, run_id="r2")
    cand += matrix_rows({"f": [0, 0]}, run_id="r2", stratum="fault:lost-receipt")
    path = write_jsonl(tmp_path / "runs.jsonl", base + cand)
    c = compare_runs(f"{path}:r1", f"{path}:r2")
    assert c.tasks == 2  # a and b; f's fall from 1 to 0 is not in the headline difference
    assert c.difference.estimate == 0.25  # ((1 - 0.5) + 0) / 2
    assert c.fault_tasks_left_out == 1
    assert any("kept out of the comparison" in w for w in c.warnings)
