"""A suite declares its attempt protocol; the protocol is part of what the suite's content hash
covers, a bad value is one line naming the key, and a race refuses a suite that is not independent."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from trialbook.cli import main
from trialbook.ledger import PROTOCOLS as LEDGER_PROTOCOLS
from trialbook.suite import PROTOCOLS, SuiteError, freeze, load_suite

TASKS = {"a": {"grader": "true"}, "b": {"grader": "true"}}


def test_the_suite_and_the_ledger_know_the_same_protocols() -> None:
    assert PROTOCOLS == LEDGER_PROTOCOLS


def test_a_changed_protocol_changes_the_dataset_id(tmp_path: Path) -> None:
    ids = {}
    for name, extra in (
        ("none", ""),
        ("independent", 'protocol = "independent"\n'),
        ("repair", 'protocol = "repair"\n'),
        ("human", 'protocol = "human-selected"\n'),
    ):
        suite = load_suite(make_suite(tmp_path / name, TASKS, extra=extra, freeze=False))
        ids[name] = freeze(suite).dataset_id
    # the default is independent: saying so keeps the dataset_id of every existing suite
    assert ids["none"] == ids["independent"]
    assert len({ids["independent"], ids["repair"], ids["human"]}) == 3
    assert load_suite(tmp_path / "repair").protocol == "repair"
    assert load_suite(tmp_path / "none").protocol == "independent"


def test_an_unknown_protocol_is_refused_naming_the_key(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "s", TASKS, extra='protocol = "retry"\n', freeze=False)
    with pytest.raises(SuiteError) as info:
        load_suite(root)
    assert info.value.problems == (
        f"{root / 'suite.toml'}: protocol: expected one of independent, repair, human-selected, "
        "got 'retry'",
    )


def test_a_race_refuses_a_repair_suite_writing_nothing(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "s", TASKS, extra='protocol = "repair"\n')
    ledger = tmp_path / "race.db"
    result = CliRunner().invoke(
        main,
        ["race", str(suite), "--baseline", "true", "--candidate", "true", "--ledger", str(ledger)],
    )
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "protocol 'repair': a race compares independent attempts" in lines[0]
    assert not ledger.exists()
