"""The race end to end: two scripted agents of known difference through the real harness, the
ledger and the sequence; its JSON, compare on its runs, a clean interrupt, a SIGKILL and resume."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from trialbook.cli import main
from trialbook.harness.testing import Attempt, ScriptedAgent
from trialbook.ledger import read_ledger
from trialbook.race import RaceOptions, run_race
from trialbook.stats import SequenceLook, SpendingSequence, task_order

IDS = [f"t{i:02d}" for i in range(30)]
BASELINE_PASSES = set(IDS[:4])
CANDIDATE_PASSES = set(IDS) - {"t29"}
SEED = 2
ALPHA = 0.1  # a race of about 14 pairs: the harness path is what is tested here, not the power
PASS = Attempt(files={"done.txt": "done"})
SLOW = task_order(IDS, SEED)[2]
"""The baseline thinks 1.5 s on the third task of the order: a kill during its first batch of
three lands before the candidate's run exists."""
BASELINE = ScriptedAgent(
    attempts={
        **{t: [PASS] for t in BASELINE_PASSES},
        SLOW: [Attempt(sleep_s=1.5, files={"done.txt": "done"} if SLOW in BASELINE_PASSES else {})],
    },
    default=Attempt(),
)
CANDIDATE = ScriptedAgent(attempts={t: [PASS] for t in CANDIDATE_PASSES}, default=Attempt())


def expected_stop() -> SequenceLook:
    """Where the race must stop, from first principles: the known per-task differences (+1 where
    only the candidate passes, 0 elsewhere) fed in the seeded order to the race's default design
    itself, whose horizon is the suite's size."""
    seq = SpendingSequence(horizon=len(IDS), alpha=ALPHA)
    for task in task_order(IDS, SEED):
        look = seq.update(float((task in CANDIDATE_PASSES) - (task in BASELINE_PASSES)))
        if look.decision != "undecided":
            return look
    raise AssertionError("the scripted difference must be decided before the suite is spent")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("race") / "suite"
    return make_suite(root, {t: {"grader": "test -f done.txt"} for t in IDS}, k=1, timeout_s=10)


def _race_args(suite: Path, ledger: Path, race_id: str, jobs: int) -> list[str]:
    return [
        "race", str(suite), "--baseline", BASELINE.command(), "--candidate", CANDIDATE.command(),
        "--ledger", str(ledger), "--order-seed", str(SEED), "--alpha", str(ALPHA), "--jobs", str(jobs), "--sandbox",
        "process", "--race-id", race_id, "--format", "json",
    ]  # fmt: skip


def test_a_race_stops_where_the_sequence_decides(suite: Path, tmp_path: Path) -> None:
    want = expected_stop()
    ledger = tmp_path / "race.db"
    race_id = f"test-{uuid.uuid4().hex}"
    result = CliRunner().invoke(main, _race_args(suite, ledger, race_id, jobs=2))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == [
        "schema", "decision", "stopped_because", "tasks_used", "tasks_total", "attempts_used",
        "baseline", "candidate", "difference", "method", "alpha",
    ]  # fmt: skip
    assert doc["schema"] == "trialbook.race/1"
    assert (doc["decision"], doc["stopped_because"]) == ("improvement", "excludes-zero")
    assert doc["tasks_used"] == want.tasks < len(IDS)
    assert doc["tasks_total"] == len(IDS)
    assert doc["difference"] == {
        "estimate": want.estimate,
        "ci_low": want.ci_low,
        "ci_high": want.ci_high,
    }
    assert (doc["method"], doc["alpha"]) == ("spending", ALPHA)
    # jobs=2: the batch of the deciding pair may hold one pair more; the sequence never used it
    rows = read_ledger(ledger)
    assert doc["attempts_used"] == len(rows) in (2 * want.tasks, 2 * want.tasks + 2)
    assert doc["baseline"] == {"run_id": f"{race_id}-baseline"}
    with sqlite3.connect(ledger) as conn:
        (detail,) = conn.execute(
            "SELECT detail FROM race_events WHERE event = 'stopped'"
        ).fetchone()
    stopped = json.loads(detail)
    assert (stopped["decision"], stopped["tasks_used"]) == ("improvement", want.tasks)

    # compare on the race's runs: the race's anytime-valid interval, and says why not a fixed one
    spec = [f"{ledger}:{race_id}-baseline", f"{ledger}:{race_id}-candidate"]
    out = CliRunner().invoke(main, ["compare", *spec])
    assert out.exit_code == 0, out.output
    assert f"race {race_id}, {want.tasks} of {len(IDS)} tasks used" in out.output
    assert "fixed-design interval" in out.output
    assert "biased" in out.output
    out = CliRunner().invoke(main, ["compare", *spec, "--format", "json"])
    seq = json.loads(out.stdout)
    assert seq["schema"] == "trialbook.sequential/1"
    assert seq["difference"] == doc["difference"]
    assert (seq["race_id"], seq["decision"]) == (race_id, "improvement")
    assert (
        CliRunner().invoke(main, ["compare", *spec, "--gate", "require-improvement"]).exit_code == 0
    )
    assert (
        CliRunner()
        .invoke(main, ["compare", *spec[::-1], "--gate", "require-improvement"])
        .exit_code
        == 1
    )


def test_an_interrupted_race_resumes_to_the_same_stop(suite: Path, tmp_path: Path) -> None:
    want = expected_stop()
    ledger = tmp_path / "race.db"
    stop = threading.Event()

    class StopAfterFive:
        def begin(self, race: object, notes: object) -> None:
            pass

        def look(self, look: SequenceLook, tasks_total: int, attempts: int, full: int) -> None:
            if look.tasks == 5:
                stop.set()

    options = RaceOptions(
        ledger=ledger,
        suite=suite,
        baseline=BASELINE.command(),
        candidate=CANDIDATE.command(),
        order_seed=SEED,
        alpha=ALPHA,
        sandbox="process",
        race_id=f"test-{uuid.uuid4().hex}",
    )
    first = run_race(options, progress=StopAfterFive(), stop=stop)
    assert first.interrupted
    assert first.tasks_used == 5
    assert first.decision == "undecided"
    again = RaceOptions(ledger=ledger, resume=first.race_id, sandbox="process", jobs=3)
    done = run_race(again)
    assert (done.tasks_used, done.look) == (want.tasks, want)
    assert run_race(again).look == want  # a stopped race resumed: the same result, nothing run
    with sqlite3.connect(ledger) as conn:
        events = [e for (e,) in conn.execute("SELECT event FROM race_events ORDER BY id")]
    assert events == ["started", "interrupted", "resumed", "stopped"]


def _count(ledger: Path, sql: str) -> int:
    try:
        with sqlite3.connect(ledger, timeout=30) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def _attempts(ledger: Path) -> int:
    return _count(ledger, "SELECT count(*) FROM attempts")


@pytest.mark.slow
def test_a_race_killed_at_random_moments_resumes_to_the_same_stop(
    suite: Path, tmp_path: Path
) -> None:
    want = expected_stop()
    ledger = tmp_path / "race.db"
    race_id = f"test-{uuid.uuid4().hex}"
    args = _race_args(suite, ledger, race_id, jobs=3)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}

    def start(argv: list[str]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "trialbook", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )

    proc = start(args)
    kills = 0
    for at_least in (1, 12, 20):  # kill once the ledger holds this many attempts (or later)
        while proc.poll() is None and _attempts(ledger) < at_least:
            time.sleep(0.05)
        if proc.poll() is not None:
            break
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        if kills == 0:  # the first kill: the race and the baseline's run exist, not the candidate's
            assert (
                _count(ledger, f"SELECT count(*) FROM runs WHERE run_id = '{race_id}-candidate'")
                == 0
            )
            assert _count(ledger, "SELECT count(*) FROM races") == 1
        kills += 1
        resume = ["race", "--ledger", str(ledger), "--resume", race_id, "--format", "json"]
        proc = start([*resume, "--sandbox", "process", "--jobs", "3"])
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    assert kills == 3
    doc = json.loads(out)
    assert (doc["decision"], doc["tasks_used"]) == ("improvement", want.tasks)
    assert doc["difference"]["ci_low"] == want.ci_low
    rows = read_ledger(ledger)  # validates: no attempt written twice
    assert len(rows) == doc["attempts_used"]


def test_the_two_sides_of_a_race_look_the_same_to_the_agent(tmp_path: Path) -> None:
    """The sandbox token was ``RACE_ID-candidate/HARNESS/START``: an agent read which side it was
    on from it (and, from the start marker's id, in which half of its batch it ran). It now carries
    neither the run id nor the start id, so nothing in it tells the sides apart."""
    ids = [f"t{i}" for i in range(4)]
    suite = make_suite(tmp_path / "s", {t: {"grader": "test -f done.txt"} for t in ids}, k=2)
    ledger = tmp_path / "race.db"
    race_id = f"test-{uuid.uuid4().hex}"
    show = 'echo "$TRIALBOOK_SANDBOX_TOKEN"'
    args = [
        "race", str(suite), "--baseline", show, "--candidate", f"{show}; touch done.txt",
        "--ledger", str(ledger), "--jobs", "2", "--sandbox", "process", "--race-id", race_id,
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    with sqlite3.connect(ledger) as db:
        rows = db.execute("SELECT run_id, transcript FROM attempts").fetchall()
    seen: dict[str, set[tuple[int, ...]]] = {}
    for run_id, kept in rows:
        token = (tmp_path / kept / "agent.stdout").read_text().strip()
        start = kept.rsplit(".", 1)[-1]
        for giveaway in (race_id, "baseline", "candidate", run_id):
            assert giveaway not in token, (giveaway, token)
        key, _harness, attempt = token.split("/")
        assert attempt != start, token
        seen.setdefault(run_id, set()).add((len(key), len(attempt)))
    assert len(seen) == 2
    assert len({frozenset(shapes) for shapes in seen.values()}) == 1  # the same shape both sides
