"""The Ray executor on a local multi-node cluster in this process (``ray.cluster_utils.Cluster``:
a head and one added node, 1 CPU each), against the promises of a single machine: the same rows as a
local run, a lost node or worker gives an ``infra_error`` row and never a second run of the
attempt, nothing an agent started outlives its attempt, and a stopped run resumes to completion.

Ray writes only inside a temporary folder here (``RAY_TMPDIR``, the cluster's ``temp_dir``) and
runs without token auth (``RAY_AUTH_MODE=disabled``: nothing under ``~/.ray``); the cluster is shut
down at the end of the module, and a final test checks that no Ray process is left.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_suite
from trialbook.demo import SUITE_DIR, agent_material
from trialbook.harness import RunOptions, Tally, run_suite
from trialbook.harness.attempt._spec import AttemptResult, AttemptSpec, Budget
from trialbook.harness.sandbox._sweep import find_processes, run_key
from trialbook.ledger import LedgerStore
from trialbook.suite import LOCK_NAME, freeze, load_suite, write_lock

try:
    import ray
    from ray.cluster_utils import Cluster
except ImportError:  # pragma: no cover - the ray extra is installed wherever make test runs
    if os.environ.get("CI"):
        raise
    pytest.skip("the ray extra is not installed (pip install -e '.[ray]')", allow_module_level=True)

pytestmark = pytest.mark.ray

_FAST_DEATH = {
    # A removed node (its raylet gone: each check fails at once) is declared dead after 5 checks a
    # second apart, not Ray's default of about 15 s; a live raylet stalled by a loaded machine is
    # not (each check waits 5 s), since a head declared dead would abort this very process.
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 1000,
    "health_check_timeout_ms": 5000,
    "health_check_failure_threshold": 5,
}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head and one worker node, 1 CPU each; Ray's files in a temporary folder."""
    temp = Path(tempfile.mkdtemp(prefix="tb-ray-", dir="/tmp"))  # short: Ray's socket paths
    saved = {name: os.environ.get(name) for name in ("RAY_TMPDIR", "RAY_AUTH_MODE")}
    os.environ.update(RAY_TMPDIR=str(temp), RAY_AUTH_MODE="disabled")
    made = Cluster(initialize_head=False)
    try:
        made.add_node(
            num_cpus=1,
            temp_dir=str(temp / "ray"),
            include_dashboard=False,
            _system_config=_FAST_DEATH,
        )
        made.add_node(num_cpus=1)
        made.wait_for_nodes()
        ray.init(address=made.address, log_to_driver=False)
        yield made
    finally:
        ray.shutdown()
        made.shutdown()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        left = _ray_processes(temp)
        shutil.rmtree(temp, ignore_errors=True)
    assert not left, f"Ray processes left after the cluster's shutdown: {left}"


def _ray_processes(temp: Path, wait_s: float = 15) -> list[str]:
    """Command lines of the processes of the cluster whose files are in ``temp`` (raylets, GCS,
    workers), once they have had ``wait_s`` to exit."""
    end = time.monotonic() + wait_s
    while True:
        found = subprocess.run(
            ["pgrep", "-af", str(temp)], capture_output=True, text=True, check=False
        ).stdout.splitlines()
        if not found or time.monotonic() > end:
            return found
        time.sleep(0.2)


def _rows(ledger: Path, run_id: str) -> list[dict[str, Any]]:
    """The run's rows as written (the ``attempts`` table, without its row id)."""
    with sqlite3.connect(ledger) as conn:
        conn.row_factory = sqlite3.Row
        found = conn.execute("SELECT * FROM attempts WHERE run_id = ?", (run_id,)).fetchall()
    return [{k: r[k] for k in r.keys() if k != "id"} for r in found]  # noqa: SIM118 (a Row)


def _other_node(cluster: Cluster) -> Any:
    """The added (non-head) node."""
    return next(iter(cluster.worker_nodes))


def _wait_cpus(n: int, timeout_s: float = 30) -> None:
    end = time.monotonic() + timeout_s
    while ray.cluster_resources().get("CPU", 0) != n:
        assert time.monotonic() < end, f"the cluster did not get to {n} CPUs"
        time.sleep(0.1)


def _frozen_demo(root: Path) -> Path:
    shutil.copytree(SUITE_DIR, root, ignore=shutil.ignore_patterns(LOCK_NAME, "__pycache__"))
    suite = load_suite(root)
    write_lock(suite, freeze(suite))
    return root


def test_the_demo_suite_gives_the_rows_of_a_local_run(cluster: Cluster, tmp_path: Path) -> None:
    suite = _frozen_demo(tmp_path / "suite")
    ledger = tmp_path / "ledger.db"
    by: dict[str, list[dict[str, Any]]] = {}
    with agent_material(suite) as material:
        agent = shlex.join(
            [sys.executable, "-m", "trialbook.demo.agent", "candidate", str(material)]
        )
        for executor in ("local", "ray"):
            result = run_suite(
                RunOptions(
                    suite=suite,
                    agent=agent,
                    ledger=ledger,
                    system=f"demo-{executor}",
                    run_id=f"demo-{executor}",
                    jobs=2,
                    subset="smoke",
                    executor=executor,
                )
            )
            assert result.written == result.planned == 15  # 3 smoke tasks x k = 5
            by[executor] = _rows(ledger, result.run_id)

    def keyed(rows: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
        return {(r["task_id"], r["attempt_index"]): r for r in rows}

    local, remote = keyed(by["local"]), keyed(by["ray"])
    assert len(by["ray"]) == len(by["local"]) == len(local) == len(remote)
    assert remote.keys() == local.keys()
    # the same fields recorded, and the seeded simulator gives the same verdicts on the cluster
    assert {frozenset(k for k, v in r.items() if v is not None) for r in by["ray"]} == {
        frozenset(k for k, v in r.items() if v is not None) for r in by["local"]
    }
    for key, row in local.items():
        for field in ("passed", "status", "seed", "fixture_hash", "sandbox", "timed_out"):
            assert remote[key][field] == row[field], (key, field)
    assert all(r["status"] != "infra_error" for r in by["ray"])


def _where(spec: AttemptSpec) -> AttemptResult:
    """A stand-in worker: says where the worker found the fixture and oracle, and what is in them."""
    listing = sorted(p.relative_to(spec.fixture).as_posix() for p in spec.fixture.rglob("*"))
    secret = (spec.oracle / "answer.txt").read_text()
    text = f"{spec.fixture}\n{spec.oracle}\n{spec.harness}\n{','.join(listing)}\n{secret}\n"
    return AttemptResult(row={"where": True}, output={"where": text.encode()})


def _spec(fixture: Path, oracle: Path, **budget: float) -> AttemptSpec:
    from trialbook.suite import tree_hash

    return AttemptSpec(
        run_id="probe",
        start_id=1,
        task_id="t",
        attempt_index=0,
        agent="true",
        prompt="p",
        fixture=fixture,
        fixture_hash=tree_hash(fixture, "fixture"),
        oracle=oracle,
        oracle_hash=tree_hash(oracle, "oracle"),
        grader="true",
        budget=Budget(
            timeout_s=budget.get("timeout_s", 5),
            grader_timeout_s=budget.get("grader_timeout_s", 5),
            seed=0,
            temperature=None,
        ),
        tier="process",
        grace_s=budget.get("grace_s", 0.1),
        harness="driver-stamp",
    )


def test_fixtures_and_oracles_reach_the_worker_through_the_object_store(
    cluster: Cluster, tmp_path: Path
) -> None:
    from trialbook.harness.executors._ray import RayExecutor

    fixture, oracle = tmp_path / "fixture", tmp_path / "oracle"
    (fixture / "pkg").mkdir(parents=True)
    (fixture / "pkg" / "a.py").write_text("A = 1\n")
    (fixture / "README").write_text("read me\n")
    oracle.mkdir()
    (oracle / "answer.txt").write_text("forty-two")
    executor = RayExecutor(2)
    try:
        result = executor.submit(_where, _spec(fixture, oracle)).result(timeout=60)
    finally:
        executor.shutdown()
    found_fixture, found_oracle, harness, listing, secret = (
        result.output["where"].decode().splitlines()
    )
    # the worker's own copies, in its scratch folder, never the driver's folders
    assert not Path(found_fixture).is_relative_to(tmp_path)
    assert not Path(found_oracle).is_relative_to(tmp_path)
    assert listing == "README,pkg,pkg/a.py"
    assert secret == "forty-two"
    # the attempt's processes carry the worker's stamp (its node's sweeps find them), not the driver's
    assert harness != "driver-stamp"


def _sleeper(spec: AttemptSpec) -> AttemptResult:
    """A stand-in worker that never comes back in time (a task stuck on the cluster)."""
    time.sleep(60)
    return AttemptResult(row=None)


def test_a_task_without_a_result_in_time_is_lost_not_waited_for(
    cluster: Cluster, tmp_path: Path
) -> None:
    from trialbook.harness.executors._ray import RayExecutor

    (tmp_path / "f").mkdir()
    spec = _spec(tmp_path / "f", tmp_path / "o", timeout_s=0.5, grader_timeout_s=0.5, grace_s=0.1)
    executor = RayExecutor(1, pending_s=1.0)
    try:
        began = time.monotonic()
        result = executor.submit(_sleeper, spec).result(timeout=30)
        waited = time.monotonic() - began
    finally:
        executor.shutdown()
    assert result.row is not None
    assert result.row["status"] == "infra_error"
    assert "no result from the Ray cluster within 2.2 s" in str(result.row["error"])
    assert waited < 20  # budget (0.5 + 0.5 + 2 x 0.1) + 1 s pending, then given up


_LOGGED = (
    'echo "$TRIALBOOK_TASK_ID $TRIALBOOK_ATTEMPT" >> {log}; sleep {sleep}; echo fixed > answer.txt'
)


def _suite(root: Path, n: int, k: int) -> Path:
    tasks = {
        f"t{i}": {
            "prompt": "write answer.txt",
            "grader": "test -f answer.txt",
            "fixture": {"f": "x"},
        }
        for i in range(n)
    }
    return make_suite(root, tasks, k=k, timeout_s=30)


class _Seen:
    """A progress sink that counts rows and can act on the n-th."""

    def __init__(self, on: int = 0, then: Any = None) -> None:
        self.rows: list[Mapping[str, object]] = []
        self.on, self.then = on, then

    def begin(self, run_id: str, total: int, done: Tally, notes: Sequence[str]) -> None:
        self.total = total

    def attempt(self, row: Mapping[str, object]) -> None:
        self.rows.append(row)
        if self.then is not None and len(self.rows) == self.on:
            self.then()


def _highest(rows: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    """Each attempt's row of its highest retry (the one that counts)."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for r in rows:
        key = (r["task_id"], r["attempt_index"])
        if key not in out or (r["retry"] or 0) > (out[key]["retry"] or 0):
            out[key] = r
    return out


def test_a_node_removed_mid_run_gives_infra_error_rows_and_resume_completes_the_run(
    cluster: Cluster, tmp_path: Path
) -> None:
    log = tmp_path / "starts.log"
    suite = _suite(tmp_path / "suite", n=3, k=2)
    ledger = tmp_path / "ledger.db"
    agent = _LOGGED.format(log=shlex.quote(str(log)), sleep=4)
    options = RunOptions(
        suite=suite,
        agent=agent,
        ledger=ledger,
        run_id="node-lost",
        sandbox="process",
        executor="ray",
    )
    runner, outcome = _start(  # both nodes busy
        options,
        lambda: log.exists() and len(log.read_text().splitlines()) >= 2,
        "the first two attempts did not start",
    )
    try:
        cluster.remove_node(_other_node(cluster))
        runner.join(timeout=120)
        assert not runner.is_alive(), "the run hung after its node was removed"
    finally:
        cluster.add_node(num_cpus=1)  # the next tests get their two nodes back
        _wait_cpus(2)
    result = outcome["result"]
    rows = _rows(ledger, "node-lost")
    keys = [(r["task_id"], r["attempt_index"]) for r in rows]
    assert len(keys) == len(set(keys)) == result.written == 6  # one row per attempt
    lost = [r for r in rows if r["status"] == "infra_error"]
    assert len(lost) == 1
    assert "the Ray cluster lost the attempt" in lost[0]["error"]
    assert lost[0]["lost"] == 1  # the harness vouches for the loss: a resume runs it again
    assert all(r["passed"] for r in rows if r["status"] != "infra_error")
    # no attempt ran twice: each started exactly once, the lost one included
    starts = collections.Counter(log.read_text().splitlines())
    assert sorted(starts) == sorted(f"{t} {i}" for t, i in keys)
    assert set(starts.values()) == {1}
    assert not find_processes(f"{run_key('node-lost')}/", prefix=True)

    # the resume completes the run: the lost attempt again, as retry 1, on the cluster
    resume = RunOptions(suite=None, agent=None, ledger=ledger, resume="node-lost", executor="ray")
    second = run_suite(resume)
    assert (second.written, second.reruns) == (1, 1)
    rows = _rows(ledger, "node-lost")
    assert len(rows) == 6 + 1  # the original rows plus the re-run
    retries = [(r["task_id"], r["attempt_index"], r["retry"] or 0) for r in rows]
    assert len(set(retries)) == len(retries)  # no duplicate
    again = _highest(rows)
    assert len(again) == 6
    assert all(r["status"] == "passed" for r in again.values())  # each a real outcome
    (rerun,) = [r for r in rows if r["retry"]]
    assert (rerun["task_id"], rerun["attempt_index"], rerun["retry"]) == (
        lost[0]["task_id"],
        lost[0]["attempt_index"],
        1,
    )
    ran = collections.Counter(log.read_text().splitlines())
    assert ran[f"{rerun['task_id']} {rerun['attempt_index']}"] == 2  # once lost, once re-run
    assert sum(ran.values()) == 7
    assert run_suite(resume).written == 0  # a second resume re-runs nothing


_DOUBLE_FORK = """
import os, sys, time
pids = sys.argv[1]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(pids + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(pids + ".tmp", pids)
        time.sleep(120)
    os._exit(0)
time.sleep(120)
"""


def _start(
    options: RunOptions, started: Callable[[], bool], what: str
) -> tuple[threading.Thread, dict[str, Any]]:
    """``run_suite(options)`` in a thread (its result lands in the dict as ``result``), returned
    once ``started()`` holds, within 60 s."""
    outcome: dict[str, Any] = {}
    runner = threading.Thread(target=lambda: outcome.update(result=run_suite(options)))
    runner.start()
    end = time.monotonic() + 60
    while not started():
        assert time.monotonic() < end, what
        time.sleep(0.05)
    return runner, outcome


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _attempt_workers() -> list[int]:
    """Pids of the Ray worker processes running an attempt now (their title names the task)."""
    found = subprocess.run(
        ["pgrep", "-f", "^ray::trialbook-attempt"], capture_output=True, text=True, check=False
    )
    return [int(p) for p in found.stdout.split()]


def test_a_worker_killed_mid_attempt_leaves_no_agent_process(
    cluster: Cluster, tmp_path: Path
) -> None:
    script, pids = tmp_path / "agent.py", tmp_path / "grandchild.pid"
    script.write_text(_DOUBLE_FORK)
    suite = _suite(tmp_path / "suite", n=1, k=1)
    ledger = tmp_path / "ledger.db"
    agent = shlex.join([sys.executable, str(script), str(pids)])
    options = RunOptions(
        suite=suite,
        agent=agent,
        ledger=ledger,
        run_id="worker-lost",
        sandbox="process",
        executor="ray",
    )
    runner, _ = _start(options, pids.exists, "the agent did not start")
    grandchild = int(pids.read_text())
    assert _alive(grandchild)
    workers = _attempt_workers()
    assert len(workers) == 1, workers
    os.kill(workers[0], signal.SIGKILL)
    runner.join(timeout=60)
    assert not runner.is_alive(), "the run hung after its worker was killed"
    end = time.monotonic() + 10
    while _alive(grandchild) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _alive(grandchild), "the agent's setsid'd grandchild outlived its worker"
    assert not find_processes(f"{run_key('worker-lost')}/", prefix=True)
    (row,) = _rows(ledger, "worker-lost")
    assert row["status"] == "infra_error"
    assert "its worker process died" in row["error"]


def test_a_task_cancelled_by_someone_else_is_lost_and_resumed_as_retry_1(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Something other than the run (here the test, with ``ray.cancel`` on the task's ObjectRef)
    cancels an attempt's task: an ``infra_error`` row marked lost, no duplicate, and a resume runs
    it again as retry 1."""
    from trialbook.harness.executors._ray import RayExecutor

    made: list[RayExecutor] = []
    init = RayExecutor.__init__

    def keep(self: RayExecutor, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(RayExecutor, "__init__", keep)
    first_run, log = tmp_path / "first", tmp_path / "starts.log"
    suite = _suite(tmp_path / "suite", n=1, k=1)
    ledger = tmp_path / "ledger.db"
    # the first run of the attempt waits to be cancelled; its re-run answers at once
    script = tmp_path / "agent.sh"  # a program file: its digest is what a resume checks
    script.write_text(
        f'echo "$TRIALBOOK_TASK_ID $TRIALBOOK_ATTEMPT" >> {shlex.quote(str(log))}\n'
        f"if [ ! -e {shlex.quote(str(first_run))} ]; then touch {shlex.quote(str(first_run))}; "
        "sleep 60; fi\necho fixed > answer.txt\n"
    )
    agent = shlex.join(["sh", str(script)])
    options = RunOptions(
        suite=suite,
        agent=agent,
        ledger=ledger,
        run_id="cancelled",
        sandbox="process",
        executor="ray",
    )
    runner, _ = _start(options, first_run.exists, "the agent did not start")
    (executor,) = made
    (ref,) = list(executor._flights)
    ray.cancel(ref, force=True)  # not the run's own cancel
    runner.join(timeout=60)
    assert not runner.is_alive(), "the run hung after its task was cancelled"
    (row,) = _rows(ledger, "cancelled")
    assert row["status"] == "infra_error"
    assert row["lost"] == 1
    assert "the Ray cluster lost the attempt" in row["error"]
    end = time.monotonic() + 15  # the node's watchdog sweeps what the killed worker left
    while find_processes(f"{run_key('cancelled')}/", prefix=True) and time.monotonic() < end:
        time.sleep(0.1)
    assert not find_processes(f"{run_key('cancelled')}/", prefix=True)

    second = run_suite(
        RunOptions(suite=None, agent=None, ledger=ledger, resume="cancelled", executor="ray")
    )
    assert (second.written, second.reruns) == (1, 1)
    rows = _rows(ledger, "cancelled")
    assert [(r["retry"] or 0, r["status"]) for r in rows] == [(0, "infra_error"), (1, "passed")]
    assert log.read_text().splitlines() == ["t0 0", "t0 0"]  # lost once, run again once


def test_a_stopped_run_resumes_to_completion_on_the_cluster(
    cluster: Cluster, tmp_path: Path
) -> None:
    log = tmp_path / "starts.log"
    suite = _suite(tmp_path / "suite", n=3, k=2)
    ledger = tmp_path / "ledger.db"
    agent = _LOGGED.format(log=shlex.quote(str(log)), sleep=1)
    stop = threading.Event()
    first = run_suite(
        RunOptions(
            suite=suite,
            agent=agent,
            ledger=ledger,
            run_id="resumed",
            sandbox="process",
            executor="ray",
        ),
        progress=_Seen(on=2, then=stop.set),
        stop=stop,
    )
    assert first.interrupted
    assert 2 <= first.written < 6
    seen = _Seen()
    second = run_suite(
        RunOptions(suite=None, agent=None, ledger=ledger, resume="resumed", executor="ray"),
        progress=seen,
    )
    assert not second.interrupted
    rows = _rows(ledger, "resumed")
    keys = [(r["task_id"], r["attempt_index"]) for r in rows]
    assert len(keys) == len(set(keys)) == 6 == first.written + second.written
    assert all(r["passed"] for r in rows)
    assert seen.total == 6
    assert len(seen.rows) == second.written
    with LedgerStore(ledger) as store:
        status = store.run("resumed")
    assert status is not None
    assert status.status == "finished"
    # the attempts cut off by the stop were started again, each as a recorded new start
    conn = sqlite3.connect(ledger)
    try:
        marked = collections.Counter(
            f"{t} {i}"
            for t, i in conn.execute(
                "SELECT task_id, attempt_index FROM attempt_starts WHERE run_id = 'resumed'"
            )
        )
    finally:
        conn.close()
    assert set(marked) == {f"{t} {i}" for t, i in keys}
    assert sum(marked.values()) == 6 + second.cut_off
    assert sum(n == 2 for n in marked.values()) == second.cut_off  # each cut-off once again
    # every agent ran; one cut off while its task was still on its way to a worker never got to
    # its first line, so the agents' own log holds at most the recorded starts
    ran = collections.Counter(log.read_text().splitlines())
    assert set(ran) == set(marked)
    assert all(ran[key] <= marked[key] for key in marked)


# every fixture shape a suite may hold: the workspace the grader sees is the fixture exactly
_SHAPES: dict[str, dict[str, bytes]] = {
    "empty": {},
    "one-file": {"a.txt": b"one\n"},
    "nested": {"pkg/sub/deep.py": b"X = 1\n", "pkg/__init__.py": b"", "README": b"r\n"},
    "large": {"blob.bin": bytes(range(256)) * (5 * 4096)},  # 5 MiB
}
# the grader lists every file of the workspace with its SHA-256 and compares the listing with the
# one the test computed from the files it wrote (the oracle; a header line keeps it non-empty)
_LISTING = (
    "{ echo listing:; find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum; } "
    '| cmp -s - "$TRIALBOOK_ORACLE_DIR/listing"'
)


def _listing(files: Mapping[str, bytes]) -> str:
    import hashlib

    lines = [f"{hashlib.sha256(files[rel]).hexdigest()}  ./{rel}" for rel in sorted(files)]
    return "".join(f"{line}\n" for line in ["listing:", *lines])


def test_every_fixture_shape_gives_the_same_rows_on_both_executors(
    cluster: Cluster, tmp_path: Path
) -> None:
    tasks = {
        name: {"grader": _LISTING, "oracle": {"listing": _listing(f)}}
        for name, f in _SHAPES.items()
    }
    suite = make_suite(tmp_path / "suite", tasks, k=1, freeze=False)
    for name, files in _SHAPES.items():
        for rel, data in files.items():
            path = suite / "tasks" / name / "fixture" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    frozen = load_suite(suite)
    write_lock(frozen, freeze(frozen))
    ledger = tmp_path / "ledger.db"
    by: dict[str, dict[str, dict[str, Any]]] = {}
    for executor in ("local", "ray"):
        result = run_suite(
            RunOptions(
                suite=suite,
                agent="true",
                ledger=ledger,
                system=executor,
                run_id=f"shapes-{executor}",
                jobs=2,
                executor=executor,
            )
        )
        assert result.written == len(_SHAPES)
        by[executor] = {r["task_id"]: r for r in _rows(ledger, result.run_id)}
    for name in _SHAPES:
        local, remote = by["local"][name], by["ray"][name]
        assert (local["status"], local["error"]) == ("passed", None), (name, local["error"])
        for field in ("status", "passed", "error", "fixture_hash"):
            assert remote[field] == local[field], (name, field, remote["error"])


def test_a_fixture_with_a_symbolic_link_is_refused_before_either_executor_runs(
    cluster: Cluster, tmp_path: Path
) -> None:
    from trialbook.errors import SuiteError

    suite = make_suite(tmp_path / "suite", {"t": {"fixture": {"a.txt": "a"}}}, k=1, freeze=False)
    (suite / "tasks" / "t" / "fixture" / "link").symlink_to("a.txt")
    messages = []
    for executor in ("local", "ray"):
        with pytest.raises(SuiteError, match="symbolic links are not allowed") as caught:
            run_suite(
                RunOptions(
                    suite=suite,
                    agent="true",
                    ledger=tmp_path / f"{executor}.db",
                    system=executor,
                    run_id=f"link-{executor}",
                    executor=executor,
                )
            )
        messages.append(str(caught.value))
        assert not (tmp_path / f"{executor}.db").exists() or not _rows(
            tmp_path / f"{executor}.db", f"link-{executor}"
        )
    assert messages[0] == messages[1]


def _tiers_here() -> list[Any]:
    from tests.harness.test_run import _tier_param

    return [_tier_param("process"), _tier_param("bwrap"), "container"]


def _noting_node(spec: AttemptSpec) -> AttemptResult:
    """``run_attempt`` as the driver submits it, on the worker; the id of the Ray node that ran it
    kept beside the attempt's raw output (``ray-node``)."""
    from trialbook.harness.attempt import run_attempt

    result = run_attempt(spec)
    node = ray.get_runtime_context().get_node_id().encode()
    return dataclasses.replace(result, output={**result.output, "ray-node": node})


@pytest.mark.parametrize("tier", _tiers_here())
def test_attempts_on_the_cluster_reach_the_drivers_model_gateway(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tier: str
) -> None:
    """Each attempt, on whichever node, calls the model through the driver's gateway (bwrap and
    container: by a relay its worker keeps on its node, docs/gateway.md); the rows carry the
    gateway's figures, and once the run is over the relays are gone.

    The first two attempts meet at the fake upstream's barrier (each call answered once both
    have arrived), so they ran at once, and with one CPU a node, on the two nodes: each attempt
    says which node ran it (``_noting_node``), and the added node is among them."""
    import openai

    from tests.gateway.fake import FakeUpstream, Script
    from tests.harness._containers import PYTHON, container_engine
    from trialbook.harness import ModelOptions
    from trialbook.harness.run import _driver
    from trialbook.ledger import ledger_rows, read_ledger

    monkeypatch.setattr(_driver, "run_attempt", _noting_node)
    agent_py = (
        "import openai\n"
        "openai.OpenAI(max_retries=0).chat.completions.create(model='barrier-2-nodes', messages=[])\n"
        "open('ok', 'w').write('done')\n"
    )
    agent, extra = "python agent.py", ""
    if tier == "container":  # the clients of this test's own site-packages, in the Python image
        container_engine(PYTHON)
        site = Path(openai.__file__).resolve().parents[1]
        agent, extra = f"PYTHONPATH={site} python3 agent.py", f'image = "{PYTHON}"\n'
    suite = make_suite(
        tmp_path / "suite",
        {f"t{i}": {"grader": "test -f ok", "fixture": {"agent.py": agent_py}} for i in range(4)},
        k=1,
        timeout_s=60,
        extra=extra,
    )
    monkeypatch.setenv("TB_TEST_RAY_KEY", "sk-real-ray-key-" + "Q" * 20)
    relays = set(Path(tempfile.gettempdir()).glob("tb-gw-relay-*"))
    upstream = FakeUpstream(Script()).start()
    try:
        result = run_suite(
            RunOptions(
                suite=suite,
                agent=agent,
                ledger=tmp_path / "ledger.db",
                system="gw",
                jobs=2,
                executor="ray",
                sandbox=tier,
                model=ModelOptions(
                    upstream=upstream.url,
                    key_env="TB_TEST_RAY_KEY",
                    accept_open_network=tier == "process",
                ),
            )
        )
        made = set(Path(tempfile.gettempdir()).glob("tb-gw-relay-*")) - relays
    finally:
        upstream.stop()
    assert bool(made) == (tier != "process"), "a sandboxed attempt went through no relay"
    # a relay stops once its gateway refuses a connection (the run is over): it asks every 2 s
    deadline = time.monotonic() + 30
    while any(folder.exists() for folder in made) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = [folder for folder in made if folder.exists()]
    for folder in left:
        shutil.rmtree(folder, ignore_errors=True)
    assert not left, "a relay outlived its run's gateway"
    rows = list(ledger_rows(read_ledger(tmp_path / "ledger.db")))
    assert result.written == 4
    s = upstream.script
    for row in rows:
        assert row["passed"] is True, row.get("error")
        assert row["model_calls"] == 1
        assert row["tokens_in"] == s.input + s.cache_read
        assert row["tokens_out"] == s.output
        assert row["sandbox"] == tier
    nodes = {(tmp_path / row["transcript"] / "ray-node").read_text() for row in rows}
    assert _other_node(cluster).node_id in nodes, "no attempt ran on the added node"
    assert nodes <= {node.node_id for node in (cluster.head_node, _other_node(cluster))}
