"""Make the Harbor job folders under this folder by running Harbor for real, and write Harbor's own
figures on them to ``harbor_figures.json``.

Run with Harbor 0.25.0 installed (Python 3.12)::

    python3.12 -m venv /tmp/hvenv && /tmp/hvenv/bin/pip install harbor==0.25.0
    /tmp/hvenv/bin/python tests/importers/data/harbor/make_fixtures.py

Harbor wants a container engine; ``harbor_local_env.LocalEnvironment`` (beside this script) runs
each trial's commands under bubblewrap in a temporary folder instead, so Harbor's agents, verifier,
retry queue and metrics all run unchanged. The tasks are written here, each staging one case the
importer must read as Harbor judges it: an oracle and a no-op agent, a verifier that writes no
reward, a verifier timeout, an agent timeout whose work still passes, a multi-key reward, a
sandbox failure Harbor retried (and one it gave up on), and a step-based task.

The job folders keep what Harbor wrote, less the agents' and verifiers' logs (only the files a
reader of results needs: the job's config.json, lock.json and result.json, each trial's
config.json and result.json). The figures file holds, per job, what Harbor's own classes compute
from those folders: each trial's ``TrialResult.reward_valid``, ``failure_cause`` and
``compute_token_cost_totals``, the job's Mean metric (``harbor.metrics.mean.Mean``) and pass@k
(``harbor.utils.pass_at_k.compute_pass_at_k_by_evals``). Tests compare trialbook's reading with
that file; nothing in it is typed in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
HARBOR = "0.25.0"

ANSWER_CHECK = """#!/bin/bash
if [ "$(cat /app/answer.txt 2>/dev/null)" = "42" ]; then echo 1; else echo 0; fi \\
    > /logs/verifier/reward.txt
"""
SOLVE = "#!/bin/bash\necho 42 > /app/answer.txt\n"

TASKS: dict[str, dict[str, dict[str, str]]] = {
    "basic": {
        # the oracle solves it, the no-op agent does not
        "echo-answer": {"tests/test.sh": ANSWER_CHECK, "solution/solve.sh": SOLVE},
        # the oracle solves it about half the time: pass@k differs from pass@1
        "coin-answer": {
            "tests/test.sh": ANSWER_CHECK,
            "solution/solve.sh": "#!/bin/bash\n"
            "if [ $((RANDOM % 2)) = 0 ]; then echo 42 > /app/answer.txt; fi\n",
        },
        # the verifier writes no reward: RewardFileNotFoundError
        "no-reward": {
            "tests/test.sh": "#!/bin/bash\necho 'checked, but no reward written'\n",
            "solution/solve.sh": SOLVE,
        },
        # the verifier outlives its limit: VerifierTimeoutError
        "verifier-timeout": {
            "task.toml": "[verifier]\ntimeout_sec = 2.0\n\n[agent]\ntimeout_sec = 60.0\n",
            "tests/test.sh": "#!/bin/bash\nsleep 30\necho 1 > /logs/verifier/reward.txt\n",
            "solution/solve.sh": SOLVE,
        },
        # the agent's work is done before its time runs out: AgentTimeoutError, reward 1
        "slow-solve": {
            "task.toml": "[verifier]\ntimeout_sec = 60.0\n\n[agent]\ntimeout_sec = 2.0\n",
            "tests/test.sh": ANSWER_CHECK,
            "solution/solve.sh": "#!/bin/bash\necho 42 > /app/answer.txt\nsleep 30\n",
        },
    },
    "multikey": {
        # two reward keys
        "graded-twice": {
            "tests/test.sh": "#!/bin/bash\n"
            'c=0; [ "$(cat /app/answer.txt 2>/dev/null)" = "42" ] && c=1\n'
            'echo "{\\"correctness\\": $c, \\"style\\": 0}" > /logs/verifier/reward.json\n',
            "solution/solve.sh": SOLVE,
        },
        # the style key is missing: Harbor's per-key mean counts it 0
        "no-style": {
            "tests/test.sh": "#!/bin/bash\n"
            'c=0; [ "$(cat /app/answer.txt 2>/dev/null)" = "42" ] && c=1\n'
            'echo "{\\"correctness\\": $c}" > /logs/verifier/reward.json\n',
            "solution/solve.sh": SOLVE,
        },
        "style-only": {
            "tests/test.sh": "#!/bin/bash\n"
            'echo \'{"correctness": 0, "style": 1}\' > /logs/verifier/reward.json\n',
            "solution/solve.sh": SOLVE,
        },
    },
    "retry": {
        # the sandbox fails on the first try (HealthcheckError): Harbor deletes it and retries
        "flaky-start": {"tests/test.sh": ANSWER_CHECK, "solution/solve.sh": SOLVE},
        # the sandbox fails on every try: Harbor keeps the last failed trial
        "broken-start": {"tests/test.sh": ANSWER_CHECK, "solution/solve.sh": SOLVE},
        "echo-answer": {"tests/test.sh": ANSWER_CHECK, "solution/solve.sh": SOLVE},
    },
    "steps": {
        # two steps, both pass; the second one's agent times out after doing its work
        "two-steps": {
            "task.toml": "[verifier]\ntimeout_sec = 60.0\n\n[agent]\ntimeout_sec = 60.0\n\n"
            '[[steps]]\nname = "first"\n\n'
            '[[steps]]\nname = "second"\n[steps.agent]\ntimeout_sec = 2.0\n',
            "steps/first/instruction.md": "Write 42 to /app/answer.txt.\n",
            "steps/first/tests/test.sh": ANSWER_CHECK,
            "steps/first/solution/solve.sh": SOLVE,
            "steps/second/instruction.md": "Write 43 to /app/second.txt, then wait.\n",
            "steps/second/tests/test.sh": "#!/bin/bash\n"
            'if [ "$(cat /app/second.txt 2>/dev/null)" = "43" ]; then echo 1; else echo 0; fi'
            " > /logs/verifier/reward.txt\n",
            "steps/second/solution/solve.sh": "#!/bin/bash\necho 43 > /app/second.txt\nsleep 30\n",
        },
        # the first step passes, the second fails: Harbor's mean over steps gives 0.5
        "half-steps": {
            "task.toml": '[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n',
            "steps/first/instruction.md": "Write 42 to /app/answer.txt.\n",
            "steps/first/tests/test.sh": ANSWER_CHECK,
            "steps/first/solution/solve.sh": SOLVE,
            "steps/second/instruction.md": "Do nothing.\n",
            "steps/second/tests/test.sh": "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n",
            "steps/second/solution/solve.sh": "#!/bin/bash\ntrue\n",
        },
    },
}

JOBS = [
    # (job name, task set, agent, attempts, extra harbor run arguments)
    ("oracle-basic", "basic", "oracle", 3, []),
    ("nop-basic", "basic", "nop", 2, []),
    ("scripted-multikey", "multikey", "harbor_local_env:ScriptedAgent", 3, []),
    ("oracle-retry", "retry", "oracle", 2, ["--max-retries", "1"]),
    ("scripted-steps", "steps", "harbor_local_env:ScriptedAgent", 2, []),
]

KEEP_JOB = ("config.json", "lock.json", "result.json")
KEEP_TRIAL = ("config.json", "result.json")


def write_tasks(root: Path, name: str) -> Path:
    base = root / name
    for task, files in TASKS[name].items():
        folder = base / task
        defaults = {
            "task.toml": "[verifier]\ntimeout_sec = 60.0\n\n[agent]\ntimeout_sec = 60.0\n",
            "instruction.md": "Write 42 to /app/answer.txt.\n",
            "environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\n",
        }
        for rel, text in {**defaults, **files}.items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            if rel.endswith(".sh"):
                path.chmod(0o755)
    return base


def run_job(tasks: Path, jobs_dir: Path, job: str, agent: str, k: int, extra: list[str]) -> None:
    harbor = Path(sys.executable).with_name("harbor")
    markers = Path(tempfile.mkdtemp(prefix="harbor-markers-"))
    env = {
        **os.environ,
        "PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        "HARBOR_LOCAL_MARKERS": str(markers),
    }
    cmd = [
        str(harbor), "run", "--path", str(tasks), "--agent", agent, "--n-attempts", str(k),
        "--env", "harbor_local_env:LocalEnvironment", "--jobs-dir", str(jobs_dir),
        "--job-name", job, "--n-concurrent", "2", "--yes", "--quiet", *extra,
    ]  # fmt: skip
    subprocess.run(cmd, check=True, env=env, cwd=tasks.parent)
    shutil.rmtree(markers)


def trim(job_dir: Path) -> None:
    for entry in job_dir.iterdir():
        if entry.is_dir():
            for inner in entry.iterdir():
                if inner.name not in KEEP_TRIAL:
                    shutil.rmtree(inner) if inner.is_dir() else inner.unlink()
        elif entry.name not in KEEP_JOB:
            entry.unlink()


def harbor_figures(job_dir: Path) -> dict[str, object]:
    """What Harbor's own classes compute from the job folder."""
    from harbor.metrics.mean import Mean
    from harbor.models.job.lock import JobLock
    from harbor.models.job.result import JobResult
    from harbor.models.trial.result import TrialResult
    from harbor.utils.pass_at_k import compute_pass_at_k_by_evals

    trials = [
        TrialResult.model_validate_json((d / "result.json").read_text())
        for d in sorted(job_dir.iterdir())
        if d.is_dir()
    ]
    job = JobResult.model_validate_json((job_dir / "result.json").read_text())
    lock = JobLock.model_validate_json((job_dir / "lock.json").read_text())
    rewards = [t.verifier_result.rewards if t.verifier_result else None for t in trials]
    (pass_at_k,) = compute_pass_at_k_by_evals(trials).values() or [{}]
    return {
        "trials": {
            t.trial_name: {
                "task_name": t.task_name,
                "reward_valid": t.reward_valid,
                "failure_cause": None if t.failure_cause is None else str(t.failure_cause),
                "rewards": t.verifier_result.rewards if t.verifier_result else None,
                "exception_types": [e.exception_type for e in t._recorded_exceptions()],
                "token_cost_totals": list(t.compute_token_cost_totals()),
            }
            for t in trials
        },
        "mean": Mean().compute(rewards),
        "pass_at_k": {str(k): v for k, v in pass_at_k.items()},
        "stored_metrics": [m for s in job.stats.evals.values() for m in s.metrics],
        "stored_pass_at_k": {
            str(k): v for s in job.stats.evals.values() for k, v in s.pass_at_k.items()
        },
        "n_retries": job.stats.n_retries,
        "max_retries": lock.retry.max_retries,
    }


def main() -> None:
    if version("harbor") != HARBOR:
        sys.exit(f"these fixtures follow Harbor {HARBOR}; installed: {version('harbor')}")
    work = Path(tempfile.mkdtemp(prefix="harbor-fixtures-"))
    figures: dict[str, object] = {"harbor_version": HARBOR, "jobs": {}}
    for job, task_set, agent, k, extra in JOBS:
        tasks = work / "tasks" / task_set
        if not tasks.exists():
            write_tasks(work / "tasks", task_set)
        run_job(tasks, work / "jobs", job, agent, k, extra)
        out = HERE / job
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(work / "jobs" / job, out)
        trim(out)
        figures["jobs"][job] = harbor_figures(out)  # type: ignore[index]
    (HERE / "harbor_figures.json").write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
