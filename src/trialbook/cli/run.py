"""``trialbook run``: an agent on a frozen suite, k sandboxed attempts per task, one row each."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from trialbook.cli._console import echo, width
from trialbook.cli._options import passed_env, sandbox_choice, user_errors
from trialbook.cli._progress import Progress

__all__ = ["run"]

EXIT_INTERRUPTED = 130
"""A run stopped by Ctrl-C or SIGTERM (resumable), as a shell reports SIGINT."""


@click.command()
@click.argument(
    "suite_dir",
    metavar="[SUITE]",
    required=False,
    type=click.Path(file_okay=False, path_type=Path),
)
@click.option(
    "--agent",
    help="Agent command, run through /bin/sh -c in the workspace (default: the project's).",
)
@click.option(
    "--ledger",
    "ledger",
    type=click.Path(dir_okay=False, path_type=Path),
    help="SQLite ledger (.db) to append to; created if absent. Raw output is kept beside it.",
)
@click.option("--system", help="Name of the system under test (agent + model + settings).")
@click.option(
    "--run-id", help="Id of the new run (default: SYSTEM-<UTC time>-<6 random hex digits>)."
)
@click.option(
    "--resume",
    "resume",
    metavar="ID",
    help="Resume run ID with its own suite, agent, sandbox and tasks: run its attempts without "
    "a row, and again (as a new row, retry + 1) those the harness lost.",
)
@click.option(
    "--rerun-infra",
    "rerun_infra",
    is_flag=True,
    help="With --resume: run again every attempt whose latest row is an infra_error (e.g. after "
    "fixing a sandbox), not only those the harness lost.",
)
@click.option(
    "--jobs",
    type=int,
    help="Attempts run at once (default: the project's, else 1; on Ray the cluster's CPUs).",
)
@sandbox_choice(process=" (the model gateway then needs --accept-open-network)")
@click.option(
    "--subset",
    "subset",
    metavar="NAME",
    help="Run only the tasks of this named subset of the suite (e.g. smoke).",
)
@click.option(
    "--task",
    "tasks",
    multiple=True,
    metavar="ID_OR_GLOB",
    help="Run only the tasks whose id matches (repeatable; shell globs such as 'repair-*').",
)
@click.option("--limit", type=int, metavar="N", help="Run only the first N of the selected tasks.")
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default=None,
    help="Where attempts run: local (a thread pool here, the default) or ray (each attempt a task "
    "on a Ray cluster; needs trialbook[ray]). This process is the only ledger writer.",
)
@click.option(
    "--ray-address",
    "ray_address",
    metavar="ADDRESS",
    help="Ray cluster to run on, e.g. 10.0.0.5:6379 (--executor ray; default: RAY_ADDRESS, "
    "else a Ray instance started here).",
)
@click.option(
    "--pass-env",
    "pass_env",
    multiple=True,
    metavar="NAME",
    help="Pass this variable of the caller's environment to the agent (repeatable; nothing else passes).",
)
@click.option(
    "--model-version",
    help="Model snapshot under test, recorded in the run and its rows (through the gateway, a "
    "row records the model the upstream answered instead, where its attempt called one).",
)
@click.option(
    "--model-upstream",
    "model_upstream",
    metavar="URL",
    help="Give the agent a model through the run's gateway, which forwards its OpenAI and "
    "Anthropic API calls to URL (e.g. https://api.openai.com) and meters them: tokens and cost "
    "in the row are the gateway's (docs/gateway.md).",
)
@click.option(
    "--model-key-env",
    "model_key_env",
    metavar="VAR",
    help="With --model-upstream: the variable holding the real API key (it stays in the harness).",
)
@click.option(
    "--prices",
    "prices",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --model-upstream: the price table (TOML, dollars per million tokens per model).",
)
@click.option(
    "--max-cost-per-attempt",
    "max_cost_per_attempt",
    type=float,
    metavar="DOLLARS",
    help="With --model-upstream: once an attempt's calls have cost this much or more, its next "
    "model call is refused.",
)
@click.option(
    "--max-tokens-per-attempt",
    "max_tokens_per_attempt",
    type=int,
    metavar="N",
    help="With --model-upstream: once an attempt has used this many tokens or more, its next "
    "model call is refused.",
)
@click.option(
    "--network",
    "network",
    type=click.Choice(["model"]),
    help="With --model-upstream: every task reaches the model gateway and nothing else, as if it "
    'declared network = "model" (even one with network = true).',
)
@click.option(
    "--accept-open-network",
    "accept_open_network",
    is_flag=True,
    default=None,
    help="With --model-upstream in the process tier: accept that the agent can reach the "
    "internet beside the gateway and read the harness's environment (the real key).",
)
@click.option("--rerun-reason", help="Why this run repeats an earlier one (recorded in the run).")
@user_errors
def run(
    suite_dir: Path | None,
    agent: str | None,
    ledger: Path | None,
    system: str | None,
    run_id: str | None,
    resume: str | None,
    rerun_infra: bool,
    jobs: int | None,
    sandbox: str | None,
    subset: str | None,
    tasks: tuple[str, ...],
    limit: int | None,
    executor: str | None,
    ray_address: str | None,
    pass_env: tuple[str, ...],
    model_version: str | None,
    model_upstream: str | None,
    model_key_env: str | None,
    prices: Path | None,
    max_cost_per_attempt: float | None,
    max_tokens_per_attempt: int | None,
    accept_open_network: bool | None,
    network: str | None,
    rerun_reason: str | None,
) -> None:
    """Run an agent on a frozen suite: k attempts per task, each in a fresh sandboxed workspace,
    under the suite's timeout, one ledger row per finished attempt.

    In a project with a trialbook.toml (or [tool.trialbook] in pyproject.toml) naming the suite,
    agent and ledger, 'trialbook run' alone runs it; options given here take precedence. The
    --model-* settings may also come from a [model] table: each option given here wins over
    trialbook.toml's, which wins over suite.toml's; a resume reads neither (its run's record
    keeps them).

    Before the first attempt, the agent's and graders' programs are checked inside the sandbox.
    Ctrl-C (or SIGTERM) stops cleanly: running attempts are killed and left without a row, and
    the command printed then resumes the run.
    """

    from trialbook import report as render
    from trialbook.cli._signals import stop_on_signals
    from trialbook.errors import ArgumentError
    from trialbook.harness import ModelOptions, RunOptions, load_project, run_suite
    from trialbook.suite import ModelTable

    if resume is not None and (run_id is not None or system is not None):
        raise ArgumentError(
            "--resume takes the run's own id, system and settings: drop --run-id/--system"
        )
    model = ModelTable(
        upstream=model_upstream,
        key_env=model_key_env,
        prices=prices,
        max_cost_per_attempt=max_cost_per_attempt,
        max_tokens_per_attempt=max_tokens_per_attempt,
        accept_open_network=accept_open_network,
    )
    # the [model] tables below the options given here: trialbook.toml's, then suite.toml's
    tables: list[tuple[Path, ModelTable]] = []
    project = load_project(Path.cwd())
    if project is not None:
        ledger = ledger or project.ledger
        if resume is None:  # a resume takes its settings from the run's record, not the file
            suite_dir = suite_dir or project.suite
            agent = agent or project.agent
            system = system or project.system
            sandbox = sandbox or project.sandbox
            pass_env = pass_env or project.pass_env
            if project.model is not None:
                tables.append((project.path, project.model))
        jobs = jobs or project.jobs
        executor = executor or project.executor
        ray_address = ray_address or project.ray_address
    if resume is None and suite_dir is not None:
        from trialbook.suite import suite_model

        # suite.toml alone: the run reads the whole suite once, later
        if (table := suite_model(suite_dir)) is not None:
            tables.append((suite_dir / "suite.toml", table))
    for _, table in tables:
        model = model.over(table)
    executor = executor or "local"
    if ray_address is not None and executor != "ray":
        raise ArgumentError("--ray-address needs --executor ray")
    if ledger is None:
        raise ArgumentError("give --ledger, or a ledger in trialbook.toml (docs/cli.md)")
    if resume is None and suite_dir is None:
        raise ArgumentError("give the SUITE folder, or a suite in trialbook.toml (docs/cli.md)")
    if resume is None and agent is None:
        raise ArgumentError("give --agent, or an agent in trialbook.toml (docs/cli.md)")
    if run_id is not None and ledger.suffix.lower() == ".db" and ledger.is_file():
        from trialbook.harness import list_runs

        if any(r.run_id == run_id for r in list_runs(ledger)):
            raise ArgumentError(
                f"--run-id: run {run_id!r} already exists in {ledger}: to finish it, "
                f"--resume {run_id}; for a new run, leave out --run-id (or give a new id)"
            )
    model_options = None
    if model.upstream is not None:
        if model.key_env is None:
            raise ArgumentError(
                "--model-upstream needs --model-key-env VAR (the real key's variable)"
            )
        model_options = ModelOptions(
            upstream=model.upstream,
            key_env=model.key_env,
            prices=model.prices,
            max_cost_per_attempt=model.max_cost_per_attempt,
            max_tokens_per_attempt=model.max_tokens_per_attempt,
            accept_open_network=bool(model.accept_open_network),
        )
    else:
        given = [
            flag
            for flag, value in (
                ("--model-key-env", model_key_env),
                ("--prices", prices),
                ("--max-cost-per-attempt", max_cost_per_attempt),
                ("--max-tokens-per-attempt", max_tokens_per_attempt),
                ("--accept-open-network", accept_open_network),
                ("--network", network),
            )
            if value is not None
        ]
        if given:
            raise ArgumentError(f"{given[0]} needs --model-upstream")
        for path, table in tables:  # a file's setting for a gateway that no one starts
            if keys := table.keys_set():
                raise ArgumentError(
                    f"{path}: model.{keys[0]}: needs an upstream (model.upstream in a [model] "
                    "table, or --model-upstream)"
                )
    env = passed_env(pass_env)
    options = RunOptions(
        suite=suite_dir,
        agent=agent,
        ledger=ledger,
        system=system,
        run_id=run_id,
        resume=resume,
        rerun_infra=rerun_infra,
        jobs=jobs,
        sandbox=sandbox,
        subset=subset,
        tasks=tasks,
        limit=limit,
        executor=executor,
        ray_address=ray_address,
        pass_env=env,
        model_version=model_version,
        rerun_reason=rerun_reason,
        model=model_options,
        network_model=network == "model",
    )
    with stop_on_signals() as stop, Progress() as progress:
        result = run_suite(options, progress=progress, stop=stop)
    echo(render.run_text(result, program=program_name(), width=width()))
    if result.interrupted:
        sys.exit(EXIT_INTERRUPTED)


def program_name() -> str:
    """How to call this trialbook again from a shell: ``trialbook`` when that is what the PATH
    finds, else the script's path, else ``PYTHON -m trialbook``."""
    import shlex
    import shutil

    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "trialbook" and script.is_file():
        found = shutil.which("trialbook")
        if found is not None and Path(found).resolve() == script.resolve():
            return "trialbook"
        return shlex.quote(str(script.resolve()))
    return f"{shlex.quote(sys.executable)} -m trialbook"
