"""Text from a ledger is text in the report's plots, never matplotlib mathtext: a stratum
``$\\frac{$`` raised ParseSyntaxException out of `report` and `score --format html`, and ``$x$``
would have been drawn as math. Both are drawn as the characters they are."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import base_row, write_jsonl
from trialbook.cli import main

pytest.importorskip("matplotlib")

_STRATA = ("$\\frac{$", "$x$", "plain")


def _ledger(tmp_path: Path) -> Path:
    rows = [
        base_row(f"t{n}", i, passed=i == 0, k=2, stratum=stratum)
        for n, stratum in enumerate(_STRATA)
        for i in range(2)
    ]
    return write_jsonl(tmp_path / "math.jsonl", rows)


@pytest.mark.parametrize("command", ["report", "score"])
def test_a_stratum_that_is_broken_tex_is_drawn_as_its_characters(
    tmp_path: Path, command: str
) -> None:
    ledger = str(_ledger(tmp_path))
    page = tmp_path / "page.html"
    args = (
        ["report", ledger, "-o", str(page)]
        if command == "report"
        else ["score", ledger, "--format", "html"]
    )
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    text = page.read_text() if command == "report" else out.output
    assert "<svg" in text
    svg = text[text.index("<svg") :]
    # svg.fonttype "none" keeps each label as text: the strata appear in the plot as written
    assert "$\\frac{$" in svg
    assert "$x$" in svg
