"""The arrow CSV reader against the precise (csv module) reader: it may decline anything, but what
it accepts it must read exactly as the precise path does, bit for bit and line for line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.ledger._compare import identical
from trialbook.errors import LedgerError
from trialbook.ledger import FIELDS, read_ledger
from trialbook.ledger._rows import from_rows as _from_rows
from trialbook.ledger.formats._csv import _read_csv_fast, _rows_csv

REQUIRED = [f.name for f in FIELDS if f.required]


def _fast(path: Path) -> Any:
    return _read_csv_fast(path.read_bytes(), str(path), path.stem)


def _precise(path: Path) -> Any:
    try:
        rows = _rows_csv(path.read_bytes(), str(path))
        return _from_rows(str(path), rows, from_csv=True, default_run=path.stem)
    except LedgerError:
        return None


# cells as they may be written: plain, padded, signed, quoted, odd spellings of each type
_CELLS: dict[str, st.SearchStrategy[str]] = {
    "str": st.one_of(
        st.sampled_from(
            ["t1", "t2", "a b", "é", "", " ", '"q,uoted"', '"say ""hi"""', "\x1c", "x\ty"]
        ),
        st.text(
            st.characters(blacklist_categories=("Cs",), blacklist_characters='\r\n,"'), max_size=4
        ),
    ),
    "int": st.sampled_from(
        [
            "0",
            "1",
            "3",
            "+2",
            " 1",
            "1 ",
            "1.0",
            "1e2",
            "-0",
            "٣",
            "1_0",
            "",
            '"2"',
            "99999999999999999999",
        ]
    ),
    "float": st.sampled_from(
        [
            "0",
            "1.5",
            "60",
            "1e2",
            "-0.0",
            " 2",
            ".5",
            "5.",
            "inf",
            "nan",
            "1_0.5",
            "0x10",
            "",
            '"1.5"',
            "2.2250738585072011e-308",
            "0.1",
        ]
    ),
    "bool": st.sampled_from(
        ["true", "false", "1", "0", "True", "TRUE", " true", "yes", "", '"true"']
    ),
}
_VALID = {"attempt_index": "0", "k_budget": "3", "timeout_s": "60", "elapsed_s": "1.5",
          "passed": "false", "timed_out": "false", "helper_calls": "0", "oracle_leak": "false",
          "status": "failed"}  # fmt: skip


@st.composite
def _csv_text(draw: st.DrawFn) -> str:
    optional = draw(
        st.lists(
            st.sampled_from([f.name for f in FIELDS if not f.required and f.kind != "time"]),
            max_size=4,
            unique=True,
        )
    )
    header = draw(st.permutations([*REQUIRED, *optional]))
    names = list(header)
    if draw(st.integers(0, 4)) == 0:  # a header cell quoted, padded or left open
        i = draw(st.integers(0, len(names) - 1))
        names[i] = draw(st.sampled_from(['"{}"', " {}", '"{}', "{}x", '"{}""'])).format(names[i])
    lines = [",".join(names)]
    for i in range(draw(st.integers(1, 5))):
        cells = []
        for name in header:
            kind = next(f.kind for f in FIELDS if f.name == name)
            if draw(st.integers(0, 15)) and name != "task_id":  # mostly a valid value
                value = _VALID.get(name, "1" if kind != "str" else "x")
                if name == "attempt_index":
                    value = str(i % 3)
            else:
                value = draw(_CELLS["str" if kind == "time" else kind])
            cells.append(value)
        lines.append(",".join(cells) + draw(st.sampled_from(["", "", ",", " "])))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", " ", ",,,"])))
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return end.join(lines) + draw(st.sampled_from(["", end]))


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@example(text=",".join(REQUIRED) + "\n" + "t,0,3,60,1.5,false,false,0,false\n\n" * 2)
@given(_csv_text())
def test_what_the_arrow_csv_reader_accepts_it_reads_exactly_as_the_precise_path(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "fuzz.csv"
    path.write_text(text, encoding="utf-8", newline="")
    fast = _fast(path)
    if fast is not None:
        precise = _precise(path)
        assert precise is not None, "the arrow reader accepted a file the precise path rejects"
        identical(fast, precise)


def test_a_plain_csv_ledger_is_read_by_arrow(tmp_path: Path) -> None:
    rows = [
        f"t{i % 4},{i // 4},5,60,{i * 0.1!r},{str(i % 3 == 0).lower()},false,0,false,{i % 2},r 1"
        for i in range(20)
    ]
    text = ",".join([*REQUIRED, "tokens_in", "system"]) + "\n" + "\n".join(rows) + "\n"
    path = tmp_path / "plain.csv"
    path.write_text(text)
    fast = _fast(path)
    assert fast is not None, "the arrow reader declined a plain ledger"
    identical(fast, _precise(path))
    identical(read_ledger(path), fast)
