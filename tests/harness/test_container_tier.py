"""``--sandbox container`` end to end: each command of an attempt (agent, then grader) in a fresh
container of the task's image, through the real harness, the ledger and this machine's podman.

Hostile agents are small shell scripts; what they may not do is checked from outside (the rows,
the engine's list of containers). Needs the engine and the base image (tests/harness/_containers.py).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from tests.harness._containers import BASE, container_engine, untag
from trialbook.cli import main
from trialbook.errors import LedgerError
from trialbook.harness import RunOptions, run_suite
from trialbook.harness.sandbox import _container as ct
from trialbook.ledger import ledger_rows, read_checks, read_ledger
from trialbook.suite import freeze, load_suite, write_lock

IMAGE = [f'image = "{BASE}"']


@pytest.fixture(scope="module")
def engine() -> ct.Engine:
    return container_engine()


def _agent(folder: Path, body: str) -> str:
    script = folder / f"agent-{uuid.uuid4().hex[:8]}.sh"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(0o755)
    return str(script)


def _left(engine: ct.Engine, run_id: str) -> list[str]:
    rows = ct._listed(engine, f"label={ct.LABEL_RUN}={run_id}")
    return [ct._name(r) for r in rows]


def _count(ledger: Path) -> int:
    """Rows written so far (0 while the ledger holds none)."""
    try:
        return len(_rows(ledger)) if ledger.exists() else 0
    except LedgerError:
        return 0


def _rows(ledger: Path) -> list[dict[str, object]]:
    return list(ledger_rows(read_ledger(ledger)))


def test_an_attempt_runs_in_its_image_without_the_oracle_or_the_network(
    engine: ct.Engine, tmp_path: Path
) -> None:
    secret = f"oracle-{uuid.uuid4().hex}"
    suite = make_suite(
        tmp_path / "suite",
        {
            "answer": {
                "grader": 'test "$(cat answer)" = "$(cat "$TRIALBOOK_ORACLE_DIR/expected")"',
                "oracle": {"expected": secret},
                "toml": IMAGE,
            }
        },
        k=2,
    )
    # the agent cannot know the answer: it copies whatever file holding it it can find
    agent = _agent(
        tmp_path,
        f"""a={secret[:10]}; b={secret[10:]}
found=$(grep -rs --exclude-dir=proc --exclude-dir=sys -l "$a$b" / | head -1)
if [ -n "$found" ]; then cp "$found" answer; else echo guess > answer; fi""",
    )
    ledger = tmp_path / "runs.db"
    result = run_suite(RunOptions(suite=suite, agent=agent, ledger=ledger, sandbox="container"))
    rows = _rows(ledger)
    assert len(rows) == 2
    assert {r["sandbox"] for r in rows} == {"container"}
    assert {r["status"] for r in rows} == {"failed"}  # graded: the oracle was the grader's only
    assert _left(engine, result.run_id) == []


def test_the_run_record_names_what_of_the_host_the_agents_container_shows(
    engine: ct.Engine, tmp_path: Path
) -> None:
    from trialbook.ledger import LedgerStore

    agents = tmp_path / "agents"
    agents.mkdir()
    agent = _agent(agents, "ls $(dirname $0) > seen.txt")
    suite = make_suite(
        tmp_path / "suite", {"t": {"toml": IMAGE, "grader": "cat seen.txt; test -s seen.txt"}}, k=1
    )
    ledger = tmp_path / "runs.db"
    result = run_suite(RunOptions(suite=suite, agent=agent, ledger=ledger, sandbox="container"))
    with LedgerStore(ledger) as store:
        status = store.run(result.run_id)
    assert status is not None
    assert status.record.agent_mounts == (str(agents),)  # the folder of its script, read-only
    assert f"the agent's container shows, read-only: {agents}" in result.notes
    (row,) = _rows(ledger)
    assert row["status"] == "passed", row


def test_what_the_agent_saw_from_inside(engine: ct.Engine, tmp_path: Path) -> None:
    # the same view, reported through the grader's stdout (the grader prints the agent's files)
    secret = f"oracle-{uuid.uuid4().hex}"
    suite = make_suite(
        tmp_path / "suite",
        {
            "look": {
                "grader": "cat report.txt; false",
                "oracle": {"expected": secret},
                "toml": IMAGE,
            }
        },
        k=1,
    )
    agent = _agent(
        tmp_path,
        # the secret in two halves: the agent's own script must not hold it whole
        f"""a={secret[:10]}; b={secret[10:]}
{{ grep -rs --exclude-dir=proc --exclude-dir=sys -l "$a$b" / || echo no-oracle
ls {suite} 2>/dev/null || echo no-suite
ls /sys/class/net
grep ^CapEff /proc/self/status
touch /usr/written 2>/dev/null && echo image-writable || echo image-read-only
test -e "$TRIALBOOK_PROMPT_FILE" && echo prompt-there; }} > report.txt""",
    )
    ledger = tmp_path / "runs.db"
    result = run_suite(RunOptions(suite=suite, agent=agent, ledger=ledger, sandbox="container"))
    transcript = next((tmp_path / "runs.transcripts" / result.run_id).rglob("grader.stdout"))
    seen = transcript.read_text().split()
    assert seen == ["no-oracle", "no-suite", "lo", "CapEff:", "0000000000000000",
                    "image-read-only", "prompt-there"]  # fmt: skip


def test_a_timeout_kills_and_removes_the_container(engine: ct.Engine, tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path / "suite", {"slow": {"toml": [*IMAGE, "timeout_s = 2"]}}, k=1, timeout_s=2
    )
    agent = _agent(tmp_path, "sleep 120 & sleep 120")
    ledger = tmp_path / "runs.db"
    started = time.monotonic()
    result = run_suite(RunOptions(suite=suite, agent=agent, ledger=ledger, sandbox="container"))
    assert time.monotonic() - started < 60
    (row,) = _rows(ledger)
    assert (row["status"], row["timed_out"]) == ("timed_out", True)
    assert _left(engine, result.run_id) == []


@pytest.mark.parametrize(
    "body",
    [
        "exit 125",  # the engine's own exit status for its failures
        "echo 'Error: runc: runc create failed: unable to start container process' >&2; exit 125",
        "kill -9 1; exit 1",  # its own container's init
        "for i in $(seq 5000); do sleep 60 & done; exit 1",  # a fork bomb against --pids-limit
    ],
)
def test_what_the_agent_does_to_fake_a_harness_error_is_its_own_failure(
    engine: ct.Engine, tmp_path: Path, body: str
) -> None:
    suite = make_suite(tmp_path / "suite", {"t": {"toml": IMAGE, "grader": "false"}}, k=1)
    ledger = tmp_path / "runs.db"
    result = run_suite(
        RunOptions(suite=suite, agent=_agent(tmp_path, body), ledger=ledger, sandbox="container")
    )
    (row,) = _rows(ledger)
    assert row["status"] == "failed", row
    assert _left(engine, result.run_id) == []


def test_an_engine_that_cannot_start_the_container_is_a_harness_error(
    engine: ct.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # runc refuses rlimits above the engine's own: the container never starts, the command never
    # runs, and the row says so in the engine's words
    from trialbook.harness.sandbox import _environments

    broken = ct.Engine(engine.name, engine.exe, engine.global_args,
                       ("--ulimit", "nofile=999999999:999999999"))  # fmt: skip
    monkeypatch.setattr(_environments, "engine_for", lambda requested, image: broken)
    suite = make_suite(tmp_path / "suite", {"t": {"toml": IMAGE}}, k=1)
    ledger = tmp_path / "runs.db"
    result = run_suite(RunOptions(suite=suite, agent="true", ledger=ledger, sandbox="container"))
    (row,) = _rows(ledger)
    assert row["status"] == "infra_error"
    assert "container did not start" in str(row["error"])
    assert "rlimit" in str(row["error"])  # the engine's own words
    assert _left(engine, result.run_id) == []


def test_a_task_that_names_an_image_is_refused_by_the_other_tiers(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"t": {"toml": IMAGE}}, k=1)
    ledger = tmp_path / "runs.db"
    for tier in ("process", "bwrap"):
        result = CliRunner().invoke(
            main, ["run", str(suite), "--agent", "true", "--ledger", str(ledger), "--sandbox", tier]
        )
        assert result.exit_code == 2, result.output
        assert "names a container environment (image" in result.stderr
        assert "--sandbox container" in result.stderr
    assert not ledger.exists()


def test_an_image_that_cannot_be_had_is_refused_before_the_run(
    engine: ct.Engine, tmp_path: Path
) -> None:
    missing = f"localhost/trialbook-no-such-image:{uuid.uuid4().hex[:8]}"
    suite = make_suite(
        tmp_path / "suite", {"t": {"toml": [f'image = "{missing}"']}}, k=1, freeze=False
    )
    # the freeze records the image by its digest: without the image there is nothing to record
    frozen = CliRunner().invoke(main, ["suite", "freeze", str(suite)])
    assert frozen.exit_code == 2, frozen.output
    assert f"task t: podman has no image {missing} to record by its digest" in frozen.stderr
    # frozen while it was there, gone before the run: refused before the run, nothing written
    subprocess.run(engine.command("tag", BASE, missing), check=True, capture_output=True)
    try:
        assert CliRunner().invoke(main, ["suite", "freeze", str(suite)]).exit_code == 0
    finally:
        untag(engine, missing)
    ledger = tmp_path / "runs.db"
    result = CliRunner().invoke(
        main,
        ["run", str(suite), "--agent", "true", "--ledger", str(ledger), "--sandbox", "container"],
    )
    assert result.exit_code == 2, result.output
    assert "task t:" in result.stderr
    assert missing in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not ledger.exists()


def test_a_named_image_without_the_tasks_workdir_is_refused_before_the_run(
    engine: ct.Engine, tmp_path: Path
) -> None:
    suite = make_suite(
        tmp_path / "suite", {"t": {"toml": [*IMAGE, 'workdir = "/no/such/folder"']}}, k=1
    )
    ledger = tmp_path / "runs.db"
    result = CliRunner().invoke(
        main,
        ["run", str(suite), "--agent", "true", "--ledger", str(ledger), "--sandbox", "container"],
    )
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert f"task t: its image {BASE} has no folder /no/such/folder" in line
    assert not ledger.exists()


def test_a_dockerfile_task_runs_in_its_built_image_and_its_context_is_in_the_lock(
    engine: ct.Engine, tmp_path: Path
) -> None:
    marker = uuid.uuid4().hex
    suite = make_suite(
        tmp_path / "suite",
        {"built": {"toml": ['dockerfile = "environment/Dockerfile"'], "grader": "test -f ok"}},
        k=1,
        freeze=False,
    )
    env = suite / "tasks" / "built" / "environment"
    env.mkdir()
    (env / "Dockerfile").write_text(f"FROM {BASE}\nRUN echo {marker} > /etc/marker\n")
    before = freeze(load_suite(suite)).dataset_id
    (env / "Dockerfile").write_text(f"FROM {BASE}\nRUN echo {marker} > /etc/marker\n# v2\n")
    assert freeze(load_suite(suite)).dataset_id != before  # the environment is in the dataset id
    from trialbook.suite import write_lock

    write_lock(load_suite(suite), freeze(load_suite(suite)))
    agent = _agent(tmp_path, f'test "$(cat /etc/marker)" = {marker} && touch ok')
    ledger = tmp_path / "runs.db"
    try:
        run_suite(RunOptions(suite=suite, agent=agent, ledger=ledger, sandbox="container"))
        (row,) = _rows(ledger)
        assert row["status"] == "passed"
    finally:
        tag = f"localhost/trialbook-env:{ct.context_digest(env, env / 'Dockerfile')[:32]}"
        subprocess.run(engine.command("rmi", "--force", tag), capture_output=True, check=False)


def test_a_dockerfile_whose_workdir_no_step_writes_starts_an_empty_workspace(
    engine: ct.Engine, tmp_path: Path
) -> None:
    # podman's build leaves such a WORKDIR unmade in the image (a container makes it at start):
    # the workspace is then an empty folder there, as Docker's WORKDIR would make it
    suite = make_suite(
        tmp_path / "suite",
        {
            "bare": {
                "toml": ['dockerfile = "environment/Dockerfile"', 'workdir = "/app"'],
                "grader": "test -f /app/hello && test $(ls -A /app | wc -l) = 1",
            }
        },
        k=1,
        freeze=False,
    )
    env = suite / "tasks" / "bare" / "environment"
    env.mkdir()
    marker = uuid.uuid4().hex  # an image of this test's own: no other test removes it meanwhile
    (env / "Dockerfile").write_text(f"FROM {BASE}\nLABEL test={marker}\nWORKDIR /app\n")
    write_lock(load_suite(suite), freeze(load_suite(suite)))
    ledger = tmp_path / "runs.db"
    try:
        run_suite(
            RunOptions(
                suite=suite,
                agent=_agent(tmp_path, "touch hello"),
                ledger=ledger,
                sandbox="container",
            )
        )
        (row,) = _rows(ledger)
        assert row["status"] == "passed", row
    finally:
        tag = f"localhost/trialbook-env:{ct.context_digest(env, env / 'Dockerfile')[:32]}"
        subprocess.run(engine.command("rmi", "--force", tag), capture_output=True, check=False)


def test_a_dockerfile_beside_the_oracle_is_refused(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path / "suite", {"t": {"toml": ['dockerfile = "Dockerfile"']}}, k=1, freeze=False
    )
    (suite / "tasks" / "t" / "Dockerfile").write_text(f"FROM {BASE}\n")
    result = CliRunner().invoke(main, ["suite", "freeze", str(suite)])
    assert result.exit_code == 2
    assert "must not hold the oracle" in result.stderr


def test_a_killed_harness_leaves_no_container_after_resume(
    engine: ct.Engine, tmp_path: Path
) -> None:
    suite = make_suite(
        tmp_path / "suite", {f"t{i}": {"toml": IMAGE} for i in range(3)}, k=1, timeout_s=60
    )
    agent = _agent(tmp_path, 'case "$TRIALBOOK_TASK_ID" in t1) sleep 50;; esac; true')
    ledger = tmp_path / "runs.db"
    argv = [sys.executable, "-m", "trialbook", "run", str(suite), "--agent", agent,
            "--ledger", str(ledger), "--sandbox", "container", "--run-id", "r1"]  # fmt: skip
    harness = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        # until the sleeping attempt's container is up and another attempt has its row
        while time.monotonic() < deadline and not (_left(engine, "r1") and _count(ledger) >= 1):
            time.sleep(0.2)
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    assert _left(engine, "r1")  # the engine keeps the killed harness's container running
    resumed = CliRunner().invoke(
        main, ["run", "--resume", "r1", "--ledger", str(ledger), "--sandbox", "container"]
    )
    assert resumed.exit_code == 0, resumed.output
    rows = _rows(ledger)
    assert sorted(str(r["task_id"]) for r in rows) == ["t0", "t1", "t2"]  # none lost, none twice
    assert _left(engine, "r1") == []


def test_grader_check_judges_references_and_decoys_in_the_container(
    engine: ct.Engine, tmp_path: Path
) -> None:
    suite = make_suite(
        tmp_path / "suite",
        {
            "t": {
                "toml": IMAGE,
                "grader": 'test "$(cat answer)" = "$(cat "$TRIALBOOK_ORACLE_DIR/expected")"',
                "oracle": {"expected": "42\n"},
                "reference": {"answer": "42\n"},
            }
        },
        k=1,
    )
    result = CliRunner().invoke(main, ["grader-check", str(suite), "--sandbox", "container"])
    assert result.exit_code == 0, result.output
    assert "harness error" not in result.output


def _harbor_task(root: Path, tests_sh: str, *, timeout_s: float = 20) -> Path:
    """A task laid out as a Harbor dataset's runs here: its files in the image at /app, its
    tests bound at /tests for the verifier, whose reward file is the verdict."""
    suite = make_suite(
        root,
        {
            "h": {
                "toml": [
                    'dockerfile = "environment/Dockerfile"',
                    'workdir = "/app"',
                    'oracle_dir = "/tests"',
                    'verdict = "harbor-reward"',
                    f"timeout_s = {timeout_s}",
                ],
                "grader": "bash /tests/test.sh",
                "oracle": {"test.sh": tests_sh},
            }
        },
        k=1,
        freeze=False,
    )
    env = suite / "tasks" / "h" / "environment"
    env.mkdir()
    (env / "input.txt").write_text("21\n")
    (env / "Dockerfile").write_text(f"FROM {BASE}\nWORKDIR /app\nCOPY input.txt /app/input.txt\n")
    from trialbook.suite import write_lock

    write_lock(load_suite(suite), freeze(load_suite(suite)))
    return suite


DOUBLE = "echo $(( $(cat /app/input.txt) * 2 )) > /app/output.txt"
REWARDS = {
    "reward.txt 1: passed": (
        '[ "$(cat /app/output.txt)" = 42 ] && echo 1 > /logs/verifier/reward.txt '
        "|| echo 0 > /logs/verifier/reward.txt",
        ("passed", 1.0, None),
    ),
    "reward.json of two keys: named checks": (
        'echo \'{"output": 1, "style": 0.5}\' > /logs/verifier/reward.json',
        ("failed", 0.75, {"output": (True, "reward 1"), "style": (False, "reward 0.5")}),
    ),
    "no reward file": ("true", ("failed", None, None)),
    "a reward file that is a link to a host file": (
        "ln -s /etc/hostname /logs/verifier/reward.txt",
        ("failed", None, None),
    ),
}


@pytest.mark.parametrize("case", sorted(REWARDS))
def test_a_harbor_laid_out_task_is_judged_by_its_verifiers_reward(
    engine: ct.Engine, tmp_path: Path, case: str
) -> None:
    tests_sh, (status, score, check) = REWARDS[case]
    suite = _harbor_task(tmp_path / "suite", tests_sh + "\n")
    ledger = tmp_path / "runs.db"
    try:
        run_suite(
            RunOptions(
                suite=suite, agent=_agent(tmp_path, DOUBLE), ledger=ledger, sandbox="container"
            )
        )
        (row,) = _rows(ledger)
        assert (row["status"], row["score"]) == (status, score), row
        if check is not None:
            got = read_checks(str(row["checks"]))
            assert {k: (v.passed, v.reason) for k, v in got.items()} == check
        if status == "failed" and score is None:
            assert "the verifier's reward" in str(row["error"])
    finally:
        env = suite / "tasks" / "h" / "environment"
        tag = f"localhost/trialbook-env:{ct.context_digest(env, env / 'Dockerfile')[:32]}"
        subprocess.run(engine.command("rmi", "--force", tag), capture_output=True, check=False)


def test_where_no_network_namespace_can_be_made_a_model_task_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the container joins a namespace the harness makes for the gateway's forwarder: a harness
    # that may not make one (not root) is refused before the run, exit 2, nothing written
    from trialbook.harness.sandbox import _forward

    def refused(self: object, socket_path: str, port: object) -> None:
        raise OSError("unshare(CLONE_NEWNET): Operation not permitted")

    monkeypatch.setattr(_forward.Door, "__init__", refused)
    suite = make_suite(tmp_path / "suite", {"t": {"toml": [*IMAGE, 'network = "model"']}}, k=1)
    ledger = tmp_path / "runs.db"
    result = CliRunner().invoke(
        main,
        ["run", str(suite), "--agent", "true", "--ledger", str(ledger), "--sandbox", "container",
         "--model-upstream", "http://127.0.0.1:9", "--model-key-env", "HOME"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert "cannot make one here (unshare(CLONE_NEWNET): Operation not permitted)" in line
    assert "run as root" in line
    assert not ledger.exists()
