"""tau-bench: the results list its ``run.py`` writes (sierra-research/tau-bench).

The file is a JSON list of ``{task_id, trial, reward, info, traj}``, one per trial. tau-bench calls a
trial a success when ``1 - 1e-6 <= reward <= 1 + 1e-6`` (``display_metrics``), and its ``trial`` is
the attempt index. When a trial raised, run.py records reward 0 and the exception under
``info.error``: tau-bench counts it a failure; here it is an infrastructure error (also counted as a
failure by default, so the default figures are tau-bench's; ``--drop-infra-errors`` shows the other
reading). The file records no timeout, no duration, no hidden-helper calls and no agent cost
(``info.user_cost`` is the simulated user's): those are not recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from trialbook.errors import Problem
from trialbook.importers._base import ImportedRun, ImportOptions
from trialbook.importers._common import (
    attempt_row,
    expand,
    head,
    load_json,
    raise_problems,
    records,
    source_file,
)

__all__ = ["TAU_BENCH", "TauBench"]

TOLERANCE = 1e-6
"""tau-bench's success band around a reward of 1."""


class TauBench:
    """The tau-bench results list (one run per file)."""

    name = "tau-bench"

    def detect(self, path: Path) -> bool:
        """A .json file that opens a list of objects naming ``task_id`` and ``reward`` (``trial`` comes
        after the long ``info``, beyond what a peek reads)."""
        head_text = head(path)
        return re.match(r"\s*\[\s*\{", head_text) is not None and all(
            f'"{key}"' in head_text for key in ("task_id", "reward")
        )

    def read(self, paths: Sequence[Path], options: ImportOptions) -> Iterator[ImportedRun]:
        """One run per file."""
        files = expand(paths, (".json",))
        if options.run_id is not None and len(files) > 1:
            from trialbook.errors import ArgumentError

            raise ArgumentError(
                "run_id names one run, but tau-bench reads one run per file "
                f"({len(files)} files given)",
                argument="run_id",
            )
        for path in files:
            yield _read_one(path, options)


def _read_one(path: Path, options: ImportOptions) -> ImportedRun:
    doc = load_json(path, options.max_bytes)
    problems: list[Problem] = []
    if not isinstance(doc, list) or not doc:
        problems.append(
            Problem(0, "expected a non-empty JSON list of trials (tau-bench results)", str(path))
        )
        raise_problems(problems)
    parsed = []
    for rec in records(doc, path, problems):
        task = rec.text("task_id", ids=True)
        rec.task = task
        trial = rec.integer("trial", low=0)
        reward = rec.number("reward")
        info = rec.obj("info", required=False)
        error = info.data.get("error") if info is not None else None
        if error is not None and not isinstance(error, str):
            rec.problem(f"expected a string, got {type(error).__name__}", "info.error")
        if rec.ok and task is not None and trial is not None and reward is not None:
            parsed.append((task, trial, reward, error))
    raise_problems(problems)
    k = max(t for _, t, _, _ in parsed) + 1
    run_id = options.run_id or path.stem
    rows = []
    errors = 0
    for task, trial, reward, error in parsed:
        passed = abs(reward - 1) <= TOLERANCE
        errors += error is not None
        rows.append(
            attempt_row(
                run_id=run_id,
                system=options.system,
                task_id=task,
                attempt_index=trial,
                k_budget=k,
                passed=passed and error is None,
                status="infra_error" if error is not None else "passed" if passed else "failed",
                score=reward if 0 <= reward <= 1 else None,
                error=error,
            )
        )
    notes = [
        "tau-bench records no timeout, duration, hidden-helper calls or agent cost "
        "(info.user_cost is the simulated user's): not recorded by the source",
        f"passed: reward within {TOLERANCE:g} of 1, as tau-bench's display_metrics decides",
    ]
    if errors:
        notes.append(
            f"{errors} trial(s) raised (info.error): tau-bench counts them failures with reward 0; "
            "here they are infrastructure errors, counted as failures unless dropped"
        )
    return ImportedRun(
        run_id=run_id,
        source="tau-bench",
        source_version=None,
        files=(source_file(path),),
        rows=rows,
        notes=tuple(notes),
    )


TAU_BENCH = TauBench()
