"""Whole leaderboards in: SWE-bench's ``leaderboards.json`` (one run per submission with
per-instance details, ``--board`` picks the leaderboard) and a Terminal-Bench leaderboard folder
(one run per submission), each read by ``board`` directly.

The SWE-bench file here is made by hand to the layout docs/importers.md states (no copy of the
site's file is kept); every expected figure is worked out in the test from what it wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from trialbook.analysis import BoardOptions, board_runs
from trialbook.cli import main
from trialbook.errors import ArgumentError, LedgerError
from trialbook.importers import ImportOptions, read_source

INSTANCES = [f"repo__repo-{i}" for i in range(40)]


def _submission(folder: str, solved: set[int], price: float | None, **extra: Any) -> dict[str, Any]:
    details = {}
    for i, iid in enumerate(INSTANCES):
        one: dict[str, Any] = {"resolved": i in solved, "api_calls": 10 + i % 7}
        if price is not None:
            one["cost"] = round(price * (1 + (i % 5) / 10), 4)
        details[iid] = one
    return {
        "name": f"Agent {folder}",
        "folder": folder,
        "resolved": 100 * len(solved) / 40,
        "per_instance_details": details,
        **extra,
    }


def _site(tmp_path: Path) -> Path:
    verified = [
        _submission("20250101_strong", set(range(34)), 1.0),
        _submission("20250102_middle", set(range(0, 40, 2)) | {1, 3}, 0.2),
        _submission("20250103_weak", set(range(8)), 2.0),
        {"name": "no details", "folder": "20250104_lists_only", "resolved": 50.0},
    ]
    bash_only = [
        _submission("20250201_a", set(range(20)), None),
        _submission("20250202_b", set(range(25)), None),
    ]
    doc = {
        "leaderboards": [
            {"name": "Verified", "results": verified},
            {"name": "bash-only", "results": bash_only},
        ]
    }
    path = tmp_path / "leaderboards.json"
    path.write_text(json.dumps(doc))
    return path


def test_each_submission_with_details_is_one_run_of_its_leaderboard(tmp_path: Path) -> None:
    path = _site(tmp_path)
    ledger = read_source([path], None, ImportOptions(board="verified"))  # detected; any case
    assert set(ledger.run_ids) == {"20250101_strong", "20250102_middle", "20250103_weak"}
    strong = ledger.run("20250101_strong")
    assert len(strong) == 40
    assert strong.column("passed").sum() == 34
    # each attempt's cost is the instance's: price x (1 + (i mod 5) / 10)
    expected = sum(round(1.0 * (1 + (i % 5) / 10), 4) for i in range(40))
    assert strong.column("cost").sum() == pytest.approx(expected)
    notes = " ".join(ledger.source_of("20250101_strong").notes)  # type: ignore[union-attr]
    assert "1 submission(s) of leaderboard 'Verified' list no per-instance details" in notes
    mean_calls = sum(10 + i % 7 for i in range(40)) / 40
    assert f"mean {mean_calls:.1f}" in notes


def test_the_board_must_be_named_when_the_file_holds_several(tmp_path: Path) -> None:
    path = _site(tmp_path)
    with pytest.raises(ArgumentError, match=r"holds 2 leaderboards .*'Verified', 'bash-only'"):
        read_source([path], "swe-bench")
    with pytest.raises(ArgumentError, match="no leaderboard 'Lite'"):
        read_source([path], "swe-bench", ImportOptions(board="Lite"))


def test_board_reads_the_leaderboard_directly(tmp_path: Path) -> None:
    path = _site(tmp_path)
    result = CliRunner().invoke(
        main, ["board", str(path), "--board", "Verified", "--format", "json", "--resamples", "2000"]
    )
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    systems = {s["run_id"]: s for s in doc["systems"]}
    assert [s["run_id"] for s in doc["systems"]] == [
        "20250101_strong",
        "20250102_middle",
        "20250103_weak",
    ]
    assert systems["20250101_strong"]["estimate"] == 34 / 40
    assert systems["20250102_middle"]["estimate"] == 22 / 40
    # cost per task: the mean over instances of each instance's cost
    mean = sum(round(0.2 * (1 + (i % 5) / 10), 4) for i in range(40)) / 40
    assert systems["20250102_middle"]["cost"]["estimate"] == pytest.approx(mean)
    # the weak system solves less and costs more on every instance than the middle one
    assert systems["20250103_weak"]["frontier"] == "dominated"
    assert "20250102_middle" in systems["20250103_weak"]["dominated_by"]


def test_a_malformed_instance_is_named(tmp_path: Path) -> None:
    sub = _submission("20250101_x", {1}, 1.0)
    sub["per_instance_details"]["repo__repo-3"] = {"resolved": "yes", "cost": -1}
    path = tmp_path / "leaderboards.json"
    path.write_text(json.dumps({"leaderboards": [{"name": "Verified", "results": [sub]}]}))
    with pytest.raises(LedgerError) as info:
        read_source([path], "swe-bench")
    text = str(info.value)
    assert "repo__repo-3" in text
    assert "resolved" in text
    assert "cost" in text


def test_a_terminal_bench_leaderboard_folder_is_one_run_per_submission() -> None:
    from tests.conftest import shared_path

    folder = shared_path("realdata", "terminal-bench")
    board = board_runs(
        [folder], BoardOptions(resamples=2000), read=lambda p: read_source([p], None)
    )
    by = {s.run_id: s for s in board.systems}
    # ../shared/realdata/README.md: accuracies over 80 tasks x 5 attempts (pass@1 is the mean)
    expected = {
        "20250902_orchestrator_claude-4-sonnet": 0.36,
        "20250902_orchestrator_qwen-3-coder-480B": 0.1925,
        "20250906_orchestrator_claude-4.1-opus": 0.3975,
        "20250923_droid_claude-4-1-opus": 0.5875,
    }
    assert {rid: s.metric.estimate for rid, s in by.items()} == pytest.approx(expected, abs=1e-12)
    assert all(s.tasks == 80 and s.attempts == 400 for s in board.systems)
