"""Task weights held once per distinct column, and the sums over tasks the estimators take of them.

A scorecard weighs its ~200 figures (pass@k and pass^k for every k) alike and two more differently
(the pooled attempt rate by attempts, the first-attempt rate equally): as a (T, M) matrix those
weights are 16 MB at 10,000 tasks, all but three of their columns copies of one. :class:`ColumnWeights`
keeps the distinct columns and, per figure, which one weighs it; the functions here give the same
numbers, to the bit, as the same operations on the whole (T, M) matrix in C order:

* an elementwise product with the values is the same product, taken a run of columns at a time;
* a sum over tasks of a (T, M) matrix adds each column's tasks one after another (numpy reduces the
  slow axis of a C-ordered array row by row), unlike the pairwise sum of one column on its own, so
  a weight column's total is taken in that order too (``np.cumsum``'s last element).

The same order lets a column sum of a (T, M >= 2) product be taken a block of rows at a time
(:func:`chained_sums`): each block's first row starts from the total of the blocks before it, so
the additions are the whole matrix's, one after another, and no (T, M) product is ever held (160
MB at 100,000 tasks and k up to 100). A (T, 1) matrix is summed pairwise and whole, as numpy does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trialbook.errors import ArgumentError

__all__ = ["ColumnWeights"]

_BLOCK_ROWS = 4096  # rows of a (T, M) product made at once by chained_sums


@dataclass(frozen=True)
class ColumnWeights:
    """Per-column task weights: column ``j`` of the values is weighted by ``columns[:, of[j]]``."""

    columns: NDArray[np.float64]
    """(T, K): the distinct weight columns, one row per task."""
    of: NDArray[np.intp]
    """(M,): for each column of the values, the index of its weight column."""

    def __post_init__(self) -> None:
        columns = np.asarray(self.columns, dtype=np.float64)
        of = np.asarray(self.of, dtype=np.intp)
        if columns.ndim != 2 or of.ndim != 1:
            raise ArgumentError(
                f"ColumnWeights needs (T, K) columns and a 1-D map, got shapes {columns.shape} "
                f"and {of.shape}"
            )
        if of.size and (of.min() < 0 or of.max() >= columns.shape[1]):
            raise ArgumentError(f"ColumnWeights map must index its {columns.shape[1]} column(s)")
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "of", of)

    @property
    def shape(self) -> tuple[int, int]:
        """The shape of the (T, M) matrix these weights stand for."""
        return self.columns.shape[0], self.of.size

    def full(self) -> NDArray[np.float64]:
        """The whole (T, M) matrix, C-ordered (for the few computations that need one)."""
        return np.ascontiguousarray(self.columns[:, self.of])

    def runs(self) -> Iterator[tuple[int, int, int]]:
        """(start, stop, weight column) of each run of neighbouring columns weighted alike."""
        of = self.of.tolist()
        start = 0
        for j in range(1, len(of) + 1):
            if j == len(of) or of[j] != of[start]:
                yield start, j, of[start]
                start = j


Weights = NDArray[np.float64] | ColumnWeights
"""(T, 1) weights shared by every column, (T, M) per column, or :class:`ColumnWeights`."""


def weighted(values: NDArray[np.float64], w: Weights) -> NDArray[np.float64]:
    """``w * values`` as a new (T, M) array."""
    if not isinstance(w, ColumnWeights):
        return w * values
    out = np.empty_like(values)
    for start, stop, col in w.runs():
        np.multiply(values[:, start:stop], w.columns[:, col : col + 1], out=out[:, start:stop])
    return out


def scale(values: NDArray[np.float64], w: Weights) -> None:
    """``values *= w`` in place."""
    if not isinstance(w, ColumnWeights):
        values *= w
        return
    for start, stop, col in w.runs():
        values[:, start:stop] *= w.columns[:, col : col + 1]


def totals(w: Weights, power: int = 1) -> NDArray[np.float64]:
    """``(w ** power).sum(axis=0)``: each column's total over tasks, as numpy sums that matrix."""
    whole: NDArray[np.float64]
    if not isinstance(w, ColumnWeights):
        whole = (w if power == 1 else w**power).sum(axis=0)
        return whole
    if w.of.size < 2:  # a (T, 1) matrix is one column: numpy sums it pairwise
        one = w.full()
        whole = (one if power == 1 else one**power).sum(axis=0)
        return whole
    cols = w.columns if power == 1 else w.columns**power
    # a (T, M >= 2) matrix is summed row after row: the order of a running total
    sums = np.cumsum(cols, axis=0)[-1] if cols.shape[0] else np.zeros(cols.shape[1])
    return sums[w.of]


def distinct(w: ColumnWeights) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """The distinct weight columns in order of first use, and each value column's index among
    them: what hashing the columns of the whole matrix gives (alike columns of ``columns`` itself
    are one column too)."""
    key = [w.columns[:, k].tobytes() for k in range(w.columns.shape[1])]
    index: dict[bytes, int] = {}
    kept: list[int] = []
    wmap = np.empty(w.of.size, dtype=np.intp)
    for j, k in enumerate(w.of.tolist()):
        if key[k] not in index:
            index[key[k]] = len(kept)
            kept.append(k)
        wmap[j] = index[key[k]]
    return w.columns[:, kept], wmap


def rows_of(w: Weights, start: int, stop: int) -> Weights:
    """The weights of tasks ``start:stop`` (a (T, 1) or (T, M) array, or ColumnWeights)."""
    if isinstance(w, ColumnWeights):
        return ColumnWeights(columns=w.columns[start:stop], of=w.of)
    return w[start:stop]


def chained_sums(
    rows: int, cols: int, block: Callable[[int, int], NDArray[np.float64]]
) -> NDArray[np.float64]:
    """``M.sum(axis=0)`` of the (rows, cols) C-ordered matrix whose rows ``start:stop`` are
    ``block(start, stop)`` (a new array the sum may change), to the bit, holding one block at a
    time when ``cols >= 2``."""
    if cols < 2 or rows <= _BLOCK_ROWS:
        whole: NDArray[np.float64] = block(0, rows).sum(axis=0)
        return whole
    total: NDArray[np.float64] | None = None
    for start in range(0, rows, _BLOCK_ROWS):
        part = block(start, min(rows, start + _BLOCK_ROWS))
        if total is not None:
            part[0] += total  # the running total, then this block's rows one after another
        total = part.sum(axis=0)
    assert total is not None
    return total


def weighted_sums(values: NDArray[np.float64], w: Weights) -> NDArray[np.float64]:
    """``(w * values).sum(axis=0)``, to the bit, without the (T, M) product."""
    return chained_sums(
        values.shape[0],
        values.shape[1],
        lambda start, stop: weighted(values[start:stop], rows_of(w, start, stop)),
    )
