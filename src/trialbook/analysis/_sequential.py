"""Sequential comparison of two runs: the anytime-valid interval of a race, replayed from the ledger.

- Per task, the difference is the candidate's pass rate minus the baseline's over the task's
  attempts (a task with a leaked attempt is quarantined whole, as in score and compare).
- The tasks are taken in one order fixed before any outcome: a race's recorded order, or for any
  two runs a seeded random order of every task either has (:func:`trialbook.stats.task_order`).
  Only a prefix of that order counts: the sequence takes a task once both runs have finished it,
  never skipping one, so more tasks run later extend the same sequence.
- The sequence stops where a race stops: the first look that decides, or the task limit. Replaying
  a race's runs gives the race's own stopping point and interval (the same seeds and outcomes give
  the same stop); ``compare`` on them reports this, never a fixed-design interval, which the
  data-dependent stopping would bias.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trialbook.analysis._compare_load import _pick_run, _split_spec
from trialbook.analysis._protocol import refuse_dependent
from trialbook.errors import ArgumentError, TrialbookError
from trialbook.ledger import Ledger
from trialbook.ledger.store import LedgerStore, RaceRecord
from trialbook.stats import (
    SEQUENCE_METHODS,
    DiscordantSequence,
    PairedSequence,
    SequenceLook,
    SequenceMethod,
    SpendingSequence,
    task_order,
)

__all__ = [
    "STOP_REASONS",
    "SequenceReplay",
    "SequentialComparison",
    "SequentialOptions",
    "run_task_rates",
    "sequential_compare",
    "task_differences",
]

STOP_REASONS = ("excludes-zero", "min-effect", "suite-spent", "max-tasks")
"""Why a sequence stopped: it excluded 0; it excluded every difference of at least min_effect;
every task was used; the task limit was reached."""


@dataclass(frozen=True)
class SequentialOptions:
    """How to run (or replay) a confidence sequence over paired tasks."""

    alpha: float = 0.05
    """The error rate kept at every look at once."""
    method: SequenceMethod = "betting-population"
    """``betting-population`` (default: runs that may grow have no horizon), ``spending`` (the
    group-sequential design over a known horizon, a race's default), ``betting-suite`` or
    ``discordant`` (single attempts)."""
    order_seed: int = 0
    """The seed of the task order."""
    min_effect: float | None = None
    """Stop with 'no meaningful difference' once every difference this large is excluded."""
    max_tasks: int | None = None
    """Use at most this many task pairs."""

    def check(self) -> None:
        """Refuse settings no sequence could use (names the argument)."""
        if self.method not in SEQUENCE_METHODS:
            raise ArgumentError(
                f"method must be one of {', '.join(SEQUENCE_METHODS)}, got {self.method!r}",
                argument="method",
            )
        if self.max_tasks is not None and self.max_tasks < 1:
            raise ArgumentError(
                f"max_tasks must be >= 1, got {self.max_tasks}", argument="max_tasks"
            )
        if self.method == "discordant" and self.min_effect is not None:
            raise ArgumentError(
                "min_effect needs an interval, and the discordant test gives none: use method "
                "betting-population or betting-suite",
                argument="min_effect",
            )
        PairedSequence(alpha=self.alpha, min_effect=self.min_effect, grid=3)


class SequenceReplay:
    """A confidence sequence fed in a fixed task order, one finished task pair at a time.

    :meth:`advance` takes the per-task differences known so far and consumes the next tasks of
    the order while each is known and the sequence has not stopped. Mutable on purpose: the race
    calls it after every batch of task pairs; a replay of a whole ledger calls it once.
    """

    def __init__(
        self,
        order: Sequence[str],
        options: SequentialOptions,
        *,
        stop_on_decision: bool = True,
        attempts: int = 1,
    ) -> None:
        """``attempts``: each system's attempts per task (the lattice of the differences, which
        the ``spending`` design's variance floor uses); its horizon is the order's limit."""
        options.check()
        self.stop_on_decision = stop_on_decision
        self.order = tuple(order)
        self.options = options
        self.limit = min(len(self.order), options.max_tasks or len(self.order))
        self.sequence: PairedSequence | DiscordantSequence | SpendingSequence
        if options.method == "discordant":
            self.sequence = DiscordantSequence(alpha=options.alpha)
        elif options.method == "spending":
            self.sequence = SpendingSequence(
                horizon=self.limit,
                alpha=options.alpha,
                min_effect=options.min_effect,
                attempts=attempts,
            )
        else:
            total = len(self.order) if options.method == "betting-suite" else None
            self.sequence = PairedSequence(
                alpha=options.alpha, total=total, min_effect=options.min_effect
            )
        self.used = 0
        self.stopped_because: str | None = None
        self.looks: list[SequenceLook] = []

    @property
    def look(self) -> SequenceLook:
        """The latest look (before any pair: undecided, the widest interval)."""
        return self.sequence.look

    def next_tasks(self, count: int) -> tuple[str, ...]:
        """The next ``count`` tasks of the order the sequence will take (fewer near the limit)."""
        if self.stopped_because is not None:
            return ()
        return self.order[self.used : min(self.limit, self.used + count)]

    def advance(self, differences: Mapping[str, float]) -> list[SequenceLook]:
        """Consume the known differences in order; returns the new looks."""
        new: list[SequenceLook] = []
        while self.stopped_because is None and self.used < self.limit:
            task = self.order[self.used]
            if task not in differences:
                break
            look = self.sequence.update(differences[task])
            self.used += 1
            new.append(look)
            if look.decision in ("improvement", "regression") and self.stop_on_decision:
                self.stopped_because = "excludes-zero"
            elif look.decision == "no meaningful difference" and self.stop_on_decision:
                self.stopped_because = "min-effect"
            elif self.used == self.limit:
                self.stopped_because = (
                    "suite-spent" if self.limit == len(self.order) else "max-tasks"
                )
        self.looks += new
        return new


def run_task_rates(ledger: Ledger, run_id: str) -> dict[str, tuple[int, int]]:
    """Per task of the run: (attempts with a row, passes); tasks with a leaked attempt left out."""
    rows = ledger.run(run_id)
    leaked = set(rows.where(rows.column("oracle_leak")).distinct("task_id"))
    table = rows.tasks()
    return {
        task: (int(n), int(c))
        for task, n, c in zip(table.task_ids, table.attempts, table.passes, strict=True)
        if task not in leaked
    }


def task_differences(
    baseline: Mapping[str, tuple[int, int]],
    candidate: Mapping[str, tuple[int, int]],
    *,
    attempts: int | None = None,
) -> dict[str, float]:
    """Per task in both: candidate pass rate minus baseline pass rate. ``attempts``: count a task
    only once both runs have this many attempts of it (a race's k)."""
    out: dict[str, float] = {}
    for task, (n_b, c_b) in baseline.items():
        if task not in candidate:
            continue
        n_c, c_c = candidate[task]
        if attempts is not None and (n_b < attempts or n_c < attempts):
            continue
        out[task] = c_c / n_c - c_b / n_b
    return out


@dataclass(frozen=True)
class SequentialComparison:
    """Everything ``compare`` prints for a sequential comparison (a race's runs, or --sequential)."""

    source: str
    """The ledger file."""
    baseline_run: str
    candidate_run: str
    options: SequentialOptions
    """The settings (a race's recorded ones)."""
    tasks_total: int
    """Tasks in the order (every task either run has; a race's whole order)."""
    tasks_paired: int
    """Tasks both runs finished (a race's runs may hold pairs past its stop)."""
    tasks_used: int
    """Task pairs the sequence took before it stopped (or ran out)."""
    baseline_estimate: float
    """Mean pass rate of the baseline over the tasks used."""
    candidate_estimate: float
    """Mean pass rate of the candidate over the tasks used."""
    look: SequenceLook
    """The interval and decision at the stop."""
    stopped_because: str | None
    """One of :data:`STOP_REASONS`; None when the race has not stopped (interrupted)."""
    race_id: str | None
    """The race that ran these runs, or None (``--sequential`` on any two runs)."""


def _replay(
    base: Mapping[str, tuple[int, int]],
    cand: Mapping[str, tuple[int, int]],
    order: Sequence[str],
    options: SequentialOptions,
    attempts: int | None,
    stop_on_decision: bool,
) -> tuple[SequenceReplay, float, float]:
    diffs = task_differences(base, cand, attempts=attempts)
    if options.method == "discordant":
        multi = sorted(t for t in diffs if base[t][0] != 1 or cand[t][0] != 1)
        if multi:
            raise ArgumentError(
                f"the discordant test takes single-attempt runs; task {multi[0]!r} has more "
                "attempts: use method betting-population",
                argument="method",
            )
    # the lattice of the differences: a race's k, or the most attempts a task of either run has
    lattice = attempts or max((n for n, _ in (*base.values(), *cand.values())), default=1)
    replay = SequenceReplay(order, options, stop_on_decision=stop_on_decision, attempts=lattice)
    replay.advance(diffs)
    used = replay.order[: replay.used]
    rate_b = float(np.mean([base[t][1] / base[t][0] for t in used])) if used else 0.0
    rate_c = float(np.mean([cand[t][1] / cand[t][0] for t in used])) if used else 0.0
    return replay, rate_b, rate_c


def _race_of(path: Path, baseline: str, candidate: str) -> RaceRecord | None:
    if path.suffix.lower() != ".db" or not path.is_file():
        return None
    with LedgerStore(path, readonly=True) as store:
        status = store.race_of(baseline, candidate)
    return None if status is None else status.record


def sequential_compare(
    baseline: str,
    candidate: str,
    options: SequentialOptions | None,
    *,
    read: Callable[[Path], Ledger],
) -> SequentialComparison | None:
    """The sequential comparison of two runs (``LEDGER`` or ``LEDGER:RUN_ID`` each).

    When one ``.db`` ledger records a race between them, the race's settings and order are
    replayed whatever ``options`` says. Otherwise: with ``options`` None, None (the caller makes
    a fixed-design comparison); else the sequence over the paired tasks in a seeded random order.
    """
    path_b, run_b = _split_spec(baseline)
    path_c, run_c = _split_spec(candidate)
    same = path_c.resolve() == path_b.resolve()
    # a race's two runs live in one .db and are named by id: asked of the store before any
    # ledger is read, so a plain comparison reads its ledgers once (in compare_runs), not twice
    race = _race_of(path_b, run_b, run_c) if same and run_b and run_c else None
    if race is None and options is None:
        return None
    ledger_b = read(path_b)
    ledger_c = ledger_b if same else read(path_c)
    id_b = _pick_run(ledger_b, run_b, baseline)
    id_c = _pick_run(ledger_c, run_c, candidate)
    for ledger, run_id in ((ledger_b, id_b), (ledger_c, id_c)):
        protocol = ledger.run(run_id).first("protocol")
        what = "a sequential comparison of per-task pass rates"
        refuse_dependent(
            protocol if isinstance(protocol, str) else None, run_id, what, "sequential"
        )
    base, cand = run_task_rates(ledger_b, id_b), run_task_rates(ledger_c, id_c)
    if race is not None:
        used_options = SequentialOptions(
            alpha=race.alpha,
            method=race.method,  # type: ignore[arg-type]
            order_seed=race.order_seed,
            min_effect=race.min_effect,
            max_tasks=race.max_tasks,
        )
        k = ledger_b.run(id_b).first("k_budget")
        order: Sequence[str] = race.task_order
        attempts = None if k is None else int(k)
    else:
        assert options is not None
        options.check()
        suites = set(ledger_b.run(id_b).distinct("dataset_id")) | set(
            ledger_c.run(id_c).distinct("dataset_id")
        )
        if len(suites) > 1:
            raise ArgumentError(
                f"{baseline} and {candidate} ran different suites ({', '.join(sorted(suites))}): "
                "a sequential comparison pairs the tasks of one dataset"
            )
        paired = sorted(set(base) & set(cand))
        if not paired:
            raise TrialbookError(f"{baseline} and {candidate} share no task to compare")
        used_options = options
        # every task either run has, in one seeded order: the sequence takes them while both
        # runs have them, so tasks run later (a partial run resumed, say) continue the same
        # sequence instead of starting another, and looking again keeps the error rate
        order = task_order(sorted(set(base) | set(cand)), options.order_seed)
        attempts = None
    # a race stops where it stopped; any two runs use every task of the prefix (the decision,
    # once made, stays, and the interval keeps narrowing: valid at the last look as at any other)
    replay, rate_b, rate_c = _replay(
        base, cand, order, used_options, attempts, stop_on_decision=race is not None
    )
    return SequentialComparison(
        source=str(path_b),
        baseline_run=id_b,
        candidate_run=id_c,
        options=used_options,
        tasks_total=len(order),
        tasks_used=replay.used,
        tasks_paired=len(task_differences(base, cand, attempts=attempts)),
        baseline_estimate=rate_b,
        candidate_estimate=rate_c,
        look=replay.look,
        stopped_because=replay.stopped_because,
        race_id=None if race is None else race.race_id,
    )
