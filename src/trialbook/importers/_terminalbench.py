"""Terminal-Bench: a run's ``results.json`` as its harness writes it (laude-institute/terminal-bench).

Each entry of ``results`` is one trial: ``task_id``, ``trial_name`` (``<task>.<i>-of-<k>``, maybe
followed by ``.<run>``), ``is_resolved`` (true, false, or null when the harness could not judge: it
counts null as a failure, and so does this importer, with the ``failure_mode`` counted in a note),
``failure_mode`` (``agent_timeout`` when the agent hit its time limit; the tests still ran, so such a
trial may pass: the run is marked ``graded_after_timeout``), token counts (0 means not recorded) and,
in newer files, ISO timestamps of the trial, the agent and the tests. The per-task time limit lives
in the task's own files, not in results.json: ``timeout_s`` is not recorded. The file also stores
the harness's own ``accuracy`` (resolved trials / all trials) and ``pass_at_k``; a note repeats them.

Several one-attempt runs given together (the leaderboard's five-run submissions) are pooled as the
attempts of one run: attempt index from the order the files are given (``as_attempts="files"``) or
from each run's first recorded trial start (``as_attempts="runs"``). A leaderboard folder (one
subfolder per submission, as terminal-bench-leaderboard keeps them) is one run per submission, each
read as above: its ``results.json``, or its one-attempt files pooled, named after the subfolder.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from trialbook.errors import ArgumentError, Problem
from trialbook.importers._base import ImportedRun, ImportOptions
from trialbook.importers._common import (
    Record,
    attempt_row,
    expand,
    fail,
    head,
    load_json,
    raise_problems,
    records,
    seconds_between,
    source_file,
)

__all__ = ["TERMINAL_BENCH", "TerminalBench"]

_TRIAL = re.compile(r"\.(\d+)-of-(\d+)(?:\.|$)")


@dataclass(frozen=True)
class _Trial:
    task: str
    index: int
    of: int
    resolved: bool | None
    failure_mode: str | None
    tokens_in: int | None
    tokens_out: int | None
    started: str | None
    finished: str | None
    elapsed: float | None


@dataclass(frozen=True)
class _File:
    path: Path
    trials: list[_Trial]
    accuracy: float | None
    pass_at_k: dict[str, float]


class TerminalBench:
    """Terminal-Bench ``results.json`` files."""

    name = "terminal-bench"

    def detect(self, path: Path) -> bool:
        """A .json object whose head names ``results`` and ``trial_name`` and ``is_resolved``; or
        a leaderboard folder: no .json of its own, and a first submission folder that holds one."""
        subs = _submissions(path)
        if subs:
            return self.detect(subs[0][0])
        text = head(path)
        return text.lstrip().startswith("{") and all(
            f'"{key}"' in text for key in ("results", "trial_name", "is_resolved")
        )

    def read(self, paths: Sequence[Path], options: ImportOptions) -> Iterator[ImportedRun]:
        """One run per multi-attempt file; several one-attempt files pooled into one run; a
        leaderboard folder (one subfolder per submission) one run per submission, read so."""
        if options.as_attempts not in (None, "files", "runs"):
            raise ArgumentError(
                f"as_attempts must be files or runs, got {options.as_attempts!r}",
                argument="as_attempts",
            )
        if len(paths) == 1 and (subs := _submissions(paths[0])):
            if options.run_id is not None and len(subs) > 1:
                raise ArgumentError(
                    f"run_id names one run, but {paths[0]} holds {len(subs)} submissions",
                    argument="run_id",
                )
            for submission in subs:
                yield from self.read(submission, options)
            return
        files = [_parse(p, options.max_bytes) for p in expand(paths, (".json",))]
        if len(files) == 1:
            yield _run(files, options, pooled=False)
            return
        multi = [f.path for f in files if any(t.of > 1 for t in f.trials)]
        if multi:
            raise fail(
                multi[0],
                "holds a multi-attempt run: several files are pooled only when each is a "
                "one-attempt run (import a multi-attempt run on its own)",
            )
        if options.as_attempts == "runs":
            starts = []
            for f in files:
                known = [t.started for t in f.trials if t.started is not None]
                if not known:
                    raise fail(
                        f.path,
                        "records no trial_started_at: --as-attempts runs orders runs by their "
                        "start; give the files in attempt order instead",
                    )
                starts.append(min(known))
            files = [f for _, f in sorted(zip(starts, files, strict=True), key=lambda x: x[0])]
        yield _run(files, options, pooled=True)


def _submissions(path: Path) -> list[list[Path]]:
    """A leaderboard folder's submissions (its subfolders holding .json files, by name, each
    with its .json files by name); empty when ``path`` is no such folder (a file, or a folder
    with .json files of its own)."""
    if not path.is_dir() or any(p.suffix == ".json" for p in path.iterdir() if p.is_file()):
        return []
    subs = []
    for sub in sorted(p for p in path.iterdir() if p.is_dir()):
        found = sorted(p for p in sub.iterdir() if p.is_file() and p.suffix == ".json")
        if found:
            subs.append(found)
    return subs


def _parse(path: Path, limit: int) -> _File:
    doc = load_json(path, limit)
    problems: list[Problem] = []
    top = Record(doc, path, "the file", problems)
    results = top.items("results") if top.ok else None
    accuracy = top.number("accuracy", required=False) if top.ok else None
    stored = top.obj("pass_at_k", required=False) if top.ok else None
    pass_at_k: dict[str, float] = {}
    if stored is not None:
        for key in stored.data:
            value = stored.number(key)
            if value is not None:
                pass_at_k[key] = value
    if results is not None and not results:
        top.problem("holds no trial", "results")
    trials: list[_Trial] = []
    for rec in records(results or [], path, problems, label="results entry"):
        task = rec.text("task_id")
        rec.task = task
        name = rec.text("trial_name")
        m = _TRIAL.search(name or "")
        if name is not None and m is None:
            rec.problem(f"expected '<task>.<i>-of-<k>', got {name!r}", "trial_name")
        resolved = rec.flag("is_resolved", required=False)
        if "is_resolved" not in rec.data:
            rec.problem("missing", "is_resolved")
        mode = rec.text("failure_mode", required=False)
        tokens = [
            rec.integer(n, required=False, low=0)
            for n in ("total_input_tokens", "total_output_tokens")
        ]
        stamps = {
            n: rec.text(n, required=False)
            for n in ("trial_started_at", "trial_ended_at", "agent_started_at", "agent_ended_at")
        }
        if not rec.ok or task is None or m is None:
            continue
        index, of = int(m.group(1)), int(m.group(2))
        if not 1 <= index <= of:
            rec.problem(f"trial {index} of {of} is out of range", "trial_name")
            continue
        trials.append(
            _Trial(
                task=task,
                index=index - 1,
                of=of,
                resolved=resolved,
                failure_mode=mode,
                # Terminal-Bench writes 0 when the agent reported no usage: not recorded, not 0
                tokens_in=tokens[0] or None,
                tokens_out=tokens[1] or None,
                started=stamps["trial_started_at"],
                finished=stamps["trial_ended_at"],
                elapsed=seconds_between(stamps["agent_started_at"], stamps["agent_ended_at"]),
            )
        )
    raise_problems(problems)
    return _File(path, trials, accuracy, pass_at_k)


def _run(files: list[_File], options: ImportOptions, *, pooled: bool) -> ImportedRun:
    if pooled:
        parents = {f.path.parent for f in files}
        run_id = options.run_id or (
            next(iter(parents)).name if len(parents) == 1 and next(iter(parents)).name else "pooled"
        )
        k = len(files)
        trials = [(t, i) for i, f in enumerate(files) for t in f.trials]
    else:
        run_id = options.run_id or (
            files[0].path.parent.name
            if files[0].path.name == "results.json" and files[0].path.parent.name
            else files[0].path.stem
        )
        ks = {t.of for t in files[0].trials}
        if len(ks) > 1:
            raise fail(
                files[0].path, f"trial names give several budgets ({sorted(ks)}): one run has one k"
            )
        k = ks.pop()
        trials = [(t, t.index) for t in files[0].trials]
    rows = []
    modes: Counter[str] = Counter()
    timeouts = after_timeout = 0
    for t, attempt in trials:
        timed_out = t.failure_mode == "agent_timeout"
        passed = t.resolved is True
        timeouts += timed_out
        after_timeout += timed_out and passed
        if t.resolved is None:
            modes[t.failure_mode or "(none)"] += 1
        status = "passed" if passed else "timed_out" if timed_out else "failed"
        rows.append(
            attempt_row(
                run_id=run_id,
                system=options.system,
                task_id=t.task,
                attempt_index=attempt,
                k_budget=k,
                elapsed_s=t.elapsed,
                passed=passed,
                timed_out=timed_out,
                status=status,
                error=None if t.resolved is not None else f"not judged: {t.failure_mode}",
                tokens_in=t.tokens_in,
                tokens_out=t.tokens_out,
                started_at=t.started,
                finished_at=t.finished
                if t.started is None or seconds_between(t.started, t.finished) is not None
                else None,
                graded_after_timeout=True,
            )
        )
    notes = [
        "Terminal-Bench keeps each task's time limit in the task's files, not in results.json: "
        "timeout_s, hidden-helper calls and oracle leaks are not recorded by the source",
        "Terminal-Bench runs the tests after an agent timeout, so a timed-out trial may pass "
        f"(graded_after_timeout): {timeouts} agent timeout(s), {after_timeout} of them passed",
    ]
    if modes:
        shown = ", ".join(f"{m} {n}" for m, n in modes.most_common())
        notes.append(
            f"{sum(modes.values())} trial(s) with is_resolved null (not judged), counted as "
            f"failures as the harness counts them: {shown}"
        )
    for f in files:
        if f.accuracy is not None or f.pass_at_k:
            stored = ", ".join(
                f"pass@{k} {v:g}"
                for k, v in sorted(
                    f.pass_at_k.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0
                )
            )
            figure = f"accuracy {f.accuracy:g}" if f.accuracy is not None else ""
            notes.append(
                f"{f.path.name} stores the harness's own figures: "
                + ", ".join(x for x in (figure, stored) if x)
                + " (accuracy = resolved trials / all trials: the pooled attempt rate here)"
            )
    if pooled:
        order = "their recorded start" if options.as_attempts == "runs" else "the order given"
        notes.append(
            f"{len(files)} one-attempt runs pooled as attempts 0..{len(files) - 1} of each task, "
            f"by {order}: " + ", ".join(f.path.name for f in files)
        )
    return ImportedRun(
        run_id=run_id,
        source="terminal-bench",
        source_version=None,
        files=tuple(source_file(f.path) for f in files),
        rows=rows,
        notes=tuple(notes),
    )


TERMINAL_BENCH = TerminalBench()
