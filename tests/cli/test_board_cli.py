"""``trialbook board`` on the command line: the JSON contract, the 80-column table with the leaders
first, markdown, HTML, hostile names, and bad input as one line and exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.analysis.test_board import RATES, _ledger, _rows
from trialbook.cli import main

COST = {"alpha": 1.0, "beta": 0.5, "gamma": 0.5, "delta": 0.1}


def _board(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["board", *args, "--resamples", "2000"])
    return result.exit_code, result.stdout, result.stderr


def test_json_holds_the_contract_keys(tmp_path: Path) -> None:
    path = _ledger(tmp_path, _rows(RATES, tasks=60, cost=COST))
    code, out, _ = _board(str(path), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "trialbook.board/1"
    assert doc["alpha"] == 0.05
    assert doc["adjustment"] == "holm"
    for s in doc["systems"]:
        assert {"run_id", "system", "estimate", "ci_low", "ci_high", "cost", "rank"} <= set(s)
        assert {"rank_low", "rank_high", "frontier"} <= set(s)
        assert set(s["cost"]) == {"estimate", "ci_low", "ci_high"}
    assert len(doc["pairs"]) == 6
    for p in doc["pairs"]:
        assert {"a", "b", "difference", "p_value", "p_adjusted", "decision"} <= set(p)
    assert doc["leaders"] == [s["run_id"] for s in doc["systems"] if s["rank_low"] == 1]


def test_alpha_sets_the_level_of_decisions_and_intervals(tmp_path: Path) -> None:
    path = _ledger(tmp_path, _rows(RATES, tasks=60))
    _, out, _ = _board(str(path), "--format", "json", "--alpha", "0.2")
    doc = json.loads(out)
    assert doc["alpha"] == 0.2
    assert doc["ci"]["confidence"] == 0.8
    for p in doc["pairs"]:
        assert (p["decision"] == "no detectable difference") == (p["p_adjusted"] >= 0.2)


def test_the_table_fits_80_columns_and_says_the_leaders_first(tmp_path: Path) -> None:
    rows = _rows(RATES, tasks=60, cost=COST)
    for r in rows:
        r["run_id"] = r["run_id"] + "-with-a-rather-long-descriptive-run-name-2026"
    path = _ledger(tmp_path, rows)
    code, out, _ = _board(str(path))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(("LEADER: alpha", "LEADERS: alpha"))
    assert max(len(line) for line in lines) <= 80
    assert "cost per task" in out
    assert "frontier" in out


def test_markdown_and_html(tmp_path: Path) -> None:
    path = _ledger(tmp_path, _rows(RATES, tasks=60, cost=COST))
    code, md, _ = _board(str(path), "--format", "markdown")
    assert code == 0
    assert md.startswith("### LEADER")
    assert "| rank | run | system |" in md
    assert "<summary>All 6 pairs</summary>" in md
    code, page, _ = _board(str(path), "--format", "html")
    assert code == 0
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page
    assert "<link" not in page
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing fetched
    assert not re.search(r'xlink:href="(?!#)', page)
    assert page.count('class="matrix"') == 1


def test_hostile_names_reach_no_terminal_markdown_or_page_as_markup(tmp_path: Path) -> None:
    rows = _rows({"alpha": 0.7, "beta": 0.4}, tasks=30, cost={"alpha": 1.0, "beta": 1.0})
    evil = "\x1b[2J\x1b[31mEVIL|<img src=x onerror=alert(1)>$\\frac{1}{$"
    for r in rows:
        if r["run_id"] == "beta":
            r["run_id"] = evil
            r["system"] = evil
    path = _ledger(tmp_path, rows)
    code, out, _ = _board(str(path))
    assert code == 0
    assert "\x1b" not in out
    assert "EVIL" in out
    code, md, _ = _board(str(path), "--format", "markdown")
    assert code == 0
    assert "\x1b" not in md
    assert "<img" not in md
    assert "\\x1b[2J" not in md  # shown as its escape, a reference in markdown
    assert "&#92;x1b&#91;2J" in md
    assert "EVIL&#124;&lt;img" in md  # a table cell stays one cell; the tag is text
    assert "&#36;&#92;frac{1}{&#36;" in md  # no GitHub math
    code, page, _ = _board(str(path), "--format", "html")
    assert code == 0
    assert "<img" not in page
    assert "\x1b" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "\\x1b[2J\\x1b[31mEVIL|&lt;img" in page  # the escape shown, the tag text
    # the figures draw the name as written: no mathtext there, so no backslash put before "$"
    assert "EVIL|&lt;img src=x onerror=alert(1)&gt;$\\frac{1}{$" in page
    assert "\\$" not in page


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--run", "alpha"], "at least two runs; the ledgers given hold 1 of the runs named"),
        (["--run", "alpha", "--run", "alpha"], "--run: run given twice: 'alpha'"),
        (["--run", "alpha", "--run", "nope"], "--run: run(s) not in the ledgers given: 'nope'"),
        (["--metric", "pass@9"], "k=9 exceeds the attempts of 30 task(s)"),
        (["--metric", "within@1"], "--metric must be pass@K, pass^K or mean-score"),
        (["--alpha", "1.5"], "Invalid value for '--alpha'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    path = _ledger(tmp_path, _rows(RATES))
    code, out, err = _board(str(path), *args)
    assert code == 2
    assert out == ""
    assert message in err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 or lines[0].startswith("Usage:"), err


def test_runs_of_different_protocols_are_refused(tmp_path: Path) -> None:
    path = _ledger(tmp_path, _rows(RATES, extra={"gamma": {"protocol": "repair"}}))
    code, out, err = _board(str(path))
    assert code == 2
    assert out == ""
    assert re.fullmatch(
        r"trialbook: error: run 'gamma' is a repair run: a board ranks runs of independent "
        r"attempts \(pass@k and pass\^k assume them\)\n",
        err,
    )


def test_help_names_the_json_and_every_option(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["board", "--help"], terminal_width=200)
    assert result.exit_code == 0
    for word in ("trialbook.board/1", "--metric", "--cost", "--alpha", "--run", "--board"):
        assert word in result.output


def test_reward_picks_the_harbor_key_as_score_does(tmp_path: Path) -> None:
    # two copies of a Harbor job whose verifier records two reward keys: without --reward the
    # board refuses (never guessed), with it each system's estimate is score's with that key
    import shutil

    job = Path(__file__).parents[1] / "importers" / "data" / "harbor" / "scripted-multikey"
    for name in ("a", "b"):
        shutil.copytree(job, tmp_path / name)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    code, out, err = _board(a, b)
    assert code == 2
    assert "several reward keys" in err
    assert "--reward" in err
    for key in ("correctness", "style"):
        code, out, _ = _board(a, b, "--reward", key, "--format", "json")
        assert code == 0
        scored = CliRunner().invoke(main, ["score", a, "--reward", key, "--format", "json"])
        (run,) = json.loads(scored.stdout)["runs"]
        doc = json.loads(out)
        assert [s["estimate"] for s in doc["systems"]] == [run["metrics"]["pass@1"]["estimate"]] * 2


def test_one_pair_is_said_in_the_singular(tmp_path: Path) -> None:
    # two systems make one pair: "1 pairs" was printed
    from tests.conftest import matrix_rows, write_jsonl

    paths = [
        str(
            write_jsonl(
                tmp_path / f"{n}.jsonl", matrix_rows({f"t{i}": [i % 2] for i in range(8)}, run_id=n)
            )
        )
        for n in ("a", "b")
    ]
    out = CliRunner().invoke(main, ["board", *paths])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert "; 1 pair by the paired test" in text
