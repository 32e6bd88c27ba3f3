"""The decision rule at its boundary (docs/methodology.md, "Paired comparison and the decision
rule": improvement when the interval lies above 0, regression when below, else no detectable
difference). An interval that reaches 0 contains 0: it does not lie above or below it."""

from __future__ import annotations

import pytest

from trialbook.analysis._compare import _decide


@pytest.mark.parametrize(
    ("low", "high", "decision"),
    [
        (0.0, 0.2, "no detectable difference"),
        (-0.2, 0.0, "no detectable difference"),
        (0.0, 0.0, "no detectable difference"),
        (1e-12, 0.2, "improvement"),
        (-0.2, -1e-12, "regression"),
    ],
)
def test_an_interval_touching_zero_decides_nothing(low: float, high: float, decision: str) -> None:
    assert _decide(low, high) == decision


@pytest.mark.parametrize("name", ["between_var", "within_var"])
@pytest.mark.parametrize("value", [0.2500001, 0.3, 1.0])
def test_a_given_variance_above_a_quarter_is_refused(name: str, value: float) -> None:
    # a variance of 0/1 outcomes is p(1 - p) <= 1/4 (its maximum, at p = 1/2)
    from trialbook.analysis._plan import plan_from_options
    from trialbook.errors import ArgumentError

    with pytest.raises(ArgumentError, match=r"must lie in 0\.\.0\.25") as info:
        plan_from_options(tasks=50, attempts=2, baseline=0.5, effect=0.1, **{name: value})
    assert info.value.argument == name
    plan_from_options(tasks=50, attempts=2, baseline=0.5, effect=0.1, **{name: 0.25})
