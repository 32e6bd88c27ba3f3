"""The report's SVG figures against reviewed golden files, byte for byte.

The figures of tests/report/_two_runs.py's ledger: pass@k and pass^k against k, the strata, the
budget and cost curves, the variance split (run ``base``) and the per-task differences (``cand``
against ``base``). Set
TRIALBOOK_REGOLD=1 to rewrite them (``TRIALBOOK_REGOLD=1 .venv/bin/pytest tests/report``): each file
is written from one render and compared with a second, and the test then fails, so a regolding run
never passes as a check. The golden files are made by the matplotlib of the dev install (the
``plots`` extra); another matplotlib release may draw a figure differently and need a regold.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.report._two_runs import two_runs
from trialbook.analysis import Report, build_report
from trialbook.ledger import read_ledger
from trialbook.report import _plots

GOLDEN = Path(__file__).parent / "golden"
REGOLD = bool(os.environ.get("TRIALBOOK_REGOLD"))

FIGURES: dict[str, Callable[[Report], str]] = {
    "passk": lambda r: _plots.passk_svg(r.runs[0].score, "passk"),
    "strata": lambda r: _plots.strata_svg(r.runs[0].score, "pass@1", "strata"),
    "variance": lambda r: _plots.variance_svg(r.runs[0].score, "variance"),
    "difference": lambda r: _plots.difference_svg(r.comparisons[0], "difference"),
    "budget": lambda r: _plots.budget_svg(r.runs[0].budget, "budget"),
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    return build_report([read_ledger(two_runs(tmp_path_factory.mktemp("two-runs")))])


@pytest.mark.parametrize("name", list(FIGURES))
def test_svg_golden(report: Report, name: str) -> None:
    path = GOLDEN / f"{name}.svg"
    svg = FIGURES[name](report)
    if REGOLD:
        path.write_text(svg)
        assert FIGURES[name](report) == path.read_text(), f"{path.name}: two renders differ"
        pytest.fail(f"{path.name} regenerated, re-run without TRIALBOOK_REGOLD")
    assert svg == path.read_text()


def test_each_svg_is_the_same_bytes_twice_and_carries_no_date(report: Report) -> None:
    ids: dict[str, set[str]] = {}
    for name, draw in FIGURES.items():
        first, second = draw(report), draw(report)
        assert first.encode() == second.encode(), name
        assert "<dc:date>" not in first
        assert "Matplotlib" not in first
        assert first.startswith("<svg")
        assert "<?xml" not in first
        assert "<!DOCTYPE" not in first
        # text is kept as text (no glyph outlines), in the one font named
        assert "<text" in first
        assert "DejaVu Sans" in first
        ids[name] = set(re.findall(r'id="(p[0-9a-f]{10})"', first))
        assert ids[name], name
    # ids come from each figure's own salt: two figures of one page never share a clip path
    for name, mine in ids.items():
        for other, theirs in ids.items():
            assert other == name or not mine & theirs, (name, other)


def test_the_series_differ_by_more_than_colour(report: Report) -> None:
    svg = FIGURES["passk"](report)
    # pass@k: solid line with circle markers; pass^k: dashed line with square markers
    assert "stroke-dasharray" in svg
    assert svg.count("<defs>") >= 2  # one marker shape each
    assert "pass@k: some attempt of k passes" in svg
    assert "pass^k: all k attempts pass" in svg
    diff = FIGURES["difference"](report)
    assert "better on candidate (3)" in diff
    assert "better on baseline (1)" in diff


@pytest.mark.parametrize("tasks", [3, 14, 23])
def test_the_difference_plot_counts_tasks_in_whole_numbers(tmp_path: Path, tasks: int) -> None:
    # issue 27, new-user item 7: an axis of tasks had ticks at 2.5 and 7.5
    from tests.conftest import matrix_rows, write_jsonl

    rows = []
    for run, first in (("base", 0), ("cand", 1)):
        by_task = {f"t{i:02d}": [first if i % 2 else 1, 1] for i in range(tasks)}
        rows += matrix_rows(by_task, run_id=run, system="toy", dataset_id="suite-1")
    built = build_report([read_ledger(write_jsonl(tmp_path / "runs.jsonl", rows))])
    svg = _plots.difference_svg(built.comparisons[0], "difference")
    ticks = re.findall(r'<g id="xtick_\d+">.*?<text[^>]*>([^<]*)</text>', svg, re.S)
    assert ticks
    assert all(t.lstrip("−-").isdigit() for t in ticks), ticks


def test_the_whole_run_label_sits_above_the_strata_not_on_a_bar(report: Report) -> None:
    # issue 27, new-user item 7: "whole run 73.3%" was drawn over the repair stratum's interval;
    # every interval lies inside the axes, so a label whose baseline is above their top is clear
    svg = FIGURES["strata"](report)
    frame = re.search(r'<g id="patch_2">\s*<path d="([^"]*)"', svg)
    assert frame is not None
    top = min(float(y) for y in re.findall(r"[ML] [\d.]+ ([\d.]+)", frame.group(1)))
    label = re.search(r'<text[^>]* y="([\d.]+)"[^>]*>whole run [\d.]+%</text>', svg)
    assert label is not None
    assert float(label.group(1)) < top


@pytest.mark.parametrize("name", ["passk", "difference"])
def test_interval_bands_are_light_and_outlined_so_overlaps_stay_readable(
    report: Report, name: str
) -> None:
    # issue 27, new-user item 7: two bands at 0.18 over each other turned a muddy grey; faint fills
    # whose edges are drawn in their own Okabe-Ito colour stay apart where they overlap
    svg = FIGURES[name](report)
    fills = [float(a) for a in re.findall(r"fill: #[0-9a-f]{6}; (?:fill-)?opacity: ([\d.]+)", svg)]
    assert fills, "no band drawn"
    assert max(fills) <= 0.12
    colours = {"passk": [_plots.BLUE, _plots.VERMILLION], "difference": [_plots.BLUE]}[name]
    for colour in colours:
        edges = re.findall(rf"fill: none; stroke: {colour.lower()}; stroke-opacity: 0.8", svg)
        assert len(edges) >= 2, colour  # the band's low and high edges
