"""The HTML report in a real browser: headless Chromium (tests/report/browser.py) opens it, takes a
screenshot, and sees no console error and no request leaving the machine.

Chromium is Debian's ``chromium``; ``.ci/run`` installs it, so under CI these tests fail rather
than skip when it is missing. The first test shows the watcher itself catches what it looks for.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from tests.report._two_runs import two_runs
from tests.report.browser import PageVisit, visit
from trialbook.analysis import build_report
from trialbook.ledger import read_ledger
from trialbook.report import report_html

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_chromium")]


def _pixels(visit_: PageVisit) -> Image.Image:
    image = Image.open(io.BytesIO(visit_.png))
    assert image.format == "PNG"
    return image.convert("RGB")


def test_the_watcher_sees_a_remote_request_and_a_console_error(tmp_path: Path) -> None:
    # an address of TEST-NET-1 (RFC 5737): the request is attempted (and seen), never answered
    page = tmp_path / "leaky.html"
    page.write_text(
        '<!DOCTYPE html><html><body><img src="http://192.0.2.1/pixel.png">'
        '<script>console.error("boom")</script></body></html>'
    )
    seen = visit(page)
    assert seen.remote_requests == ["http://192.0.2.1/pixel.png"]
    assert "boom" in " ".join(seen.errors)


def test_the_report_renders_offline_without_errors(tmp_path: Path) -> None:
    ledger = two_runs(tmp_path)
    page = tmp_path / "report.html"
    page.write_text(report_html(build_report([read_ledger(ledger)]), base=tmp_path))
    seen = visit(page, width=1280, height=1400)
    assert seen.requests == [page.resolve().as_uri()]  # the page itself, nothing else
    assert seen.remote_requests == []
    assert seen.errors == []
    image = _pixels(seen)
    assert image.size == (1280, 1400)
    # not blank: a good share of the pixels are not the white background, in many colours
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None
    white = sum(n for n, rgb in colours if rgb == (255, 255, 255))
    assert white < 0.9 * 1280 * 1400
    assert len(colours) > 50
    # and the figures were drawn: the pass@k line's Okabe-Ito blue (#0072B2) and the pass^k line's
    # vermillion (#D55E00) are on screen
    present = {rgb for _, rgb in colours}
    assert (0x00, 0x72, 0xB2) in present
    assert (0xD5, 0x5E, 0x00) in present


@pytest.mark.parametrize("width", [1280, 800])
def test_the_named_checks_table_fits_the_window(tmp_path: Path, width: int) -> None:
    # issue 27, new-user item 7: long failure reasons pushed the table off the page's right edge
    import json

    from tests.conftest import matrix_rows, write_jsonl

    rows = matrix_rows({f"t{i}": [i % 2, 1, 0] for i in range(6)}, run_id="r", dataset_id="s")
    for n, r in enumerate(rows):
        reason = None if r["passed"] else f"AssertionError: {'x' * 30} != {'y' * 30} at {n}"
        r["checks"] = json.dumps(
            {
                "existing behaviour kept": {"passed": r["passed"], "reason": reason},
                "requested change": {"passed": r["passed"], "reason": reason and reason + "!"},
            },
            sort_keys=True,
        )
    page = tmp_path / "report.html"
    page.write_text(
        report_html(build_report([read_ledger(write_jsonl(tmp_path / "r.jsonl", rows))]))
    )
    assert "failure reasons" in page.read_text()
    edges = (
        "(() => { const t = [...document.querySelectorAll('table')].find("
        "x => x.textContent.includes('failure reasons'));"
        " return [t.getBoundingClientRect().right, document.documentElement.clientWidth,"
        " document.documentElement.scrollWidth]; })()"
    )
    seen = visit(page, width=width, height=900, evaluate=edges)
    right, client, scroll = seen.value
    assert right <= client, seen.value
    assert scroll <= client, seen.value
