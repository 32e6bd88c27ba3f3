"""Types of the C reader (``_cjsonl.c``)."""

from typing import Any

import numpy as np
from numpy.typing import NDArray
from typing_extensions import Buffer  # collections.abc.Buffer from Python 3.12

def parse(
    data: Buffer,
    names: tuple[bytes, ...],
    kinds: bytes,
    columns: list[NDArray[Any] | None],
    lines: NDArray[np.int64],
) -> tuple[int, list[list[str | bytes] | None]] | int | None: ...
def count_lines(data: Buffer) -> int: ...
