"""The command line: parse -> call one library function -> render -> exit code.

Exit codes: 0 success; 1 a gate failed; 2 bad input or usage, one line per problem, no traceback.
numpy, scipy, pyarrow and rich are imported inside the commands so that ``trialbook --help`` is quick.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click

from trialbook.analysis import IntervalOptions
from trialbook.errors import ArgumentError, TrialbookError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_GATE, EXIT_USAGE = 0, 1, 2


def _fail(problems: tuple[str, ...] | list[str]) -> None:
    for line in problems:
        click.echo(f"trialbook: error: {line}", err=True)
    sys.exit(EXIT_USAGE)


def _user_errors(fn: F) -> F:
    """Turn library errors about the user's input into one line each and exit 2."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ArgumentError as exc:
            _fail([_as_flag(exc.argument, line) for line in exc.problems])
        except TrialbookError as exc:
            _fail(exc.problems)
        except OSError as exc:
            _fail([f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")])
        return None

    return wrapper  # type: ignore[return-value]


def _as_flag(argument: str | None, line: str) -> str:
    """A library message about a Python argument, spoken of as the command's flag for it."""
    ctx = click.get_current_context(silent=True)
    if argument is None or ctx is None:
        return line
    for param in ctx.command.params:
        if param.name == argument and isinstance(param, click.Option):
            flag = max(param.opts, key=len)
            if line.startswith(f"{argument} "):
                return flag + line[len(argument) :]
            return f"{flag}: {line}"
    return line


def _parse_ks(_: click.Context, __: click.Parameter, value: str | None) -> tuple[int, ...] | None:
    if value is None:
        return None
    ks: list[int] = []
    for part in value.split(","):
        text = part.strip()
        if not text.isdigit() or int(text) < 1:
            raise click.BadParameter(
                f"expected whole numbers >= 1 separated by commas, got {value!r}"
            )
        ks.append(int(text))
    return tuple(sorted(set(ks)))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="trialbook")
def main() -> None:
    """trialbook: agent scores you can defend.

    Run an agent on a frozen suite (k sandboxed attempts per task, one ledger row each), score a
    ledger (pass@k and pass^k with intervals that resample tasks, the effort and cost behind them),
    compare two runs, plan a design, or work pass@k out by hand. Ledgers are .db (SQLite), .jsonl or
    .csv, one row per attempt; see docs/ledger.md.
    """


def entry() -> None:
    """The console script: ``main`` in a process of its own.

    pyarrow imports pandas (0.4 s) on its first call whenever pandas is installed, only to check
    whether its arguments are pandas objects; a trialbook command never passes one, so the command
    line process refuses the import. (Library users and in-process callers of ``main`` are not
    affected.)
    """
    if "pandas" not in sys.modules:
        sys.meta_path.insert(0, _NoPandas())
    main()


class _NoPandas:
    """An import finder that refuses pandas (pyarrow then skips its pandas integration)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("the trialbook command line does not use pandas")


_FORMAT = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown"]),
    default="table",
    show_default=True,
    help="Output format. JSON is versioned (trialbook.score/1).",
)


def _interval_options(fn: F) -> F:
    """--confidence, --resamples, --seed and --ci, shared by every command that draws intervals.

    The defaults are IntervalOptions' own: one place for them in the whole project.
    """
    defaults = IntervalOptions()
    for option in reversed(
        (
            click.option(
                "--confidence",
                default=defaults.confidence,
                show_default=True,
                help="Two-sided interval level.",
            ),
            click.option(
                "--resamples",
                default=defaults.resamples,
                show_default=True,
                help="Bootstrap resamples over tasks.",
            ),
            click.option(
                "--seed",
                default=defaults.seed,
                show_default=True,
                help="Bootstrap seed (reported with the interval).",
            ),
            click.option(
                "--ci",
                "method",
                type=click.Choice(["percentile", "bca"]),
                default=defaults.method,
                show_default=True,
                help="Bootstrap interval method.",
            ),
        )
    ):
        fn = option(fn)
    return fn


@main.command()
@click.argument("ledger", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--run", "run", help="Score only this run_id (default: every run in the ledger).")
@click.option(
    "--k",
    "ks",
    callback=_parse_ks,
    metavar="K[,K...]",
    help="Budgets for pass@k and pass^k, e.g. 1,2,5. Default: 1 and every k up to the smallest "
    "number of attempts of any task. A k above some task's attempts is an error naming them.",
)
@_interval_options
@click.option(
    "--weights",
    type=click.Choice(["equal", "declared"]),
    default="equal",
    show_default=True,
    help="Mean over tasks with equal weight, or with each task's declared 'weight'.",
)
@click.option(
    "--drop-infra-errors",
    is_flag=True,
    help="Drop attempts with status infra_error instead of counting them as failures "
    "(the report says so).",
)
@_FORMAT
@_user_errors
def score(
    ledger: Path,
    run: str | None,
    ks: tuple[int, ...] | None,
    confidence: float,
    resamples: int,
    seed: int,
    method: str,
    weights: str,
    drop_infra_errors: bool,
    fmt: str,
) -> None:
    """Score LEDGER: pass@k and pass^k per run, with task-bootstrap intervals and companion figures.

    LEDGER is a SQLite ledger (.db) or a .jsonl / .csv file. Every row is validated first; a ledger with any problem prints one line per problem (file, line,
    task, field) and no rate at all, and exits 2.
    """
    from trialbook.analysis import ScoreOptions, score_file

    options = ScoreOptions(
        ks=ks,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        method=method,  # type: ignore[arg-type]
        weights=weights,  # type: ignore[arg-type]
        drop_infra_errors=drop_infra_errors,
    )
    report = score_file(ledger, run=run, options=options)
    _emit_score(report, fmt)


def _emit_score(report: Any, fmt: str) -> None:
    from trialbook import report as render

    if fmt == "json":
        click.echo(render.to_json(render.score_to_dict(report)))
    elif fmt == "markdown":
        click.echo(render.score_markdown(report), nl=False)
    else:
        from rich.console import Console

        Console().print(render.score_table(report))


@main.command()
@click.argument("baseline")
@click.argument("candidate")
@click.option(
    "--metric", default="pass@1", show_default=True, help="pass@K or pass^K, e.g. pass@1, pass^3."
)
@click.option(
    "--gate",
    type=click.Choice(["fail-on-regression", "require-improvement"]),
    help="Turn the decision into the exit code: 1 on a regression, or 1 unless an improvement.",
)
@_interval_options
@click.option(
    "--allow-different-suites",
    is_flag=True,
    help="Compare runs on different dataset_ids (said first).",
)
@click.option(
    "--allow-grader-change", is_flag=True, help="Compare runs graded by different grader versions."
)
@_FORMAT
@_user_errors
def compare(
    baseline: str,
    candidate: str,
    metric: str,
    gate: str | None,
    confidence: float,
    resamples: int,
    seed: int,
    method: str,
    allow_different_suites: bool,
    allow_grader_change: bool,
    fmt: str,
) -> None:
    """Compare BASELINE and CANDIDATE task by task (each LEDGER or LEDGER:RUN_ID).

    Decision (seed 003): improvement when the interval of the difference lies above 0, regression when
    below, otherwise no detectable difference. Exit 1 when --gate fails, 2 on bad input.
    """
    from trialbook import report as render
    from trialbook.analysis import CompareOptions, compare_runs

    result = compare_runs(
        baseline,
        candidate,
        CompareOptions(
            metric=metric,
            confidence=confidence,
            resamples=resamples,
            seed=seed,
            method=method,  # type: ignore[arg-type]
            allow_different_suites=allow_different_suites,
            allow_grader_change=allow_grader_change,
        ),
    )
    if fmt == "json":
        click.echo(render.to_json(render.compare_to_dict(result)))
    else:
        click.echo(render.compare_text(result, markdown=fmt == "markdown"), nl=False)
    failed = (gate == "fail-on-regression" and result.decision == "regression") or (
        gate == "require-improvement" and result.decision != "improvement"
    )
    if gate:
        click.echo(f"gate {gate}: {'FAILED' if failed else 'passed'} ({result.decision})", err=True)
    if failed:
        sys.exit(EXIT_GATE)


@main.command()
@click.option("--tasks", "tasks", type=int, required=True, help="T: tasks in the design.")
@click.option(
    "--runs",
    "attempts",
    type=int,
    default=1,
    show_default=True,
    help="R: independent attempts (runs) of each task.",
)
@click.option("--baseline", type=float, help="Assumed baseline pass rate (or from --pilot).")
@click.option("--effect", type=float, required=True, help="Difference to detect, e.g. 0.03.")
@click.option("--alpha", default=0.05, show_default=True, help="Two-sided significance level.")
@click.option("--power", default=0.8, show_default=True, help="Target power.")
@click.option(
    "--between-var",
    type=float,
    help="Between-task variance of true rates (default: half of P(1-P)).",
)
@click.option(
    "--within-var", type=float, help="Within-task variance of attempts (default: half of P(1-P))."
)
@click.option(
    "--agreement", type=float, help="Share of tasks where two systems agree (paired designs)."
)
@click.option(
    "--pilot",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Estimate variances from a pilot ledger (two runs also give the agreement).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@_user_errors
def plan(
    tasks: int,
    attempts: int,
    baseline: float | None,
    effect: float,
    alpha: float,
    power: float,
    between_var: float | None,
    within_var: float | None,
    agreement: float | None,
    pilot: Path | None,
    fmt: str,
) -> None:
    """What T tasks x R attempts can detect: SE, interval half-width, MDE unpaired and paired, power."""
    from trialbook import report as render
    from trialbook.analysis import plan_from_options

    result = plan_from_options(
        tasks=tasks,
        attempts=attempts,
        baseline=baseline,
        effect=effect,
        alpha=alpha,
        power=power,
        between_var=between_var,
        within_var=within_var,
        agreement=agreement,
        pilot=pilot,
    )
    if fmt == "json":
        click.echo(render.to_json(render.plan_to_dict(result)))
    else:
        click.echo(render.plan_text(result), nl=False)


@main.command()
@click.option("--n", "n", type=int, required=True, help="Attempts made (candidates generated).")
@click.option("--c", "c", type=int, required=True, help="Attempts that passed.")
@click.option("--k", "k", type=int, required=True, help="Attempts allowed per task.")
@click.option(
    "--clamp",
    is_flag=True,
    help="Cut c and k to n, as seed 000's widget does, and show the effective values.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@_user_errors
def passk(n: int, c: int, k: int, clamp: bool, fmt: str) -> None:
    """Work out pass@k and pass^k for one task by hand, every step shown (seed 000)."""
    from trialbook.stats import pass_k_steps

    s = pass_k_steps(n, c, k, clamp=clamp)
    if fmt == "json":
        doc = {
            "schema": "trialbook.passk/1",
            "n": s.n,
            "c": s.c,
            "k": s.k,
            "clamped": list(s.clamped),
            "C(n,k)": s.total,
            "C(n-c,k)": s.all_fail,
            "C(c,k)": s.all_pass,
            "pass@k": s.pass_at_k,
            "pass^k": s.pass_hat_k,
            "independent_pass@k": s.independent,
            "independent_pass^k": s.independent_hat,
        }
        click.echo(json.dumps(doc, indent=2))
        return
    lines = [f"effective settings: n={s.n}, c={s.c}, k={s.k}"]
    if s.clamped:
        lines[0] += f"   (clamped: {'; '.join(s.clamped)})"
    nc = s.n - s.c
    lines += [
        f"C(n, k)   = C({s.n},{s.k}) = {s.total}   ways to choose {s.k} of the {s.n} attempts",
        f"C(n-c, k) = C({nc},{s.k}) = {s.all_fail}   of them hold no pass",
        f"pass@{s.k} = 1 - {s.all_fail}/{s.total} = {100 * s.pass_at_k:.2f}%"
        "   (at least one of k attempts passes)",
        f"C(c, k)   = C({s.c},{s.k}) = {s.all_pass}   of them hold only passes",
        f"pass^{s.k} = {s.all_pass}/{s.total} = {100 * s.pass_hat_k:.2f}%   (all k attempts pass)",
        "",
        f"independent trials at p = c/n = {s.c}/{s.n}: 1 - (1 - {s.c / s.n:.4g})^{s.k} = "
        f"{100 * s.independent:.2f}%, and p^k = {100 * s.independent_hat:.2f}%",
        "why they differ: pass@k above counts draws of k from the n attempts already made (without",
        "replacement), which is the unbiased estimate; 1 - (1 - c/n)^k plugs the observed rate into",
        "the with-replacement formula, which is biased low as an estimate of pass@k. Retries that read",
        "earlier failures are not independent at all: say which protocol produced the attempts.",
    ]
    click.echo("\n".join(lines))


_table_or_json = click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)


@main.group()
def suite() -> None:
    """Freeze a suite (dataset_id, oracle-leak quarantine) and check its lock."""


@suite.command(name="freeze")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@_table_or_json
@_user_errors
def suite_freeze(directory: Path, fmt: str) -> None:
    """Hash every prompt, fixture, oracle, grader and budget field into the dataset_id, quarantine
    tasks whose oracle leaks into their prompt or fixture, and write suite.lock.json."""
    from trialbook import report as render
    from trialbook.suite import freeze, load_suite, write_lock

    loaded = load_suite(directory)
    lock = freeze(loaded)
    path = write_lock(loaded, lock)
    if fmt == "json":
        click.echo(render.to_json(lock.to_dict()))
    else:
        click.echo(render.lock_text(lock, str(path)))


@suite.command(name="check")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@_table_or_json
@_user_errors
def suite_check(directory: Path, fmt: str) -> None:
    """Say whether suite.lock.json still matches the files (exit 1 when stale or missing)."""
    from trialbook import report as render
    from trialbook.suite import check_lock

    result = check_lock(directory)
    if fmt == "json":
        data = {
            "schema": "trialbook.suite_check/1",
            "matches": result.matches,
            "locked_dataset_id": result.locked_id,
            "dataset_id": result.current.dataset_id,
            "changed": list(result.changed),
        }
        click.echo(render.to_json(data))
    else:
        click.echo(render.lock_check_text(result, str(directory)))
    if not result.matches:
        sys.exit(EXIT_GATE)


_sandbox_option = click.option(
    "--sandbox",
    type=click.Choice(["auto", "bwrap", "process"]),
    default="auto",
    show_default=True,
    help=(
        "auto: bubblewrap where it works, else the process tier (and say so); bwrap: require it; "
        "process: own session + rlimits only."
    ),
)


@main.command(name="grader-check")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@_sandbox_option
@click.option("--jobs", default=1, show_default=True, help="Graders run at once.")
@_table_or_json
@_user_errors
def grader_check(directory: Path, sandbox: str, jobs: int, fmt: str) -> None:
    """Run each task's grader on its untouched fixture (must fail), its reference/ (must pass) and
    each decoys/<name>/ (must fail); print false accepts and false rejects; exit 1 if any."""
    from trialbook import report as render
    from trialbook.errors import ArgumentError
    from trialbook.harness import grader_check as check
    from trialbook.harness import resolve_tier
    from trialbook.suite import load_suite

    if jobs < 1:
        raise ArgumentError(f"--jobs must be >= 1, got {jobs}")
    loaded = load_suite(directory)
    try:
        tier, note = resolve_tier(sandbox)
    except ValueError as exc:
        raise ArgumentError(str(exc)) from None
    if note:
        click.echo(note, err=True)
    result = check(loaded, tier, jobs)
    if fmt == "json":
        click.echo(render.to_json(render.grader_check_to_dict(result)))
    else:
        click.echo(render.grader_check_text(result))
    if result.false_accepts or result.false_rejects:
        sys.exit(EXIT_GATE)


@main.command()
@click.argument("suite_dir", metavar="SUITE", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--agent", required=True, help="Agent command, run through /bin/sh -c in the workspace."
)
@click.option(
    "--ledger",
    "ledger_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="SQLite ledger (.db) to append to; created if absent. Raw output is kept beside it.",
)
@click.option("--system", help="Name of the system under test (agent + model + settings).")
@click.option("--run-id", help="Id of the new run (default: SYSTEM-<UTC time>).")
@click.option(
    "--resume", "resume", metavar="ID", help="Resume run ID: run only its attempts without a row."
)
@click.option("--jobs", default=1, show_default=True, help="Attempts run at once.")
@_sandbox_option
@click.option("--tier", "tier", help="Run only the tasks of this suite tier (e.g. smoke).")
@click.option(
    "--executor",
    type=click.Choice(["local"]),
    default="local",
    show_default=True,
    help="Where attempts run (a thread pool here; the driver is the only ledger writer).",
)
@click.option(
    "--pass-env",
    "pass_env",
    multiple=True,
    metavar="NAME",
    help="Pass this variable of the caller's environment to the agent (repeatable; nothing else passes).",
)
@click.option("--model-version", help="Model snapshot under test, recorded in every row.")
@click.option("--rerun-reason", help="Why this run repeats an earlier one (recorded in the run).")
@_user_errors
def run(
    suite_dir: Path,
    agent: str,
    ledger_path: Path,
    system: str | None,
    run_id: str | None,
    resume: str | None,
    jobs: int,
    sandbox: str,
    tier: str | None,
    executor: str,
    pass_env: tuple[str, ...],
    model_version: str | None,
    rerun_reason: str | None,
) -> None:
    """Run an agent on a frozen suite: k attempts per task, each in a fresh sandboxed workspace,
    under the suite's timeout, one ledger row per finished attempt.

    Ctrl-C (or SIGTERM) stops cleanly: running attempts are killed and left without a row, and
    --resume ID runs them again later.
    """
    import os
    import signal
    import threading

    from trialbook import report as render
    from trialbook.errors import ArgumentError
    from trialbook.harness import RunOptions, run_suite

    if resume is not None and (run_id is not None or system is not None):
        raise ArgumentError(
            "--resume takes the run's own id, system and settings: drop --run-id/--system"
        )
    missing = [name for name in pass_env if name not in os.environ]
    if missing:
        raise ArgumentError(f"--pass-env: not set in this environment: {', '.join(missing)}")
    options = RunOptions(
        suite=suite_dir,
        agent=agent,
        ledger=ledger_path,
        system=system,
        run_id=run_id,
        resume=resume,
        jobs=jobs,
        sandbox=sandbox,
        tier=tier,
        executor=executor,
        pass_env={name: os.environ[name] for name in pass_env},
        model_version=model_version,
        rerun_reason=rerun_reason,
    )
    stop = threading.Event()

    def on_signal(signum: int, _: object) -> None:
        if not stop.is_set():
            click.echo(
                f"\nstopping ({signal.Signals(signum).name}): killing running attempts", err=True
            )
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with _Progress() as progress:
            result = run_suite(options, progress=progress, stop=stop)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    click.echo(render.run_text(result))
    if result.interrupted:
        sys.exit(130)


class _Progress:
    """A rich progress bar on a terminal, one plain line per attempt otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.passes = self.timeouts = self.infra = self.done = 0
        self.total = 0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *_: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def begin(self, run_id: str, total: int, done: int, notes: Any) -> None:
        for note in notes:
            click.echo(note, err=True)
        self.total, self.done = total, done
        click.echo(
            f"run {run_id}: {total - done} attempts to run ({done} already in the ledger)", err=True
        )
        if self.tty:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeRemainingColumn(),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task("attempts", total=total, completed=done, stats="")

    def attempt(self, row: Any) -> None:
        self.done += 1
        self.passes += bool(row["passed"])
        self.timeouts += bool(row["timed_out"])
        self.infra += row["status"] == "infra_error"
        stats = f"passed {self.passes} · timed out {self.timeouts} · infra errors {self.infra}"
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, stats=stats)
        else:
            click.echo(
                f"[{self.done}/{self.total}] {row['task_id']} #{row['attempt_index']}: {row['status']} "
                f"({float(row['elapsed_s']):.1f} s) · {stats}",
                err=True,
            )


@main.command(name="import")
@click.argument("fmt", metavar="jsonl|csv", type=click.Choice(["jsonl", "csv"]))
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--ledger",
    "ledger_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The SQLite ledger (.db) to append to; created if absent.",
)
@click.option(
    "--run-id",
    help="Run id for files whose rows carry none (default: each file's name without suffix).",
)
@_user_errors
def import_(fmt: str, files: tuple[Path, ...], ledger_path: Path, run_id: str | None) -> None:
    """Append ledger files to a SQLite ledger: every row validated, all files or none.

    Rows are never overwritten: an attempt already in the ledger, or a k_budget that differs from
    the run's, refuses the whole import. A run the ledger lacks is created from what its rows agree
    on (system, dataset_id, k_budget, versions).
    """
    from trialbook.ledger import import_files, read_ledger

    problems: list[str] = []
    for path in files:
        if path.suffix.lower() != f".{fmt}":
            problems.append(f"{path}: expected a .{fmt} file for 'trialbook import {fmt}'")
    if ledger_path.suffix.lower() != ".db":
        problems.append(f"--ledger: expected a .db file, got {str(ledger_path)!r}")
    if problems:
        _fail(problems)
    ledgers = [read_ledger(path, default_run=run_id) for path in files]
    if run_id is not None:
        for path, ledger in zip(files, ledgers, strict=True):
            if ledger.run_ids != (run_id,):
                others = ", ".join(repr(r) for r in ledger.run_ids)
                _fail(
                    [
                        f"{path}: its rows name run {others}; --run-id applies only to rows without one"
                    ]
                )
    count = import_files(ledger_path, ledgers)
    runs = sorted({r for ledger in ledgers for r in ledger.run_ids})
    click.echo(
        f"imported {count} attempt{'s' if count != 1 else ''} of run{'s' if len(runs) != 1 else ''} "
        f"{', '.join(runs)} into {ledger_path}"
    )


@main.command()
@click.argument("ledger", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--run", "run_id", help="Export only this run_id (default: every run).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv", "parquet"]),
    required=True,
    help="Interchange format: every field of every row, types kept, unknown as null.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File to write (default: standard output). Written whole or not at all.",
)
@_user_errors
def export(ledger: Path, run_id: str | None, fmt: str, output: Path | None) -> None:
    """Write a ledger (.db, .jsonl or .csv) as JSONL, CSV or Parquet."""
    import os
    import tempfile

    from trialbook.ledger import read_ledger, write_ledger

    rows = read_ledger(ledger)
    if run_id is not None:
        if run_id not in rows.run_ids:
            known = ", ".join(repr(r) for r in rows.run_ids)
            _fail([f"--run: no run {run_id!r} in {ledger} (runs: {known})"])
        rows = rows.subset(rows.codes["run_id"] == rows.labels["run_id"].index(run_id))
    if output is None:
        if fmt == "parquet" and sys.stdout.isatty():
            _fail(["--format parquet is binary: give -o FILE or redirect standard output"])
        write_ledger(rows, fmt, sys.stdout.buffer)  # type: ignore[arg-type]
        sys.stdout.buffer.flush()
        return
    if not output.parent.is_dir():
        _fail([f"-o: no such folder {str(output.parent)!r}"])
    fd, tmp = tempfile.mkstemp(dir=output.parent, suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as fh:
            count = write_ledger(rows, fmt, fh)  # type: ignore[arg-type]
        os.replace(tmp, output)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    click.echo(f"wrote {count} attempts to {output}", err=True)


@main.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("demo-output"),
    show_default=True,
    help="Folder for the ledger, raw output and reports.",
)
@click.option("--jobs", default=2, show_default=True, help="Attempts run at once.")
@_sandbox_option
@_user_errors
def demo(out: Path, jobs: int, sandbox: str) -> None:
    """Run two SIMULATED agents on the bundled suite through the harness, score both, compare them.

    The suite is real (small Python tasks with real tests); the agents are simulators that apply a
    correct or a plausible wrong fix by seeded chance, sometimes hang or leave a process behind.
    """
    import sys as _sys
    from datetime import UTC, datetime

    from rich.console import Console

    from trialbook import report as render
    from trialbook.analysis import compare_runs, score_file
    from trialbook.demo import SUITE_DIR
    from trialbook.harness import RunOptions, run_suite

    console = Console()
    console.print(
        "[bold yellow]SIMULATED AGENTS[/] — the suite is real (21 small Python tasks with real tests, "
        "one more quarantined for a leaked oracle), but both agents are simulators: no model is "
        "called. Each applies a correct or a plausible wrong fix by seeded chance (the candidate a "
        "little more often), sometimes hangs past the timeout or leaves a process behind. These "
        "numbers show the method, not a system."
    )
    import shutil

    from trialbook.suite import LOCK_NAME, freeze, load_suite, write_lock

    out.mkdir(parents=True, exist_ok=True)
    suite_dir = out / "suite"
    shutil.rmtree(suite_dir, ignore_errors=True)
    shutil.copytree(SUITE_DIR, suite_dir, ignore=shutil.ignore_patterns(LOCK_NAME, "__pycache__"))
    suite = load_suite(suite_dir)
    lock = freeze(suite)
    console.print("\n[bold]freeze[/] (a copy of the bundled suite):")
    console.print(render.lock_text(lock, str(write_lock(suite, lock))), markup=False)
    ledger = out / "ledger.db"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    runs: dict[str, str] = {}
    for name in ("baseline", "candidate"):
        console.print(f"\n[bold]{name}[/]: k attempts per task through the harness ...")
        with _Progress() as progress:
            result = run_suite(
                RunOptions(
                    suite=suite_dir,
                    agent=f"{_sys.executable} -m trialbook.demo.agent {name}",
                    ledger=ledger,
                    system=f"simulated-{name}",
                    run_id=f"{name}-{stamp}",
                    jobs=jobs,
                    sandbox=sandbox,
                    model_version="simulator",
                ),
                progress=progress,
            )
        console.print(render.run_text(result))
        runs[name] = result.run_id
    for name, run_id in runs.items():
        report = score_file(ledger, run=run_id)
        console.print(render.score_table(report))
        (out / f"{name}-score.json").write_text(render.to_json(render.score_to_dict(report)) + "\n")
        (out / f"{name}-score.md").write_text(render.score_markdown(report))
    result_cmp = compare_runs(f"{ledger}:{runs['baseline']}", f"{ledger}:{runs['candidate']}")
    console.print(render.compare_text(result_cmp), markup=False)
    (out / "compare.json").write_text(render.to_json(render.compare_to_dict(result_cmp)) + "\n")
    (out / "compare.md").write_text(render.compare_text(result_cmp, markdown=True))
    console.print(
        f"\neverything is in {out}/: suite/ (the frozen copy that ran), "
        f"ledger.db (both runs; export with 'trialbook export'), "
        f"ledger.transcripts/ (raw agent and grader output per attempt), "
        f"baseline-score.json/md, candidate-score.json/md, compare.json/md"
    )


if __name__ == "__main__":  # pragma: no cover
    entry()
