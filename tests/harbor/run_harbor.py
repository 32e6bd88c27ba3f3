"""Run a Harbor dataset through Harbor 0.25.0's own Job API and print one JSON entry per trial.

Run by the Harbor venv's Python (``make harbor-venv``: ``.venv-harbor/bin/python``), never by
trialbook's::

    .venv-harbor/bin/python tests/harbor/run_harbor.py DATASET JOBS_DIR --k 3 \\
        --engine-args '{"global_args": ["--runtime", "runc"], "run_args": [], "label": "x"}'

Every task runs with Harbor's ``oracle`` and ``nop`` agents, k attempts each (``n_attempts``), in
:class:`podman_environment.PodmanCliEnvironment` (named by import path, Harbor itself unpatched);
``--sleeper TASK`` also runs :class:`sleeper_agent.SleeperAgent` on that one task. Every agent has
the task's own timeout, which in Harbor also counts the oracle's upload of solution/ and download
of its log (``podman cp`` and ``exec`` calls here: the 8 s task's oracle took 0.7-2.2 s on a loaded
2-core machine), where trialbook's counts the agent's command only. The output is
``[{task, agent, attempt, rewards, exception}, ...]``: ``rewards`` is Harbor's
``verifier_result.rewards`` (null when the verifier gave none), ``exception`` the type name of
``exception_info`` (null when none), ``attempt`` the order of starts within (task, agent), 0-based
(Harbor numbers no attempt: they are interchangeable).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the environment and the sleeper, by import path
# Harbor's LiteLLM would fetch a price list from the network (none here) at import
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harbor.job import Job  # noqa: E402 (after the path they are found on)
from harbor.models.job.config import DatasetConfig, JobConfig  # noqa: E402
from harbor.models.trial.config import AgentConfig, EnvironmentConfig  # noqa: E402
from harbor.models.trial.result import TrialResult  # noqa: E402

ENVIRONMENT = "podman_environment:PodmanCliEnvironment"
SLEEPER = "sleeper_agent:SleeperAgent"


def _job(
    name: str, jobs: Path, dataset: DatasetConfig, agents: list[AgentConfig], k: int,
    engine: dict[str, Any], concurrency: int,
) -> JobConfig:  # fmt: skip
    return JobConfig(
        job_name=name,
        jobs_dir=jobs,
        n_attempts=k,
        n_concurrent_trials=concurrency,
        quiet=True,
        environment=EnvironmentConfig(import_path=ENVIRONMENT, kwargs=engine),
        agents=agents,
        datasets=[dataset],
    )


def _entries(results: list[TrialResult]) -> list[dict[str, Any]]:
    def agent(result: TrialResult) -> str:
        return result.agent_info.name if result.agent_info else str(result.config.agent.name)

    ordered = sorted(results, key=lambda r: (r.task_name, agent(r), r.started_at or 0))
    seen: dict[tuple[str, str], int] = {}
    out = []
    for result in ordered:
        key = (result.task_name, agent(result))
        seen[key] = seen.get(key, -1) + 1
        verifier = result.verifier_result
        out.append(
            {
                "task": result.task_name,
                "agent": key[1],
                "attempt": seen[key],
                "rewards": verifier.rewards if verifier is not None else None,
                "exception": (
                    result.exception_info.exception_type if result.exception_info else None
                ),
            }
        )
    return out


async def _main(args: argparse.Namespace) -> list[dict[str, Any]]:
    engine = json.loads(args.engine_args)
    everything = DatasetConfig(path=args.dataset)
    configs = [
        _job("oracle-nop", args.jobs, everything,
             [AgentConfig(name="oracle"), AgentConfig(name="nop")], args.k, engine, args.jobs_n),
    ]  # fmt: skip
    if args.sleeper:
        only = DatasetConfig(path=args.dataset, task_names=[args.sleeper])
        configs.append(
            _job("sleeper", args.jobs, only, [AgentConfig(import_path=SLEEPER)], args.k, engine,
                 args.jobs_n)
        )  # fmt: skip
    jobs = [await Job.create(config) for config in configs]
    done = await asyncio.gather(*(job.run() for job in jobs))
    return _entries([trial for result in done for trial in result.trial_results])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("jobs", type=Path, help="Harbor's jobs_dir (a new folder)")
    parser.add_argument("--k", type=int, default=3, help="n_attempts (default 3)")
    parser.add_argument("--jobs-n", type=int, default=2, help="n_concurrent_trials per job")
    parser.add_argument("--sleeper", metavar="TASK", help="also run the sleeper on TASK")
    parser.add_argument(
        "--engine-args",
        default="{}",
        help='JSON {"global_args": [...], "run_args": [...], "label": ...}',
    )
    args = parser.parse_args()
    with contextlib.redirect_stdout(sys.stderr):  # Harbor's progress lines: stdout is the JSON
        entries = asyncio.run(_main(args))
    print(json.dumps(entries, indent=1))


if __name__ == "__main__":
    main()
