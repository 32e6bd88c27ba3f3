"""Whatever bytes a ledger file holds, reading it gives a ledger or a LedgerError naming problems:
never another exception (which the command line would show as a traceback)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import base_row
from trialbook.errors import LedgerError
from trialbook.ledger import read_ledger
from trialbook.ledger.formats import _jsonl as reader

_ROWS = [
    base_row("t1", 0, passed=True, cost=0.5, started_at="2026-11-30T10:00:00+00:00"),
    base_row("t1", 1, passed=False, tokens_in=12, status="failed"),
    base_row("t2", 0, passed=False, timed_out=True, error='x"y', stratum="repair"),
]
_JSONL = "".join(json.dumps(r) + "\n" for r in _ROWS).encode()


def _csv_bytes() -> bytes:
    out = io.StringIO()
    names = sorted({k for r in _ROWS for k in r})
    writer = csv.DictWriter(out, fieldnames=names)
    writer.writeheader()
    for r in _ROWS:
        writer.writerow({k: str(v).lower() if isinstance(v, bool) else v for k, v in r.items()})
    return out.getvalue().encode()


_CSV = _csv_bytes()

_EDIT = st.tuples(
    st.sampled_from(["replace", "insert", "delete", "truncate"]),
    st.integers(0, 10_000),
    st.binary(min_size=1, max_size=4)
    | st.sampled_from([b'"', b"\\", b"\n", b",", b"{", b"}", b"1e999", b"\xff", b"-", b"null"]),
)


def _mutate(data: bytes, edits: list[tuple[str, int, bytes]]) -> bytes:
    for how, at, chunk in edits:
        at %= len(data) + 1
        if how == "replace":
            data = data[:at] + chunk + data[at + len(chunk) :]
        elif how == "insert":
            data = data[:at] + chunk + data[at:]
        elif how == "delete":
            data = data[:at] + data[at + len(chunk) :]
        else:
            data = data[:at]
    return data


@pytest.mark.parametrize("native", [True, False], ids=["c-reader", "arrow-reader"])
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=st.lists(_EDIT, min_size=1, max_size=4), as_csv=st.booleans())
def test_mutated_files_give_a_ledger_or_named_problems(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    native: bool,
    edits: list[tuple[str, int, bytes]],
    as_csv: bool,
) -> None:
    monkeypatch.setattr(reader, "NATIVE", native and reader.NATIVE)
    path = tmp_path / ("l.csv" if as_csv else "l.jsonl")
    path.write_bytes(_mutate(_CSV if as_csv else _JSONL, edits))
    problems = []
    try:
        read_ledger(path)
    except LedgerError as err:
        problems = err.details
        assert problems, "a LedgerError must name at least one problem"
    for problem in problems:
        assert problem.message
        assert "\n" not in problem.message


@pytest.mark.parametrize("text", ["null\n", ' null\n{"task_id": "a"}\n', "{}\nnull{\n"])
def test_a_line_that_is_not_an_object_never_reaches_arrow(tmp_path: Path, text: str) -> None:
    # pyarrow 26 segfaults on a block that opens with a top-level null (apache/arrow#47409);
    # run in a child so that a regression shows as a failed test, not a dead test process
    path = tmp_path / "null.jsonl"
    path.write_text(text)
    code = (
        "import sys\n"
        "from trialbook.ledger import read_ledger\nfrom trialbook.ledger.formats import _jsonl as reader\n"
        "from trialbook.errors import LedgerError\n"
        "reader.NATIVE = False\n"
        "try:\n    read_ledger(sys.argv[1])\n"
        "except LedgerError as err:\n    print(err.details[0].line, err.details[0].message)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, f"exit {out.returncode}: {out.stderr[-500:]}"
    assert out.stdout.strip(), "no problem was named"  # line and message of the first problem
