"""Hostile agents against the attempt (issue 12, items 3, 4, 6, 16): forged usage files, locked or
planted folders, a grader that is not there. Whatever the agent does is its row's data: the run goes
on, the row is never an ``infra_error`` of the agent's making, and ``--resume`` still works."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.harness.test_run import CHECK, TIERS, run, unique_run_id
from trialbook.errors import SuiteError
from trialbook.harness import RunOptions, run_suite
from trialbook.harness.attempt._usage import MAX_BYTES, MAX_LINES, read_usage
from trialbook.ledger import ledger_rows, read_ledger

pytestmark = pytest.mark.timeout(120)


def _usage(tmp_path: Path, text: str | bytes) -> tuple[dict[str, Any], list[str]]:
    path = tmp_path / "usage.jsonl"
    if isinstance(text, str):
        path.write_text(text)
    else:
        path.write_bytes(text)
    return read_usage(path)


def test_sums_past_int64_or_to_infinity_drop_the_figure_and_say_so(tmp_path: Path) -> None:
    totals, problems = _usage(
        tmp_path,
        '{"cost": 1e308, "tokens_in": 9223372036854775807, "tokens_out": 3}\n'
        '{"cost": 1e308, "tokens_in": 1, "tokens_out": 4}\n',
    )
    assert totals == {"tokens_out": 7}  # unusable figures are not recorded, the others are
    assert any("tokens_in is beyond 2**53" in p for p in problems)
    assert any("cost sums to infinity" in p for p in problems)


def test_the_usage_limit_is_the_ledgers_exact_limit(tmp_path: Path) -> None:
    from trialbook.harness.attempt._usage import MAX_COUNT
    from trialbook.ledger._fields import EXACT_INT

    assert MAX_COUNT == EXACT_INT
    totals, _ = _usage(tmp_path, f'{{"tokens_in": {EXACT_INT}}}\n')
    assert totals == {"tokens_in": EXACT_INT}


def test_a_single_value_beyond_int64_is_not_recorded(tmp_path: Path) -> None:
    totals, problems = _usage(
        tmp_path, '{"tokens_in": 9223372036854775808, "cost": 1' + "0" * 400 + "}\n"
    )
    assert totals == {}
    assert len(problems) == 2


def test_a_deeply_nested_line_is_not_json_not_a_recursion_error(tmp_path: Path) -> None:
    totals, problems = _usage(tmp_path, "[" * 100_000 + "]" * 100_000 + '\n{"tool_calls": 2}\n')
    assert totals == {"tool_calls": 2}
    assert problems == ["usage line 1: not JSON"]


def test_the_usage_file_is_read_bounded(tmp_path: Path) -> None:
    line = b'{"tokens_in": 1}\n'
    totals, problems = _usage(tmp_path, line * (MAX_BYTES // len(line) + 1))
    assert totals == {}
    assert problems == [f"usage file is larger than {MAX_BYTES} bytes: usage not recorded"]
    totals, problems = _usage(tmp_path, "\n" * (MAX_LINES + 1))
    assert (totals, problems) == (
        {},
        [f"usage file has more than {MAX_LINES} lines: usage not recorded"],
    )


def test_a_fifo_a_symlink_or_a_folder_is_a_problem_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # nobody writes it: a blocking open would hang the harness
    assert read_usage(fifo) == ({}, ["usage file is not a regular file: usage not recorded"])
    link = tmp_path / "link"
    link.symlink_to("/proc/self/mem")
    assert read_usage(link) == ({}, ["usage file is a symlink: usage not recorded"])
    assert read_usage(tmp_path) == ({}, ["usage file is not a regular file: usage not recorded"])


def test_an_overflowing_usage_file_keeps_the_run_going_and_resume_works(tmp_path: Path) -> None:
    agent = (
        'echo \'{"cost": 1e308, "tokens_in": 9223372036854775807}\' >> "$TRIALBOOK_USAGE_FILE"; '
        'echo \'{"cost": 1e308, "tokens_in": 1}\' >> "$TRIALBOOK_USAGE_FILE"; touch done.txt'
    )
    rows = run(tmp_path, {"a": CHECK, "b": CHECK}, agent, "process", k=2)
    assert len(rows) == 4
    for row in rows:
        assert row["status"] == "passed"
        assert row["cost"] is None
        assert row["tokens_in"] is None
        assert "cost sums to infinity" in row["error"]
    (run_id,) = {r["run_id"] for r in rows}
    ledger = tmp_path / "out" / "ledger.db"
    result = run_suite(
        RunOptions(
            suite=tmp_path / "suite",
            agent=agent,
            ledger=ledger,
            system="test",
            sandbox="process",
            resume=run_id,
        )
    )
    assert result.run_id == run_id
    assert len(list(ledger_rows(read_ledger(ledger)))) == 4


WITH_ORACLE = {"grader": "test -f done.txt", "oracle": {"expected.txt": "42"}}
HOSTILE = {
    "usage-mem": 'ln -s /proc/self/mem "$TRIALBOOK_USAGE_FILE"',
    "usage-fifo": 'mkfifo "$TRIALBOOK_USAGE_FILE"',
    "usage-locked": 'echo \'{"tokens_in": 1}\' > "$TRIALBOOK_USAGE_FILE"; chmod 000 "$TRIALBOOK_USAGE_FILE"',
    "workspace-locked": 'chmod 000 "$PWD"',
    "planted-oracle": "mkdir -p ../oracle/x 2>/dev/null; true",
    "workspace-gone": "cd .. && rm -rf workspace 2>/dev/null; true",
    "attempt-folder-swapped": (
        'cd ../.. && d="$(basename "$(dirname "$OLDPWD")")" && mv "$d" "$d.moved" 2>/dev/null'
        ' && ln -s /tmp "$d"; true'
    ),
}


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("attack", sorted(HOSTILE))
def test_the_agent_cannot_turn_its_failure_into_an_infra_error(
    tmp_path: Path, tier: str, attack: str
) -> None:
    (row,) = run(tmp_path, {"t": WITH_ORACLE}, HOSTILE[attack], tier)
    assert row["status"] == "failed", row["error"]
    assert row["passed"] is False
    assert "harness error" not in (row["error"] or "")
    if attack != "usage-locked" or os.geteuid() != 0:  # root reads a file whatever its mode
        assert row["tokens_in"] is None


def test_a_usage_file_a_user_cannot_read_is_the_agents_problem(tmp_path: Path) -> None:
    path = tmp_path / "usage.jsonl"
    path.write_text('{"tokens_in": 1}\n')
    path.chmod(0)
    if os.geteuid() == 0:
        pytest.skip("root reads a file whatever its mode")
    assert read_usage(path) == (
        {},
        ["usage file cannot be opened (Permission denied): usage not recorded"],
    )


@pytest.mark.parametrize("tier", TIERS)
def test_a_grader_that_is_not_installed_is_refused_before_any_attempt(
    tmp_path: Path, tier: str
) -> None:
    task = {"grader": "no-such-grader-trialbook --check"}
    with pytest.raises(SuiteError, match="task 't': grader: program 'no-such-grader-trialbook' is"):
        run(tmp_path, {"t": task}, "touch done.txt", tier)
    assert not (tmp_path / "out" / "ledger.db").exists()


@pytest.mark.parametrize("tier", TIERS)
def test_a_grader_the_shell_cannot_start_is_an_infra_error(tmp_path: Path, tier: str) -> None:
    # a program named through a variable escapes the pre-flight; the shell's 127 is the harness's
    task = {"grader": '"no-such-grader-$TRIALBOOK_TASK_ID" --check'}
    (row,) = run(tmp_path, {"t": task}, "touch done.txt", tier)
    assert row["status"] == "infra_error"
    assert "the grader's command could not be started" in row["error"]
    assert "no-such-grader-t: not found" in row["error"]


def test_a_grader_script_the_agent_deleted_is_the_agents_failure(tmp_path: Path) -> None:
    task = {"grader": "./grade.sh", "fixture": {"grade.sh": "#!/bin/sh\nexit 0\n"}}
    (row,) = run(tmp_path, {"t": task}, "rm grade.sh", "process")
    assert row["status"] == "failed"


def test_every_hostile_row_is_written_under_one_run(tmp_path: Path) -> None:
    """One run with every attack as a task: none stops the run."""
    tasks = dict.fromkeys(HOSTILE, WITH_ORACLE)
    agent = (
        'case "$TRIALBOOK_TASK_ID" in '
        + " ".join(f"{name}) {cmd} ;;" for name, cmd in HOSTILE.items())
        + " esac"
    )
    rows = run(tmp_path, tasks, agent, "process", run_id=unique_run_id())
    assert sorted(r["task_id"] for r in rows) == sorted(HOSTILE)
    assert {r["status"] for r in rows} == {"failed"}


def test_two_runs_of_one_system_in_the_same_second_get_different_ids(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    from tests.conftest import make_suite

    make_suite(suite, {"t": CHECK}, k=1)
    ledger = tmp_path / "ledger.db"
    ids = []
    for _ in range(2):
        options = RunOptions(
            suite=suite, agent="touch done.txt", ledger=ledger, system="same", sandbox="process"
        )
        ids.append(run_suite(options).run_id)
    assert ids[0] != ids[1]
    for run_id in ids:
        assert re.fullmatch(r"same-\d{8}T\d{6}Z-[0-9a-f]{6}", run_id), run_id


def test_a_clock_stepping_back_never_gives_a_row_the_ledger_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trialbook.harness.attempt import _attempt

    stamps = iter(["2026-01-01T00:00:10.000+00:00", "2026-01-01T00:00:00.000+00:00"])
    monkeypatch.setattr(_attempt, "now", lambda: next(stamps))
    (row,) = run(tmp_path, {"t": CHECK}, "touch done.txt", "process")
    assert row["status"] == "passed"
    assert row["finished_at"] == row["started_at"]


def test_an_attempt_folder_swapped_for_a_symlink_is_never_followed(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    (canary / "locked").mkdir(parents=True)
    (canary / "keep.txt").write_text("mine")
    (canary / "locked").chmod(0)
    agent = (
        # from ATTEMPT/agent/workspace to the run's folder, which holds ATTEMPT
        'cd ../../.. && d="$(basename "$(dirname "$(dirname "$OLDPWD")")")" && mv "$d" "$d.moved"'
        f' && ln -s {canary} "$d"'
    )
    (row,) = run(tmp_path, {"t": WITH_ORACLE}, agent, "process")
    assert row["status"] == "failed"
    assert "moved or replaced its attempt folder" in row["error"]
    assert (canary / "locked").stat().st_mode & 0o777 == 0  # the harness chmodded nothing there
    assert sorted(p.name for p in canary.iterdir()) == ["keep.txt", "locked"]
    (canary / "locked").chmod(0o700)


def test_taking_back_a_locked_folder_never_follows_a_symlink_swapped_in_after_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the race: the harness checks the folder (a locked directory), a surviving agent process
    # swaps it for a symlink to a file of the harness's, the harness changes the mode by path
    from trialbook.harness.attempt import _attempt

    top = tmp_path / "attempt"
    top.mkdir()
    target = tmp_path / "harness-file"
    target.write_text("x")
    target.chmod(0o600)
    (top / "workspace").symlink_to(target)
    real_lstat = os.lstat

    def lstat_before_the_swap(path: object) -> os.stat_result:
        info = real_lstat(path)  # type: ignore[arg-type]
        if str(path).endswith("workspace"):  # what the check saw: a directory locked with 000
            return os.stat_result((stat.S_IFDIR | 0o000, *info[1:]))
        return info

    monkeypatch.setattr(_attempt.os, "lstat", lstat_before_the_swap)
    _attempt._reclaim(top, (top, top / "workspace"))
    assert stat.S_IMODE(real_lstat(target).st_mode) == 0o600


def test_a_user_site_planted_in_the_attempt_folder_does_not_reach_the_grader(
    tmp_path: Path,
) -> None:
    # process tier: the agent can write its attempt folder, which was the grader's HOME; a
    # usercustomize.py in HOME's user site-packages runs in every (non -I, non-venv) Python the
    # grader starts. The system Python (Debian's) has its user site on.
    import shutil

    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.fail("no system python3 in /usr/bin (Debian ships one)")
    marker = tmp_path / "grader-ran-planted-code"
    agent = (
        'up="$(cd "$HOME/.." && pwd)"; '
        f"d=$(HOME=\"$up\" {python} -c 'import site; print(site.getusersitepackages())'); "
        f'mkdir -p "$d" && echo "open(\'{marker}\', \'w\').close()" > "$d/usercustomize.py"'
    )
    (row,) = run(tmp_path, {"t": {"grader": f"{python} -c pass"}}, agent, "process")
    assert row["passed"] is True  # the grader ran (and passed) ...
    assert not marker.exists()  # ... without the agent's code
