"""The C reader (``_cjsonl.c``) against the precise reader: it may decline anything, but whatever it
accepts it must read exactly as the precise path does, bit for bit; and it must accept the plain
ledgers it exists for."""

from __future__ import annotations

import json
import math
import mmap
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import base_row, write_jsonl
from tests.ledger._compare import bits, identical
from trialbook.errors import LedgerError
from trialbook.ledger import FIELDS, read_ledger
from trialbook.ledger._rows import from_rows as _from_rows
from trialbook.ledger.formats import _jsonl as reader
from trialbook.ledger.formats._jsonl import _read_jsonl_native, _rows_jsonl

if not reader.NATIVE:
    if os.environ.get("CI"):
        pytest.fail("the C reader was not built, and CI must test it", pytrace=False)
    pytest.skip(
        "the C reader is not built here (no C compiler at install)", allow_module_level=True
    )

from trialbook.ledger.formats import _cjsonl as _jsonl

FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _precise(path: Path) -> Any:
    try:
        rows = _rows_jsonl(path.read_bytes(), str(path))
        return _from_rows(str(path), rows, from_csv=False, default_run=path.stem)
    except LedgerError:
        return None


def _native(path: Path) -> Any:
    return _read_jsonl_native(path.read_bytes(), str(path), path.stem)


# --------------------------------------------------------------------------- generated text

_WS = st.sampled_from(["", "", "", " ", "  ", "\t", "\r", " \r "])
_TEXT = st.one_of(
    st.sampled_from(
        ["t1", "t2", "repair", "", "a b", "é", "日本", "\U0001f600", "passed", "failed"]
    ),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),
)
_FLOAT_TEXT = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, min_value=0, max_value=1e6).map(repr),
    st.from_regex(r"\A(0|[1-9][0-9]{0,20})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?\Z"),
    st.sampled_from(["0", "-0", "-0.0", "1E2", "1e400", "NaN", "Infinity", "1.", ".5", "01", "+1"]),
)
_INT_TEXT = st.one_of(
    st.integers(min_value=0, max_value=10**20).map(str),
    st.sampled_from(["0", "-0", "1.0", "1e2", "-1", "007", "1.5", "9223372036854775807"]),
)


def _string_token(text: str, how: int) -> str:
    if how == 0:
        return json.dumps(text, ensure_ascii=False)
    if how == 1:
        return json.dumps(text)  # \\uXXXX escapes for anything outside ASCII
    return '"' + "".join(f"\\u{ord(c):04x}" if c < "\uffff" else c for c in text) + '"'


_NONNEG = st.one_of(
    st.floats(0, 1e6).map(repr),
    st.from_regex(r"\A(0|[1-9][0-9]{0,20})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?\Z"),
    st.sampled_from(["0", "-0", "-0.0", "0e0", "3", "1E2", "15e-1", "0.1", "123456789012345678"]),
).filter(lambda t: math.isfinite(float(t)))
_STAMP = st.sampled_from(["2026-11-30T10:00:00+00:00", "2026-11-30T10:00:00.5+01:00"])
# per field, how a valid value may be spelled (constant-per-run or per-task fields stay constant)
_VALID: dict[str, st.SearchStrategy[str]] = {
    "k_budget": st.just("9"),
    "timeout_s": _NONNEG.filter(lambda t: float(t) > 0),
    "elapsed_s": _NONNEG,
    "helper_calls": st.sampled_from(["0", "2", "17"]),
    "oracle_leak": st.sampled_from(["false", "false", "true"]),
    "system": st.just('"agent-1"'),
    "dataset_id": st.sampled_from(['"sha256:ab"']),
    "score": st.floats(0, 1).map(repr),
    "stratum": st.just('"repair"'),
    "weight": st.just("2.5"),
    "seed": st.integers(-(10**18) + 1, 10**18 - 1).map(str),
    "temperature": _NONNEG,
    "cache_hit": st.sampled_from(["true", "false"]),
    "selected": st.sampled_from(["true", "false"]),
    "tokens_in": st.integers(0, 10**17).map(str),
    "tokens_out": st.integers(0, 10**17).map(str),
    "tool_calls": st.integers(0, 99).map(str),
    "cost": _NONNEG,
    "started_at": _STAMP.map(json.dumps),
    "finished_at": _STAMP.map(lambda t: _string_token(t, 2)),
}
_WRONG = st.sampled_from(['"1"', "1", "1.5", "true", "[]", "{}", '"true"', "nul", "1e400", "NaN"])
_OUTCOMES = [
    ("true", "false", '"passed"'),
    ("false", "false", '"failed"'),
    ("false", "true", '"timed_out"'),
    ("false", "false", '"infra_error"'),
]


@st.composite
def _line(draw: st.DrawFn, index: int) -> str:
    """One ledger line, valid in an unusual spelling most of the time, else broken one way."""
    passed, timed_out, status = draw(st.sampled_from(_OUTCOMES))
    values: dict[str, str] = {
        "task_id": _string_token(
            draw(_TEXT.filter(lambda t: t.strip() != "")), draw(st.integers(0, 2))
        ),
        "attempt_index": str(index),
        "passed": passed,
        "timed_out": timed_out,
    }
    for f in FIELDS:
        if f.required and f.name not in values:
            values[f.name] = draw(_VALID[f.name])
    for name in draw(
        st.lists(st.sampled_from([*_VALID, "status", "error", "sandbox"]), max_size=6)
    ):
        if name not in values:
            values[name] = (
                status
                if name == "status"
                else _string_token(draw(_TEXT), draw(st.integers(0, 2)))
                if name not in _VALID
                else "null"
                if draw(st.integers(0, 4)) == 0 and not FIELDS_REQUIRED[name]
                else draw(_VALID[name])
            )
    keys = draw(st.permutations(list(values)))
    parts = [
        f"{draw(_WS)}{json.dumps(k)}{draw(_WS)}:{draw(_WS)}{values[k]}{draw(_WS)}" for k in keys
    ]
    tail = ""
    breakage = draw(st.integers(0, 30))
    if breakage == 1:
        parts.pop(draw(st.integers(0, len(parts) - 1)))  # a field missing
    elif breakage == 2:
        k = draw(st.sampled_from(keys))
        parts[keys.index(k)] = f"{json.dumps(k)}:{draw(_WRONG)}"  # the wrong JSON type
    elif breakage == 3:
        parts.append(draw(st.sampled_from(['"zzz":1', '"task_\\u0069d":"x"', '"passed":true'])))
    elif breakage == 4:
        tail = draw(st.sampled_from([" x", ",", "}", "\x0c"]))
    elif breakage == 5:
        parts[0] = '"task_id":' + draw(st.sampled_from(['"\\q"', '"\\ud8"', '"a\tb"', '""']))
    return draw(_WS) + "{" + ",".join(parts) + "}" + tail


FIELDS_REQUIRED = {f.name: f.required for f in FIELDS}


@st.composite
def _ledger_text(draw: st.DrawFn) -> str:
    ends = st.sampled_from(["\n", "\n", "\r\n", "\n\n", "\n \n"])
    count = draw(st.integers(1, 6))
    return "".join(draw(_line(i)) + draw(ends) for i in range(count))


@FUZZ
@given(_ledger_text())
def test_what_the_c_reader_accepts_it_reads_exactly_as_the_precise_path(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_text(text, encoding="utf-8", newline="")
    native, precise = _native(path), _precise(path)
    if native is None:
        # every integer here has at most 18 digits and every key is plain, so a valid file is
        # one the C reader must read itself
        assert precise is None, "the C reader declined a valid ledger"
    else:
        assert precise is not None, "the C reader accepted a file the precise path rejects"
        identical(native, precise)


_PLAIN_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x7f"), max_size=8
)


@FUZZ
@example(rows=[("t", 0, True, 0.0, -0.0, "\\", 5)])
@given(
    st.lists(
        st.tuples(
            _PLAIN_TEXT.filter(lambda s: s.strip() != ""),
            st.integers(0, 3),
            st.booleans(),
            st.floats(0, 1e300),
            st.one_of(st.none(), st.floats(-1e6, 1e6)),
            _PLAIN_TEXT,
            st.one_of(st.none(), st.integers(0, 2**53)),  # optional ints: exact up to 2**53
        ),
        min_size=1,
        max_size=20,
        unique_by=lambda r: (r[0], r[1]),
    )
)
def test_the_c_reader_accepts_valid_ledgers_and_reads_them_exactly(
    tmp_path: Path, rows: list[tuple[str, int, bool, float, float | None, str, int | None]]
) -> None:
    records = []
    for task, attempt, ok, elapsed, temperature_raw, error, tokens in rows:
        extra: dict[str, Any] = {"elapsed_s": elapsed, "error": error}
        if temperature_raw is not None:
            extra["score"] = abs(temperature_raw) / 1e6  # partial credit in 0..1
        if tokens is not None:
            extra["tokens_in"] = tokens
        records.append(base_row(task, attempt, passed=ok, **extra))
    path = tmp_path / "valid.jsonl"
    ensure_ascii = bool(len(rows) % 2)
    path.write_text("".join(json.dumps(r, ensure_ascii=ensure_ascii) + "\n" for r in records))
    precise = _precise(path)
    assert precise is not None
    native = _native(path)
    assert native is not None, "the C reader declined a valid ledger"
    identical(native, precise)


# --------------------------------------------------------------------------- numbers


def _parse_numbers(texts: list[str], kind: bytes) -> Any:
    data = "".join(f'{{"x":{t}}}\n' for t in texts).encode()
    column = np.empty(len(texts) + 1, dtype=np.int64 if kind == b"I" else np.float64)
    lines = np.empty(len(texts) + 1, dtype=np.int64)
    out = _jsonl.parse(data, (b"x",), kind, [column], lines)
    return None if out is None else column[: len(texts)]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=False, allow_infinity=False).map(repr),
            st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.17e}"),
            st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
            st.from_regex(r"\A-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,3})?\Z"),
            st.integers(-(10**30), 10**30).map(str),
        ),
        min_size=1,
        max_size=40,
    )
)
@example(
    [
        "1e22",
        "1e23",
        "1e-22",
        "9007199254740993",
        "123456789012345678",
        "1234567890123456789",
        "5e-324",
        "2.2250738585072011e-308",
        "1.7976931348623157e308",
        "0.1",
        "-0",
        "-0.0",
        "0e999",
        "1e-400",
        "100000000000000000000000.0",
    ]
)
def test_numbers_round_exactly_as_python_does(texts: list[str]) -> None:
    expected = [float(json.loads(t)) for t in texts]
    got = _parse_numbers(texts, b"F")
    if any(math.isinf(x) for x in expected):
        assert got is None  # 1e400: not finite, declined (the precise path names it)
        return
    assert got is not None
    np.testing.assert_array_equal(bits(got), bits(np.array(expected)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(10**20), 10**20), min_size=1, max_size=20))
def test_integers_are_exact_or_declined(values: list[int]) -> None:
    got = _parse_numbers([str(v) for v in values], b"I")
    if all(len(str(abs(v))) <= 18 for v in values):
        assert got is not None
        assert got.tolist() == values
    else:
        assert got is None  # beyond 18 digits the C reader hands over


def test_a_whole_number_is_not_an_integer_field_and_a_fraction_is_not_either() -> None:
    for text in ("1.0", "1e2", "1.5", "-", "01", "+1", '"1"', "true"):
        assert _parse_numbers([text], b"I") is None, text


# --------------------------------------------------------------------------- texts and lines


def test_escaped_and_plain_spellings_of_one_text_are_one_label(tmp_path: Path) -> None:
    path = tmp_path / "esc.jsonl"
    rows = [
        json.dumps(base_row("task-A", 0, passed=True)),
        json.dumps(base_row("task-A", 1, passed=False)).replace("task-A", "task-\\u0041"),
        json.dumps(base_row('quote"d\\', 0, passed=True)),
        json.dumps(base_row("\ud800lone", 0, passed=False)),  # a lone surrogate, as json allows
    ]
    path.write_text("\n".join(rows) + "\n")
    native = _native(path)
    assert native is not None
    assert native.labels["task_id"] == ("task-A", 'quote"d\\', "\ud800lone")
    identical(native, _precise(path))


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("invalid UTF-8", b'{"task_id":"\xff"}'),
        ("invalid escape", b'{"task_id":"\\x41"}'),
        ("control byte", b'{"task_id":"a\tb"}'),
        ("object over two lines", b'{"task_id":\n"a"}'),
        ("byte order mark", b"\xef\xbb\xbf{}"),
        ("form feed", b"\x0c{}"),
        ("array", b"[1]"),
    ],
)
def test_declines_then_the_precise_path_names_the_line(
    tmp_path: Path, name: str, text: bytes
) -> None:
    good = json.dumps(base_row("a", 0, passed=True)).encode()
    path = tmp_path / "bad.jsonl"
    path.write_bytes(good + b"\n" + text + b"\n")
    assert _native(path) is None, name
    with pytest.raises(LedgerError) as info:
        read_ledger(path)
    assert info.value.details[0].line == 2, name


def test_a_field_first_met_after_the_sample_gets_its_column(tmp_path: Path) -> None:
    rows = [base_row(f"t{i}", 0, passed=i % 3 == 0) for i in range(1500)]
    rows.append(base_row("late", 0, passed=True, tool_calls=7, model_version="m-2"))
    path = write_jsonl(tmp_path / "late.jsonl", rows)
    assert path.stat().st_size > 1 << 16
    native = _native(path)
    assert native is not None
    assert native.values["tool_calls"][-1] == 7
    assert list(native.text("model_version"))[-2:] == [None, "m-2"]
    identical(native, _precise(path))


def test_the_command_line_uses_the_c_reader_and_needs_no_pyarrow(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "l.jsonl", [base_row("a", i, passed=i == 0) for i in range(5)])
    code = (
        "import sys; from trialbook.cli import main\n"
        f"try:\n    main(['score', {str(path)!r}, '--format', 'json'])\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        "print('pyarrow' in sys.modules, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip().splitlines()[-1] == "False"
    assert json.loads(out.stdout)["runs"]


def test_the_arrow_path_still_reads_what_the_c_reader_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a machine without a C compiler installs without the reader and must get the same ledger
    path = write_jsonl(
        tmp_path / "l.jsonl",
        [base_row(f"t{i % 7}", i // 7, passed=i % 2 == 0, cost=0.25 * i, k=9) for i in range(60)],
    )
    native = read_ledger(path)
    monkeypatch.setattr(reader, "NATIVE", False)
    identical(native, read_ledger(path))


# --------------------------------------------------------------------------- memory safety


def test_no_read_past_the_end_of_the_data() -> None:
    """Every prefix of a line, placed so that it ends exactly where a page that may not be read
    begins (PROT_NONE): a read one byte too far faults (SIGSEGV) instead of passing unnoticed."""
    line = json.dumps(
        base_row('tâsk\\"x', 1, passed=False, cost=1.25e-3, error="é", seed=None, tool_calls=12)
    ).encode()
    assert 2 * len(line) + 1 < mmap.PAGESIZE
    script = textwrap.dedent(
        f"""
        import ctypes, mmap
        import numpy as np
        from trialbook.ledger.formats import _cjsonl as _jsonl
        from trialbook.ledger.formats._jsonl import _NAMES, _KINDS
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long]
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        page = mmap.PAGESIZE
        base = libc.mmap(None, 2 * page, mmap.PROT_READ | mmap.PROT_WRITE,
                         mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        assert base not in (None, ctypes.c_void_p(-1).value)
        assert libc.mprotect(base + page, page, 0) == 0  # the guard page: PROT_NONE
        line = {line!r}
        for cut in range(len(line) + 1):
            # a whole line first, so that the reader's guesses (the next key, a repeated value)
            # are primed and tested in place against the cut end as well
            text = line + b"\\n" + line[:cut]
            start = base + page - len(text)
            ctypes.memmove(start, text, len(text))
            data = (ctypes.c_char * len(text)).from_address(start)
            columns = [np.empty(3, dtype=np.float64) for _ in _NAMES]
            _jsonl.parse(data, _NAMES, _KINDS, columns, np.empty(3, dtype=np.int64))
            assert _jsonl.count_lines(data) == 2
        print("ok")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, f"exit {out.returncode}: {out.stderr[-2000:]}"
    assert out.stdout.strip() == "ok"


@pytest.mark.parametrize("literal", ["1.", "01", "1e", "-", ".5", "1.e5", "+1", "1.E+5", "-.5"])
@pytest.mark.parametrize("name", ["elapsed_s", "cost", "seed"])
def test_number_literals_json_refuses_are_declined(tmp_path: Path, name: str, literal: str) -> None:
    # a digit must follow '.', and no leading zero, '+' or bare '-': the C reader must not read
    # these where the precise reader (the json module) refuses them
    row = base_row("a", 0, passed=True, **{name: 12345})
    line = json.dumps(row).replace("12345", literal)
    path = tmp_path / "n.jsonl"
    path.write_text(json.dumps(base_row("b", 0, passed=False)) + "\n" + line + "\n")
    assert _precise(path) is None
    assert _native(path) is None


@pytest.mark.parametrize("literal", ["1.0", "1.5e5", "0", "-0", "0.5", "1E2", "10", "2e-3"])
@pytest.mark.parametrize("name", ["elapsed_s", "cost", "seed"])
def test_number_literals_json_reads_are_read_alike(tmp_path: Path, name: str, literal: str) -> None:
    row = base_row("a", 0, passed=True, **{name: 12345})
    path = tmp_path / "n.jsonl"
    path.write_text(json.dumps(row).replace("12345", literal) + "\n")
    precise, native = _precise(path), _native(path)
    assert (precise is None) == (native is None), literal
    if precise is not None:
        identical(native, precise)
