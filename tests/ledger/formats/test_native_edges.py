"""Edges of the C JSONL reader that a mutation sample found untested."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import base_row
from trialbook.errors import LedgerError
from trialbook.ledger import read_ledger
from trialbook.ledger.formats._jsonl import NATIVE, _read_jsonl_native


@pytest.mark.parametrize("control", ["\t", "\x01", "\x1f"])
def test_a_raw_control_character_in_a_string_is_not_json(tmp_path: Path, control: str) -> None:
    # RFC 8259 section 7: U+0000..U+001F must be escaped inside a string; json.loads (strict) agrees
    line = json.dumps(base_row("a" + control + "b", 0, passed=True, k=1))
    raw = line.replace(json.dumps("a" + control + "b"), '"a' + control + 'b"')
    assert control in raw
    with pytest.raises(json.JSONDecodeError, match="Invalid control character"):
        json.loads(raw)
    data = (raw + "\n").encode()
    if NATIVE:
        assert _read_jsonl_native(data, "x.jsonl", "x") is None  # the C reader declines it
    path = tmp_path / "ctl.jsonl"
    path.write_bytes(data)
    with pytest.raises(LedgerError) as info:
        read_ledger(path)
    [problem] = info.value.details
    assert problem.line == 1
    assert "Invalid control character" in problem.message
