"""The board's HTML page in headless Chromium (tests/report/browser.py), as the report's page is
tested: it loads offline, fetches nothing, logs no error, and its figures are drawn."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from tests.analysis.test_board import RATES, _ledger, _rows
from tests.report.browser import visit
from trialbook.analysis import BoardOptions, board_runs
from trialbook.report import board_html

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_chromium")]


def test_the_board_page_renders_offline_without_errors(tmp_path: Path) -> None:
    rates = {**RATES, "omega": 0.2}
    cost: dict[str, float | None] = {"alpha": 1.0, "beta": 0.5, "gamma": 0.5, "delta": 0.1}
    cost["omega"] = 3.0
    path = _ledger(tmp_path, _rows(rates, tasks=80, cost=cost))
    page = tmp_path / "board.html"
    page.write_text(board_html(board_runs([path], BoardOptions(resamples=2000))))
    seen = visit(page, width=1280, height=1800)
    assert seen.requests == [page.resolve().as_uri()]  # the page itself, nothing else
    assert seen.remote_requests == []
    assert seen.errors == []
    image = Image.open(io.BytesIO(seen.png)).convert("RGB")
    assert image.size == (1280, 1800)
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None
    present = {rgb for _, rgb in colours}
    # the frontier's Okabe-Ito blue (#0072B2) and the dominated system's vermillion (#D55E00)
    assert (0x00, 0x72, 0xB2) in present
    assert (0xD5, 0x5E, 0x00) in present
