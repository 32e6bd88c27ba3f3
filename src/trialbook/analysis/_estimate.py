"""A mean over tasks with its interval: the unit every analysis result is made of."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MetricEstimate"]


@dataclass(frozen=True)
class MetricEstimate:
    """A mean over tasks with its interval."""

    estimate: float
    """The point estimate."""
    ci_low: float
    """Lower bound of the task-bootstrap interval."""
    ci_high: float
    """Upper bound of the task-bootstrap interval."""
    se: float | None
    """Analytic task-clustered standard error (None with a single task)."""
    se_bootstrap: float
    """Standard deviation of the bootstrap distribution."""
