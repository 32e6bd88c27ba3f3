"""Everything the HTML report shows, as frozen results: each run's scorecard, budget replay and
task x attempt outcome grid, and the paired comparison of runs on the same suite.

The scorecards are :func:`score_ledger`'s, the replays :func:`budget_replay`'s and the comparisons
:func:`compare_runs`'s, unchanged; what this module adds is read off the ledger (each attempt's
outcome and where its raw output was kept) and which runs are compared with which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from trialbook.analysis._budget import RunBudget, budget_replay
from trialbook.analysis._compare import CompareOptions, Comparison, TaskDifference
from trialbook.analysis._protocol import METRIC
from trialbook.analysis._results import AcrossRuns, RunScore, ScoreReport
from trialbook.analysis._score import ScoreOptions, score_ledger
from trialbook.errors import ArgumentError, TrialbookError
from trialbook.ledger import Ledger

__all__ = [
    "AttemptOutcome",
    "Outcome",
    "PairedRuns",
    "Report",
    "ReportOptions",
    "RunReport",
    "TaskOutcomes",
    "build_report",
]

Outcome = Literal["pass", "fail", "timeout", "infra_error"]


@dataclass(frozen=True)
class ReportOptions(ScoreOptions):
    """How to score each run (ScoreOptions) and which metric the comparisons pair on."""

    metric: str = "pass@1"
    """pass@K or pass^K for the paired comparisons."""
    baseline: str | None = None
    """The run every other run on its suite is compared with (default: the first run given)."""


@dataclass(frozen=True)
class AttemptOutcome:
    """One attempt, as the outcome grid shows it."""

    attempt_index: int
    """Its index within the task."""
    outcome: Outcome
    """pass, fail, timeout (stopped at the limit and not passed) or infra_error."""
    timed_out: bool
    """Whether the harness stopped it at the limit (a run graded after timeout may still pass)."""
    elapsed_s: float | None
    """Wall-clock seconds (None when the source did not record them)."""
    model_calls: int | None
    """Its calls through the run's model gateway (None: no gateway, or not recorded)."""
    model_call_s: float | None
    """Wall-clock seconds in those calls, summed over calls (None: not recorded)."""
    error: str | None
    """What went wrong, in words, if recorded."""
    transcript: str | None
    """Absolute path of the folder holding its raw output, when the ledger kept one that exists."""
    transcript_files: tuple[str, ...]
    """The files in that folder (names), sorted."""


@dataclass(frozen=True)
class TaskOutcomes:
    """One task's attempts in one run, in attempt-index order."""

    task_id: str
    """The task."""
    stratum: str | None
    """Its stratum, if recorded."""
    quarantined: bool
    """An attempt leaked the oracle: the task is shown, never scored."""
    attempts: tuple[AttemptOutcome, ...]
    """Its attempts."""
    passes: int
    """How many of them passed."""


@dataclass(frozen=True)
class RunReport:
    """One run: its scorecard and its outcome grid."""

    source: str
    """The ledger it came from."""
    score: RunScore
    """Its scorecard, exactly as ``trialbook score`` computes it."""
    tasks: tuple[TaskOutcomes, ...]
    """The task x attempt outcome grid, tasks in task id order (the same order in every run, whatever
    order the rows were written in)."""
    budget: RunBudget
    """Its budget replay: coverage and cost per per-task budget, as ``trialbook budget`` gives it."""


@dataclass(frozen=True)
class PairedRuns:
    """Two runs on the same suite, compared."""

    baseline: str
    """The baseline run id."""
    candidate: str
    """The candidate run id."""
    comparison: Comparison | None
    """``trialbook compare``'s result; None when the runs cannot be compared (``reason`` says why)."""
    reason: str | None
    """Why they were not compared (a grader change, no shared task, ...), else None."""

    @property
    def per_task(self) -> tuple[TaskDifference, ...]:
        """The comparison's paired tasks, largest gain for the candidate first (ties in task order;
        differences equal up to float noise, 1.0 - 0.8 against 0.2 - 0.0, count as equal)."""
        tasks = () if self.comparison is None else self.comparison.per_task
        return tuple(sorted(tasks, key=lambda t: (-round(t.difference, 12), t.task_id)))

    @property
    def improved(self) -> tuple[TaskDifference, ...]:
        """Tasks on which the candidate did better, largest gain first."""
        return tuple(t for t in self.per_task if round(t.difference, 12) > 0)

    @property
    def regressed(self) -> tuple[TaskDifference, ...]:
        """Tasks on which the candidate did worse, largest loss first."""
        return tuple(t for t in reversed(self.per_task) if round(t.difference, 12) < 0)


@dataclass(frozen=True)
class Report:
    """Everything ``trialbook report`` shows."""

    sources: tuple[str, ...]
    """The ledgers, in the order given."""
    runs: tuple[RunReport, ...]
    """Every run of every ledger."""
    across_runs: tuple[AcrossRuns, ...]
    """Run-to-run spread per ledger, for systems with two or more runs on the same suite."""
    comparisons: tuple[PairedRuns, ...]
    """For each suite with two or more runs: each run against the baseline."""
    options: ReportOptions
    """The settings used."""
    notes: tuple[str, ...] = ()
    """Runs left uncompared for want of a dataset_id, and the like."""


def _outcomes(ledger: Ledger) -> tuple[TaskOutcomes, ...]:
    """The outcome grid of one run's rows (quarantined tasks included, marked)."""
    base = Path(ledger.source).parent
    task_ids = ledger.column("task_id")
    index = ledger.column("attempt_index")
    passed, timed_out = ledger.column("passed"), ledger.column("timed_out")
    infra = ledger.has_status("infra_error")
    leak = ledger.column("oracle_leak")
    elapsed = ledger.column("elapsed_s")
    calls, call_s = ledger.column("model_calls"), ledger.column("model_call_s")
    errors, strata, transcripts = (ledger.column(n) for n in ("error", "stratum", "transcript"))
    by_task: dict[str, list[int]] = {}
    for row, task in enumerate(task_ids.tolist()):
        by_task.setdefault(task, []).append(row)
    out = []
    for task, rows in sorted(by_task.items()):
        rows.sort(key=lambda r: int(index[r]))
        attempts = []
        for r in rows:
            outcome: Outcome = (
                "infra_error"
                if infra[r]
                else "pass"
                if passed[r]
                else "timeout"
                if timed_out[r]
                else "fail"
            )
            folder, files = _transcript(base, transcripts[r])
            seconds, n_calls, in_calls = float(elapsed[r]), float(calls[r]), float(call_s[r])
            attempts.append(
                AttemptOutcome(
                    attempt_index=int(index[r]),
                    outcome=outcome,
                    timed_out=bool(timed_out[r]),
                    elapsed_s=None if seconds != seconds else seconds,
                    model_calls=None if n_calls != n_calls else int(n_calls),
                    model_call_s=None if in_calls != in_calls else in_calls,
                    error=errors[r],
                    transcript=folder,
                    transcript_files=files,
                )
            )
        out.append(
            TaskOutcomes(
                task_id=task,
                stratum=strata[rows[0]],
                quarantined=bool(np.any(leak[rows])),
                attempts=tuple(attempts),
                passes=sum(a.outcome == "pass" for a in attempts),
            )
        )
    return tuple(out)


def _transcript(base: Path, recorded: str | None) -> tuple[str | None, tuple[str, ...]]:
    """The kept raw output's folder (relative to the ledger's folder, as the harness writes it) and
    its files; (None, ()) when the row kept none, the folder is gone, or the row's text is not a
    path inside a ``*.transcripts`` folder beside the ledger.

    A ledger is anyone's file: its ``transcript`` may name ``../../../root/.ssh`` (the report would
    list that folder's files) or ``javascript:...`` beside a folder of that name (a live link). Only
    a relative path whose first part is a ``NAME.transcripts`` folder in the ledger's folder, and
    which still lies inside that folder once every ``..`` and symbolic link is resolved, is kept.
    """
    if not recorded or "\0" in recorded:
        return None, ()
    relative = Path(recorded)
    if relative.is_absolute() or not relative.parts:
        return None, ()
    root_name = relative.parts[0]
    if not root_name.endswith(".transcripts") or root_name in (".transcripts", ".", ".."):
        return None, ()
    try:
        root = (base / root_name).resolve()
        folder = (base / relative).resolve()
        if root.parent != base.resolve() or not folder.is_relative_to(root) or folder == root:
            return None, ()
        if folder.is_file():
            return folder.as_posix(), ()
        if not folder.is_dir():
            return None, ()
        return folder.as_posix(), tuple(sorted(p.name for p in folder.iterdir() if p.is_file()))
    except OSError:  # unreadable, a symlink loop: nothing to link
        return None, ()


def _pair(
    baseline: tuple[str, str],
    candidate: tuple[str, str],
    ledgers: dict[str, Ledger],
    options: ReportOptions,
) -> PairedRuns:
    """``compare_runs`` on two runs of the ledgers read, or why it could not compare them."""
    from trialbook.analysis._compare import compare_runs

    def read(path: Path) -> Ledger:
        # a run id holding ':' splits its LEDGER:RUN_ID spec elsewhere: say so, never a KeyError
        found = ledgers.get(str(Path(path)))
        if found is None:
            raise ArgumentError(f"{path} is not one of the ledgers read (a run id with ':'?)")
        return found

    specs = [f"{source}:{run}" for source, run in (baseline, candidate)]
    compare = CompareOptions(
        metric=options.metric,
        confidence=options.confidence,
        resamples=options.resamples,
        seed=options.seed,
        method=options.method,
    )
    try:
        comparison = compare_runs(specs[0], specs[1], compare, read=read)
    except TrialbookError as exc:
        return PairedRuns(baseline[1], candidate[1], None, "; ".join(exc.problems))
    return PairedRuns(baseline[1], candidate[1], comparison, None)


def build_report(ledgers: Sequence[Ledger], options: ReportOptions | None = None) -> Report:
    """Score every run of ``ledgers``, read each run's outcome grid, and compare the runs of each
    suite (same ``dataset_id``) with its baseline: ``options.baseline``, else its first run.

    Raises :class:`ArgumentError` when ``options.baseline`` names no run given, or when two ledgers
    are the same file.
    """
    options = options or ReportOptions()
    if not METRIC.match(options.metric):
        raise ArgumentError(
            f"metric must be pass@K, pass^K or within@K (e.g. pass@1, pass^3, within@2), got "
            f"{options.metric!r}",
            argument="metric",
        )
    by_source: dict[str, Ledger] = {}
    for ledger in ledgers:
        key = str(Path(ledger.source))
        if key in by_source:
            raise ArgumentError(f"ledger {ledger.source} is given twice", argument="ledger")
        by_source[key] = ledger
    runs: list[RunReport] = []
    across: list[AcrossRuns] = []
    for ledger in ledgers:
        scored: ScoreReport = score_ledger(ledger, options=options)
        budgets = {b.run_id: b for b in budget_replay(ledger, options=options).runs}
        across += scored.across_runs
        for run in scored.runs:
            grid = _outcomes(ledger.run(run.run_id))
            runs.append(RunReport(ledger.source, run, grid, budgets[run.run_id]))
    known = [r.score.run_id for r in runs]
    if options.baseline is not None and options.baseline not in known:
        raise ArgumentError(
            f"baseline run {options.baseline!r} is not in the ledgers given "
            f"(runs: {', '.join(repr(r) for r in known)})",
            argument="baseline",
        )
    # a suite is a dataset_id; runs that record none are of one suite only when they come from one
    # file (a leaderboard of systems on one benchmark), never across files (unknown is not "same")
    suites: dict[tuple[str, str], list[RunReport]] = {}
    for r in runs:
        suite = ("id", r.score.dataset_id) if r.score.dataset_id else ("file", r.source)
        suites.setdefault(suite, []).append(r)
    unknown = [g for (kind, _), g in suites.items() if kind == "file"]
    notes = []
    if len(unknown) > 1:
        named = ", ".join(g[0].score.run_id if len(g) == 1 else f"{g[0].source}'s" for g in unknown)
        notes.append(
            f"runs of different ledgers record no dataset_id ({named}): not compared across "
            "ledgers, since nothing says they ran the same suite (trialbook compare compares "
            "two of them when you know they did)"
        )
    comparisons = []
    for group in suites.values():
        if len(group) < 2:
            continue
        base = next((r for r in group if r.score.run_id == options.baseline), group[0])
        for other in group:
            if other is not base:
                comparisons.append(
                    _pair(
                        (base.source, base.score.run_id),
                        (other.source, other.score.run_id),
                        by_source,
                        options,
                    )
                )
    return Report(
        sources=tuple(by_source),
        runs=tuple(runs),
        across_runs=tuple(across),
        comparisons=tuple(comparisons),
        options=options,
        notes=tuple(notes),
    )
