"""A mean over tasks with its interval: the unit every analysis result is made of."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
from numpy.typing import NDArray

from trialbook.analysis._options import IntervalOptions
from trialbook.background import Background
from trialbook.stats import (
    BootstrapResult,
    ColumnWeights,
    clustered_se,
    task_bootstrap,
    wilson_task_interval,
)

__all__ = ["MetricEstimate", "metric_set"]


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


def _estimate(boot: BootstrapResult, se: NDArray[np.float64], j: int) -> MetricEstimate:
    s = float(se[j])
    return MetricEstimate(
        estimate=float(boot.estimate[j]),
        ci_low=float(boot.ci_low[j]),
        ci_high=float(boot.ci_high[j]),
        se=None if np.isnan(s) else s,
        se_bootstrap=float(boot.standard_error[j]),
    )


def metric_set(
    values: NDArray[np.float64],
    names: Sequence[str],
    weights: NDArray[np.float64] | ColumnWeights | None,
    options: IntervalOptions,
    attempts: float | NDArray[np.float64],
) -> tuple[dict[str, MetricEstimate], BootstrapResult]:
    """Means over tasks of the columns of ``values`` (T, M) with the intervals ``options`` asks
    for (the task bootstrap, or Wilson over the effective number of tasks, capped by
    ``attempts``), one per name; and the bootstrap behind them. The bootstrap's draws run on a
    second thread while the analytic SE and Wilson's bounds are worked out; an error is the one
    the bootstrap raises first, as when they ran one after the other."""
    drawing = Background(
        partial(
            task_bootstrap,
            values,
            weights=weights,
            confidence=options.confidence,
            resamples=options.resamples,
            method="percentile" if options.method == "wilson" else options.method,
            seed=options.seed,
            interval=options.method != "wilson",  # Wilson's bounds replace the resamples' below
        )
    )
    with drawing.first():
        se = clustered_se(values, weights)
        bounds = (
            wilson_task_interval(
                values, weights=weights, confidence=options.confidence, max_n=attempts, se=se
            )
            if options.method == "wilson"
            else None
        )
    boot = drawing.result()
    if bounds is not None:
        boot = replace(boot, ci_low=bounds[0], ci_high=bounds[1])
    return {name: _estimate(boot, se, j) for j, name in enumerate(names)}, boot
