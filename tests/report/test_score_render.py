"""One standard error per figure on one screen: the lines under the score table agree with it.

Each case is a small ledger whose figures are worked by hand in the comments.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.conftest import base_row, matrix_rows, write_jsonl
from trialbook import score_file
from trialbook.analysis import ScoreOptions
from trialbook.report import render_plain, score_markdown, score_table, score_to_dict, to_json


def _texts(path: Path, options: ScoreOptions | None = None) -> tuple[str, str, dict[str, Any]]:
    report = score_file(path, options=options)
    plain = render_plain(score_table(report), width=400)
    return plain, score_markdown(report), json.loads(to_json(score_to_dict(report)))


def _table_se(text: str, metric: str) -> str:
    # a markdown row (| pass@1 | 46.0% | 17.7% – 77.1% | 18.8 pp |) or a terminal row (columns
    # apart by blanks)
    found = re.search(
        rf"{re.escape(metric)}\s*\|?\s*\S+\s*\|?\s*\S+ – \S+\s*\|?\s*([\d.]+ pp)", text
    )
    assert found, text
    return found.group(1)


def test_the_planning_line_prints_the_tables_se_in_the_tables_unit(tmp_path: Path) -> None:
    # unbalanced: passes 0/2, 4/5, 3/3, 2/8, 1/4; the table's SE of pass@1 is the clustered SE of the
    # per-task rates. The old line printed a model SE as a bare fraction ("now 0.1000" beside 9.6 pp).
    rows = []
    for task, (n, c) in {"a": (2, 0), "b": (5, 4), "c": (3, 3), "d": (8, 2), "e": (4, 1)}.items():
        rows += [base_row(task, i, passed=i < c, k=8) for i in range(n)]
    plain, md, doc = _texts(write_jsonl(tmp_path / "u.jsonl", rows))
    for text in (plain, md):
        table_se = _table_se(text, "pass@1")
        assert f"SE of pass@1 now {table_se};" in text
    (run,) = doc["runs"]
    assert run["variance"]["se_now"] == run["metrics"]["pass@1"]["se"]


def test_a_negative_between_variance_is_shown_as_zero_with_a_note(tmp_path: Path) -> None:
    # 3 tasks x 3 attempts, one pass each: the unbiased sigma_b^2 is -1/9 (tests/stats/test_variance.py)
    outcomes = {"a": [1, 0, 0], "b": [0, 1, 0], "c": [0, 0, 1]}
    plain, md, doc = _texts(write_jsonl(tmp_path / "n.jsonl", matrix_rows(outcomes)))
    for text in (plain, md):
        assert "-0.1111" not in text
        assert "between tasks 0.0000 (estimated below 0, shown as 0)" in text
    variance = doc["runs"][0]["variance"]
    assert variance["between"] == -1 / 9  # the unbiased estimate stays in the document
    assert variance["between_shown"] == 0.0
    assert variance["between_below_zero"] is True


def test_the_naive_se_is_compared_honestly(tmp_path: Path) -> None:
    # Same ledger: every task at 1/3, so the clustered SE is 0 while the naive one is
    # sqrt((1/3)(2/3)/9) = 15.7 pp. It is larger, and the line must not call it "too small".
    outcomes = {"a": [1, 0, 0], "b": [0, 1, 0], "c": [0, 0, 1]}
    plain, md, _ = _texts(write_jsonl(tmp_path / "n.jsonl", matrix_rows(outcomes)))
    for text in (plain, md):
        assert "too small" not in text
        assert (
            "naive SE treating attempts as independent 15.7 pp, larger than the task-clustered 0.0 pp"
            in text
        )


def test_the_naive_se_below_the_clustered_one_says_smaller(tmp_path: Path) -> None:
    # passes 3, 3, 0, 0 of 3: clustered SE = sd([1,1,0,0])/2 = 28.9 pp; naive sqrt(.25/12) = 14.4 pp
    outcomes = {"a": [1, 1, 1], "b": [1, 1, 1], "c": [0, 0, 0], "d": [0, 0, 0]}
    plain, _, _ = _texts(write_jsonl(tmp_path / "s.jsonl", matrix_rows(outcomes)))
    assert "independent 14.4 pp, smaller than the task-clustered 28.9 pp" in plain


def test_attempts_to_first_pass_is_not_defined_when_nothing_passed(tmp_path: Path) -> None:
    outcomes = {"a": [0, 0, 0], "b": [0, 0, 0]}
    plain, md, doc = _texts(write_jsonl(tmp_path / "z.jsonl", matrix_rows(outcomes)))
    for text in (plain, md):
        line = next(x for x in text.splitlines() if "attempts to first pass" in x)
        assert "3.00" not in line
        assert "not defined" in line
    assert doc["runs"][0]["effort"]["attempts_to_first_pass"] is None


def test_cost_over_solved_tasks_is_named_so(tmp_path: Path) -> None:
    # a: passes once in 2 attempts, b: never; $1 an attempt -> $4 / 1 solved task
    rows = matrix_rows({"a": [0, 1], "b": [0, 0]}, cost=1.0)
    plain, md, doc = _texts(write_jsonl(tmp_path / "c.jsonl", rows))
    for text in (plain, md):
        assert "cost per success" not in text
        line = next(x for x in text.splitlines() if "cost per solved task" in x)
        assert "$4.0000" in line
    assert doc["runs"][0]["cost"]["cost_per_success"] == 4.0  # the JSON key is kept


def test_declared_weights_name_the_figures_they_do_not_weight(tmp_path: Path) -> None:
    outcomes = {"a": [1, 1, 0], "b": [1, 0, 0], "c": [0, 0, 0]}
    rows = matrix_rows(outcomes)
    for r in rows:
        r["weight"] = {"a": 1.0, "b": 2.0, "c": 3.0}[r["task_id"]]
    path = write_jsonl(tmp_path / "w.jsonl", rows)
    plain, md, _ = _texts(path, ScoreOptions(weights="declared"))
    for text in (plain, md):
        assert "unweighted: first-attempt rate (equal task weights)" in text
        assert "pooled attempt rate (per attempt)" in text
    equal_plain, _, _ = _texts(path)
    assert "unweighted" not in equal_plain
