"""Two ledgers read by different readers must be identical: values bit for bit, lines too."""

from __future__ import annotations

from typing import Any

import numpy as np

from trialbook.ledger import FIELDS


def bits(a: Any) -> Any:
    """Float arrays as their bit patterns: 0.0 and -0.0, or two roundings, must not pass as equal."""
    a = np.ascontiguousarray(a)
    return a.view(np.int64) if a.dtype == np.float64 else a


def identical(a: Any, b: Any) -> None:
    """Same rows, lines, dtypes, values (bit for bit) and texts."""
    assert len(a) == len(b)
    np.testing.assert_array_equal(a.lines, b.lines)
    for f in FIELDS:
        if f.name in a.values:
            assert a.values[f.name].dtype == b.values[f.name].dtype, f.name
            np.testing.assert_array_equal(
                bits(a.values[f.name]), bits(b.values[f.name]), err_msg=f.name
            )
        else:
            assert list(a.text(f.name)) == list(b.text(f.name)), f.name
