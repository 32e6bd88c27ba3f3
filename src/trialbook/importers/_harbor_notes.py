"""What the scorecard of an imported Harbor job says: Harbor's own figures beside ours, which
trials make the difference, and what Harbor dropped (retried trials) or never recorded."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from trialbook.importers._harbor_rules import (
    AGENT_TIMEOUT,
    HARBOR_TABLE,
    INFRA_CAUSES,
    Job,
    Trial,
    exact_pass_at_k,
    harbor_mean,
    harbor_pass_at_k,
    plain_name,
)

__all__ = ["harbor_figures", "run_notes"]


def harbor_figures(
    job: Job, group: str, trials: Sequence[Trial]
) -> tuple[dict[str, float], dict[int, float], bool]:
    """Harbor's mean (per key) and pass@k for one evals group: as its result.json stores them
    (True), else computed by Harbor's rules from the trials (False)."""
    evals = job.stats.get("evals") if isinstance(job.stats, Mapping) else None
    stored = evals.get(group) if isinstance(evals, Mapping) else None
    if isinstance(stored, Mapping) and isinstance(stored.get("metrics"), list):
        means: dict[str, float] = {}
        for metric in stored["metrics"]:
            if isinstance(metric, Mapping):
                means.update({str(k): v for k, v in metric.items() if _number(v)})
        raw = stored.get("pass_at_k")
        ks = {
            int(k): v
            for k, v in (raw.items() if isinstance(raw, Mapping) else ())
            if str(k).isdigit() and _number(v)
        }
        return means, ks, True
    rewards = [t.rewards for t in trials]
    return harbor_mean(rewards), harbor_pass_at_k([(t.task, t.rewards) for t in trials]), False


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _ours(rows: Sequence[Mapping[str, object]], ks: Sequence[int]) -> dict[int, float]:
    """Our pass@k, the unbiased estimate per task averaged over tasks (docs/methodology.md), infra
    errors counted as failures as our scorecard counts them by default."""
    n: Counter[object] = Counter()
    c: Counter[object] = Counter()
    for row in rows:
        n[row["task_id"]] += 1
        c[row["task_id"]] += bool(row["passed"])
    smallest = min(n.values())
    return {k: sum(exact_pass_at_k(n[t], c[t], k) for t in n) / len(n) for k in ks if k <= smallest}


def _listing(names: Sequence[str]) -> str:
    shown = ", ".join(plain_name(n, trial=True) for n in names[:5])
    return shown + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def run_notes(
    job: Job, group: str, pairs: Sequence[tuple[Trial, Mapping[str, object]]], key: str | None
) -> tuple[str, ...]:
    """The run's notes (``pairs``: each trial with its row), in the order a reader needs them."""
    trials = [t for t, _ in pairs]
    rows = [r for _, r in pairs]
    notes = [
        f"read with Harbor {HARBOR_TABLE}'s error-policy table: a trial's reward is valid "
        "(Harbor's reward_valid, never stored in result.json) only when every recorded exception "
        "is the agent's own (agent_exhausted_budget, agent_refused_task); an exception name the "
        "table does not list is Harbor's unclassified",
        "Harbor keeps the agent's time limit in each task's task.toml: timeout_s is recorded only "
        "where a trial's config.json overrides it; hidden-helper calls and oracle leaks are not "
        "recorded by the source",
    ]
    keys = sorted({k for t in trials for k in t.rewards or {}})
    if key is not None:
        others = [k for k in keys if k != key]
        notes.append(
            f"passed: reward key {key!r} at least 1 (Harbor's binary reading); a reward "
            "between 0 and 1 is kept as score"
            + (f"; the other keys are named checks: {', '.join(others)}" if others else "")
        )
    timeouts = [t for t in trials if AGENT_TIMEOUT in t.exceptions]
    after = [r for r in rows if r["timed_out"] and r["passed"]]
    notes.append(
        "Harbor runs the verifier after an agent timeout (AgentTimeoutError), so a timed-out "
        f"trial may pass (graded_after_timeout): {len(timeouts)} agent timeout(s), {len(after)} "
        "of them passed"
    )
    invalid = [t for t in trials if not t.reward_valid]
    infra = [t for t in invalid if any(c in INFRA_CAUSES for c in t.causes)]
    graded = [t for t in invalid if t not in infra]
    if graded:
        kinds = Counter(e for t in graded for e in t.exceptions) or Counter({"no reward": 1})
        notes.append(
            f"{len(graded)} trial(s) without a valid reward whose failure Harbor's table does "
            "not blame on the infrastructure (a verifier failure, an unclassified exception): "
            "failed attempts unless a reward was recorded, as Harbor's mean and pass@k count "
            "them 0; the exception in error: "
            + ", ".join(f"{e} {n}" for e, n in kinds.most_common())
        )
    if infra:
        kinds = Counter(c for t in infra for c in t.causes if c in INFRA_CAUSES)
        notes.append(
            f"{len(infra)} trial(s) Harbor's table blames on "
            + ", ".join(f"{c} {n}" for c, n in kinds.most_common())
            + ": infra_error rows, counted as failures (as Harbor's mean and pass@k count a trial "
            "without reward 0); --drop-infra-errors leaves them out: "
            + _listing([t.name for t in infra])
        )
    notes.append(_retries(job))
    notes.extend(_beside(job, group, pairs, key))
    return tuple(notes)


def _retries(job: Job) -> str:
    made = job.stats.get("n_retries") if isinstance(job.stats, Mapping) else None
    if job.max_retries is None:
        return "the job records no retry policy: whether Harbor retried failed trials is unknown"
    if job.max_retries == 0:
        return "Harbor's retry policy (lock.json) allowed no retry: no trial was deleted"
    count = f"{made} retr{'y' if made == 1 else 'ies'} made" if _number(made) else "retries made"
    return (
        f"Harbor retried a failed trial up to {job.max_retries} time(s) (lock.json retry."
        f"max_retries) and deleted each retried try's folder: {count} (result.json n_retries), "
        "their failures are in no row; a trial still failing after its retries is kept"
    )


def _beside(
    job: Job, group: str, pairs: Sequence[tuple[Trial, Mapping[str, object]]], key: str | None
) -> list[str]:
    trials = [t for t, _ in pairs]
    rows = [r for _, r in pairs]
    means, harbor_k, stored = harbor_figures(job, group, trials)
    where = "stored in its result.json" if stored else f"by Harbor {HARBOR_TABLE}'s rules"
    shown = ", ".join(
        [f"mean {v:.4g}" if k == "mean" else f"mean {k} {v:.4g}" for k, v in means.items()]
        + [f"pass@{k} {v:.4g}" for k, v in sorted(harbor_k.items())]
    )
    ours = _ours(rows, [1, *sorted(harbor_k)])
    notes = [
        f"Harbor's own figures ({where}): {shown or 'none'} (its mean: over all trials, a trial "
        "without reward counted 0); ours with infra errors counted as failures: "
        + ", ".join(f"pass@{k} {v:.4g}" for k, v in ours.items())
        + "; Harbor states pass@k only for k = 2, 4, 8, ... and multiples of 5 (and none for "
        "several reward keys or a reward not 0 or 1), ours is exact for every k"
    ]
    differ = []
    partial = [t.name for t, r in pairs if _partial(r)]
    if partial:
        differ.append(
            f"{len(partial)} trial(s) with a reward between 0 and 1, which Harbor's mean "
            f"averages and ours passes only at 1 (kept as score): {_listing(partial)}"
        )
    rewarded_infra = [
        t.name for t, r in pairs if r["status"] == "infra_error" and key in (t.rewards or {})
    ]
    if rewarded_infra:
        differ.append(
            f"{len(rewarded_infra)} infra_error trial(s) whose reward Harbor's mean counts: "
            + _listing(rewarded_infra)
        )
    if len(set(Counter(r["task_id"] for r in rows).values())) > 1:
        differ.append(
            "tasks have different numbers of trials: Harbor's mean weighs trials, ours tasks"
        )
    harbor_mean_of_key = means.get("mean", means.get(key or ""))
    if harbor_mean_of_key is None or 1 not in ours:
        return notes
    gap = ours[1] - harbor_mean_of_key
    if abs(gap) <= 1e-9:
        notes.append(f"our pass@1 equals Harbor's mean{'' if 'mean' in means else f' of {key}'}")
    else:
        notes.append(
            f"our pass@1 differs from Harbor's mean by {gap:+.4g}: "
            + ("; ".join(differ) or "no trial explains it (Harbor's stored figures may be stale)")
        )
    return notes


def _partial(row: Mapping[str, object]) -> bool:
    score = row.get("score")
    return isinstance(score, float) and 0 < score < 1
