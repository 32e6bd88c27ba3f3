"""Many runs on one suite, ranked with intervals that hold jointly, on the cost-accuracy frontier.

The policy, in one place (docs/methodology.md, "The board"):
- Every run is one system, of independent attempts, on one ``dataset_id`` (or, with
  ``allow_different_suites``, on the tasks all runs share; how many each run lost is said).
- Each system's metric and its interval are ``score``'s own (the same function, the same options).
- Each pair is tested by ``compare``'s procedure: its per-task values (after quarantine and fault
  cases, as ``compare`` reads a run) and the same paired test with the same level, resamples and
  seed, so a pair's p-value is the one ``trialbook compare`` prints. Holm's step-down adjustment
  over all N(N-1)/2 pairs controls the family-wise error; the decisions at ``alpha`` give the ranks'
  joint intervals (trialbook.stats.rank_intervals) and the leaders (the systems whose interval
  contains 1).
- Cost: the total cost of a system's attempts per task (or per successful task), with a task
  bootstrap interval; the frontier on point estimates, and the systems dominated with confidence
  (another is decided better and is significantly cheaper by the paired bootstrap of cost
  differences). A system whose cost is not measured on every attempt stays off the cost axis.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from trialbook.analysis._board_results import (
    Board,
    BoardMcNemar,
    BoardOptions,
    BoardPair,
    BoardSystem,
    Frontier,
    PairDecision,
)
from trialbook.analysis._compare_load import _load_run, _metric_values, _Run
from trialbook.analysis._estimate import MetricEstimate
from trialbook.analysis._protocol import METRIC, independent
from trialbook.analysis._score import ScoreOptions, score_tallies
from trialbook.background import Background
from trialbook.errors import ArgumentError
from trialbook.ledger import Ledger, TallyOfLedger, read_ledger
from trialbook.stats import (
    PairedPValues,
    holm,
    mcnemar_exact,
    paired_cost_bootstrap,
    paired_p_values,
    pareto_front,
    rank_intervals,
)

__all__ = ["board_runs"]


@dataclass(frozen=True)
class _Side:
    run: _Run
    source: str
    metric: MetricEstimate
    attempts: int
    index: NDArray[np.intp]  # the shared tasks, as positions in run.task_ids


def _run_notes(
    found: Sequence[tuple[str, str, Ledger]], loaded: Sequence[_Run], board: list[str]
) -> dict[str, tuple[str, ...]]:
    """Per run, what its source notes of it and whether it finished; a note every run carries
    goes once into ``board``'s notes instead."""
    per: dict[str, tuple[str, ...]] = {}
    for (_, rid, ledger), run in zip(found, loaded, strict=True):
        provenance = ledger.source_of(rid)
        own = [] if provenance is None else list(provenance.notes)
        if run.incomplete:
            own.insert(0, f"{run.incomplete}: ranked on the attempts made so far")
        per[rid] = tuple(dict.fromkeys(own))
    common = set.intersection(*(set(n) for n in per.values())) if len(per) > 1 else set()
    first = next(iter(per.values()), ())
    board.extend(f"every run: {n}" for n in first if n in common)
    return {rid: tuple(n for n in own if n not in common) for rid, own in per.items()}


def _runs_of(
    ledgers: Sequence[str | Path], runs: Sequence[str] | None, read: Callable[[Path], Ledger]
) -> list[tuple[str, str, Ledger]]:
    """(source, run id, ledger) of every run asked for, each once."""
    if runs is not None:
        twice = sorted({r for r in runs if list(runs).count(r) > 1})
        if twice:
            raise ArgumentError(
                f"run given twice: {', '.join(repr(r) for r in twice)}", argument="runs"
            )
    found: list[tuple[str, str, Ledger]] = []
    where: dict[str, str] = {}
    for spec in ledgers:
        path = Path(spec)
        ledger = read(path)
        for rid in ledger.run_ids:
            if runs is not None and rid not in runs:
                continue
            if rid in where:
                raise ArgumentError(
                    f"run {rid!r} is in both {where[rid]} and {path}: a board needs each run once"
                )
            where[rid] = str(path)
            found.append((str(path), rid, ledger))
    if runs is not None:
        missing = [r for r in runs if r not in where]
        if missing:
            raise ArgumentError(
                f"run(s) not in the ledgers given: {', '.join(repr(r) for r in missing)}",
                argument="runs",
            )
    if len(found) < 2:
        raise ArgumentError(
            f"a board ranks at least two runs; the ledgers given hold {len(found)}"
            + ("" if runs is None else " of the runs named")
        )
    return found


def _shared_tasks(loaded: list[_Run], allow_different: bool) -> tuple[list[str], list[str]]:
    """The task ids every run has (in the first run's order), and the notes on what was dropped."""
    notes: list[str] = []
    suites = {frozenset(r.meta["dataset_id"]) for r in loaded}
    if len(suites) > 1:
        shown = ", ".join(f"{r.run_id}: {sorted(r.meta['dataset_id'])}" for r in loaded[:6])
        text = f"the runs are on different suites (dataset_id {shown})"
        if not allow_different:
            raise ArgumentError(f"{text}; pass --allow-different-suites to rank their shared tasks")
        notes.append(f"NOT THE SAME SUITE: {text}; ranked on the tasks all runs share")
    common = set(loaded[0].task_ids)
    for r in loaded[1:]:
        common &= set(r.task_ids)
    if not common:
        raise ArgumentError("the runs share no task: nothing to rank")
    dropped = [(r.run_id, len(r.task_ids) - len(common)) for r in loaded]
    if any(d for _, d in dropped):
        notes.append(
            f"{len(common)} task(s) shared by every run are ranked; dropped: "
            + ", ".join(f"{rid} {d}" for rid, d in dropped if d)
        )
    return [t for t in loaded[0].task_ids if t in common], notes


def _metric_of(side: _Run, rows: Ledger, options: BoardOptions) -> tuple[MetricEstimate, int]:
    """Score's figure of the run over ``rows`` (its attempts on the shared tasks)."""
    m = METRIC.match(options.metric)
    k = int(m.group(2)) if m else 1
    scored = score_tallies(
        TallyOfLedger(rows),
        run=side.run_id,
        options=ScoreOptions(
            ks=(k,),
            confidence=options.confidence,
            resamples=options.resamples,
            seed=options.seed,
            method=options.method,
        ),
    ).runs[0]
    if options.metric == "mean-score":
        if scored.mean_score is None:
            raise ArgumentError(
                f"run {side.run_id!r}: --metric mean-score needs a partial-credit 'score' on "
                "every attempt, and this run does not record one on each",
                argument="metric",
            )
        return scored.mean_score, scored.attempts
    return scored.metrics[options.metric], scored.attempts


def _values(side: _Side, metric: str) -> NDArray[np.float64]:
    """The per-task figure on the shared tasks, as compare reads it."""
    if metric != "mean-score":
        return _metric_values(side.run, side.index, metric)
    rows = side.run.rows
    assert rows is not None
    groups = rows.tasks()
    score = np.bincount(groups.task, weights=rows.column("score"), minlength=len(groups.task_ids))
    at = {t: i for i, t in enumerate(groups.task_ids)}
    pos = np.array([at[side.run.task_ids[i]] for i in side.index.tolist()], dtype=np.intp)
    return np.asarray(score[pos] / groups.attempts[pos], dtype=np.float64)


def _cost_of(side: _Side) -> tuple[NDArray[np.float64] | None, str | None]:
    """Per shared task the total cost of its attempts, or None and why not."""
    rows = side.run.rows
    assert rows is not None
    cost = rows.column("cost").astype(np.float64)
    known = ~np.isnan(cost)
    if not known.all():
        return None, (
            "cost not measured"
            if not known.any()
            else f"cost not measured on {int((~known).sum())} of {cost.size} attempts"
        )
    groups = rows.tasks()
    total = np.bincount(groups.task, weights=cost, minlength=len(groups.task_ids))
    at = {t: i for i, t in enumerate(groups.task_ids)}
    pos = np.array([at[side.run.task_ids[i]] for i in side.index.tolist()], dtype=np.intp)
    return np.asarray(total[pos], dtype=np.float64), None


def _decision(tests: PairedPValues, j: int, adjusted: float, alpha: float) -> PairDecision:
    if not tests.decidable[j]:
        return "not enough tasks to decide"
    if adjusted < alpha:
        return "a better" if tests.estimate[j] > 0 else "b better"
    return "no detectable difference"


def _tables(
    sides: list[_Side], first: NDArray[np.intp], second: NDArray[np.intp], tests: PairedPValues
) -> list[BoardMcNemar | None]:
    """Each pair's 2x2 table of first attempts, when every run has one attempt per task."""
    if not all(bool((s.run.n[s.index] == 1).all()) for s in sides):
        return [None] * first.size
    passed = np.column_stack([s.run.first[s.index] for s in sides]).astype(np.int64)
    both = passed.T @ passed  # [i, j]: tasks i and j both passed
    alone = passed.T @ (1 - passed)  # [i, j]: tasks i passed and j did not
    neither = (1 - passed).T @ (1 - passed)
    exact: dict[tuple[int, int], float] = {}
    tables: list[BoardMcNemar | None] = []
    for pos, (i, j) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
        only_a, only_b = int(alone[i, j]), int(alone[j, i])
        if (only_b, only_a) not in exact:
            exact[(only_b, only_a)] = mcnemar_exact(only_b, only_a)
        tables.append(
            BoardMcNemar(
                both=int(both[i, j]),
                only_baseline=only_b,
                only_candidate=only_a,
                neither=int(neither[i, j]),
                p_value=float(tests.p_value[pos]),
                exact_p_value=exact[(only_b, only_a)],
            )
        )
    return tables


def _test_pairs(
    sides: list[_Side], values: list[NDArray[np.float64]], options: BoardOptions
) -> tuple[list[BoardPair], NDArray[np.bool_], str]:
    """Every pair (a ranked above b) by compare's paired test, all at once, Holm-adjusted; the
    decisions as better[i, j] (i decided better than j); what the test was, in words."""
    n = len(sides)
    first, second = np.triu_indices(n, k=1)  # (0, 1), (0, 2), ..., (1, 2), ...: board order
    stacked = np.column_stack(values)
    # compare's call for each pair: candidate (a) minus baseline (b), its level, resamples and
    # seed; the p-values are paired_test's of each column (trialbook.stats.paired_p_values)
    tests = paired_p_values(
        stacked[:, first] - stacked[:, second],
        confidence=options.confidence,
        resamples=options.resamples,
        seed=options.seed,
    )
    adjusted = holm(tests.p_value)
    better = np.zeros((n, n), dtype=bool)
    pairs: list[BoardPair] = []
    tables = _tables(sides, first, second, tests)
    words = [tests.method(j) for j in range(first.size)]
    for pos, (i, j) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
        p_adj = float(adjusted[pos])
        decision = _decision(tests, pos, p_adj, options.alpha)
        if decision == "a better":
            better[i, j] = True
        elif decision == "b better":
            better[j, i] = True
        se = float(tests.p_value_mc_se[pos])
        pairs.append(
            BoardPair(
                a=sides[i].run.run_id,
                b=sides[j].run.run_id,
                difference=float(tests.estimate[pos]),
                p_value=float(tests.p_value[pos]),
                p_adjusted=p_adj,
                decision=decision,
                mcnemar=tables[pos],
                method=words[pos],
                p_value_mc_se=None if np.isnan(se) else se,
            )
        )
    # near the level the test draws more patterns, so the pairs' words can differ: the most common
    common = Counter(words).most_common(1)[0][0]
    return pairs, better, common


def _costs(
    sides: list[_Side], options: BoardOptions, notes: list[str]
) -> tuple[
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.bool_],
    list[str | None],
]:
    """Per system its cost and interval (NaN: none), cheaper[i, j] (i significantly cheaper than
    j), and why a system has no cost; a note for a cost interval over fewer resamples."""
    n = len(sides)
    costs: list[tuple[NDArray[np.float64] | None, str | None]] = [_cost_of(s) for s in sides]
    known_cost = {i: c for i, (c, _) in enumerate(costs) if c is not None}
    measured = list(known_cost)
    cost = np.full(n, np.nan)
    cost_low, cost_high = np.full(n, np.nan), np.full(n, np.nan)
    cheaper = np.zeros((n, n), dtype=bool)
    why: list[str | None] = [w for _, w in costs]
    if measured:
        matrix = np.column_stack([known_cost[i] for i in measured])
        solved = None
        if options.cost == "per-success":
            solved = np.column_stack([(sides[i].run.c[sides[i].index] > 0) for i in measured])
        boot = paired_cost_bootstrap(
            matrix,
            successes=solved,
            confidence=options.confidence,
            resamples=options.resamples,
            seed=options.seed,
        )
        idx = np.array(measured)
        cost[idx], cost_low[idx], cost_high[idx] = boot.estimate, boot.ci_low, boot.ci_high
        cheaper[np.ix_(idx, idx)] = boot.cheaper
        for pos, i in enumerate(measured):
            if np.isnan(boot.estimate[pos]):
                why[i] = "nothing passed: cost per success undefined"
            elif boot.undefined[pos]:
                notes.append(
                    f"{sides[i].run.run_id}: {int(boot.undefined[pos])} of {boot.resamples} "
                    "resamples had no successful task; its cost interval is over the others"
                )
    return cost, cost_low, cost_high, cheaper, why


def board_runs(
    ledgers: Sequence[str | Path],
    options: BoardOptions | None = None,
    *,
    runs: Sequence[str] | None = None,
    read: Callable[[Path], Ledger] | None = None,
) -> Board:
    """Rank every run of ``ledgers`` (or only ``runs``) on one suite: see the module docstring.

    ``read`` turns a path into a validated ledger (default :func:`trialbook.ledger.read_ledger`;
    the command line passes one that also reads other harnesses' files).
    """
    options = options or BoardOptions()
    reader = read or read_ledger
    found = _runs_of(ledgers, runs, reader)
    loaded: list[_Run] = []
    for source, rid, ledger in found:
        run = _load_run(ledger, rid, f"{source}:{rid}", earlier=False)
        if not independent(run.protocol):
            raise ArgumentError(
                f"run {rid!r} is a {run.protocol} run: a board ranks runs of independent attempts "
                "(pass@k and pass^k assume them)"
            )
        loaded.append(run)
    shared, notes = _shared_tasks(loaded, options.allow_different_suites)
    run_notes = _run_notes(found, loaded, notes)
    graders = {frozenset(r.meta["grader_version"]) for r in loaded}
    if len(graders) > 1:
        notes.append("grader_version differs between runs: differences may come from the grader")
    shared_set = np.array(shared, dtype=object)
    sides: list[_Side] = []
    for (source, _, _), run in zip(found, loaded, strict=True):
        rows = run.rows
        assert rows is not None
        if len(shared) != len(run.task_ids):
            rows = rows.where(np.isin(rows.column("task_id"), shared_set))
        at = {t: i for i, t in enumerate(run.task_ids)}
        index = np.array([at[t] for t in shared], dtype=np.intp)
        metric, attempts = _metric_of(run, rows, options)
        run = replace(run, rows=rows)
        sides.append(_Side(run, source, metric, attempts, index))

    # ranked on the estimates to 12 decimals: two means of the same count of passes over the same
    # tasks can differ in their last bits (summed in another order), and a tie is a tie
    estimates = np.round([s.metric.estimate for s in sides], 12)
    order = sorted(range(len(sides)), key=lambda i: (-estimates[i], sides[i].run.run_id))
    sides = [sides[i] for i in order]
    estimates = estimates[order]
    values = [_values(s, options.metric) for s in sides]
    n = len(sides)

    # the cost bootstrap and the pairs' tests are numpy's work, without the interpreter's lock:
    # the bootstrap draws on a second thread while the pairs are tested (as score's does)
    costing = Background(_costs, sides, options, notes)
    with costing.first():
        pairs, better, test_method = _test_pairs(sides, values, options)
        ranks = rank_intervals(estimates, better)
    cost, cost_low, cost_high, cheaper, why = costing.result()
    front = pareto_front(estimates, np.array([float(f"{c:.12g}") for c in cost.tolist()]))
    dominates = better & cheaper  # [j, i]: j decided better and significantly cheaper than i
    off_axis = [s.run.run_id for s, c in zip(sides, cost.tolist(), strict=True) if np.isnan(c)]
    if off_axis and len(off_axis) < n:
        notes.append(
            f"off the cost axis (cost not known): {', '.join(off_axis)}; ranked, but on no frontier"
        )

    systems: list[BoardSystem] = []
    for i, s in enumerate(sides):
        known = not np.isnan(cost[i])
        by = tuple(sides[j].run.run_id for j in np.flatnonzero(dominates[:, i]).tolist())
        frontier: Frontier | None = None
        if known:
            frontier = "dominated" if by else "on" if front[i] else "off"
        systems.append(
            BoardSystem(
                run_id=s.run.run_id,
                system=next(iter(s.run.meta["system"]), None),
                source=s.source,
                dataset_id=next(iter(s.run.meta["dataset_id"]), None),
                tasks=len(shared),
                attempts=s.attempts,
                metric=s.metric,
                cost=float(cost[i]) if known else None,
                cost_low=float(cost_low[i]) if known and not np.isnan(cost_low[i]) else None,
                cost_high=float(cost_high[i]) if known and not np.isnan(cost_high[i]) else None,
                cost_note=None if known else why[i],
                rank=int(ranks.rank[i]),
                rank_low=int(ranks.low[i]),
                rank_high=int(ranks.high[i]),
                frontier=frontier,
                dominated_by=by,
                notes=run_notes[s.run.run_id],
            )
        )
    return Board(
        metric=options.metric,
        cost_basis=options.cost,
        systems=tuple(systems),
        pairs=tuple(pairs),
        tasks=len(shared),
        alpha=options.alpha,
        confidence=options.confidence,
        resamples=options.resamples,
        seed=options.seed,
        interval_method=options.method,
        test_method=test_method,
        notes=tuple(notes),
    )
