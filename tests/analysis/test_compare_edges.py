"""The decision rule at its boundary (docs/methodology.md, "Paired comparison and the decision
rule": improvement when the interval lies above 0, regression when below, else no detectable
difference). An interval that reaches 0 contains 0: it does not lie above or below it."""

from __future__ import annotations

import pytest

from trialbook.analysis._compare import _decide
from trialbook.stats import PairedTest


def _test(estimate: float, p_value: float, *, decidable: bool = True) -> PairedTest:
    return PairedTest(estimate, 0.0, 0.0, p_value, "m", 0.95, 30, 10, decidable, True, None, 0)


@pytest.mark.parametrize(
    ("estimate", "p_value", "decidable", "decision"),
    [
        # the level itself does not reject: act only when p < 1 - confidence
        (0.2, 0.05, True, "no detectable difference"),
        (-0.2, 0.05, True, "no detectable difference"),
        (0.2, 0.05 - 1e-12, True, "improvement"),
        (-0.2, 0.05 - 1e-12, True, "regression"),
        # a design that cannot reach the level decides nothing, whatever its p-value
        (0.5, 0.0, False, "not enough tasks to decide"),
    ],
)
def test_the_decision_is_read_off_the_one_procedure(
    estimate: float, p_value: float, decidable: bool, decision: str
) -> None:
    assert _decide(_test(estimate, p_value, decidable=decidable)) == decision


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
