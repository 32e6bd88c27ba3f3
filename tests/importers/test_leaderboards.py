"""Whole leaderboards in: SWE-bench's ``leaderboards.json`` (one run per submission with
per-instance details, ``--board`` picks the leaderboard) and a Terminal-Bench leaderboard folder
(one run per submission), each read by ``board`` directly.

The SWE-bench files here are made by hand: ``data/swe-bench-site/leaderboards.json`` mirrors the
structure of the site's file at commit f1176b6 of SWE-bench/swe-bench.github.io (its README says
what it keeps; no value of the real file is copied), and ``_site`` writes others in the test. Every
expected figure is worked out in the test from what the file holds.
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
SITE = Path(__file__).parent / "data" / "swe-bench-site" / "leaderboards.json"
ALPHA, BETA, GAMMA = (
    "20250101_mini-v1.0.0_alpha",
    "20250102_mini-v1.0.0_beta",
    "20241101_mini-v0.0.0_gamma",
)


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
    assert f"mean {mean_calls:.4g}" in notes


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


def _notes(ledger: Any, run: str) -> str:
    return " | ".join(ledger.source_of(run).notes)


def test_the_site_files_structure_is_read_leaderboard_by_leaderboard() -> None:
    site = json.loads(SITE.read_text())
    verified = read_source([SITE], None, ImportOptions(board="Verified"))  # detected
    assert set(verified.run_ids) == {ALPHA, BETA, GAMMA}  # zeta's details are null: not read
    bash = read_source([SITE], "swe-bench", ImportOptions(board="bash-only"))
    assert set(bash.run_ids) == {ALPHA, BETA}
    # the same folder on two leaderboards, named as each names it
    assert verified.run(ALPHA).first("system") == "mini-SWE-agent + Model Alpha (2025-01-01)"
    assert bash.run(ALPHA).first("system") == "Model Alpha (2025-01-01)"
    (board,) = [b for b in site["leaderboards"] if b["name"] == "Verified"]
    (alpha,) = [r for r in board["results"] if r["folder"] == ALPHA]
    rows = verified.run(ALPHA)
    details = alpha["per_instance_details"]
    assert sorted(rows.column("task_id").tolist()) == sorted(details)
    for iid, one in details.items():
        row = rows.where(rows.column("task_id") == iid)
        assert bool(row.column("passed")[0]) is one["resolved"]
        assert float(row.column("cost")[0]) == one["cost"]
    assert "1 submission(s) of leaderboard 'Verified' list no per-instance details" in _notes(
        verified, ALPHA
    )
    with pytest.raises(ArgumentError, match=r"holds 4 leaderboards \('bash-only', 'Test', "):
        read_source([SITE], "swe-bench")
    with pytest.raises(ArgumentError, match="leaderboard 'Lite' has no submission with per_inst"):
        read_source([SITE], "swe-bench", ImportOptions(board="lite"))


def test_the_pages_own_figures_are_checked_against_its_instances() -> None:
    ledger = read_source([SITE], "swe-bench", ImportOptions(board="Verified"))
    # alpha: the page's 75.0%, $4.00 in all, $0.50 and 9.75 calls per instance are its 8
    # instances' (6 resolved; costs summed; api_calls' mean)
    alpha = _notes(ledger, ALPHA)
    assert "the leaderboard's 75% resolved is its instances' 6/8" in alpha
    assert "the leaderboard's cost, $4.00 in all ($0.5000 per instance), is its instances'" in alpha
    assert "api_calls (model calls) recorded for 8 instances, mean 9.75 (the leaderboard's" in alpha
    # gamma: the page says 62.5% and $3.00 ($0.375 per instance); its instances give 1 of 8
    # resolved and $0.50 on each
    gamma = _notes(ledger, GAMMA)
    assert (
        "the leaderboard reports 62.5% resolved, but its per-instance details give 1/8 = 12.5%: "
        "the instances are scored" in gamma
    )
    assert (
        "the leaderboard reports a cost of $3.00 in all ($0.3750 per instance), but its "
        "instances' costs give $4.00 ($0.5000 per instance): the instances' are used" in gamma
    )


def test_board_ranks_the_site_files_leaderboard_on_its_instances() -> None:
    result = CliRunner().invoke(
        main, ["board", str(SITE), "--board", "verified", "--format", "json", "--resamples", "500"]
    )
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    systems = {s["run_id"]: s for s in doc["systems"]}
    assert [s["run_id"] for s in doc["systems"]] == [ALPHA, BETA, GAMMA]
    assert [systems[r]["estimate"] for r in (ALPHA, BETA, GAMMA)] == [6 / 8, 4 / 8, 1 / 8]
    # cost per task: the instances' mean, which the page states as instance_cost for alpha, beta
    assert [systems[r]["cost"]["estimate"] for r in (ALPHA, BETA, GAMMA)] == [0.5, 0.25, 0.5]


def test_the_board_says_what_each_import_noted_of_its_run() -> None:
    # the page's 62.5% for gamma against its instances' 1/8: a board ranking gamma on 1/8 must
    # say so beside it, in every format; what every run's source notes alike is said once
    args = ["board", str(SITE), "--board", "Verified", "--resamples", "500"]
    disagree = "the leaderboard reports 62.5% resolved, but its per-instance details give 1/8"
    doc = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).stdout)
    systems = {s["run_id"]: s for s in doc["systems"]}
    assert any(n.startswith(disagree) for n in systems[GAMMA]["notes"])
    assert not any(n.startswith(disagree) for n in systems[ALPHA]["notes"])
    shared = [n for n in doc["notes"] if n.startswith("every run: ")]
    assert len(shared) == 2  # no time limit etc. recorded; one submission without details
    assert all(n[len("every run: ") :] not in s["notes"] for n in shared for s in doc["systems"])
    for fmt in ("table", "markdown", "html"):
        out = CliRunner().invoke(main, [*args, "--format", fmt]).stdout
        flat = " ".join(out.split())
        assert f"note on {GAMMA}" in flat, fmt
        assert disagree in flat, fmt
