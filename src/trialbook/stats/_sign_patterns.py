"""The sign patterns of the paired sign-flip test (trialbook.stats._signflip), and how many of
them give a flipped mean beyond the observed one.

Random patterns are ``default_rng(seed).integers(0, 2, (rows, t), int8)`` per block, read here off
the generator's raw output where that is proven equal to numpy's own draws (five times quicker);
every test of t tasks with the same count and seed flips the same patterns.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "TOLERANCE",
    "all_bits",
    "all_signs",
    "bit_blocks",
    "integer_bits",
    "pattern_counts",
    "raw_bits",
    "raw_bits_agree",
    "sign_blocks",
    "signs_of",
]

# ties in floating point: a flipped mean equal to the observed one counts. The band is relative to
# the observed mean and to the mean |difference| (the scale of a flipped mean's rounding), so that
# an observed mean of 0, held as 0 or as a few 1e-18, still ties with the patterns whose flipped
# mean is 0: its own rounding is no smaller than theirs
TOLERANCE = 1e-12
_COLUMNS = 256  # comparisons whose flipped means are held at once (a block of patterns each)
_LOOKED_UP = 4  # up to this many comparisons, pattern sums are looked up, not multiplied out


def pattern_counts(
    bits: Iterator[NDArray[np.uint8]],
    rows: NDArray[np.float64],
    estimate: NDArray[np.float64],
    scale: NDArray[np.float64],
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per comparison (a row of ``rows``), the sign patterns (``bits``: blocks of 0/1 per task,
    1 a +) whose |flipped mean| lies beyond its observed |mean|, and those equal to it (within the
    band of :data:`TOLERANCE`). Many comparisons: one matrix product of the signs per block; a
    few: each pattern's sum looked up eight tasks at a time, with no signs written out."""
    t = rows.shape[1]
    observed = np.abs(estimate)
    over = observed * (1 + TOLERANCE) + TOLERANCE * scale
    under = observed * (1 - TOLERANCE) - TOLERANCE * scale
    beyond = np.zeros(rows.shape[0], dtype=np.int64)
    reached = np.zeros(rows.shape[0], dtype=np.int64)
    few = rows.shape[0] <= _LOOKED_UP
    tables = _byte_sums(rows) if few else None
    buffer: NDArray[np.float64] | None = None
    for block in bits:
        if tables is not None:
            # byte g of a pattern holds the signs of tasks 8g..8g+7; tables[r, g, byte] their sum
            index = np.packbits(block, axis=1, bitorder="little").astype(np.intp)
            index += np.arange(index.shape[1], dtype=np.intp) * 256
            for r in range(rows.shape[0]):
                stat = np.abs(tables[r].ravel()[index].sum(axis=1) / t)
                beyond[r] += int((stat > over[r]).sum())
                reached[r] += int((stat >= under[r]).sum())
            continue
        if buffer is None or buffer.shape[0] < block.shape[0]:
            buffer = np.empty(block.shape)
        signs = signs_of(block, buffer[: block.shape[0]])
        for start in range(0, rows.shape[0], _COLUMNS):
            part = slice(start, start + _COLUMNS)
            stat = np.abs(signs @ rows[part].T / t)
            beyond[part] += (stat > over[part]).sum(axis=0)
            reached[part] += (stat >= under[part]).sum(axis=0)
    return beyond, reached - beyond


def _byte_sums(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per comparison, per group of eight tasks (the last padded with differences of 0), per byte
    of their signs (bit k the sign of task 8g + k, 1 a +): the sum of the signed differences."""
    count, t = rows.shape
    groups = -(-t // 8)
    padded = np.zeros((count, groups * 8))
    padded[:, :t] = rows
    code = np.arange(256)[:, None] >> np.arange(8)
    signs = np.where(code & 1, 1.0, -1.0)  # 256 x 8
    return np.asarray(padded.reshape(count, groups, 8) @ signs.T, dtype=np.float64)


def signs_of(bits: NDArray[np.uint8], out: NDArray[np.float64]) -> NDArray[np.float64]:
    """0/1 bits as signs -1.0/+1.0, written into ``out``."""
    pm = bits.view(np.int8) * np.int8(2)
    pm -= 1
    np.copyto(out, pm, casting="unsafe")
    return out


def all_signs(t: int) -> Iterator[NDArray[np.float64]]:
    """Every one of the 2^t sign patterns, as one block."""
    for bits in all_bits(t):
        yield signs_of(bits, np.empty(bits.shape))


def all_bits(t: int) -> Iterator[NDArray[np.uint8]]:
    """Every one of the 2^t sign patterns as 0/1 bits (1 a +), as one block."""
    codes = np.arange(2**t, dtype=np.int64)[:, None] >> np.arange(t, dtype=np.int64)
    yield (codes & 1).astype(np.uint8)


def sign_blocks(t: int, resamples: int, seed: int) -> Iterator[NDArray[np.float64]]:
    """The ``resamples`` random sign patterns of ``seed`` (rows of t signs, +-1.0), in blocks of
    about 4M signs (32 MB). The block is one buffer, overwritten by the next: use it before asking
    for another."""
    buffer: NDArray[np.float64] | None = None
    for bits in bit_blocks(t, resamples, seed):
        if buffer is None:
            buffer = np.empty(bits.shape)
        yield signs_of(bits, buffer[: bits.shape[0]])


def bit_blocks(t: int, resamples: int, seed: int) -> Iterator[NDArray[np.uint8]]:
    """The ``resamples`` random sign patterns of ``seed`` as 0/1 bits (1 a +), in blocks of about
    4M: ``default_rng(seed).integers(0, 2, (rows, t), int8)`` per block. Every test of t tasks
    with the same count and seed flips these same patterns."""
    if raw_bits_agree():
        return raw_bits(t, resamples, seed)
    return integer_bits(t, resamples, seed)


def integer_bits(
    t: int, resamples: int, seed: int, batch: int | None = None
) -> Iterator[NDArray[np.uint8]]:
    """The patterns' 0/1 bits, block by block (``batch`` rows), as numpy draws them."""
    rng = np.random.default_rng(seed)
    batch = batch or max(1, (1 << 22) // t)
    for start in range(0, resamples, batch):
        size = min(batch, resamples - start)
        yield rng.integers(0, 2, size=(size, t), dtype=np.int8).view(np.uint8)


def raw_bits(
    t: int, resamples: int, seed: int, batch: int | None = None
) -> Iterator[NDArray[np.uint8]]:
    """The same bits as :func:`integer_bits`, five times faster, read off the generator's raw
    output: numpy draws an int8 below 2 as the top bit of one byte of its 32-bit stream (Lemire's
    method: (byte * 2) >> 8), four bytes a word, low byte first; a block's last word is not shared
    with the next block, and PCG64's 32-bit stream is each 64-bit output's low then high half.
    Used only where :func:`raw_bits_agree` found it equal to numpy's own draws."""
    bitgen = np.random.default_rng(seed).bit_generator
    batch = batch or max(1, (1 << 22) // t)
    carry = np.empty(0, dtype=np.uint32)
    for start in range(0, resamples, batch):
        size = min(batch, resamples - start)
        n = size * t
        words = -(-n // 4)
        need = words - carry.size
        raw = bitgen.random_raw(-(-need // 2)).view(np.uint32) if need > 0 else carry[:0]
        stream = np.concatenate((carry, raw))
        carry = stream[words:]
        top: NDArray[np.uint8] = np.asarray(stream[:words].view(np.uint8)[:n] >> 7, dtype=np.uint8)
        yield top.reshape(size, t)


@cache
def raw_bits_agree() -> bool:
    """Whether :func:`raw_bits` gives numpy's own draws here (a little-endian machine, PCG64
    behind default_rng, numpy's int8 method unchanged), on blocks that end inside a word and
    inside a 64-bit output."""
    import sys

    if sys.byteorder != "little":
        return False
    for t, resamples, seed, batch in ((7, 37, 1, 5), (3, 11, 2, 3), (5, 9, 3, 1), (500, 40, 4, 16)):
        ours = list(raw_bits(t, resamples, seed, batch))
        theirs = list(integer_bits(t, resamples, seed, batch))
        if not all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True)):
            return False
    return True
