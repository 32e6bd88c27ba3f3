"""Harbor: a job folder as Harbor writes it (harbor-framework/harbor, read as of Harbor 0.25.0).

A job folder holds the job's ``config.json`` (``n_attempts``: the budget), ``lock.json`` (the
retry policy, Harbor's version) and ``result.json`` (Harbor's own figures), and one folder per
trial with its ``config.json`` and ``result.json`` (a ``TrialResult``): ``task_name``,
``started_at`` (the attempt index is the order of starts within a task), ``verifier_result.rewards``
(``{key: value}``), ``exception_info.exception_type``, ``agent_result`` token counts and
``cost_usd`` (summed over ``step_results`` for a step-based trial, as Harbor's
``compute_token_cost_totals`` does), and ``agent_execution`` times (the elapsed time).

Harbor never stores whether a reward is valid: it is derived from the exception types with
Harbor's error-policy table (:mod:`._harbor_rules`). A trial the table blames on the sandbox, the
model provider, Harbor or a cancel is an ``infra_error`` row. A trial whose verifier failed (no
reward file, a verifier timeout) has no valid reward either: it is a failed attempt, as Harbor's
own mean and pass@k count it 0, with the exception type in ``error``. ``AgentTimeoutError`` marks
``timed_out``; Harbor's verifier still runs, so such a trial may pass (``graded_after_timeout``).
The reward key that decides ``passed`` is the only key, or the one named with ``reward``; other keys
become named checks; a reward not 0 or 1 is the ``score``, passed when at least 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from trialbook.errors import ArgumentError, LedgerError, Problem
from trialbook.importers._base import ImportedRun, ImportOptions
from trialbook.importers._common import (
    Record,
    attempt_row,
    fail,
    load_json,
    raise_problems,
    seconds_between,
    show,
    source_file,
)
from trialbook.importers._harbor_notes import run_notes
from trialbook.importers._harbor_rules import (
    AGENT_TIMEOUT,
    INFRA_CAUSES,
    Job,
    Trial,
    Usage,
    plain_name,
)
from trialbook.ledger import CheckVerdict, checks_text

__all__ = ["HARBOR", "Harbor"]

_TRIAL_FIELDS = ("task_name", "trial_name", "config", "agent_info")
"""Fields every Harbor TrialResult has: a result.json without them is of another schema."""


class Harbor:
    """Harbor job folders (one run per job, or per agent/model/dataset of a job that has several)."""

    name = "harbor"

    def detect(self, path: Path) -> bool:
        """A folder holding ``config.json`` and a subfolder holding ``result.json``."""
        if not path.is_dir() or not (path / "config.json").is_file():
            return False
        try:
            return any(p.is_dir() and (p / "result.json").is_file() for p in path.iterdir())
        except OSError:
            return False

    def read(self, paths: Sequence[Path], options: ImportOptions) -> Iterator[ImportedRun]:
        """One run per job folder (per evals key of a job with several)."""
        if options.run_id is not None and len(paths) > 1:
            raise ArgumentError(
                f"run_id names one run, but {len(paths)} job folders were given", argument="run_id"
            )
        jobs = [_read_job(p, options.max_bytes) for p in paths]
        for job in jobs:
            yield from _runs(job, options)


def _read_job(path: Path, limit: int) -> Job:
    if not path.is_dir():
        raise fail(path, "not a Harbor job folder (a folder holding config.json and trial folders)")
    config_path = path / "config.json"
    if not config_path.is_file():
        raise fail(path, "no config.json here: not a Harbor job folder")
    problems: list[Problem] = []
    config = Record(load_json(config_path, limit), config_path, "the job config", problems)
    n_attempts = config.integer("n_attempts", required=False, low=1) if config.ok else None
    files = [source_file(config_path)]
    version: str | None = None
    max_retries: int | None = None
    lock_path = path / "lock.json"
    if lock_path.is_file():
        files.append(source_file(lock_path))
        lock = Record(load_json(lock_path, limit), lock_path, "the job lock", problems)
        harbor = lock.obj("harbor", required=False) if lock.ok else None
        version = harbor.text("version", required=False) if harbor is not None else None
        retry = lock.obj("retry", required=False) if lock.ok else None
        if retry is not None:
            max_retries = retry.integer("max_retries", required=False, low=0)
    if max_retries is None and config.ok:
        retry = config.obj("retry", required=False)
        if retry is not None:
            max_retries = retry.integer("max_retries", required=False, low=0)
        elif not lock_path.is_file():
            max_retries = 0  # Harbor's RetryConfig default, which config.json leaves out
    stats: Mapping[str, Any] | None = None
    job_id: str | None = None
    result_path = path / "result.json"
    if result_path.is_file():
        files.append(source_file(result_path))
        result = Record(load_json(result_path, limit), result_path, "the job result", problems)
        job_id = result.text("id", required=False) if result.ok else None
        found = result.obj("stats", required=False) if result.ok else None
        stats = found.data if found is not None else None
    raise_problems(problems)
    trials: list[Trial] = []
    for folder in sorted(p for p in path.iterdir() if p.is_dir()):
        trial_result = folder / "result.json"
        if not trial_result.is_file():
            if (folder / "config.json").is_file():
                problems.append(
                    Problem(
                        0,
                        "trial folder without result.json (an unfinished or crashed trial): "
                        "finish the job (harbor jobs resume) or remove the folder",
                        str(folder),
                    )
                )
            continue
        files.append(source_file(trial_result))
        trial = _read_trial(trial_result, problems, limit)
        if trial is not None:
            trials.append(trial)
    raise_problems(problems)
    if not trials:
        raise fail(path, "holds no trial folder with a result.json")
    _check_one_job(path, trials, job_id)
    return Job(path, n_attempts or 1, trials, files, version, max_retries, stats)


def _check_one_job(path: Path, trials: list[Trial], job_id: str | None) -> None:
    ids = Counter(t.job_id for t in trials if t.job_id is not None)
    expected = job_id or (ids.most_common(1)[0][0] if ids else None)
    strays = [t for t in trials if t.job_id is not None and t.job_id != expected]
    if strays:
        raise fail(
            strays[0].path,
            f"belongs to job {strays[0].job_id}, not to this folder's job {expected} "
            f"({len(strays)} trial(s) of other jobs mixed in): import each job's own folder",
        )


def _read_trial(path: Path, problems: list[Problem], limit: int) -> Trial | None:
    doc = load_json(path, limit)
    rec = Record(doc, path, "the trial result", problems)
    if not rec.ok:
        return None
    missing = [n for n in _TRIAL_FIELDS if n not in rec.data]
    if missing:
        rec.problem(
            f"not a Harbor trial result (no {', '.join(repr(m) for m in missing)}): a trial "
            "folder's result.json is Harbor's TrialResult"
        )
        return None
    task = rec.text("task_name")
    rec.task = task
    name = rec.text("trial_name")
    config = rec.obj("config")
    info = rec.obj("agent_info")
    agent = info.text("name") if info is not None else None
    model_info = info.obj("model_info", required=False) if info is not None else None
    model = model_info.text("name", required=False) if model_info is not None else None
    source = rec.text("source", required=False) or "adhoc"
    job_id = config.text("job_id", required=False) if config is not None else None
    started = _stamp(rec, "started_at")
    finished = _stamp(rec, "finished_at")
    rewards = _rewards(rec)
    exceptions: list[str] = []
    exc = _exception(rec)
    if exc is not None:
        exceptions.append(exc)
    steps = rec.items("step_results", required=False) or []
    step_records = [
        Record(s, path, f"the trial result: step_results {i}", problems, task)
        for i, s in enumerate(steps, 1)
    ]
    for step in step_records:
        if step.ok and (step_exc := _exception(step)) is not None:
            exceptions.append(step_exc)
    usage = _usage(rec, step_records)
    elapsed = _elapsed(step_records if step_records else [rec])
    timeout = _timeout(config) if config is not None and not step_records else None
    if not rec.ok or task is None or name is None or agent is None:
        return None
    group = f"{agent}__{model}__{source}" if model else f"{agent}__{source}"
    return Trial(
        path=path,
        task=task,
        name=name,
        job_id=job_id,
        group=group,
        agent=agent,
        model=model,
        started=started,
        finished=finished,
        elapsed=elapsed,
        timeout=timeout,
        rewards=rewards,
        exceptions=tuple(exceptions),
        usage=usage,
    )


def _stamp(rec: Record, name: str) -> str | None:
    """An ISO 8601 time; Harbor writes UTC with a ``Z``; one without an offset is left out."""
    text = rec.text(name, required=False)
    if text is None:
        return None
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        rec.problem(f"expected an ISO 8601 time, got {show(text)}", name)
        return None
    return stamp.isoformat() if stamp.tzinfo is not None else None


def _rewards(rec: Record) -> dict[str, float] | None:
    verifier = rec.obj("verifier_result", required=False)
    if verifier is None:
        return None
    found = verifier.obj("rewards", required=False)
    if found is None:
        return None
    rewards: dict[str, float] = {}
    for key in found.data:
        value = found.number(key)
        if value is not None:
            rewards[str(key)] = value
    return rewards


def _exception(rec: Record) -> str | None:
    info = rec.obj("exception_info", required=False)
    name = info.text("exception_type") if info is not None else None
    return None if name is None else plain_name(name)


def _usage(rec: Record, steps: list[Record]) -> Usage:
    """Harbor's ``compute_token_cost_totals``: the trial's agent_result, else the steps' summed."""
    top = rec.obj("agent_result", required=False)
    contexts = (
        [top]
        if top is not None
        else [c for s in steps if s.ok and (c := s.obj("agent_result", required=False))]
    )
    totals: list[float | None] = [None, None, None, None]
    for ctx in contexts:
        values = [
            ctx.integer("n_input_tokens", required=False, low=0),
            ctx.integer("n_cache_tokens", required=False, low=0),
            ctx.integer("n_output_tokens", required=False, low=0),
            ctx.number("cost_usd", required=False, low=0),
        ]
        totals = [t if v is None else (t or 0) + v for t, v in zip(totals, values, strict=True)]
    tokens_in, cache, tokens_out, cost = totals
    return Usage(
        None if tokens_in is None else int(tokens_in),
        None if cache is None else int(cache),
        None if tokens_out is None else int(tokens_out),
        cost,
    )


def _elapsed(records: list[Record]) -> float | None:
    """Seconds the agent ran (summed over steps); None when any part is not recorded."""
    total = 0.0
    for r in records:
        timing = r.obj("agent_execution", required=False) if r.ok else None
        if timing is None:
            return None
        seconds = seconds_between(
            timing.text("started_at", required=False), timing.text("finished_at", required=False)
        )
        if seconds is None:
            return None
        total += seconds
    return total


def _timeout(config: Record) -> float | None:
    """The agent's limit where the trial's config sets one (``agent.override_timeout_sec``), with
    Harbor's cap and multiplier; else the task's own, which only its task.toml records."""
    agent = config.obj("agent", required=False)
    if agent is None:
        return None
    base = agent.number("override_timeout_sec", required=False, low=0)
    if not base:
        return None
    cap = agent.number("max_timeout_sec", required=False, low=0)
    multiplier = config.number("agent_timeout_multiplier", required=False, low=0)
    if multiplier is None:
        multiplier = config.number("timeout_multiplier", required=False, low=0)
    return min(base, cap or float("inf")) * (1.0 if multiplier is None else multiplier)


def _runs(job: Job, options: ImportOptions) -> Iterator[ImportedRun]:
    groups: dict[str, list[Trial]] = {}
    for t in job.trials:
        groups.setdefault(t.group, []).append(t)
    for group, trials in sorted(groups.items()):
        base = options.run_id or job.path.resolve().name
        run_id = base if len(groups) == 1 else f"{base}__{group}"
        yield _run(job, run_id, group, trials, options)


def _reward_key(job: Job, trials: list[Trial], options: ImportOptions) -> str | None:
    keys = sorted({k for t in trials for k in t.rewards or {}})
    wanted = options.reward
    if wanted is not None:
        if wanted not in keys:
            raise ArgumentError(
                f"{job.path}: no reward key {wanted!r} in the job (its keys: "
                f"{', '.join(keys) or 'none'})",
                argument="reward",
            )
        return wanted
    if len(keys) > 1:
        raise ArgumentError(
            f"{job.path}: several reward keys ({', '.join(keys)}): name the one that decides "
            "passed with --reward (the others become named checks)",
            argument="reward",
        )
    return keys[0] if keys else None


def _run(
    job: Job, run_id: str, group: str, trials: list[Trial], options: ImportOptions
) -> ImportedRun:
    key = _reward_key(job, trials, options)
    by_task: dict[str, list[Trial]] = {}
    for t in trials:
        by_task.setdefault(t.task, []).append(t)
    problems = [
        Problem(0, f"task {task!r}: {len(ts)} trials, more than the job's n_attempts "
                f"{job.n_attempts}", str(job.path / "config.json"))
        for task, ts in sorted(by_task.items())
        if len(ts) > job.n_attempts
    ]  # fmt: skip
    if problems:
        raise LedgerError(problems)
    # a score only where some reward is partial credit: binary rewards say no more than passed
    partial = any(0 < v < 1 for t in trials if t.rewards for v in t.rewards.values())
    pairs: list[tuple[Trial, dict[str, object]]] = []
    for _, ts in sorted(by_task.items()):
        ordered = sorted(ts, key=lambda t: (t.started is None, t.started or "", t.name))
        pairs.extend(
            (t, _row(t, i, job, run_id, key, options, partial)) for i, t in enumerate(ordered)
        )
    return ImportedRun(
        run_id=run_id,
        source="harbor",
        source_version=None if job.harbor_version is None else f"harbor {job.harbor_version}",
        files=tuple(job.files),
        rows=[row for _, row in pairs],
        notes=run_notes(job, group, pairs, key),
    )


def _row(
    t: Trial,
    index: int,
    job: Job,
    run_id: str,
    key: str | None,
    options: ImportOptions,
    partial: bool,
) -> dict[str, object]:
    causes = t.causes
    infra = [(e, c) for e, c in zip(t.exceptions, causes, strict=True) if c in INFRA_CAUSES]
    timed_out = AGENT_TIMEOUT in t.exceptions
    value = None if t.rewards is None or key is None else t.rewards.get(key)
    said = [f"{e} ({c})" for e, c in zip(t.exceptions, causes, strict=True)]
    if infra:
        status, passed, score = "infra_error", False, None
        said = [f"{e} ({c})" for e, c in infra]
    elif value is not None:
        passed = value >= 1
        status = "passed" if passed else "timed_out" if timed_out else "failed"
        score = value if partial and 0 <= value <= 1 else None
    else:
        status, passed, score = ("timed_out" if timed_out else "failed"), False, None
        if not t.exceptions:
            said.append(
                "no reward recorded" if not t.rewards else f"reward key {key!r} not recorded"
            )
    checks = {
        k: CheckVerdict(v >= 1, f"reward {v:g}")
        for k, v in sorted((t.rewards or {}).items())
        if k != key
    }
    return attempt_row(
        run_id=run_id,
        system=options.system or (t.agent if t.model is None else f"{t.agent} {t.model}"),
        task_id=t.task,
        attempt_index=index,
        k_budget=job.n_attempts,
        timeout_s=t.timeout,
        elapsed_s=t.elapsed,
        passed=passed,
        timed_out=timed_out and not infra,
        status=status,
        score=score,
        error="; ".join(said) or None,
        tokens_in=t.usage.tokens_in,
        tokens_out=t.usage.tokens_out,
        cache_hit=None if t.usage.cache is None else t.usage.cache > 0,
        cost=t.usage.cost,
        model_version=t.model,
        harness_version=None if job.harbor_version is None else f"harbor {job.harbor_version}",
        started_at=t.started,
        finished_at=t.finished if seconds_between(t.started, t.finished) is not None else None,
        checks=checks_text(checks) if checks else None,
        graded_after_timeout=True,
    )


HARBOR = Harbor()
