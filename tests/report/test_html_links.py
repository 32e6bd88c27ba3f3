"""The outcome grid links only to kept raw output under the ledger's ``*.transcripts`` folder.

A ledger is anyone's file, and its ``transcript`` field is text: a value ``javascript:...`` beside
a folder of that name would be a live link (a click runs script), ``../../../../root/.ssh`` would
list that folder's file names in the cell's tooltip, and a symbolic link inside the transcripts
folder could lead out of it. Each is refused: no link, no file names. A path under the transcripts
folder whose parts hold a ``:`` is linked, percent-encoded, so it is never read as a scheme.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.report._two_runs import two_runs
from trialbook.analysis import build_report
from trialbook.ledger import read_ledger
from trialbook.report import report_html

SCRIPT = "javascript:console.error('pwned')"


def _with_transcripts(tmp_path: Path, values: dict[int, str]) -> Path:
    """The two-run ledger with row i's ``transcript`` set to values[i]."""
    ledger = two_runs(tmp_path)
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    for i, value in values.items():
        rows[i]["transcript"] = value
    ledger.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return ledger


def _page(ledger: Path, out: Path) -> str:
    out.mkdir(exist_ok=True)
    return report_html(build_report([read_ledger(ledger)]), base=out)


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A folder outside the ledger's, holding a file whose name must never be shown."""
    folder = tmp_path / "elsewhere" / ".ssh"
    folder.mkdir(parents=True)
    (folder / "id_secret_name").write_text("x")
    return folder


def test_hostile_transcript_values_give_no_link_and_list_no_file(
    tmp_path: Path, secret: Path
) -> None:
    base = tmp_path / "ledger"
    base.mkdir()
    # a folder named like a script URL beside the ledger, and one inside the transcripts folder
    # reached by climbing out of it, and a symbolic link inside it that leads out
    (base / SCRIPT).mkdir()
    (base / SCRIPT / "agent.out").write_text("x")
    (base / "runs.transcripts").mkdir()
    (base / "runs.transcripts" / "out").symlink_to(secret)
    (base / "evil.transcripts").symlink_to(secret.parent)
    climb = "../" * len(base.parts) + secret.as_posix().lstrip("/")
    values = {
        1: SCRIPT,
        2: climb,
        3: "runs.transcripts/../../elsewhere/.ssh",
        4: "runs.transcripts/out",
        5: "evil.transcripts/.ssh",
        6: secret.as_posix(),
        7: "runs.transcripts",
        8: "x\x00y",
    }
    ledger = _with_transcripts(base, values)
    page = _page(ledger, tmp_path / "site")
    assert "id_secret_name" not in page
    assert "javascript:" not in page.lower().replace("javascript%3a", "")
    hrefs = re.findall(r'<a href="([^"]+)"', page)
    # only the fixture's own kept output (row 0) is linked
    assert [h for h in hrefs if "transcripts" in h] == ["../ledger/runs.transcripts/base/A/0.1"]


def test_a_transcript_folder_with_a_colon_is_linked_percent_encoded(tmp_path: Path) -> None:
    kept = tmp_path / "runs.transcripts" / SCRIPT
    kept.mkdir(parents=True)
    (kept / "agent.out").write_text("x")
    ledger = _with_transcripts(tmp_path, {1: f"runs.transcripts/{SCRIPT}"})
    page = _page(ledger, tmp_path)
    hrefs = re.findall(r'<a href="([^"]+)"', page)
    assert "./runs.transcripts/javascript%3Aconsole.error%28%27pwned%27%29" in hrefs
    assert all(h.startswith(("./", "../", "#")) for h in hrefs), hrefs
    assert "kept: agent.out" in page


def test_an_attempt_whose_model_calls_were_kept_links_them(tmp_path: Path) -> None:
    kept = tmp_path / "runs.transcripts" / "r" / "A" / "0.1"
    kept.mkdir(parents=True)
    (kept / "agent.stdout").write_text("x")
    (kept / "model_calls.jsonl").write_text("{}\n")
    ledger = _with_transcripts(tmp_path, {1: "runs.transcripts/r/A/0.1"})
    page = _page(ledger, tmp_path)
    hrefs = re.findall(r'<a href="([^"]+)"', page)
    assert "./runs.transcripts/r/A/0.1/model_calls.jsonl" in hrefs
    assert hrefs.count("./runs.transcripts/r/A/0.1") == 1  # the folder's own link stays


def test_an_attempts_cell_gives_its_model_calls_and_time_in_them(tmp_path: Path) -> None:
    ledger = two_runs(tmp_path)
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    rows[1].update(model_calls=3, model_call_s=2.5)
    rows[2].update(model_calls=1)  # a ledger that kept the count alone
    ledger.write_text("".join(json.dumps(r) + "\n" for r in rows))
    page = _page(ledger, tmp_path)
    assert page.count("3 model call(s), 2.5 s in them") == 1
    assert page.count("1 model call(s)") == 1
    assert page.count("model call(s)") == 2  # the rows without the gateway's figures say nothing


@pytest.mark.slow
def test_in_chromium_every_link_is_a_file_and_a_click_runs_no_script(
    tmp_path: Path, secret: Path
) -> None:
    from tests.report.browser import chromium, visit

    if chromium() is None:
        if os.environ.get("CI"):
            pytest.fail(
                "chromium is missing, and CI must run the browser test (.ci/run installs it)"
            )
        pytest.skip("chromium is not installed (apt-get install chromium)")
    (tmp_path / SCRIPT).mkdir()  # the hostile value beside the ledger
    kept = tmp_path / "runs.transcripts" / SCRIPT  # and a real folder of that name
    kept.mkdir(parents=True)
    (kept / "agent.out").write_text("x")
    ledger = _with_transcripts(tmp_path, {1: SCRIPT, 2: f"runs.transcripts/{SCRIPT}"})
    page = tmp_path / "report.html"
    page.write_text(_page(ledger, tmp_path))
    # every link's protocol as the browser reads it; then a click on each outcome-grid link that
    # is not a file (none should be): a javascript: link would log 'pwned'
    seen = visit(
        page,
        evaluate="(() => { const links = [...document.querySelectorAll('td a[href]')];"
        " const protocols = links.map(a => a.protocol);"
        " links.filter(a => a.protocol !== 'file:').forEach(a => a.click());"
        " return protocols; })()",
    )
    assert seen.value == ["file:", "file:"], seen.value  # the fixture's own and the real folder
    assert not any("pwned" in text for _, text in seen.console)
    assert seen.errors == []
