"""Harbor's own rules, as Harbor 0.25.0 states them: which failures leave a valid reward, and how
Harbor computes its job figures (harbor-framework/harbor, PyPI ``harbor``).

- The error-policy table (``harbor/models/trial/error_policy.py``): each exception type name has a
  failure cause; a reward is valid only when the cause is the agent's own (``agent_exhausted_budget``,
  ``agent_refused_task``). A name the table does not list is ``unclassified``, as Harbor itself
  treats it, so a newer Harbor's new names are read, never refused.
- ``TrialResult.reward_valid`` (``harbor/models/trial/result.py``): no rewards means not valid;
  otherwise every recorded exception, the trial's then each step's, must have a valid policy.
- The job's Mean metric (``harbor/metrics/mean.py``, ``aggregate_reward_dicts``): the mean over all
  trials of the reward, a trial without rewards counted 0; with several reward keys, one mean per
  key, a missing key counted 0.
- pass@k (``harbor/utils/pass_at_k.py``): only when every trial's rewards are one key valued 0 or 1
  (a trial without rewards counts 0), only for k = 2, 4, 8, ... and 5, 10, 15, ... up to the
  smallest trial count of a task, and the mean over tasks of the unbiased per-task estimate.

Our own code, written from reading those files; the tests compare it with Harbor's classes. The
records below hold what trialbook reads of a job folder (:mod:`._harbor`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
from pathlib import Path
from typing import Any

from trialbook.ledger import SourceFile

__all__ = [
    "AGENT_TIMEOUT",
    "HARBOR_TABLE",
    "INFRA_CAUSES",
    "VALID_CAUSES",
    "Job",
    "Trial",
    "Usage",
    "cause_of",
    "exact_pass_at_k",
    "harbor_mean",
    "harbor_pass_at_k",
    "plain_name",
]

HARBOR_TABLE = "0.25.0"
"""The Harbor version whose error-policy table and metrics this module follows."""

_TABLE: dict[str, tuple[str, ...]] = {
    "sandbox_failed": (
        "EnvironmentStartTimeoutError",
        "SandboxBuildFailedError",
        "AgentSetupTimeoutError",
        "HealthcheckError",
        "SandboxLikelyOutOfMemoryError",
        "MemoryLimitExceededError",
        "SSHAccessError",
        "GKEExecStreamClosedError",
        "GKEPodNotFoundError",
        "RuntimeRequestError",
        "AddTestsDirError",
        "DownloadVerifierDirError",
    ),
    "model_provider_failed": (
        "ApiError",
        "ApiRateLimitError",
        "ApiInternalServerError",
        "ApiOverloadedError",
        "ApiConnectionClosedError",
        "ApiResponseStalledError",
        "UnknownApiError",
        "NetworkConnectionError",
        "ApiConnectionError",
        "ApiUsageLimitError",
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
        "APIConnectionError",
        "APIError",
        "Timeout",
        "BadRequestError",
        "UnprocessableEntityError",
        "UnsupportedParamsError",
        "APIResponseValidationError",
        "BudgetExceededError",
        "AgentAuthenticationError",
        "ModelNotFoundError",
        "ApiProviderResourceNotFoundError",
        "AuthenticationError",
        "PermissionDeniedError",
        "NotFoundError",
    ),
    "harbor_failed": (
        "ServiceOperationsUnsupportedError",
        "VercelScopeError",
        "DspyImportError",
        "MissingExtraError",
        "RegradeError",
    ),
    "unclassified": ("NonZeroAgentExitCodeError",),
    "agent_exhausted_budget": (
        "AgentTimeoutError",
        "ContextWindowExceededError",
        "OutputTokenExceededError",
        "ContextLengthExceededError",
        "OutputLengthExceededError",
    ),
    "agent_refused_task": ("AgentSafetyRefusalError", "ContentPolicyViolationError"),
    "verifier_failed": (
        "VerifierTimeoutError",
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "VerifierOutputParseError",
    ),
    "cancelled": ("CancelledError",),
}
_CAUSE = {name: cause for cause, names in _TABLE.items() for name in names}

VALID_CAUSES = frozenset({"agent_exhausted_budget", "agent_refused_task"})
"""Causes after which Harbor holds the reward a valid measurement (``ErrorPolicy.reward_valid``)."""
INFRA_CAUSES = frozenset({"sandbox_failed", "model_provider_failed", "harbor_failed", "cancelled"})
"""Causes that blame the sandbox, the model provider, Harbor or a cancel: our infra_error."""
AGENT_TIMEOUT = "AgentTimeoutError"
"""The exception Harbor records when the agent outlives its time limit (the verifier still runs)."""


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,99}")
_TRIAL = re.compile(r"[A-Za-z0-9_.@+-][A-Za-z0-9_.@+ -]{0,199}")


def plain_name(text: str, *, trial: bool = False) -> str:
    """``text`` when it is a plain class (or trial) name, else its JSON form in ASCII, cut to 100
    characters: a name from a file reaches terminals and pages, so no control or bidi character
    of it is passed on."""
    if (_TRIAL if trial else _NAME).fullmatch(text):
        return text
    return json.dumps(text[:100])


def cause_of(exception_type: str) -> str:
    """Harbor's failure cause for an exception type name (``unclassified`` when not listed)."""
    return _CAUSE.get(exception_type, "unclassified")


def harbor_mean(rewards: Sequence[Mapping[str, float] | None]) -> dict[str, float]:
    """Harbor's Mean metric over trials: ``{"mean": x}`` for one key (or none), else per key."""
    keys = sorted({key for r in rewards if r is not None for key in r})
    if not rewards:
        return {}
    if len(keys) <= 1:
        values = [0.0 if r is None else next(iter(r.values()), 0.0) for r in rewards]
        return {"mean": sum(values) / len(values)}
    return {
        key: sum(0.0 if r is None else r.get(key, 0.0) for r in rewards) / len(rewards)
        for key in keys
    }


def harbor_pass_at_k(
    trials: Sequence[tuple[str, Mapping[str, float] | None]],
) -> dict[int, float]:
    """Harbor's pass@k over (task, rewards) trials: {} when any reward is multi-key or not 0/1."""
    successes: dict[str, list[int]] = {}
    for task, rewards in trials:
        if rewards is None:
            successes.setdefault(task, []).append(0)
            continue
        if len(rewards) != 1:
            return {}
        (value,) = rewards.values()
        if value not in (0, 1):
            return {}
        successes.setdefault(task, []).append(int(value))
    if not successes:
        return {}
    smallest = min(len(s) for s in successes.values())
    ks = sorted(
        {2**e for e in range(1, smallest.bit_length()) if 2**e <= smallest}
        | set(range(5, smallest + 1, 5))
    )
    return {
        k: sum(exact_pass_at_k(len(s), sum(s), k) for s in successes.values()) / len(successes)
        for k in ks
    }


def exact_pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate 1 - C(n-c, k) / C(n, k), computed exactly."""
    return 1.0 - comb(n - c, k) / comb(n, k)


@dataclass(frozen=True)
class Usage:
    """Harbor's token and cost totals of one trial (None: not recorded)."""

    tokens_in: int | None = None
    cache: int | None = None
    tokens_out: int | None = None
    cost: float | None = None


@dataclass(frozen=True)
class Trial:
    """One trial's result.json, as far as the ledger needs it."""

    path: Path
    task: str
    name: str
    job_id: str | None
    group: str
    """Harbor's evals key: agent, model and dataset (one run each)."""
    agent: str
    model: str | None
    started: str | None
    finished: str | None
    elapsed: float | None
    timeout: float | None
    rewards: dict[str, float] | None
    exceptions: tuple[str, ...]
    """Exception types, the trial's then each step's (Harbor's order)."""
    usage: Usage = field(default_factory=Usage)

    @property
    def causes(self) -> tuple[str, ...]:
        return tuple(cause_of(e) for e in self.exceptions)

    @property
    def reward_valid(self) -> bool:
        """Harbor's ``TrialResult.reward_valid``."""
        return bool(self.rewards) and all(c in VALID_CAUSES for c in self.causes)


@dataclass(frozen=True)
class Job:
    """A job folder read whole."""

    path: Path
    n_attempts: int
    trials: list[Trial]
    files: list[SourceFile]
    harbor_version: str | None
    max_retries: int | None
    stats: Mapping[str, Any] | None
    """The job result.json's ``stats`` (Harbor's own figures), when present."""
