"""The HTML report: self-contained, every figure with its numbers, the outcome grid with its links,
the comparison with the tasks that changed, and tables where the plots would be without matplotlib."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.report._two_runs import TRANSCRIPT, two_runs
from trialbook.analysis import ReportOptions, build_report, compare_runs, score_file
from trialbook.cli import main
from trialbook.ledger import read_ledger
from trialbook.report import compare_html, report_html, score_html


def _report(tmp_path: Path, **options: Any) -> tuple[Path, str]:
    ledger = two_runs(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    built = build_report([read_ledger(ledger)], ReportOptions(**options))
    return ledger, report_html(built, base=out)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The two-run ledger and its page, rendered once for the tests that only read it."""
    return _report(tmp_path_factory.mktemp("report"))


def _cells(page: str, run: str, task: str) -> list[str]:
    """The outcome words of one task's row in one run's grid, in attempt order."""
    section = page.split(f'<section id="run-{run}">', 1)[1].split("</section>", 1)[0]
    row = section.split(f'<th scope="row">{task}', 1)[1].split("</tr>", 1)[0]
    return re.findall(r'<td class="o (\w+)"', row)


def test_the_page_fetches_nothing_and_needs_no_script(made: tuple[Path, str]) -> None:
    _, page = made
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page
    assert "<link" not in page  # no stylesheet, icon or font fetched
    assert "@import" not in page
    assert not re.search(r"url\((?!#)", page)  # only the SVGs' own clip paths, by id
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert not re.search(r'xlink:href="(?!#)', page)  # SVG references stay inside the page
    # every figure is inline SVG, labelled by its caption, with a table of its numbers beside it
    figures = re.findall(
        r'<div class="fig(?: wide)?"><figure>(<svg.*?</svg>)\s*<figcaption id="([^"]+)"', page, re.S
    )
    assert len(figures) == 2 * 4 + 1  # pass@k, strata, budget, variance per run; one comparison
    for svg, caption in figures:
        assert f'aria-labelledby="{caption}"' in svg
    assert page.count('<div class="numbers">') == len(figures)
    assert "@media print" in page


def test_the_outcome_grid_shows_each_attempt_and_links_its_raw_output(
    made: tuple[Path, str],
) -> None:
    ledger, page = made
    # the fixture's outcome strings, cell by cell (1 pass, 0 fail, T timeout, I infra error)
    assert _cells(page, "base", "B") == ["pass"] * 4 + ["timeout"]
    assert _cells(page, "base", "C") == ["pass", "pass", "fail", "fail", "infra"]
    assert _cells(page, "cand", "D") == ["pass"] + ["fail"] * 4
    # never colour alone: each cell carries its symbol and word too
    assert "◷ timeout" in page
    assert "⚠ infra error" in page
    assert "✗ fail" in page
    # base A#0 kept its output: the link is relative to the page's folder (out/) and lands there
    links = re.findall(r'<a href="([^"]+)">✓ pass</a>', page)
    assert links == ["../" + TRANSCRIPT]
    assert (ledger.parent / "out" / links[0] / "agent.out").is_file()
    assert "kept: agent.out" in page


def test_the_comparison_lists_the_tasks_that_changed_each_way(made: tuple[Path, str]) -> None:
    ledger, page = made
    section = page.split('<section id="compare-0">', 1)[1]
    # per-task pass@1 by hand (tests/report/_two_runs.py): A 100% -> 80%, B 80% -> 100%,
    # C 40% -> 60%, D 0% -> 20%
    assert (
        "<strong>3 better on the candidate</strong>: B (80% → 100%), C (40% → 60%), D (0% → 20%)"
        in section
    )
    assert "<strong>1 better on the baseline</strong>: A (100% → 80%)" in section
    # the decision and difference are compare's own, as `trialbook compare` prints them
    c = compare_runs(f"{ledger}:base", f"{ledger}:cand")
    assert f"{c.decision.upper()}: cand - base = {100 * c.difference.estimate:+.1f} pp" in section
    assert c.difference.estimate == pytest.approx((-0.2 + 0.2 + 0.2 + 0.2) / 4)


def test_each_scorecard_is_scores_own(made: tuple[Path, str]) -> None:
    ledger, page = made
    for run in score_file(ledger).runs:
        m = run.metrics["pass@1"]
        shown = f"pass@1 {100 * m.estimate:.1f}% ({100 * m.ci_low:.1f}%–{100 * m.ci_high:.1f}%)"
        assert f'<p class="headline">{run.run_id}: {shown}' in page
    # base: 5 + 4 + 2 + 0 passes of 20 attempts; per task 1, .8, .4, 0 -> pass@1 = 2.2 / 4
    assert "pass@1 55.0%" in page


def test_without_matplotlib_the_report_has_tables_where_the_plots_would_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    _, page = _report(tmp_path)
    assert "<svg" not in page
    assert "matplotlib is not installed" in page
    assert page.count("the plot needs matplotlib") == 9
    # the numbers are all still there
    assert page.count('<div class="numbers">') == 9


def test_score_and_compare_print_html(tmp_path: Path) -> None:
    ledger = two_runs(tmp_path)
    score = CliRunner().invoke(main, ["score", str(ledger), "--format", "html"])
    assert score.exit_code == 0, score.output
    assert score.output.startswith("<!DOCTYPE html>")
    assert score.output.count("<svg") == 6  # pass@k, strata, variance per run (no budget)
    assert "<summary>4 tasks</summary>" in score.output  # the per-task counts instead of a grid
    assert score.output == score_html(score_file(ledger))
    compared = CliRunner().invoke(
        main, ["compare", f"{ledger}:base", f"{ledger}:cand", "--format", "html"]
    )
    assert compared.exit_code == 0, compared.output
    assert compared.output == compare_html(compare_runs(f"{ledger}:base", f"{ledger}:cand"))
    assert "cand - base" in compared.output


def test_the_report_command_writes_the_page(tmp_path: Path) -> None:
    ledger = two_runs(tmp_path)
    out = tmp_path / "site" / "report.html"
    out.parent.mkdir()
    done = CliRunner().invoke(main, ["report", str(ledger), "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert done.output == f"wrote {out}\n"
    page = out.read_text()
    assert "run-base" in page
    assert "run-cand" in page
    assert "compare-0" in page
    assert '<a href="../' + TRANSCRIPT + '">' in page
    assert list(out.parent.iterdir()) == [out]  # no temporary file left behind


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metric", "pass#1"], "--metric must be pass@K, pass^K or within@K"),
        (
            ["--baseline", "nope"],
            "--baseline run 'nope' is not in the ledgers given (runs: 'base', 'cand')",
        ),
        (["--confidence", "1.5"], "--confidence"),
    ],
)
def test_bad_arguments_are_one_line_and_write_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    ledger = two_runs(tmp_path)
    out = tmp_path / "r.html"
    done = CliRunner().invoke(main, ["report", str(ledger), "-o", str(out), *args])
    assert done.exit_code == 2, done.output
    assert message in done.output
    assert done.output.count("\n") == 1, done.output
    assert not out.exists()


def test_a_ledger_with_a_bad_row_writes_no_report(tmp_path: Path) -> None:
    ledger = two_runs(tmp_path)
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    rows[7]["elapsed_s"] = -1
    ledger.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r.html"
    done = CliRunner().invoke(main, ["report", str(ledger), "-o", str(out)])
    assert done.exit_code == 2
    assert done.output.count("\n") == 1
    assert "elapsed_s" in done.output
    assert ":8:" in done.output
    assert not out.exists()


def test_runs_that_cannot_be_compared_say_why(tmp_path: Path) -> None:
    ledger = two_runs(tmp_path)
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    for r in rows:
        r["grader_version"] = "g1" if r["run_id"] == "base" else "g2"
    ledger.write_text("".join(json.dumps(r) + "\n" for r in rows))
    page = report_html(build_report([read_ledger(ledger)]))
    assert "not compared: grader_version differs" in page


def test_budget_failures_selection_and_faults_are_in_the_run_section(tmp_path: Path) -> None:
    ledger = two_runs(tmp_path)
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    for r in rows:
        if r["run_id"] == "cand":
            # the candidate delivers its first attempt; task D becomes a fault-injection case
            r["selected"] = r["attempt_index"] == 0
            if r["task_id"] == "D":
                r["stratum"] = "fault:lost-receipt"
    ledger.write_text("".join(json.dumps(r) + "\n" for r in rows))
    page = report_html(build_report([read_ledger(ledger)]))
    base = page.split('<section id="run-base">', 1)[1].split("</section>", 1)[0]
    cand = page.split('<section id="run-cand">', 1)[1].split("</section>", 1)[0]
    # budget replay of base by hand (tests/report/_two_runs.py; cost 0.02 per attempt, 4 tasks):
    # b = 1: A, B, C pass at once -> 3/4 covered, all 4 attempts cost $0.08; b = 5: D never passes
    assert '<td>1</td><td class="num">75.0% (3/4)</td><td class="num">$0.08</td>' in base
    assert '<td>5</td><td class="num">75.0% (3/4)</td><td class="num">$0.40</td>' in base
    # failures of base: 9 of 20 attempts did not pass (B#4 timed out, C#4 infra; C#2, C#3 and
    # D's five failed as graded)
    assert "9 of 20 attempts did not pass: failed 7, timed out 1, infrastructure error 1" in base
    assert '<td>sandbox could not start</td><td class="num">1</td>' in base
    assert "Selection" not in base
    assert "Fault cases" not in base
    # the candidate's selection: first attempts A, B, C pass (D is a fault case, kept out)
    assert '<td>pool coverage</td><td class="num">3/3</td>' in cand
    assert '<td>delivered success</td><td class="num">3/3</td>' in cand
    assert '<td>selector misses</td><td class="num">0/3</td>' in cand
    # D (10000) as the fault case: 1 of 5 attempts passed, 4 failed, not always passing
    assert (
        '<td>fault:lost-receipt</td><td class="num">1</td><td class="num">1/5</td>'
        '<td class="num">4</td><td class="num">0</td><td class="num">0</td>'
        '<td class="num">0/1</td>'
    ) in cand
    assert "kept out of the headline" in cand


def test_every_run_s_grid_lists_tasks_in_task_id_order(tmp_path: Path) -> None:
    # issue 27, new-user item 7: rows written in completion order, which differs between runs
    from tests.conftest import matrix_rows, write_jsonl

    rows = []
    for run, order in (("first", "CADB"), ("second", "BDCA")):
        by_task = {t: [1, 0] for t in order}
        rows += matrix_rows(by_task, run_id=run, system="toy", dataset_id="suite-1")
    ledger = write_jsonl(tmp_path / "runs.jsonl", rows)
    page = report_html(build_report([read_ledger(ledger)], ReportOptions()))
    for run in ("first", "second"):
        section = page.split(f'<section id="run-{run}">', 1)[1].split("</section>", 1)[0]
        grid = section.split('<table class="grid">', 1)[1]
        assert re.findall(r'<th scope="row">(\w+)', grid) == ["A", "B", "C", "D"]


def _one_attempt_page(tmp_path: Path, *, cost: bool) -> str:
    from tests.conftest import matrix_rows, write_jsonl

    rows = matrix_rows(
        {f"t{i:02d}": [i % 3 != 0] for i in range(12)}, run_id="one", system="toy", dataset_id="s"
    )
    rows[0]["oracle_leak"] = True  # a quarantine: a note of the run and of its budget alike
    for r in rows:
        if cost:
            r["cost"] = 0.01
        else:
            r.pop("cost", None)
    ledger = write_jsonl(tmp_path / "one.jsonl", rows)
    return report_html(build_report([read_ledger(ledger)], ReportOptions()))


def test_a_one_attempt_run_draws_no_curve_no_empty_frame_and_each_note_once(
    tmp_path: Path,
) -> None:
    # issue 27, new-user item 7: pass@k and budget were one dot each, beside an empty cost frame
    page = _one_attempt_page(tmp_path, cost=False)
    assert 'id="run-one-passk' not in page
    assert 'id="run-one-budget' not in page
    assert "cost not measured</text>" not in page  # no frame holding only those words
    assert page.count("One attempt per task") == 2  # the curve and the budget, a line each
    assert "the pass@k table below" not in page  # there is none
    notes = re.findall(r'<p class="note">(.*?)</p>', page)
    assert any("quarantined" in n for n in notes)
    assert len(notes) == len(set(notes)), notes


def test_a_run_without_costs_draws_coverage_alone(tmp_path: Path) -> None:
    from tests.conftest import matrix_rows, write_jsonl

    rows = matrix_rows({f"t{i}": [i % 2, 1] for i in range(6)}, run_id="two", dataset_id="s")
    for r in rows:
        r.pop("cost", None)
    page = report_html(build_report([read_ledger(write_jsonl(tmp_path / "r.jsonl", rows))]))
    svg = page.split('id="run-two-budget', 1)[0].rsplit("<svg", 1)[1]
    assert "cost not measured</text>" not in svg
    assert svg.count('<g id="axes_') == 1
