"""Edges of the ledger rules and readers that a mutation sample found untested.

Each expectation comes from docs/ledger.md's rules (the field table in ``trialbook.ledger._fields``)
or from the JSON and CSV grammars, stated beside the test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_row
from trialbook.errors import LedgerError
from trialbook.ledger import ledger_from_rows


def _messages(rows: list[dict[str, Any]]) -> list[str]:
    with pytest.raises(LedgerError) as info:
        ledger_from_rows(rows, "edges.jsonl")
    return [p.message for p in info.value.details]


@pytest.mark.parametrize("name", ["weight", "timeout_s"])
def test_an_open_lower_bound_refuses_the_bound_itself(name: str) -> None:
    # weight and timeout_s are declared "> 0" (low=0, low_open): 0 itself is out of range
    messages = _messages([base_row("t", 0, passed=True, **{name: 0.0})])
    assert any(f"field {name!r}: must be > 0" in m for m in messages), messages
    # the smallest positive value is in range
    ledger_from_rows([base_row("t", 0, passed=True, **{name: 5e-324})], "edges.jsonl")


def test_attempt_index_equal_to_the_budget_is_refused() -> None:
    # attempt_index is 0-based and "below k_budget": with k_budget=3 the attempts are 0, 1, 2
    rows = [base_row("t", i, passed=False, k=3) for i in range(3)]
    ledger_from_rows(rows, "edges.jsonl")
    messages = _messages([*rows, base_row("t", 3, passed=False, k=3)])
    assert messages == ["task 't': field 'attempt_index': 3 is not below k_budget 3"]


def test_csv_flags_are_read_whatever_their_case(tmp_path: Path) -> None:
    # spreadsheets write TRUE/FALSE: the CSV reader takes true/false case-insensitively (pyarrow's
    # fast path knows only lower case and declines, so this is the precise path's rule)
    from trialbook.ledger import read_ledger

    path = tmp_path / "flags.csv"
    path.write_text(
        "task_id,attempt_index,k_budget,timeout_s,elapsed_s,passed,timed_out,helper_calls,oracle_leak\n"
        "a,0,2,60,1,TRUE,FALSE,0,False\n"
        "a,1,2,60,1,False,True,0,FALSE\n"
    )
    ledger = read_ledger(path)
    assert ledger.column("passed").tolist() == [True, False]
    assert ledger.column("timed_out").tolist() == [False, True]
    assert ledger.column("oracle_leak").tolist() == [False, False]


def test_whole_numbers_must_fit_in_signed_64_bits() -> None:
    # int64 holds -2**63 .. 2**63 - 1 (the SQLite store's INTEGER too): 2**63 is one past the end
    biggest = 2**63 - 1
    ledger = ledger_from_rows([base_row("t", 0, passed=True, helper_calls=biggest)], "e.jsonl")
    assert int(ledger.column("helper_calls")[0]) == biggest
    for value in (2**63, -(2**63) - 1):
        messages = _messages(
            [base_row("t", 0, passed=True, seed=0, helper_calls=0) | {"seed": value}]
        )
        # an optional whole number is refused beyond 2**53 already (exact in every reader)
        assert messages == [
            f"task 't': field 'seed': {value} is beyond 2**53, the largest an optional whole "
            "number keeps exactly"
        ], messages
    messages = _messages([base_row("t", 0, passed=True, helper_calls=2**63)])
    assert messages == [f"task 't': field 'helper_calls': {2**63} does not fit in 64 bits"]


@pytest.mark.parametrize("name", ["helper_calls", "attempt_index", "tokens_in"])
def test_a_json_boolean_is_not_a_whole_number(name: str) -> None:
    # JSON true/false are not numbers (Python's bool subclasses int: the reader must not follow it)
    messages = _messages([base_row("t", 0, passed=True) | {name: True}])
    assert messages == [f"task 't': field {name!r}: expected a whole number, got true"], messages


def test_an_unknown_jsonl_key_is_named_on_every_line_that_has_it() -> None:
    # a CSV names an unknown column once, on its header line; JSONL has no header, so every row
    # that carries the key is its own problem, each with its line
    rows = [base_row("t", i, passed=False, k=3) | {"colour": "red"} for i in range(3)]
    with pytest.raises(LedgerError) as info:
        ledger_from_rows(rows, "edges.jsonl")
    assert [(p.line, p.message) for p in info.value.details] == [
        (line, "unknown field 'colour'") for line in (1, 2, 3)
    ]


def test_a_csv_with_lone_carriage_returns_reads_as_the_csv_module_reads_it(tmp_path: Path) -> None:
    # the csv module ends a line at CR, LF or CRLF; the ledger's line numbers are its line numbers
    # (the header is line 1), whichever reader does the work
    import csv
    import io

    from trialbook.ledger import read_ledger

    header = "task_id,attempt_index,k_budget,timeout_s,elapsed_s,passed,timed_out,helper_calls,oracle_leak"
    body = [
        "a,0,2,60,1,true,false,0,false",
        "b,0,2,60,1,false,false,0,false",
        'c,0,2,60,1,"1",0,0,0',
    ]
    # the header ends in LF, the rows in lone CRs (a file edited on two systems)
    text = header + "\n" + "\r".join(body) + "\r"
    path = tmp_path / "cr.csv"
    path.write_bytes(text.encode())
    reader = csv.reader(io.StringIO(text, newline=""))
    next(reader)
    expected = []
    for cells in reader:
        expected.append((reader.line_num, cells[0]))
    ledger = read_ledger(path)
    assert (
        list(zip(ledger.lines.tolist(), ledger.column("task_id").tolist(), strict=True)) == expected
    )


def test_a_key_repeated_within_a_jsonl_object_is_refused(tmp_path: Path) -> None:
    # RFC 8259 leaves repeated names' meaning open ("names SHOULD be unique"): json.loads keeps the
    # last silently, so the ledger refuses them rather than guess which passed value is true
    import json

    from trialbook.ledger import read_ledger

    good = json.dumps(base_row("a", 0, passed=False, k=1))
    bad = good[:-1] + ', "passed": true}'
    path = tmp_path / "dup.jsonl"
    path.write_text(good.replace('"a"', '"b"') + "\n" + bad + "\n")
    with pytest.raises(LedgerError) as info:
        read_ledger(path)
    assert [(p.line, p.message) for p in info.value.details] == [
        (2, "not valid JSON: key 'passed' appears twice")
    ]


def _unrecorded_timeout(status: str, timed_out: bool | None) -> dict[str, Any]:
    return {
        **base_row("t", 0, passed=False, k=1, status=status),
        "timed_out": timed_out,
        "not_recorded": "timed_out" if timed_out is None else None,
    }


def test_a_status_timed_out_is_no_contradiction_where_timed_out_is_not_recorded() -> None:
    # an imported row whose source did not record timed_out holds no value to contradict its
    # status (ledger/_rules.py: the status/flag rule exempts such rows), while the same status
    # beside a recorded timed_out of false is a contradiction
    ledger = ledger_from_rows([_unrecorded_timeout("timed_out", None)], "rows")
    assert ledger.has_status("timed_out").tolist() == [True]
    with pytest.raises(
        LedgerError, match="contradiction: field 'timed_out' is false but 'status' is 'timed_out'"
    ):
        ledger_from_rows([_unrecorded_timeout("timed_out", False)], "rows")
