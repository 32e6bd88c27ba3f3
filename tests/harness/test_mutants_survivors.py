"""Harness behaviours that a mutation run found no test of its module pinning: a grader's score of
0, a graded-after-timeout failure, a grader named by absolute path that is missing, the sweep's
token match and its repeated SIGSTOP pass, and the agent's CPU-time headroom."""

from __future__ import annotations

import contextlib
import math
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import make_suite
from tests.harness.test_run import alive_with, unique_run_id, unique_seconds
from trialbook.harness import RunOptions, run_suite
from trialbook.harness.attempt._verdict import read_verdict
from trialbook.harness.sandbox import _sweep
from trialbook.harness.sandbox._programs import start_program
from trialbook.harness.sandbox._sandbox import start_check
from trialbook.harness.sandbox._sweep import TOKEN_VAR, find_processes, process_stat, sweep
from trialbook.ledger import ledger_rows, read_ledger

# ---------------------------------------------------------------- the grader's verdict


@pytest.mark.parametrize("value", [0, 0.0, 1, 0.25])
def test_a_grader_score_anywhere_in_0_to_1_is_taken(value: float) -> None:
    # docs/harness.md: the last line may carry "score" in 0..1 (partial credit); 0 is a score,
    # not a malformed one
    verdict = read_verdict(f'{{"score": {value}}}\n', exit_passed=value == 1)
    assert verdict.score == float(value)
    assert verdict.notes == () or list(verdict.notes) == []


@pytest.mark.parametrize("value", [-0.01, 1.5, "1", True])
def test_a_grader_score_outside_0_to_1_is_a_note(value: object) -> None:
    import json

    verdict = read_verdict(json.dumps({"score": value}) + "\n", exit_passed=False)
    assert verdict.score is None
    assert any("score must be a number in 0..1" in n for n in verdict.notes)


# ---------------------------------------------------------------- grade after timeout


def test_a_timed_out_attempt_graded_and_failed_is_timed_out_not_failed(tmp_path: Path) -> None:
    # with grade_after_timeout the grader judges a timed-out workspace: a pass is a pass after
    # timeout; a fail stays what the harness observed, a timeout (the agent never finished)
    suite = make_suite(
        tmp_path / "suite",
        {"slow": {"grader": "test -f done.txt"}},
        k=1,
        timeout_s=1,
        extra="grade_after_timeout = true\n",
    )
    hang = unique_seconds()
    ledger = tmp_path / "out" / "ledger.db"
    run_suite(
        RunOptions(
            suite=suite,
            agent=f"sleep {hang}",
            ledger=ledger,
            system="t",
            sandbox="process",
            run_id=unique_run_id(),
            grace_s=0.5,
        )
    )
    assert not alive_with(hang)
    (row,) = ledger_rows(read_ledger(ledger))
    assert (row["status"], row["timed_out"], row["passed"]) == ("timed_out", True, False)
    assert row["graded_after_timeout"] is True


# ---------------------------------------------------------------- a grader that cannot start


def test_a_missing_grader_named_by_absolute_path_is_the_harnesss_not_the_agents() -> None:
    # the agent cannot touch a path outside its workspace: a grader at /opt/... is the harness's to
    # check before it runs (a missing one is an infra error); a relative one is a file of the
    # workspace the agent may have removed (its failure, so not checked)
    grader = "/opt/suite-tools/grade --strict"
    assert start_program(grader, in_workspace_is_agents=True) == "/opt/suite-tools/grade"
    assert start_program("./grade.sh", in_workspace_is_agents=True) is None
    # the agent's command: any program it names is checked before it runs
    assert start_program("./grade.sh", in_workspace_is_agents=False) == "./grade.sh"
    assert "not found" in start_check("/opt/suite-tools/grade")


# ---------------------------------------------------------------- the sweep


@contextlib.contextmanager
def _sleepers(tokens: list[str]) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(120)"],
            env={**os.environ, TOKEN_VAR: token},
        )
        for token in tokens
    ]
    try:
        for p, token in zip(procs, tokens, strict=True):  # until exec: the parent's environment
            want = f"{TOKEN_VAR}={token}\0".encode()
            for _ in range(10_000):
                with contextlib.suppress(OSError):
                    if want in Path(f"/proc/{p.pid}/environ").read_bytes():
                        break
                time.sleep(0.001)
            else:
                raise AssertionError(f"process {p.pid} never carried its token")
        yield procs
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                p.kill()
            p.wait()


def test_a_token_matches_whole_never_as_a_prefix_of_another() -> None:
    # attempt 1's sweep must not take attempt 10's processes: the token ends at its NUL
    run = unique_run_id()
    with _sleepers([f"{run}/1", f"{run}/10", f"{run}/1x"]) as (one, ten, other):
        assert find_processes(f"{run}/1") == [one.pid]
        assert sorted(find_processes(f"{run}/1", prefix=True)) == sorted(
            [one.pid, ten.pid, other.pid]
        )
        assert find_processes(f"{run}/10") == [ten.pid]


def test_the_sweep_stops_processes_that_appear_after_its_first_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a fork loop makes new processes while the sweep stops the old ones: it scans again until a
    # scan finds none it has not stopped. Here the second process "appears" at the second scan.
    run = unique_run_id()
    with _sleepers([f"{run}/a", f"{run}/b"]) as (first, later):
        scans: list[int] = []

        def fake(token: str, workspace: Path | None = None, *, prefix: bool = False) -> list[int]:
            scans.append(1)
            return [first.pid] if len(scans) == 1 else [first.pid, later.pid]

        monkeypatch.setattr(_sweep, "find_processes", fake)
        assert sweep(run, sig=signal.SIGKILL) == 2
        assert len(scans) == 3  # [a], [a, b] (b is new), [a, b] (nothing new): done
        for p in (first, later):
            assert p.wait(timeout=30) == -signal.SIGKILL
        assert process_stat(later.pid) is None


# ---------------------------------------------------------------- the agent's CPU time


def test_the_agents_cpu_limit_leaves_10_s_over_its_timeout(tmp_path: Path) -> None:
    # docs/harness.md: an attempt may use its timeout + 10 s of CPU time, so the wall-clock
    # timeout (which the harness observes and records) fires before SIGXCPU can; each limit is
    # lowered to the caller's hard limit
    timeout_s = 3
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    want = math.ceil(timeout_s) + 10
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    suite = make_suite(
        tmp_path / "suite",
        {"t": {"grader": f'test "$(cat cpu.txt)" = {want}'}},
        k=1,
        timeout_s=timeout_s,
    )
    ledger = tmp_path / "ledger.db"
    run_suite(
        RunOptions(
            suite=suite,
            agent="ulimit -t > cpu.txt",
            ledger=ledger,
            system="t",
            sandbox="process",
            run_id=unique_run_id(),
            grace_s=0.5,
        )
    )
    (row,) = ledger_rows(read_ledger(ledger))
    assert row["status"] == "passed", row
