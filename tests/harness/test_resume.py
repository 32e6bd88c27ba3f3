"""A harness killed at any instant (SIGKILL included) resumes exactly; Ctrl-C stops cleanly."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.conftest import make_suite
from tests.harness.test_run import (
    TIERS,
    alive_with,
    carrying_tokens_of,
    unique_run_id,
    unique_seconds,
)
from trialbook.ledger import read_ledger

TASKS = {f"t{i}": {"grader": "test -f done.txt"} for i in range(4)}
K = 3


def agent(hang: str) -> str:
    """Attempt 2 of every task hangs past the 1 s timeout, so a kill often lands while one runs."""
    return f"if [ $TRIALBOOK_ATTEMPT = 2 ]; then sleep {hang}; fi; sleep 0.15; touch done.txt"


STARTED: list[int] = []
"""Pids of the harnesses these tests started (their tokens' keys are theirs alone)."""


def start(suite: Path, ledger: Path, tier: str, hang: str, *extra: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "trialbook", "run", str(suite), "--agent", agent(hang), "--ledger", str(ledger),
         "--jobs", "2", "--sandbox", tier, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    STARTED.append(proc.pid)
    return proc


def wait_until_running(ledger: Path, proc: subprocess.Popen[bytes]) -> None:
    """Until the run's first attempt has its start marker: the ledger and the run exist and the
    harness's signal handler is in place (a loaded machine may take seconds to get there)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with closing(sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)) as conn:
                if conn.execute("SELECT 1 FROM attempt_starts LIMIT 1").fetchone():
                    return
        except sqlite3.OperationalError:  # no file yet, or its tables not yet
            pass
        time.sleep(0.05)
    raise AssertionError("the run did not start its first attempt within 60 s")


def check_ledger(ledger: Path) -> None:
    rows = read_ledger(ledger)  # validates: no duplicate (run, task, attempt), no contradiction
    keys = set(
        zip(rows.text("task_id").tolist(), rows.values["attempt_index"].tolist(), strict=True)
    )
    assert len(keys) == len(rows) == len(TASKS) * K
    with sqlite3.connect(ledger) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        starts = conn.execute("SELECT count(*) FROM attempt_starts").fetchone()[0]
        cut = conn.execute(
            "SELECT coalesce(sum(json_extract(detail, '$.cut_off')), 0) FROM run_events WHERE event = 'resumed'"
        ).fetchone()[0]
    # every start either produced its row or was recorded as cut off when the run resumed
    assert starts == len(rows) + cut
    with sqlite3.connect(ledger) as conn:
        summary = conn.execute(
            "SELECT status, attempts, starts, unfinished_starts, cut_off_rerun FROM run_summary"
        ).fetchone()
    assert summary == ("finished", len(rows), starts, 0, cut)


@pytest.mark.slow
@pytest.mark.parametrize("tier", TIERS)
def test_sigkill_at_random_moments_then_resume(tmp_path: Path, tier: str) -> None:
    suite = make_suite(tmp_path / "suite", TASKS, k=K, timeout_s=1)
    ledger = tmp_path / "out" / "ledger.db"
    rng = random.Random(20261130)
    run_id, hang = unique_run_id(), unique_seconds()
    proc = start(suite, ledger, tier, hang, "--run-id", run_id, "--system", "s")
    wait_until_running(ledger, proc)  # the first kill lands in a run that exists, as later ones do
    kills = 0
    for _ in range(4):
        time.sleep(rng.uniform(0.3, 1.5))
        if proc.poll() is not None:
            break
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        kills += 1
        proc = start(suite, ledger, tier, hang, "--resume", run_id)
    err, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    assert kills >= 2
    check_ledger(ledger)
    assert not carrying_tokens_of(STARTED)
    assert not sleeping(hang)


@pytest.mark.parametrize("tier", TIERS)
def test_ctrl_c_stops_cleanly_and_resume_finishes(tmp_path: Path, tier: str) -> None:
    suite = make_suite(tmp_path / "suite", TASKS, k=K, timeout_s=1)
    ledger = tmp_path / "out" / "ledger.db"
    run_id, hang = unique_run_id(), unique_seconds()
    proc = start(suite, ledger, tier, hang, "--run-id", run_id)
    wait_until_running(ledger, proc)
    time.sleep(0.3)  # with attempts running
    proc.send_signal(signal.SIGINT)
    err, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert b"stopping (SIGINT)" in err
    assert f"--resume {run_id}".encode() in err
    assert not carrying_tokens_of(STARTED)
    with sqlite3.connect(ledger) as conn:
        events = [e for (e,) in conn.execute("SELECT event FROM run_events ORDER BY id")]
    assert events == ["started", "interrupted"]
    proc = start(suite, ledger, tier, hang, "--resume", run_id)
    err, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    check_ledger(ledger)
    with sqlite3.connect(ledger) as conn:
        events = [e for (e,) in conn.execute("SELECT event FROM run_events ORDER BY id")]
    assert events == ["started", "interrupted", "resumed", "finished"]


def sleeping(seconds: str) -> list[int]:
    """Live processes that are exactly ``sleep SECONDS`` (not the harness whose argv mentions it)."""
    return [
        pid
        for pid in alive_with(seconds)
        if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2]
        == [b"sleep", seconds.encode()]
    ]


def test_a_killed_harness_leaves_no_process_behind(tmp_path: Path) -> None:
    """Process tier, no resume: the run's watchdog kills the attempt's processes when the harness
    dies of SIGKILL (bwrap has --die-with-parent as well)."""
    suite = make_suite(tmp_path / "suite", {"t": {"grader": "true"}}, k=1, timeout_s=60)
    ledger = tmp_path / "out" / "ledger.db"
    escaped, child = unique_seconds(), unique_seconds()
    with subprocess.Popen(
        [sys.executable, "-m", "trialbook", "run", str(suite), "--agent", f"setsid sleep {escaped} & sleep {child}",
         "--ledger", str(ledger), "--sandbox", "process", "--run-id", unique_run_id()],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as proc:  # fmt: skip
        deadline = time.monotonic() + 30
        while not (sleeping(escaped) and sleeping(child)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sleeping(escaped)
        assert sleeping(child)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 10
    while (sleeping(escaped) or sleeping(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not sleeping(escaped)
    assert not sleeping(child)
