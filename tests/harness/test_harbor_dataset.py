"""A Harbor dataset through trialbook: ``suite import harbor``, then the container tier, k = 3.

The dataset is written here, in Harbor's layout (task.toml, instruction.md, environment/Dockerfile
or a named image, tests/test.sh writing /logs/verifier/reward.txt or reward.json,
solution/solve.sh): one task built from a Dockerfile on the local base image, one on a named image,
one whose verifier writes no reward unless the agent did its work, one with a multi-key reward, one
with a short timeout. Its oracle solutions pass every trial; a no-op agent fails every trial, as
the agent's failure (never a harness error); a sleeper times out. What trialbook cannot honour is
refused by name. Needs the engine and the base image (tests/harness/_containers.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.harness._containers import BASE, container_engine
from trialbook.cli import main
from trialbook.harness.sandbox import _container as ct
from trialbook.ledger import ledger_rows, read_checks, read_ledger
from trialbook.suite import load_suite

DOCKERFILE = f"FROM {BASE}\nWORKDIR /app\nCOPY input.txt /app/input.txt\n"
TASKS: dict[str, dict[str, str]] = {
    "double": {
        "task.toml": "[agent]\ntimeout_sec = 30\n[verifier]\ntimeout_sec = 30\n"
        "[environment]\ncpus = 1\nmemory_mb = 512\nallow_internet = false\n",
        "environment/Dockerfile": DOCKERFILE,
        "environment/input.txt": "21\n",
        "tests/test.sh": 'if [ "$(cat /app/output.txt)" = 42 ]; then echo 1; else echo 0; fi'
        " > /logs/verifier/reward.txt\n",
        "solution/solve.sh": "echo $(( $(cat input.txt) * 2 )) > output.txt\n",
    },
    "named-image": {
        "task.toml": f'[agent]\ntimeout_sec = 30\n[environment]\ndocker_image = "{BASE}"\n'
        'workdir = "/srv"\nallow_internet = false\n',
        "tests/test.sh": "test -f /srv/hello && echo 1 > /logs/verifier/reward.txt "
        "|| echo 0 > /logs/verifier/reward.txt\n",
        "solution/solve.sh": "touch /srv/hello\n",
    },
    "silent": {
        "task.toml": "[agent]\ntimeout_sec = 30\n[environment]\nallow_internet = false\n",
        "environment/Dockerfile": DOCKERFILE,
        "environment/input.txt": "x\n",
        "tests/test.sh": "[ -f /app/done.txt ] && echo 1 > /logs/verifier/reward.txt; exit 0\n",
        "solution/solve.sh": "touch done.txt\n",
    },
    "multi": {
        "task.toml": "[agent]\ntimeout_sec = 30\n[environment]\nallow_internet = false\n",
        "environment/Dockerfile": DOCKERFILE,
        "environment/input.txt": "x\n",
        "tests/test.sh": "e=0; c=0; [ -f /app/out ] && e=1; "
        '[ "$(cat /app/out 2>/dev/null)" = ok ] && c=1; '
        'printf \'{"exists": %s, "content": %s}\' $e $c > /logs/verifier/reward.json\n',
        "solution/solve.sh": "echo ok > out\n",
    },
    "slow": {
        "task.toml": "[agent]\ntimeout_sec = 8\n[environment]\nnetwork_mode = 'no-network'\n",
        "environment/Dockerfile": DOCKERFILE,
        "environment/input.txt": "x\n",
        "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
        "solution/solve.sh": "true\n",
    },
}


def _write(root: Path, tasks: dict[str, dict[str, str]]) -> Path:
    for task, files in tasks.items():
        for rel, text in {"instruction.md": f"Do task {task}.\n", **files}.items():
            path = root / task / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return root


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    engine = container_engine()
    root = tmp_path_factory.mktemp("harbor")
    dataset = _write(root / "dataset", TASKS)
    result = CliRunner().invoke(
        main, ["suite", "import", "harbor", str(dataset), "--out", str(root / "suite"), "--k", "3"]
    )
    assert result.exit_code == 0, result.output
    assert "5 Harbor task(s) written" in result.stdout
    yield root
    for task in load_suite(root / "suite").tasks:
        if task.dockerfile is not None:
            env = task.dockerfile.parent
            tag = f"localhost/trialbook-env:{ct.context_digest(env, task.dockerfile)[:32]}"
            subprocess.run(engine.command("rmi", "--force", tag), capture_output=True, check=False)


def _run(root: Path, agent: str, name: str, *only: str) -> list[dict[str, object]]:
    ledger = root / f"{name}.db"
    tasks = [arg for task in only for arg in ("--task", task)]
    result = CliRunner().invoke(
        main,
        ["run", str(root / "suite"), "--agent", agent, "--ledger", str(ledger),
         "--sandbox", "container", "--jobs", "2", *tasks],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return list(ledger_rows(read_ledger(ledger)))


def test_the_import_maps_harbor_to_the_container_tier(imported: Path) -> None:
    suite = load_suite(imported / "suite")
    assert suite.k == 3
    double = suite.task("double")
    assert double.prompt == "Do task double.\n"
    assert double.container is not None
    assert (double.container.workdir, double.container.oracle_dir) == ("/app", "/tests")
    assert (double.container.cpus, double.container.memory_mb) == (1.0, 512)
    assert double.container.verdict == "harbor-reward"
    assert (double.timeout_s, double.grader_timeout_s) == (30.0, 30.0)
    assert suite.task("named-image").image == BASE
    assert (imported / "suite.solutions" / "double" / "solve.sh").is_file()
    assert not (imported / "suite" / "tasks" / "double" / "solution").exists()


def test_the_oracle_solutions_pass_every_trial(imported: Path) -> None:
    rows = _run(imported, str(imported / "suite.solutions" / "run.sh"), "oracle")
    assert len(rows) == 5 * 3
    assert {(r["task_id"], r["status"]) for r in rows} == {(t, "passed") for t in TASKS}
    multi = [r for r in rows if r["task_id"] == "multi"]
    for row in multi:
        checks = read_checks(str(row["checks"]))
        assert {k: v.passed for k, v in checks.items()} == {"exists": True, "content": True}


def test_a_no_op_agent_fails_every_trial_as_itself(imported: Path) -> None:
    rows = _run(imported, "true", "noop")
    assert len(rows) == 5 * 3
    by_task = {(r["task_id"], r["status"]) for r in rows}
    # slow's verifier rewards anything: the no-op passes it; every other task fails
    assert by_task == {("slow", "passed")} | {(t, "failed") for t in TASKS if t != "slow"}
    silent = [r for r in rows if r["task_id"] == "silent"]
    assert all("no reward.json or reward.txt" in str(r["error"]) for r in silent)
    multi = [r for r in rows if r["task_id"] == "multi"]
    assert {r["score"] for r in multi} == {0.0}


def test_a_sleeper_times_out_and_is_graded_as_harbor_grades_it(imported: Path) -> None:
    rows = _run(imported, "sleep 20", "sleeper", "slow")
    assert len(rows) == 3
    # Harbor runs the verifier after an agent timeout and keeps its reward: slow's verifier
    # rewards anything, so each trial is a pass after its timeout (status passed, timed_out), and
    # the run says it grades after timeouts
    assert {(r["status"], r["timed_out"], r["passed"]) for r in rows} == {("passed", True, True)}
    assert {r["graded_after_timeout"] for r in rows} == {True}


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ("[environment]\ngpus = 1\n", "environment.gpus"),
        ("[environment]\nstorage_mb = 10240\n", "environment.storage_mb"),
        ("[[steps]]\nname = 'one'\n", "steps"),
        ("[verifier]\nenv = { TOKEN = 'x' }\n", "verifier.env"),
        ("[environment]\nos = 'windows'\n", "environment.os"),
        ("[environment]\nnetwork_mode = 'allowlist'\n", "environment.network_mode"),
    ],
)
def test_what_cannot_be_honoured_is_refused_by_name(tmp_path: Path, extra: str, named: str) -> None:
    files = dict(TASKS["double"])
    files["task.toml"] = extra
    dataset = _write(tmp_path / "dataset", {"t": files})
    out = tmp_path / "suite"
    result = CliRunner().invoke(
        main, ["suite", "import", "harbor", str(dataset), "--out", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert f"harbor task t: {named}" in result.stderr
    assert not out.exists()
    assert not (tmp_path / "suite.solutions").exists()


def test_without_the_engine_the_import_writes_the_suite_and_says_it_is_not_frozen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    dataset = _write(tmp_path / "dataset", {"double": TASKS["double"]})
    out = tmp_path / "suite"
    result = CliRunner().invoke(
        main, ["suite", "import", "harbor", str(dataset), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "1 Harbor task(s) written" in result.stdout
    assert "dataset sha256:" not in result.stdout
    assert "note: not frozen: task double: its image" in result.stderr
    assert f"run 'trialbook suite freeze {out}'" in result.stderr
    assert load_suite(out).task("double").dockerfile is not None
    assert not (out / "suite.lock.json").exists()
