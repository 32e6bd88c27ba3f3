"""CSV cells that spell NaN or infinity are refused with the field named (either CSV reader)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trialbook.errors import LedgerError
from trialbook.ledger import read_ledger

HEADER = "task_id,attempt_index,k_budget,timeout_s,elapsed_s,passed,timed_out,helper_calls,oracle_leak,cost\n"


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "Infinity"])
@pytest.mark.parametrize("column", ["cost", "elapsed_s"])
def test_nan_and_infinity_in_a_float_cell_are_refused(
    tmp_path: Path, text: str, column: str
) -> None:
    good = ["a", "0", "1", "60", "1.5", "true", "false", "0", "false", "0.25"]
    bad = ["b", "0", "1", "60", "1.5", "false", "false", "0", "false", "0.25"]
    bad[HEADER.rstrip().split(",").index(column)] = text
    path = tmp_path / "l.csv"
    path.write_text(HEADER + ",".join(good) + "\n" + ",".join(bad) + "\n")
    with pytest.raises(LedgerError) as err:
        read_ledger(path)
    (problem,) = err.value.details
    assert problem.line == 3
    assert f'field {column!r}: must be a finite number, got "{text}"' in problem.message


def test_the_same_file_with_numbers_reads(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    path.write_text(HEADER + "a,0,1,60,1.5,true,false,0,false,0.25\n")
    assert read_ledger(path).column("cost").tolist() == [0.25]
