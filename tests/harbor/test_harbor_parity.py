"""The same Harbor dataset run by Harbor 0.25.0 itself and by trialbook gives the same verdict per
trial (issue 29).

The dataset is tests/harness/test_harbor_dataset.py's (five tasks: a Dockerfile, a named image, a
verifier that writes no reward, a multi-key reward, an 8 s timeout). trialbook imports it
(``suite import harbor``) and runs it in the container tier; Harbor runs it through its own Job API
(tests/harbor/run_harbor.py, in the Harbor venv) in tests/harbor/podman_environment.py, a Harbor
environment on the podman command line with the engine flags trialbook's own probe found. Both run
the oracle (Harbor's ``oracle`` agent; trialbook's ``SUITE.solutions/run.sh``) and a no-op
(Harbor's ``nop``; ``true``) on every task, and a sleeper (tests/harbor/sleeper_agent.py;
``sleep 20``) on the timeout task, k = 3 each.

Harbor's verdict comes from its own result objects: ``TrialResult.verifier_result.rewards`` and
``exception_info``. A trial passes when it has rewards and every one is at least 1 (Terminal-Bench's
"resolved"; Harbor's own mean counts a trial without rewards as 0). Harbor numbers no attempt: the
driver numbers them by start within (task, agent), as trialbook's Harbor importer does.

The Harbor venv is ``.venv-harbor`` at the checkout's root (``make harbor-venv``), or the Python
named by ``TRIALBOOK_HARBOR_PYTHON``. Without it the test skips and says why; under CI it fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.harness._containers import container_engine
from tests.harness.test_harbor_dataset import TASKS, _write
from tests.harness.test_harbor_dataset import _run as _trialbook
from trialbook.cli import main
from trialbook.harness.sandbox import _container as ct
from trialbook.ledger import read_checks
from trialbook.suite import load_suite

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
K = 3
TIMEOUT_TASK = "slow"
LABEL = "trialbook.harbor-parity"
"""podman_environment.LABEL (that module imports Harbor, which is not installed here)."""
AGENTS = {"oracle": "oracle", "noop": "nop", "sleeper": "sleeper"}
"""trialbook's agent -> Harbor's agent of the same behaviour."""


def harbor_python() -> Path:
    """The Harbor venv's Python (fails under CI, else skips, without it)."""
    named = os.environ.get("TRIALBOOK_HARBOR_PYTHON")
    python = Path(named) if named else ROOT / ".venv-harbor" / "bin" / "python"
    why = None
    if not python.is_file():
        why = f"no Harbor venv at {python} (make harbor-venv creates it)"
    else:
        probe = subprocess.run(
            [str(python), "-c", "import importlib.metadata as m; print(m.version('harbor'))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.stdout.strip() != "0.25.0":
            why = f"{python} has no harbor 0.25.0 ({probe.stdout.strip() or probe.stderr.strip()})"
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the Harbor parity test must run under CI: {why}")
        pytest.skip(why)
    return python


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Harbor's entries and trialbook's rows per agent, of the same dataset."""
    python = harbor_python()
    engine = container_engine()
    root = tmp_path_factory.mktemp("parity")
    dataset = _write(root / "dataset", TASKS)
    # the images of this run are its own: the same dataset elsewhere (test_harbor_dataset.py, another
    # checkout's run of this test) builds the same tags and removes them when it ends. A file in
    # each build context that no Dockerfile copies makes them this run's.
    run = uuid.uuid4().hex
    for context in dataset.glob("*/environment"):
        (context / ".parity-run").write_text(run + "\n")
    flags = {"global_args": list(engine.global_args), "run_args": list(engine.run_args),
             "label": run}  # fmt: skip
    # Harbor runs beside trialbook (its own process, the same engine)
    harbor = subprocess.Popen(
        [str(python), str(HERE / "run_harbor.py"), str(dataset), str(root / "harbor-jobs"),
         "--k", str(K), "--sleeper", TIMEOUT_TASK,
         "--engine-args", json.dumps(flags)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        imported = CliRunner().invoke(
            main,
            ["suite", "import", "harbor", str(dataset), "--out", str(root / "suite"),
             "--k", str(K)],
        )  # fmt: skip
        assert imported.exit_code == 0, imported.output
        ours = {
            "oracle": _trialbook(root, str(root / "suite.solutions" / "run.sh"), "oracle"),
            "noop": _trialbook(root, "true", "noop"),
            "sleeper": _trialbook(root, "sleep 20", "sleeper", TIMEOUT_TASK),
        }
        out, err = harbor.communicate(timeout=240)
    finally:
        if harbor.poll() is None:  # trialbook's side failed, or Harbor hangs: its trials go too
            harbor.kill()
            harbor.communicate()
            _remove_containers(engine, run)
    assert harbor.returncode == 0, err[-3000:]
    yield {"harbor": json.loads(out), "trialbook": ours}
    _remove_images(engine, root / "suite", run)


def _remove_containers(engine: ct.Engine, run: str) -> None:
    listed = subprocess.run(
        engine.command("ps", "--all", "--quiet", "--filter", f"label={LABEL}={run}"),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    for container in listed.stdout.split():
        subprocess.run(engine.command("rm", "--force", "--time", "0", container),
                       capture_output=True, check=False)  # fmt: skip


def _remove_images(engine: ct.Engine, suite: Path, run: str) -> None:
    tags = [f"localhost/trialbook-env:{ct.context_digest(t.dockerfile.parent, t.dockerfile)[:32]}"
            for t in load_suite(suite).tasks if t.dockerfile is not None]  # fmt: skip
    harbors = subprocess.run(
        engine.command("images", "--quiet", "--filter", f"label={LABEL}={run}"),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    tags += harbors.stdout.split()
    for tag in tags:
        subprocess.run(engine.command("rmi", "--force", tag), capture_output=True, check=False)


def _harbor_passed(rewards: Mapping[str, float] | None) -> bool:
    return rewards is not None and all(value >= 1 for value in rewards.values())


def _keyed_harbor(entries: list[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, Any]]:
    return {(e["task"], e["agent"], e["attempt"]): e for e in entries}


def _keyed_ours(rows: Mapping[str, list[dict[str, Any]]]) -> dict[tuple[str, str, int], Any]:
    return {
        (str(r["task_id"]), AGENTS[agent], int(r["attempt_index"])): r
        for agent, agent_rows in rows.items()
        for r in agent_rows
    }


def test_every_trial_is_run_by_both(both: dict[str, Any]) -> None:
    # oracle and no-op on the 5 tasks, the sleeper on the timeout task, k attempts each
    expected = {(t, a, i) for t in TASKS for a in ("oracle", "nop") for i in range(K)}
    expected |= {(TIMEOUT_TASK, "sleeper", i) for i in range(K)}
    assert set(_keyed_harbor(both["harbor"])) == expected
    assert set(_keyed_ours(both["trialbook"])) == expected
    # and none was lost to the machine (an engine that could not start a container, an image
    # removed under the run): such a trial says nothing of either's verdict
    infra = {k: r["error"] for k, r in _keyed_ours(both["trialbook"]).items()
             if r["status"] == "infra_error"}  # fmt: skip
    assert not infra, infra
    verifier_said = {None, "RewardFileNotFoundError", "AgentTimeoutError"}
    odd = {k: e["exception"] for k, e in _keyed_harbor(both["harbor"]).items()
           if e["exception"] not in verifier_said}  # fmt: skip
    assert not odd, odd


def test_the_same_verdict_per_trial(both: dict[str, Any]) -> None:
    harbor = _keyed_harbor(both["harbor"])
    ours = _keyed_ours(both["trialbook"])
    theirs = {key: _harbor_passed(e["rewards"]) for key, e in harbor.items()}
    mine = {key: bool(r["passed"]) for key, r in ours.items()}
    differ = {
        key: (theirs[key], mine[key], ours[key]["error"])
        for key in theirs
        if theirs[key] != mine[key]
    }
    assert not differ, differ
    # and the dataset's design holds in both: the oracle passes everything, the no-op only the
    # task whose verifier rewards anything, the sleeper that task too (graded after its timeout)
    assert {k for k, passed in theirs.items() if passed} == (
        {k for k in theirs if k[1] == "oracle"} | {k for k in theirs if k[0] == TIMEOUT_TASK}
    )


def test_a_reward_is_the_same_number(both: dict[str, Any]) -> None:
    # a single reward is trialbook's score; a reward object's mean is, and each key a named check
    # passed when its value is at least 1
    harbor = _keyed_harbor(both["harbor"])
    for key, row in _keyed_ours(both["trialbook"]).items():
        rewards = harbor[key]["rewards"]
        if rewards is None:
            assert row["score"] is None, key
            continue
        assert row["score"] == sum(rewards.values()) / len(rewards), key
        if key[0] == "multi":
            checks = read_checks(str(row["checks"]))
            assert {name: c.passed for name, c in checks.items()} == {
                name: value >= 1 for name, value in rewards.items()
            }, key
            assert set(rewards) == {"exists", "content"}


def test_what_each_says_about_a_missing_reward_and_a_timeout(both: dict[str, Any]) -> None:
    harbor = _keyed_harbor(both["harbor"])
    ours = _keyed_ours(both["trialbook"])
    for key, entry in harbor.items():
        row = ours[key]
        if entry["exception"] == "RewardFileNotFoundError":
            # Harbor: no rewards and RewardFileNotFoundError (its mean counts 0); trialbook: a
            # failed attempt (the agent's, not the harness's) saying which file is missing
            assert entry["rewards"] is None
            assert (row["status"], row["passed"]) == ("failed", False), (key, row["error"])
            assert "no reward.json or reward.txt" in str(row["error"])
        elif entry["exception"] == "AgentTimeoutError":
            # Harbor: AgentTimeoutError, and the verifier ran after it: its reward stands;
            # trialbook: timed_out, graded after the timeout (the imported suite says so), the
            # verdict the verifier gave: status passed here, as slow's verifier rewards anything
            assert row["timed_out"] is True, (key, row["status"], row["error"])
            assert row["graded_after_timeout"] is True, (key, row["status"], row["error"])
            assert row["passed"] is _harbor_passed(entry["rewards"]), (key, row["error"])
        else:
            # no other exception in Harbor (an environment error would be this test's own fault)
            assert entry["exception"] is None, (key, entry)
            assert row["timed_out"] is False
    missing = {k for k, e in harbor.items() if e["exception"] == "RewardFileNotFoundError"}
    timeouts = {k for k, e in harbor.items() if e["exception"] == "AgentTimeoutError"}
    # silent's verifier writes nothing unless the agent did its work: the no-op's trials
    assert missing == {("silent", "nop", i) for i in range(K)}
    # only the sleeper outlives the 8 s timeout; in both
    assert timeouts == {(TIMEOUT_TASK, "sleeper", i) for i in range(K)}
    assert {k for k, r in ours.items() if r["timed_out"]} == timeouts
