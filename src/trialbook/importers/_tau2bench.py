"""tau2-bench: a simulation run's results (sierra-research/tau2-bench, ``Results``).

Two layouts, as tau2 saves them: one ``results.json`` holding ``info``, ``tasks`` and every
``simulations`` entry, or the directory format (``results.json`` with the metadata beside a
``simulations/`` folder of one JSON file per simulation). Each simulation is one attempt:
``task_id``, ``trial`` (the attempt index), ``reward_info.reward`` (passed when within 1e-6 of 1,
tau2's ``is_successful``), ``termination_reason``, ``duration`` (elapsed seconds), ``agent_cost``.
``termination_reason`` ``infrastructure_error`` is an infrastructure error: tau2 drops those from
its metrics' denominators; they are kept here (counted as failures unless dropped, and the note says
the difference). ``timeout`` marks ``timed_out``. ``info.num_trials`` is the budget. tau2 records no
wall-clock limit in the results, nor helper calls or oracle leaks: not recorded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from trialbook.errors import ArgumentError, Problem
from trialbook.importers._base import ImportedRun, ImportOptions
from trialbook.importers._common import (
    Record,
    attempt_row,
    fail,
    head,
    load_json,
    raise_problems,
    records,
    source_file,
    too_large,
)

__all__ = ["TAU2_BENCH", "Tau2Bench"]

TOLERANCE = 1e-6
"""tau2's ``is_successful`` band around a reward of 1."""
REASONS = (
    "user_stop",
    "agent_stop",
    "max_steps",
    "timeout",
    "too_many_errors",
    "agent_error",
    "user_error",
    "infrastructure_error",
    "context_window_exceeded",
    "unexpected_error",
)
"""tau2's ``TerminationReason`` values."""


class Tau2Bench:
    """tau2-bench results (one run per results file or results folder)."""

    name = "tau2-bench"

    def detect(self, path: Path) -> bool:
        """A .json object naming ``info`` and ``simulations`` (or ``simulation_index``) with
        ``termination_reason``, or a folder holding such a results.json."""
        if path.is_dir():
            path = path / "results.json"
        text = head(path, 1 << 16)
        return (
            text.lstrip().startswith("{")
            and '"info"' in text
            and ('"simulations"' in text or '"simulation_index"' in text)
            and ('"num_trials"' in text)
        )

    def read(self, paths: Sequence[Path], options: ImportOptions) -> Iterator[ImportedRun]:
        """One run per results file or folder."""
        if options.run_id is not None and len(paths) > 1:
            raise ArgumentError(
                f"run_id names one run, but {len(paths)} results were given", argument="run_id"
            )
        for path in paths:
            yield _read(path, options)


def _read(path: Path, options: ImportOptions) -> ImportedRun:
    meta_path = path / "results.json" if path.is_dir() else path
    if not meta_path.is_file():
        raise fail(path, "no results.json here (tau2 results: a file, or a folder holding one)")
    sims_dir = meta_path.parent / "simulations"
    problems: list[Problem] = []
    doc = load_json(meta_path, options.max_bytes)
    top = Record(doc, meta_path, "the results", problems)
    info = top.obj("info") if top.ok else None
    trials = info.integer("num_trials", low=1) if info is not None else None
    agent = info.obj("agent_info", required=False) if info is not None else None
    llm = agent.text("llm", required=False) if agent is not None else None
    commit = info.text("git_commit", required=False) if info is not None else None
    files = [meta_path]
    items: list[tuple[Path, Any, str]] = []
    inline = top.items("simulations", required=False) if top.ok else None
    if sims_dir.is_dir() and not inline:
        sims = sorted(sims_dir.glob("*.json"))
        held = meta_path.stat().st_size + sum(f.stat().st_size for f in sims)
        if held > options.max_bytes:  # the folder is one run, held whole
            raise too_large(
                path, f"its results.json and simulations/ hold {held:,} bytes", options.max_bytes
            )
        for sim_file in sims:
            files.append(sim_file)
            items.append((sim_file, load_json(sim_file, options.max_bytes), "the simulation"))
        index = top.items("simulation_index", required=False)
        if index is not None and len(index) != len(items):
            top.problem(
                f"lists {len(index)} simulations, but simulations/ holds {len(items)} files",
                "simulation_index",
            )
    else:
        if inline is None and top.ok:
            top.problem("missing (and no simulations/ folder beside the file)", "simulations")
        items = [(meta_path, sim, f"simulation {i}") for i, sim in enumerate(inline or [], 1)]
    raise_problems(problems)
    if not items:
        raise fail(meta_path, "holds no simulation")
    assert trials is not None
    run_id = options.run_id or (meta_path.parent.name if path.is_dir() else meta_path.stem)
    rows: list[dict[str, object]] = []
    reasons: Counter[str] = Counter()
    unrewarded = 0
    timed_out_passes = 0
    parsed = []
    for sim_path, data, label in items:
        (rec,) = records([data], sim_path, problems, label=label)
        rec.where = label
        task = rec.text("task_id", ids=True)
        rec.task = task
        trial = rec.integer("trial", low=0)
        reason = rec.text("termination_reason")
        if reason is not None and reason not in REASONS:
            rec.problem(
                f"expected one of tau2's termination reasons, got {reason!r}", "termination_reason"
            )
        duration = rec.number("duration", required=False, low=0)
        cost = rec.number("agent_cost", required=False, low=0)
        reward_info = rec.obj("reward_info", required=False)
        reward = reward_info.number("reward") if reward_info is not None else None
        if trial is not None and trial >= trials:
            rec.problem(f"{trial} is not below info.num_trials {trials}", "trial")
        seed = rec.integer("seed", required=False)
        if rec.ok and task is not None and trial is not None and reason is not None:
            parsed.append((task, trial, reason, duration, cost, reward, seed))
    raise_problems(problems)
    graded_after = any(
        r == "timeout" and w is not None and abs(w - 1) <= TOLERANCE
        for _, _, r, _, _, w, _ in parsed
    )
    for task, trial, reason, duration, cost, reward, seed in parsed:
        reasons[reason] += 1
        passed = reward is not None and abs(reward - 1) <= TOLERANCE
        infra = reason == "infrastructure_error"
        timed_out = reason == "timeout"
        unrewarded += reward is None and not infra
        timed_out_passes += timed_out and passed
        if infra:
            status = "infra_error"
        elif passed:
            status = "passed"
        else:
            status = "timed_out" if timed_out else "failed"
        rows.append(
            attempt_row(
                run_id=run_id,
                system=options.system or llm,
                task_id=task,
                attempt_index=trial,
                k_budget=trials,
                elapsed_s=duration,
                passed=passed and not infra,
                timed_out=timed_out and not infra,
                status=status,
                score=reward if reward is not None and 0 <= reward <= 1 else None,
                error=None
                if status in ("passed", "failed", "timed_out") and reward is not None
                else reason,
                cost=cost,
                model_version=llm,
                harness_version=None if commit is None else f"tau2 {commit}",
                seed=seed,
                graded_after_timeout=graded_after or None,
            )
        )
    notes = [
        "tau2 records no wall-clock limit in its results, nor hidden-helper calls or oracle leaks: "
        "not recorded by the source",
        f"passed: reward within {TOLERANCE:g} of 1, as tau2's is_successful decides",
        "termination reasons: " + ", ".join(f"{r} {n}" for r, n in reasons.most_common()),
    ]
    if reasons["infrastructure_error"]:
        notes.append(
            f"{reasons['infrastructure_error']} infrastructure error(s): tau2 drops them from its "
            "metrics (pass^k over the rest); kept here and counted as failures, so these figures "
            "are lower than tau2's; --drop-infra-errors gives tau2's reading"
        )
    if unrewarded:
        notes.append(f"{unrewarded} simulation(s) without reward_info: counted as failures")
    if timed_out_passes:
        notes.append(f"{timed_out_passes} simulation(s) passed although they timed out")
    return ImportedRun(
        run_id=run_id,
        source="tau2-bench",
        source_version=None if commit is None else f"git {commit}",
        files=tuple(source_file(f) for f in files),
        rows=rows,
        notes=tuple(notes),
    )


TAU2_BENCH = Tau2Bench()
