"""Text from a ledger, an import or an agent reaches the terminal printable, through every command.

Each hostile string is what a terminal would act on if printed raw: OSC 8 (a link that shows other
text), OSC 52 (a clipboard write), CSI (clear the screen, move the cursor), a C1 CSI, a bidi
override, a line break that forges a line, and rich markup and emoji codes that a console would
read as its own. Every command's output must hold no raw control, C1 or bidi character (a newline
only between lines), and the markup must be printed as it was written.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import base_row, make_suite, write_jsonl
from trialbook.cli import main
from trialbook.report import printable

HOSTILE = [
    "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\",  # OSC 8 link, ST-terminated
    "\x1b]52;c;ZXZpbA==\x07",  # OSC 52: write the clipboard
    "\x1b[2J\x1b[H",  # CSI: clear the screen, cursor home
    "\x9b31m\x9d0;title\x9c",  # C1 CSI and OSC, 8-bit forms
    "abc\u202edcba\u202c\u2066x\u2069\u200f",  # bidi override, isolate, mark
    "line\nforged: pass@1 100.0%\r\x08\x7f\x00",  # newline, carriage return, backspace, DEL, NUL
    "[bold red]red[/] [link=javascript:alert(1)]link[/link]",  # rich markup
    ":skull: \u200b\ufeff",  # an emoji code, zero-width space, byte-order mark
]
MARKUP = HOSTILE[6]

BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def raw_controls(out: str) -> list[str]:
    """The characters of ``out`` a terminal acts on: C0 controls but the newline, DEL, C1
    controls, bidi controls, other format characters (first principles: ECMA-48 sections 5 and 8,
    Unicode UAX #9)."""
    bad = []
    for ch in out:
        if ch == "\n":
            continue
        code = ord(ch)
        if code < 0x20 or 0x7F <= code <= 0x9F or ch in BIDI or unicodedata.category(ch) == "Cf":
            bad.append(ch)
    return bad


def assert_printable(out: str) -> None:
    assert not raw_controls(out), f"raw control characters {raw_controls(out)!r} in:\n{out!r}"


def invoke(*args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), input=input)
    if result.exit_code == 1 and result.exc_info and not isinstance(result.exception, SystemExit):
        raise result.exception  # a traceback, shown whole
    # stdout and stderr both (the runner mixes them into output)
    return result.exit_code, result.output


def hostile_rows(run: str, passed_first: bool = True) -> list[dict[str, Any]]:
    rows = []
    for i, text in enumerate(HOSTILE):
        for attempt in range(2):
            ok = (attempt == 0) == passed_first if i % 2 else attempt == 1
            rows.append(
                base_row(
                    f"t{i}{text}",
                    attempt,
                    passed=ok,
                    k=2,
                    run_id=f"{run}{HOSTILE[0]}{HOSTILE[1]}",
                    system=f"sys{MARKUP}{HOSTILE[4]}",
                    stratum=f"s{i % 2}{HOSTILE[3]}",
                    error=None if ok else f"E{text}",
                    transcript=f"../../x{text}",
                )
            )
    return rows


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "h.jsonl", hostile_rows("base"))


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    return (
        write_jsonl(tmp_path / "a.jsonl", hostile_rows("base")),
        write_jsonl(tmp_path / "b.jsonl", hostile_rows("cand", passed_first=False)),
    )


def test_printable_shows_every_hostile_character_as_an_escape() -> None:
    for text in HOSTILE:
        shown = printable(text)
        assert_printable(shown)
        assert "\n" not in shown
        assert printable(shown) == shown  # idempotent
    assert printable("\x1b[2J") == "\\x1b[2J"
    assert printable("a\u202eb") == "a\\u202eb"
    assert printable("a\nb") == "a\\nb"
    assert printable("a\nb", lines=True) == "a\nb"
    assert printable("a\tb\r", lines=True) == "a\tb\\r"  # a tab only moves right; CR overwrites
    # text people write stays as written: accents, CJK, emoji, dashes, spaces of any width
    for fine in ("naïve – 10 × 2 · 中文 ✓ 🙂", "a\u00a0b", "C:\\path\\x1b"):
        assert printable(fine) == fine


@pytest.mark.parametrize("fmt", ["table", "markdown", "json", "html"])
def test_score_prints_hostile_text_printable(ledger: Path, fmt: str) -> None:
    code, out = invoke("score", str(ledger), "--format", fmt, "--tasks")
    assert code == 0, out
    assert_printable(out)
    if fmt == "table":
        assert "[bold red]red[/]" in out  # markup printed as written, never read
        assert ":skull:" in out
        assert "\\x1b]8;;https://evil.example/" in out
    if fmt == "json":
        doc = json.loads(out)  # the same values, escaped the JSON way
        assert {r["system"] for r in doc["runs"]} == {f"sys{MARKUP}{HOSTILE[4]}"}


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_compare_and_budget_print_hostile_text_printable(two: tuple[Path, Path], fmt: str) -> None:
    a, b = two
    code, out = invoke("compare", str(a), str(b), "--format", fmt)
    assert code == 0, out
    assert_printable(out)
    code, out = invoke("budget", str(a), "--format", fmt)
    assert code == 0, out
    assert_printable(out)


def test_runs_import_export_report_and_plan_print_hostile_text_printable(
    ledger: Path, tmp_path: Path
) -> None:
    db = tmp_path / "h.db"
    code, out = invoke("import", "jsonl", str(ledger), "--ledger", str(db))
    assert code == 0, out
    assert_printable(out)
    code, out = invoke("import", "jsonl", str(ledger), "--ledger", str(db))  # again: refused
    assert code == 2, out
    assert_printable(out)
    for fmt in ("table", "json"):
        code, out = invoke("runs", str(db), "--format", fmt)
        assert code == 0, out
        assert_printable(out)
    for fmt in ("jsonl", "csv"):
        code, out = invoke("export", str(db), "--format", fmt, "-o", str(tmp_path / f"o.{fmt}"))
        assert code == 0, out
        assert_printable(out)
    code, out = invoke("report", str(db), "-o", str(tmp_path / "r.html"))
    assert code == 0, out
    assert_printable(out)
    code, out = invoke("plan", "--pilot", str(ledger), "--tasks", "20", "--effect", "0.1")
    assert code == 0, out
    assert_printable(out)


def test_an_error_about_a_hostile_value_is_printable(tmp_path: Path) -> None:
    for text in HOSTILE:
        bad = write_jsonl(
            tmp_path / "bad.jsonl", [base_row(f"t{text}", 3, passed=True, k=2, run_id=text)]
        )
        code, out = invoke("score", str(bad))
        assert code == 2, out
        assert_printable(out)
        # a command line argument holds no NUL (execve's strings end at one)
        code, out = invoke("runs", str(tmp_path / f"nope{text.replace(chr(0), '')}.db"))
        assert code == 2, out
        assert_printable(out)


def test_a_hostile_suite_prints_printable_in_freeze_and_grader_check(tmp_path: Path) -> None:
    tasks = {
        f"t{i}": {"toml": [f"stratum = {json.dumps(text)}"], "grader": "false"}
        for i, text in enumerate(HOSTILE)
    }
    root = make_suite(tmp_path / "suite", tasks, freeze=False)
    suite_toml = root / "suite.toml"
    suite_toml.write_text(suite_toml.read_text().replace('name = "suite"', 'name = "s\\u001b[2J"'))
    code, out = invoke("suite", "freeze", str(root))
    assert code in (0, 1, 2), out
    assert_printable(out)
    code, out = invoke("grader-check", str(root), "--sandbox", "process")
    assert_printable(out)


def test_run_progress_prints_a_hostile_task_id_printable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from trialbook.cli._progress import Progress
    from trialbook.harness import Tally

    progress = Progress()
    progress.tty = False
    progress.begin(f"run{HOSTILE[0]}", 2, Tally(), [f"note {HOSTILE[2]}"])
    progress.attempt(
        {"task_id": f"t{HOSTILE[1]}", "attempt_index": 0, "status": "failed", "elapsed_s": 1.0}
        | {"passed": False, "timed_out": False}
    )
    err = capsys.readouterr().err
    assert "\\x1b]52;c;" in err
    assert_printable(err)


def test_markup_in_a_renderable_is_never_read() -> None:
    from rich.table import Table

    from trialbook.report import render_plain

    table = Table()
    table.add_column("x")
    table.add_row(MARKUP)
    out = render_plain(table, width=200)
    assert "[bold red]red[/]" in out
    assert "[link=javascript:alert(1)]" in out
    assert re.search(r"\\x1b", render_plain(f"a{HOSTILE[2]}"))


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_to_a_terminal_is_printable_and_piped_is_the_data(
    ledger: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import click.testing

    code, piped = invoke("export", str(ledger), "--format", fmt)
    assert code == 0
    assert raw_controls(piped)  # the data as it is, for a program to read
    monkeypatch.setattr(click.testing._NamedTextIOWrapper, "isatty", lambda self: True)
    code, shown = invoke("export", str(ledger), "--format", fmt)
    assert code == 0, shown
    assert_printable(shown)
    if fmt == "jsonl":  # the same values
        assert [json.loads(line) for line in shown.splitlines()] == [
            json.loads(line) for line in piped.splitlines()
        ]


def test_run_and_race_print_hostile_ids_printable(tmp_path: Path) -> None:
    tasks = {f"t{i}": {"grader": "test -f done.txt"} for i in range(3)}
    root = make_suite(tmp_path / "suite", tasks, k=1)
    # the agent's own words on stderr end up in the row's error and the transcripts
    agent = f"printf '%s' '{HOSTILE[0]}' >&2; exit 3"
    code, out = invoke(
        "run", str(root), "--agent", agent, "--ledger", str(tmp_path / "r.db"),
        "--sandbox", "process", "--run-id", f"r{HOSTILE[2]}", "--system", f"s{HOSTILE[4]}",
    )  # fmt: skip
    assert code == 0, out
    assert "\\x1b[2J" in out  # the run id, shown
    assert_printable(out)
    code, out = invoke("score", str(tmp_path / "r.db"))
    assert code == 0, out
    assert_printable(out)
    code, out = invoke(
        "race", str(root), "--baseline", agent, "--candidate", "touch done.txt",
        "--ledger", str(tmp_path / "race.db"), "--sandbox", "process",
        "--race-id", f"race{HOSTILE[1]}", "--baseline-system", f"b{HOSTILE[0]}",
    )  # fmt: skip
    assert code == 0, out
    assert "\\x1b]52;c;" in out  # the race id, shown
    assert_printable(out)


# HTML, markdown and GitHub syntax a board's system name could carry into a page or a comment
PAGE_HOSTILE = "<img src=x onerror=alert(1)>|`@admin #1 :skull: $\\frac{1}{$ [x](https://e.example)"


@pytest.mark.parametrize("fmt", ["table", "markdown", "json", "html"])
def test_board_prints_hostile_text_printable(two: tuple[Path, Path], fmt: str) -> None:
    # two runs of hostile ids and tasks; the candidate's system name holds page markup too
    a, b = two
    rows = [json.loads(line) for line in b.read_text().splitlines()]
    system = f"sys{MARKUP}{HOSTILE[4]}{PAGE_HOSTILE}"
    b = write_jsonl(b, [r | {"system": system, "cost": 0.5} for r in rows])
    a = write_jsonl(a, [json.loads(line) | {"cost": 1.0} for line in a.read_text().splitlines()])
    code, out = invoke("board", str(a), str(b), "--format", fmt, "--resamples", "500")
    assert code == 0, out
    assert_printable(out)
    if fmt in ("table", "html"):
        assert "\\x1b]8;;https://evil.example/" in out  # the run id, shown as its escapes
    if fmt == "table":
        assert "[bold red]red[/]" not in out  # the system is in no terminal cell, the run id is
        assert max(len(line) for line in out.splitlines()) <= 80
    if fmt == "json":
        doc = json.loads(out)  # the same values, escaped the JSON way
        assert {s["system"] for s in doc["systems"]} == {f"sys{MARKUP}{HOSTILE[4]}", system}
        assert {s["run_id"] for s in doc["systems"]} == {
            f"{run}{HOSTILE[0]}{HOSTILE[1]}" for run in ("base", "cand")
        }
    if fmt == "markdown":
        for raw in ("<img", "`@", "@admin", " #1", " :skull:", "$\\frac", "[x](", "https://e."):
            assert raw not in out, raw
        assert "&lt;img src=x onerror=alert(1)&gt;&#124;&#96;@&#8203;admin" in out
    if fmt == "html":
        assert "<img" not in out
        assert "&lt;img src=x onerror=alert(1)&gt;|`@admin" in out
        assert "[bold red]red[/]" in out  # rich markup is text in a page


def test_the_command_line_prints_only_through_echo_and_show() -> None:
    """No command module prints by itself (click.echo, click.secho, print, a console's print):
    only trialbook.cli._console's echo and show make text printable first. The demo prints its
    own banner and lines with rich markup, and passes every ledger text through printable."""
    import ast

    import trialbook.cli

    exempt = {"_console.py", "demo.py"}
    found = []
    for path in sorted(Path(trialbook.cli.__file__).parent.glob("*.py")):
        if path.name in exempt:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            owner = (
                f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
            )
            if name == "print" or (owner == "click" and name in ("echo", "secho")):
                found.append(f"{path.name}:{node.lineno}")
    assert not found, found


# every command, and where this file feeds it hostile text
COVERED = {
    "board": "test_board_prints_hostile_text_printable",
    "score": "test_score_prints_hostile_text_printable",
    "compare": "test_compare_and_budget_print_hostile_text_printable",
    "budget": "test_compare_and_budget_print_hostile_text_printable",
    "runs": "test_runs_import_export_report_and_plan_print_hostile_text_printable",
    "import": "test_runs_import_export_report_and_plan_print_hostile_text_printable",
    "export": "test_export_to_a_terminal_is_printable_and_piped_is_the_data",
    "report": "test_runs_import_export_report_and_plan_print_hostile_text_printable",
    "plan": "test_runs_import_export_report_and_plan_print_hostile_text_printable",
    "suite": "test_a_hostile_suite_prints_printable_in_freeze_and_grader_check",
    "grader-check": "test_a_hostile_suite_prints_printable_in_freeze_and_grader_check",
    "run": "test_run_and_race_print_hostile_ids_printable",
    "race": "test_run_and_race_print_hostile_ids_printable",
    "passk": "(reads only numbers from its options)",
    "demo": "(prints its bundled suite and simulated agents; its run lines pass printable)",
}


def test_every_command_is_fed_hostile_text() -> None:
    assert set(main.commands) == set(COVERED), "a new command: feed it the hostile strings here"
    for name, where in COVERED.items():
        assert where.startswith("(") or where in globals(), name
