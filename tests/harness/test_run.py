"""The harness against adversarial agents, in both sandbox tiers: hangs, escaping children, secret
readers, oracle readers, network callers; the usage file, the grader's timeout, a stale lock."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import tempfile
import threading
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT, make_suite
from trialbook.cli import main
from trialbook.harness import RunOptions, run_suite
from trialbook.harness.sandbox._sandbox import bwrap_problem
from trialbook.harness.sandbox._sweep import TOKEN_VAR, find_processes, run_key
from trialbook.ledger import ledger_rows, read_ledger


def _tier_param(tier: str) -> Any:
    if tier == "bwrap" and bwrap_problem():
        if os.environ.get("CI"):
            return pytest.param(
                tier, marks=pytest.mark.xfail(reason=str(bwrap_problem()), strict=True, run=False)
            )
        return pytest.param(
            tier, marks=pytest.mark.skip(reason=f"{bwrap_problem()} (CI installs it)")
        )
    return tier


TIERS = [_tier_param("process"), _tier_param("bwrap")]


def test_bwrap_works_in_ci() -> None:
    """CI installs bubblewrap (.ci/run): the bwrap tier must be tested there, not skipped."""
    if os.environ.get("CI"):
        assert bwrap_problem() is None


def unique_run_id() -> str:
    """A run id of this test alone: processes are swept by run id across the machine, so two copies
    of the suite running at once (two worktrees, say) must never share one."""
    return f"test-{uuid.uuid4().hex}"


def at_runtime(path: Path) -> str:
    """A shell word that names ``path`` only when the command runs: a hostile agent that finds a
    path by itself, which no pre-flight can see (a path named outright is refused before the run
    when the sandbox hides it)."""
    return f'"$(printf %s {path})"'


def unique_seconds() -> str:
    """A ``sleep`` duration no other test (nor another copy of the suite) uses: a test finds its
    agent's processes by it among all the machine's command lines."""
    n = uuid.uuid4().int
    return f"{900 + n % 100}.{n // 100 % 10**6:06d}"


def run(
    tmp_path: Path, tasks: dict[str, dict[str, Any]], agent: str, tier: str, **kw: Any
) -> list[dict[str, Any]]:
    suite = make_suite(
        tmp_path / "suite",
        tasks,
        k=kw.pop("k", 1),
        timeout_s=kw.pop("timeout_s", 10),
        extra=kw.pop("extra", ""),
    )
    ledger = tmp_path / "out" / "ledger.db"
    kw.setdefault("run_id", unique_run_id())
    kw.setdefault("grace_s", 0.5)
    result = run_suite(
        RunOptions(suite=suite, agent=agent, ledger=ledger, system="test", sandbox=tier, **kw)
    )
    assert not result.interrupted
    rows = list(ledger_rows(read_ledger(ledger)))
    assert not find_processes(f"{run_key(result.run_id)}/", prefix=True)
    return rows


def carrying_tokens_of(harnesses: Iterable[int]) -> list[int]:
    """Live processes carrying a sandbox token of a harness with one of these pids (run in another
    process, whose run keys this one cannot compute: ``RUN_KEY/nsNS-PID-START/START_KEY``)."""
    stamps = {f"-{pid}-" for pid in harnesses}
    needle = f"{TOKEN_VAR}=".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            environ = Path(entry.path, "environ").read_bytes()
            state = Path(entry.path, "stat").read_text().split(") ")[-1][0]
        except OSError:
            continue
        for var in environ.split(b"\0"):
            if var.startswith(needle) and state != "Z":
                parts = var[len(needle) :].decode(errors="replace").split("/")
                if len(parts) >= 3 and any(s in f"{parts[1]}-" for s in stamps):
                    found.append(int(entry.name))
    return found


def transcript(tmp_path: Path, row: dict[str, Any], name: str = "agent.stdout") -> str:
    """A kept output stream; empty streams are not written (and a row with none has no path)."""
    if row["transcript"] is None:
        return ""
    path = tmp_path / "out" / str(row["transcript"]) / name
    return path.read_text() if path.exists() else ""


def alive_with(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker``."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes().replace(b"\0", b" ")
                state = Path(f"/proc/{entry.name}/stat").read_text().split(") ")[-1][0]
            except OSError:
                continue
            if marker.encode() in cmdline and state != "Z":
                found.append(int(entry.name))
    return found


CHECK = {"grader": "test -f done.txt"}


@pytest.mark.parametrize("tier", TIERS)
def test_a_hanging_agent_is_timed_out_and_killed(tmp_path: Path, tier: str) -> None:
    hang = unique_seconds()
    (row,) = run(tmp_path, {"t": CHECK}, f"touch done.txt; sleep {hang}", tier, timeout_s=1)
    assert row["timed_out"] is True
    assert row["passed"] is False
    assert row["status"] == "timed_out"
    assert 1.0 <= row["elapsed_s"] < 3.0
    assert "timeout" in row["error"]
    assert not alive_with(hang)


@pytest.mark.parametrize("tier", TIERS)
def test_children_that_escape_with_setsid_and_double_forks_are_killed(
    tmp_path: Path, tier: str
) -> None:
    a, b, c = unique_seconds(), unique_seconds(), unique_seconds()
    agent = (
        f"setsid sh -c 'sleep {a}' & "
        f"( ( sleep {b} & ) & ) ; "
        f"nohup sh -c 'cd /; exec sleep {c}' >/dev/null 2>&1 & "
        "touch done.txt"
    )
    (row,) = run(tmp_path, {"t": CHECK}, agent, tier)
    assert row["passed"] is True
    assert row["timed_out"] is False
    if tier == "process":  # in bwrap they die with the sandbox's pid namespace, before any sweep
        assert "left behind were killed" in row["error"]
    for marker in (a, b, c):
        assert not alive_with(marker), marker


@pytest.mark.parametrize("tier", TIERS)
def test_escaping_children_of_a_hanging_agent_die_with_it(tmp_path: Path, tier: str) -> None:
    a, b, c = unique_seconds(), unique_seconds(), unique_seconds()
    agent = f"setsid sh -c 'trap \"\" TERM; sleep {a}' & ( ( sleep {b} & ) & ); sleep {c}"
    (row,) = run(tmp_path, {"t": CHECK}, agent, tier, timeout_s=1)
    assert row["timed_out"] is True
    for marker in (a, b, c):
        assert not alive_with(marker), marker


@pytest.mark.parametrize("tier", TIERS)
def test_the_harness_environment_does_not_reach_the_agent(
    tmp_path: Path, tier: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TB_TEST_SECRET", "hunter2-do-not-leak")
    agent = (
        "env; echo ---; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null; "
        "echo ---; echo TRIALBOOK_TASK_ID=$TRIALBOOK_TASK_ID ATTEMPT=$TRIALBOOK_ATTEMPT SEED=$TRIALBOOK_SEED; "
        "cat $TRIALBOOK_PROMPT_FILE; touch done.txt"
    )
    (row,) = run(tmp_path, {"t": {**CHECK, "prompt": "the prompt text"}}, agent, tier)
    out = transcript(tmp_path, row)
    env_part, proc_part, rest = out.split("---\n")
    assert "hunter2" not in env_part
    assert "TRIALBOOK_TASK_ID=t ATTEMPT=0 SEED=0" in rest
    assert "the prompt text" in rest
    for name in ("PATH", "HOME", "LANG", "TRIALBOOK_USAGE_FILE", "TRIALBOOK_TEMPERATURE"):
        assert f"\n{name}=" in "\n" + env_part
    if tier == "bwrap":  # its own pid namespace: the harness's /proc/<pid>/environ is not there
        assert "hunter2" not in proc_part


AGENT_ENV = {
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "PYTHONDONTWRITEBYTECODE",
    "TMPDIR",
    "TRIALBOOK_PROMPT_FILE",
    "TRIALBOOK_TASK_ID",
    "TRIALBOOK_ATTEMPT",
    "TRIALBOOK_SEED",
    "TRIALBOOK_TEMPERATURE",
    "TRIALBOOK_USAGE_FILE",
    "TRIALBOOK_SANDBOX_TOKEN",
    "PWD",  # set by /bin/sh itself
}
"""The names of the agent's environment: the contract of docs/harness.md, nothing of the caller's."""

PLANTED = {
    "SSL_CERT_FILE": "/caller/certs.pem",
    "AWS_SECRET_ACCESS_KEY": "caller-secret",
    "PYTHONPATH": "/caller/site",
    "TB_CALLER_TOKEN": "caller-token",
}


@pytest.mark.parametrize("tier", TIERS)
def test_the_agents_environment_is_exactly_the_contract(
    tmp_path: Path, tier: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    (row,) = run(tmp_path, {"t": CHECK}, "env | cut -d= -f1; touch done.txt", tier)
    names = set(transcript(tmp_path, row).split())
    assert names == AGENT_ENV


@pytest.mark.parametrize("tier", TIERS)
def test_passed_env_is_the_only_way_in(
    tmp_path: Path, tier: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pass_env carries its own name and value; the caller's other variables (and the caller's own
    value of the passed name) stay out."""
    monkeypatch.setenv("TB_API_KEY", "the-callers-value")
    monkeypatch.setenv("TB_OTHER_SECRET", "not-passed")
    (row,) = run(
        tmp_path,
        {"t": CHECK},
        "echo key=$TB_API_KEY other=$TB_OTHER_SECRET; env | cut -d= -f1; touch done.txt",
        tier,
        pass_env={"TB_API_KEY": "the-passed-value"},
    )
    first, *names = transcript(tmp_path, row).splitlines()
    assert first == "key=the-passed-value other="
    assert set(names) == AGENT_ENV | {"TB_API_KEY"}


@pytest.mark.parametrize("tier", TIERS)
def test_an_agent_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path, tier: str) -> None:
    hang = unique_seconds()
    agent = f"trap '' TERM; touch done.txt; sleep {hang}"  # sleep inherits the ignored TERM
    rows: list[dict[str, Any]] = []
    harness = threading.Thread(
        target=lambda: rows.extend(run(tmp_path, {"t": CHECK}, agent, tier, timeout_s=1)),
        daemon=True,
    )
    harness.start()
    # A guard against a hang, not a timing check: the attempt takes about 1.5 s, and without the
    # SIGKILL after the grace the harness would wait for the agent forever.
    harness.join(60)
    outlived = alive_with(hang)
    for pid in outlived:
        os.kill(pid, signal.SIGKILL)
    harness.join()
    assert not outlived, "the agent outlived its timeout and grace: no SIGKILL came"
    (row,) = rows
    assert row["timed_out"] is True
    assert row["passed"] is False
    assert row["status"] == "timed_out"
    assert row["elapsed_s"] >= 1.0


@pytest.fixture
def outside_tmp() -> Any:
    """A scratch folder outside /tmp: the bwrap tier gives every command a fresh /tmp, which would
    hide a suite or ledger under /tmp whether or not the harness hides them itself. Under
    ``$TRIALBOOK_TEST_WORK`` when set (an unprivileged user's run, test_as_a_user.py)."""
    base = Path(os.environ.get("TRIALBOOK_TEST_WORK") or ROOT / ".test-work")
    base.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=base))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("tier", TIERS)
def test_the_oracle_by_the_suites_absolute_path(outside_tmp: Path, tier: str) -> None:
    tmp_path = outside_tmp
    oracle = tmp_path / "suite" / "tasks" / "t" / "oracle" / "answer.txt"
    agent = f"cat {at_runtime(oracle)} > stolen.txt 2>/dev/null; cat stolen.txt"
    grader = (
        'grep -q "the-answer-42" stolen.txt && cmp -s stolen.txt "$TRIALBOOK_ORACLE_DIR/answer.txt"'
    )
    (row,) = run(
        tmp_path,
        {"t": {"grader": grader, "oracle": {"answer.txt": "the-answer-42\n"}}},
        agent,
        tier,
    )
    if tier == "bwrap":
        assert row["passed"] is False
        assert "the-answer-42" not in transcript(tmp_path, row)
    else:  # the process tier does not hide files (docs/harness.md says so)
        assert row["passed"] is True


@pytest.mark.parametrize("tier", TIERS)
def test_the_ledger_and_transcripts_are_hidden_in_bwrap(outside_tmp: Path, tier: str) -> None:
    tmp_path = outside_tmp
    out = tmp_path / "out"
    (out / "notes.txt").parent.mkdir(parents=True)
    (out / "notes.txt").write_text("beside the ledger")
    agent = f"ls -a {out} {at_runtime(out / 'ledger.transcripts')} 2>&1; touch done.txt"
    (row,) = run(tmp_path, {"t": CHECK}, agent, tier)
    listing = transcript(tmp_path, row)
    assert "notes.txt" in listing  # exactly the ledger's own files are hidden, not its folder
    if tier == "bwrap":
        for name in ("ledger.db", "ledger.db-wal", "ledger.db-shm", "ledger.transcripts/"):
            assert name.rstrip("/") + "\n" not in listing, listing
        assert "No such file or directory" in listing
    else:
        assert "ledger.db\n" in listing


@pytest.fixture
def loopback_server() -> Any:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            conn.sendall(b"hello-from-host\n")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


CONNECT = (
    'python -c "import socket,sys\n'
    "try:\n s=socket.create_connection(('127.0.0.1', {port}), timeout=2); print(s.recv(64).decode().strip())\n"
    "except OSError as e: print('refused', e)\" ; touch done.txt"
)


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("network", [False, True])
def test_a_loopback_server_is_unreachable_without_opt_in(
    tmp_path: Path, tier: str, network: bool, loopback_server: int
) -> None:
    task = {**CHECK, "toml": ["network = true"] if network else []}
    (row,) = run(tmp_path, {"t": task}, CONNECT.format(port=loopback_server), tier)
    out = transcript(tmp_path, row)
    if tier == "bwrap" and not network:
        assert "refused" in out
        assert "hello-from-host" not in out
    else:  # the process tier has no network isolation; a task that opts in gets the network
        assert "hello-from-host" in out


@pytest.mark.parametrize("tier", TIERS)
def test_usage_lines_are_summed_into_the_row(tmp_path: Path, tier: str) -> None:
    agent = (
        'echo \'{"tokens_in": 100, "tokens_out": 7, "cost": 0.25, "tool_calls": 2}\' >> $TRIALBOOK_USAGE_FILE; '
        'echo \'{"tokens_in": 50, "cost": 0.5, "helper_calls": 1, "cache_hit": true}\' >> $TRIALBOOK_USAGE_FILE; '
        "echo 'not json' >> $TRIALBOOK_USAGE_FILE; "
        "echo '{\"cots\": 1}' >> $TRIALBOOK_USAGE_FILE; touch done.txt"
    )
    (row,) = run(tmp_path, {"t": CHECK}, agent, tier)
    assert (row["tokens_in"], row["tokens_out"], row["cost"], row["tool_calls"]) == (
        150,
        7,
        0.75,
        2,
    )
    assert row["helper_calls"] == 1
    assert row["cache_hit"] is True
    assert "usage line 3: not JSON" in row["error"]
    assert "usage line 4: unknown key 'cots'" in row["error"]


def test_no_usage_means_unknown_not_zero(tmp_path: Path) -> None:
    (row,) = run(tmp_path, {"t": CHECK}, "touch done.txt", "process")
    assert row["cost"] is None
    assert row["tokens_in"] is None
    assert row["cache_hit"] is None


@pytest.mark.parametrize("tier", TIERS)
def test_the_graders_own_timeout(tmp_path: Path, tier: str) -> None:
    hang = unique_seconds()
    task = {"grader": f"sleep {hang}", "toml": ["grader_timeout_s = 1"]}
    (row,) = run(tmp_path, {"t": task}, "true", tier)
    assert row["passed"] is False
    assert row["timed_out"] is False
    assert row["status"] == "failed"
    assert "grader stopped at its 1 s timeout" in row["error"]
    assert not alive_with(hang)


@pytest.mark.parametrize("tier", TIERS)
def test_a_crashing_agent_is_a_failed_attempt_and_partial_credit_is_kept(
    tmp_path: Path, tier: str
) -> None:
    task = {"grader": "echo '{\"score\": 0.5}'; exit 1"}
    (row,) = run(tmp_path, {"t": task}, "kill -SEGV $$", tier)
    assert row["status"] == "failed"
    assert row["score"] == 0.5
    assert "killed by signal" in row["error"] or "exited with" in row["error"]


def test_the_grader_sees_the_oracle_and_the_agents_workspace(tmp_path: Path) -> None:
    task = {
        "grader": 'cmp -s answer.txt "$TRIALBOOK_ORACLE_DIR/expected.txt"',
        "oracle": {"expected.txt": "42\n"},
    }
    rows = run(
        tmp_path, {"t": task}, "echo $((40 + TRIALBOOK_ATTEMPT)) > answer.txt", "process", k=3
    )
    assert [r["passed"] for r in sorted(rows, key=lambda r: r["attempt_index"])] == [
        False,
        False,
        True,
    ]
    assert [r["seed"] for r in sorted(rows, key=lambda r: r["attempt_index"])] == [0, 1, 2]


def test_each_attempt_starts_from_the_frozen_fixture(tmp_path: Path) -> None:
    task = {"grader": "test $(cat count.txt) = 1", "fixture": {"count.txt": "0\n"}}
    rows = run(
        tmp_path, {"t": task}, "echo $(( $(cat count.txt) + 1 )) > count.txt", "process", k=3
    )
    assert all(r["passed"] for r in rows)  # no attempt sees another's edit


def test_a_stale_or_missing_lock_is_refused(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"t": CHECK})
    (suite / "tasks" / "t" / "fixture" / "extra.txt").write_text("changed after freezing")
    ledger = tmp_path / "ledger.db"
    out = CliRunner().invoke(main, ["run", str(suite), "--agent", "true", "--ledger", str(ledger)])
    assert out.exit_code == 2
    assert "the suite lock is stale (" in out.output
    assert "trialbook suite freeze" in out.output
    assert not ledger.exists()
    (suite / "suite.lock.json").unlink()
    out = CliRunner().invoke(main, ["run", str(suite), "--agent", "true", "--ledger", str(ledger)])
    assert out.exit_code == 2
    assert "no lock" in out.output


def test_quarantined_tasks_are_not_run(tmp_path: Path) -> None:
    leaky = {
        "grader": "true",
        "fixture": {"t.py": "assert answer() == 'forty-two'\n"},
        "oracle": {"t.py": "assert answer() == 'forty-two'\n"},
    }
    rows = run(tmp_path, {"ok": CHECK, "leaky": leaky}, "touch done.txt", "process")
    assert [r["task_id"] for r in rows] == ["ok"]


def test_rows_record_identity_budget_and_sandbox(tmp_path: Path) -> None:
    (row,) = run(tmp_path, {"t": CHECK}, "touch done.txt", "process", model_version="m-1")
    suite_lock = (tmp_path / "suite" / "suite.lock.json").read_text()
    assert row["dataset_id"] in suite_lock
    assert row["sandbox"] == "process"
    assert row["grader_version"] == "test-1"
    assert row["harness_version"].startswith("trialbook ")
    assert row["model_version"] == "m-1"
    assert row["fixture_hash"].startswith("sha256:")
    assert row["k_budget"] == 1
    assert row["started_at"] <= row["finished_at"]
    with sqlite3.connect(tmp_path / "out" / "ledger.db") as conn:
        (events,) = conn.execute("SELECT group_concat(event) FROM run_events").fetchone()
    assert events == "started,finished"


def test_infra_errors_are_rows_not_crashes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import trialbook.harness.attempt._attempt as attempt

    def broken(*_: Any, **__: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(attempt.shutil, "copytree", broken)
    (row,) = run(tmp_path, {"t": CHECK}, "touch done.txt", "process")
    assert row["status"] == "infra_error"
    assert row["passed"] is False
    assert "harness error" in row["error"]
    assert "No space left" in row["error"]


def test_an_agent_path_relative_to_the_callers_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = make_suite(tmp_path / "suite", {"t": CHECK})
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "agent").write_text("#!/bin/sh\ntouch done.txt\n")
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(
        main, ["run", str(suite), "--agent", "bin/agent --fast", "--ledger", "l.db"]
    )
    assert out.exit_code == 2
    assert "'bin/agent' is relative to this folder" in out.output
    assert not (tmp_path / "l.db").exists()


def test_resume_needs_an_existing_ledger_and_run(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"t": CHECK})
    ledger = tmp_path / "l.db"
    out = CliRunner().invoke(
        main, ["run", str(suite), "--agent", "true", "--ledger", str(ledger), "--resume", "r"]
    )
    assert out.exit_code == 2
    assert f"--resume: {ledger}: no such file (no ledger to resume from)" in out.output
    assert not ledger.exists()  # a refused command writes nothing
    run(tmp_path, {"t": CHECK}, "touch done.txt", "process")
    out = CliRunner().invoke(
        main,
        [
            "run",
            str(tmp_path / "suite"),
            "--agent",
            "true",
            "--ledger",
            str(tmp_path / "out" / "ledger.db"),
            "--resume",
            "nope",
        ],
    )
    assert out.exit_code == 2
    assert "--resume: no run 'nope'" in out.output
