"""pass@k and pass^k per task, exact for any number of attempts.

pass@k = 1 - C(n-c, k) / C(n, k)   Chen et al. 2021, arXiv 2107.03374, section 2.1
pass^k = C(c, k) / C(n, k)         Yao et al. 2024 (tau-bench), arXiv 2406.12045

Both are computed with Python's exact integers and one correctly rounded division
(``int / int`` in CPython rounds the exact quotient to the nearest double). Rounding to nearest is
monotone, so the exact order pass^k <= c/n <= pass@k survives into the floats: the invariant holds
exactly, not approximately, for every n (n = 1000 and k = 500 included). The work is done once per
distinct (n, c) pair, which keeps it vectorised over tasks: a benchmark of 10,000 tasks with 5
attempts each has at most 21 distinct pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialbook.errors import ArgumentError, InsufficientAttemptsError

__all__ = ["PassKStep", "pass_at_k", "pass_hat_k", "pass_k_matrix", "pass_k_steps"]


def _check(n: NDArray[np.int64], c: NDArray[np.int64], k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ArgumentError(f"k must be a whole number >= 1, got {k!r}")
    if n.shape != c.shape:
        raise ArgumentError(f"n and c must have the same shape, got {n.shape} and {c.shape}")
    if (n < 1).any():
        raise ArgumentError(f"every n must be >= 1, got {int(n.min())}")
    if (c < 0).any() or (c > n).any():
        bad = int(np.flatnonzero((c < 0) | (c > n))[0])
        raise ArgumentError(f"c must lie in 0..n, got c={int(c[bad])} with n={int(n[bad])}")
    short = np.flatnonzero(n < k)
    if short.size:
        raise InsufficientAttemptsError(
            f"k={k} exceeds the attempts of {short.size} task(s) (smallest n = {int(n.min())}); "
            f"positions: {', '.join(str(int(i)) for i in short[:10])}"
            + (" ..." if short.size > 10 else "")
        )


def _as_counts(values: ArrayLike, name: str) -> NDArray[np.int64]:
    arr = np.asarray(values)
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer)
        or (np.issubdtype(arr.dtype, np.floating) and np.all(np.mod(arr, 1) == 0))
    ):
        raise ArgumentError(f"{name} must hold whole numbers, got dtype {arr.dtype}")
    return arr.astype(np.int64)


def _per_pair(
    n: NDArray[np.int64],
    c: NDArray[np.int64],
    ks: Sequence[int],
    hat: bool,
    target: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """(len(ks), *n.shape) values, with the distinct (n, c) pairs found once for every k; or,
    given ``target`` (T, len(ks)) for 1-D counts, the same values written there, task by task."""
    span = int(n.max()) + 1
    keys, inverse = np.unique(n.ravel() * span + c.ravel(), return_inverse=True)
    pairs = [divmod(key, span) for key in keys.tolist()]
    out = np.empty((len(ks), len(keys)), dtype=np.float64)
    for j, k in enumerate(ks):
        for i, (ni, ci) in enumerate(pairs):
            total = comb(ni, k)
            # numerator of the exact fraction; the single division is correctly rounded
            out[j, i] = (comb(ci, k) if hat else total - comb(ni - ci, k)) / total
    if target is not None:  # each task's row of values, gathered straight into place
        np.take(np.ascontiguousarray(out.T), inverse.ravel(), axis=0, out=target, mode="clip")
        return target
    result: NDArray[np.float64] = out[:, inverse.ravel()].reshape((len(ks), *n.shape))
    return result


def pass_k_matrix(
    n: ArrayLike,
    c: ArrayLike,
    ks: Sequence[int],
    *,
    out: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """pass@k and pass^k of every task for every k in ``ks``: two arrays of shape (T, len(ks)).
    ``out``: two such arrays (views of a larger matrix, say) to write them into and return, with
    no (T, len(ks)) array made on the way (80 MB each at 100,000 tasks and k up to 100)."""
    n_arr, c_arr = _as_counts(n, "n"), _as_counts(c, "c")
    if not ks:
        raise ArgumentError("ks must name at least one k")
    for k in ks:
        _check(n_arr, c_arr, k)
    ks = [int(k) for k in ks]
    if out is not None:
        shape = (n_arr.size, len(ks))
        if n_arr.ndim != 1 or any(o.shape != shape or o.dtype != np.float64 for o in out):
            raise ArgumentError(f"out must be two float64 arrays of shape {shape} for 1-D counts")
        return (
            _per_pair(n_arr, c_arr, ks, hat=False, target=out[0]),
            _per_pair(n_arr, c_arr, ks, hat=True, target=out[1]),
        )
    return _per_pair(n_arr, c_arr, ks, hat=False).T, _per_pair(n_arr, c_arr, ks, hat=True).T


def pass_at_k(n: ArrayLike, c: ArrayLike, k: int) -> NDArray[np.float64]:
    """Unbiased pass@k per task: the chance that k attempts drawn without replacement hold a pass.

    ``n`` and ``c`` are attempts and passes per task (arrays of the same shape); ``k`` must not exceed
    any n: a task with fewer attempts raises :class:`InsufficientAttemptsError` rather than returning
    human-eval's silent 1.0.
    """
    n_arr, c_arr = _as_counts(n, "n"), _as_counts(c, "c")
    _check(n_arr, c_arr, k)
    result: NDArray[np.float64] = _per_pair(n_arr, c_arr, [int(k)], hat=False)[0]
    return result


def pass_hat_k(n: ArrayLike, c: ArrayLike, k: int) -> NDArray[np.float64]:
    """Unbiased pass^k per task: the chance that k attempts drawn without replacement all pass."""
    n_arr, c_arr = _as_counts(n, "n"), _as_counts(c, "c")
    _check(n_arr, c_arr, k)
    result: NDArray[np.float64] = _per_pair(n_arr, c_arr, [int(k)], hat=True)[0]
    return result


@dataclass(frozen=True)
class PassKStep:
    """The worked pass@k calculation for one task, every intermediate number kept."""

    n: int
    """Attempts actually used (after clamping, if any)."""
    c: int
    """Passes actually used."""
    k: int
    """Budget actually used."""
    clamped: tuple[str, ...]
    """Which inputs were clamped to n, as ``"c: 12 -> 10"``; empty in strict mode."""
    total: int
    """C(n, k): every way to choose k of the n attempts."""
    all_fail: int
    """C(n - c, k): the choices that hold no pass."""
    all_pass: int
    """C(c, k): the choices that hold only passes."""
    pass_at_k: float
    """1 - all_fail / total."""
    pass_hat_k: float
    """all_pass / total."""
    independent: float
    """1 - (1 - c/n)^k: the with-replacement plug-in value, biased low as an estimator of pass@k."""
    independent_hat: float
    """(c/n)^k: the plug-in counterpart of pass^k."""


def pass_k_steps(n: int, c: int, k: int, *, clamp: bool = False) -> PassKStep:
    """The pass@k calculator: pass@k, pass^k and the independent-trials value for one task.

    Strict by default: ``c > n`` or ``k > n`` is an error. With ``clamp=True`` they are cut to n,
    as a calculator widget would, and ``clamped`` says what changed.
    """
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentError(f"{name} must be a whole number, got {value!r}", argument=name)
    for name, value, low in (("n", n, 1), ("c", c, 0), ("k", k, 1)):
        if value < low:
            raise ArgumentError(f"{name} must be >= {low}, got {value}", argument=name)
    clamped: list[str] = []
    if clamp:
        if c > n:
            clamped.append(f"c: {c} -> {n}")
            c = n
        if k > n:
            clamped.append(f"k: {k} -> {n}")
            k = n
    else:
        if c > n:
            raise ArgumentError(
                f"c ({c}) exceeds n ({n}): a task cannot pass more often than tried", argument="c"
            )
        if k > n:
            raise InsufficientAttemptsError(
                f"k ({k}) exceeds n ({n}): pass@k needs at least k attempts (clamping cuts k to n)"
            )
    total, all_fail, all_pass = comb(n, k), comb(n - c, k), comb(c, k)
    p = c / n
    return PassKStep(
        n=n,
        c=c,
        k=k,
        clamped=tuple(clamped),
        total=total,
        all_fail=all_fail,
        all_pass=all_pass,
        pass_at_k=(total - all_fail) / total,
        pass_hat_k=all_pass / total,
        independent=1.0 - (1.0 - p) ** k,
        independent_hat=p**k,
    )
