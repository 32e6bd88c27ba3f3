"""The task bootstrap draws on a second thread while the rest is worked out (trialbook.background):
the same values, and the same error first, as one after the other."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from trialbook.analysis._estimate import metric_set
from trialbook.background import Background
from trialbook.errors import ArgumentError


def test_a_background_call_gives_its_value_or_raises_its_error() -> None:
    assert Background(sum, [1, 2, 3]).result() == 6
    with pytest.raises(ZeroDivisionError):
        Background(divmod, 1, 0).result()


def test_the_bootstrap_s_error_comes_first_as_when_it_ran_first() -> None:
    # both fail: the bootstrap on its resamples, Wilson on a value outside 0..1; one after the
    # other, the bootstrap (called first) raised
    values = np.array([[0.5], [1.5], [0.0]])
    options = SimpleNamespace(method="wilson", confidence=0.95, resamples=1, seed=0)
    with pytest.raises(ArgumentError, match="resamples must be a whole number"):
        metric_set(values, ["m"], None, options, 3.0)  # type: ignore[arg-type]
    ok = SimpleNamespace(method="wilson", confidence=0.95, resamples=50, seed=0)
    with pytest.raises(ArgumentError, match=r"values must lie in 0\.\.1"):
        metric_set(values, ["m"], None, ok, 3.0)  # type: ignore[arg-type]


def test_work_beside_a_call_that_failed_first_raises_the_call_s_error() -> None:
    def fails() -> None:
        raise KeyError("the call's")

    with pytest.raises(KeyError, match="the call's"), Background(fails).first():
        raise ValueError("the work's")
    with pytest.raises(ValueError, match="the work's"), Background(sum, [1]).first():
        raise ValueError("the work's")
    with Background(sum, [1]).first():
        pass  # nothing raised: nothing waited for
