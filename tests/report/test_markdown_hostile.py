"""Markdown from ``score``, ``compare`` and ``budget`` keeps hostile ledger text inert on GitHub.

Each string below is a way text becomes markup in a pull-request comment: raw HTML (an image, a
closing ``</details>``, a script, a comment), a backtick closing a code span, a link or an image,
emphasis and strikethrough, a table cell split, GitHub math, a quote or a list at a line's start,
and GitHub's own text patterns, applied after the markdown is parsed (outside code): @mentions,
e-mail autolinks, issue references, emoji codes and bare links. The markdown is parsed by markdown-it
in its GFM-like preset (CommonMark with GFM tables, strikethrough and bare-link autolinks; it
passes raw HTML through, as GitHub's parser does before sanitizing), and the page must hold no
element the renderer did not mean, every table row its own number of cells, every text as
written, and none of GitHub's text patterns.
"""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from tests.conftest import base_row, write_jsonl
from trialbook.cli import main

HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "</details></table><script>alert(1)</script>",
    "run`injected` **bold**",
    "[click](https://evil.example/)",
    "![pixel](https://evil.example/a.png)",
    "@octocat please look",
    "me@evil.example",
    "see #1",
    ":skull: :+1:",
    "www.evil.example and https://evil.example/x",
    "a|b|c",
    "$x^2$ ~~gone~~ _em_ *em*",
    "> quoted",
    "- listed",
    "&amp; &#60; <!-- open",
    "back\\slash\\`",
]

# GitHub's text filters, run over the rendered page's text (first principles, as in
# src/trialbook/report/_mdtext.py): a mention, an e-mail address, an issue reference, an emoji
# code, a bare link
GITHUB_TEXT = re.compile(
    r"(?<![A-Za-z0-9])@[A-Za-z0-9]|[A-Za-z0-9]@[A-Za-z0-9-]+\.[A-Za-z]|#[0-9]"
    r"|:[A-Za-z0-9_+-]+:|https?://|www\."
)
MEANT = {
    "h3", "p", "details", "summary", "sub", "table", "thead", "tbody", "tr", "th", "td",
    "ul", "li", "strong", "em", "blockquote", "br", "code",
}  # fmt: skip


class _Page(HTMLParser):
    """The elements of a rendered page, the cells of each table row, and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter[str] = Counter()
        self.rows: list[int] = []
        self.text: list[str] = []
        self.outside_code: list[str] = []
        self.in_code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        self.in_code += tag == "code"
        if tag == "tr":
            self.rows.append(0)
        if tag in ("td", "th"):
            self.rows[-1] += 1

    def handle_endtag(self, tag: str) -> None:
        self.in_code -= tag == "code"

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if not self.in_code:
            self.outside_code.append(data)

    def handle_comment(self, data: str) -> None:
        self.tags["<!--"] += 1


def rendered(markdown: str) -> _Page:
    page = _Page()
    page.feed(MarkdownIt("gfm-like").render(markdown))
    return page


def _rows(run: str, shift: int) -> list[dict[str, object]]:
    rows = []
    for i, text in enumerate(HOSTILE):
        for attempt in range(2):
            ok = (i + attempt + shift) % 3 == 0
            rows.append(
                base_row(
                    f"t{i} {text}",
                    attempt,
                    passed=ok,
                    k=2,
                    run_id=f"{run} {HOSTILE[2]}",
                    system=f"{HOSTILE[0]} {HOSTILE[5]}",
                    stratum=HOSTILE[i % 4 + 8],
                    error=None if ok else f"E {text}",
                )
            )
    return rows


@pytest.fixture
def ledgers(tmp_path: Path) -> tuple[Path, Path]:
    # the file names are hostile too: the footer names the source
    return (
        write_jsonl(tmp_path / "base `x` @octocat #1.jsonl", _rows("base", 0)),
        write_jsonl(tmp_path / "cand.jsonl", _rows("cand", 1)),
    )


def _check(markdown: str, expect_text: list[str]) -> None:
    page = rendered(markdown)
    assert set(page.tags) <= MEANT, f"unexpected elements {set(page.tags) - MEANT}:\n{markdown}"
    assert page.tags["details"] == markdown.count("<details>")  # none closed early or opened
    text = "".join(page.text).replace("\u200b", "")
    for expected in expect_text:
        assert expected in text, f"{expected!r} not shown as written"
    # GitHub's filters skip code elements (as they skip links and pre)
    found = GITHUB_TEXT.findall("".join(page.outside_code))
    assert not found, f"GitHub would turn {found} into links, mentions or emoji"


def _cell_counts(markdown: str) -> None:
    """Every row of every pipe table renders as many cells as its header has."""
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|-"):
            width = line.count(" | ") + 1
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                table = "\n".join([line, lines[i + 1], lines[j]])
                page = rendered(table)
                assert page.rows[-1] == width, f"row split into {page.rows[-1]} cells: {lines[j]}"
                j += 1


def test_score_markdown_keeps_hostile_text_inert(ledgers: tuple[Path, Path]) -> None:
    base, _ = ledgers
    out = CliRunner().invoke(main, ["score", str(base), "--format", "markdown", "--tasks"])
    assert out.exit_code == 0, out.output
    _check(out.output, [f"base {HOSTILE[2]}", f"{HOSTILE[0]} {HOSTILE[5]}", *HOSTILE, base.name])
    _cell_counts(out.output)


def test_compare_and_budget_markdown_keep_hostile_text_inert(ledgers: tuple[Path, Path]) -> None:
    base, cand = ledgers
    out = CliRunner().invoke(main, ["compare", str(base), str(cand), "--format", "markdown"])
    assert out.exit_code == 0, out.output
    _check(out.output, [f"cand {HOSTILE[2]}", f"{HOSTILE[0]} {HOSTILE[5]}"])
    _cell_counts(out.output)
    out = CliRunner().invoke(main, ["budget", str(base), "--format", "markdown"])
    assert out.exit_code == 0, out.output
    _check(out.output, [f"base {HOSTILE[2]}"])
    _cell_counts(out.output)


def test_md_code_fences_every_backtick_run() -> None:
    from trialbook.report._views import md_code

    for text in [*HOSTILE, "`", "``a``", " a ", "a`` ` ```b"]:
        page = rendered(f"- {md_code(text)}\n")
        assert page.tags["code"] == 1, (text, md_code(text))
        assert "".join(page.text).strip("\n") == text


def test_md_text_shows_each_string_as_written() -> None:
    from trialbook.report._views import md_text

    for text in HOSTILE:
        page = rendered(f"| a |\n|---|\n| {md_text(text)} |\n\n- {md_text(text)}\n")
        assert set(page.tags) <= {"table", "thead", "tbody", "tr", "th", "td", "ul", "li"}
        assert page.rows == [1, 1]
        shown = "".join(page.text).replace("\u200b", "")
        assert shown.count(text) == 2, (text, shown)
