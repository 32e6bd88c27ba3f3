"""Hostile suites (issue 12, items 2, 10, 16): folders linked out of the suite, budgets too large to
plan, seeds the ledger cannot keep exactly, task ids with a newline, file names that are not UTF-8. Each is refused
with one line naming the file, never a traceback, and nothing is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from trialbook.cli import main
from trialbook.suite import SuiteError, freeze, load_suite

TASK = {
    "t1": {
        "prompt": "do it",
        "grader": "test -f $TRIALBOOK_ORACLE_DIR/secret",
        "fixture": {"a.txt": "a\n"},
        "oracle": {"secret": "the answer\n"},
    }
}


def _freeze_cli(root: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["suite", "freeze", str(root)])
    return result.exit_code, result.output


def _assert_refused(root: Path, needle: str) -> None:
    with pytest.raises(SuiteError, match=needle):
        freeze(load_suite(root))
    code, out = _freeze_cli(root)
    assert code == 2, out
    assert needle in out
    assert "Traceback" not in out
    assert not (root / "suite.lock.json").exists()


def _moved_out(suite: Path, rel: str, outside: Path) -> None:
    """Move ``rel`` of the suite to ``outside`` and leave a symbolic link in its place."""
    os.rename(suite / rel, outside)
    (suite / rel).symlink_to(outside)


@pytest.mark.parametrize("rel", ["tasks", "tasks/t1", "tasks/t1/oracle", "tasks/t1/fixture"])
def test_a_suite_folder_that_links_out_of_the_suite_is_refused(tmp_path: Path, rel: str) -> None:
    """A shared task library linked in: the sandbox hides the suite folder, not the link's target,
    so the agent would read the oracle by its real path (or a fixture -> ~/.ssh would be copied
    into every workspace)."""
    suite = make_suite(tmp_path / "s", TASK, freeze=False)
    _moved_out(suite, rel, tmp_path / "library")
    _assert_refused(suite, "symbolic link")


def test_a_fixture_linked_to_a_private_folder_is_never_copied(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "s", TASK, freeze=False)
    ssh = tmp_path / "home" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_ed25519").write_text("PRIVATE KEY\n")
    os.rename(suite / "tasks/t1/fixture", tmp_path / "old-fixture")
    (suite / "tasks/t1/fixture").symlink_to(ssh)
    _assert_refused(suite, "symbolic link")


@pytest.mark.parametrize("k", [2**63 - 1, 10**20, 10**9])
def test_a_k_too_large_to_plan_is_one_line(tmp_path: Path, k: int) -> None:
    suite = make_suite(tmp_path / "s", TASK, k=k, freeze=False)
    _assert_refused(suite, "k: must be <= 100000")


@pytest.mark.parametrize("seed", [2**53 + 1, -(2**53) - 1, 2**63, 2**70])
def test_seeds_the_ledger_cannot_keep_exactly_are_refused(tmp_path: Path, seed: int) -> None:
    # every row records its seed, and the ledger refuses integers beyond 2**53 (not exact as JSON
    # numbers in most readers): a suite with such a seed could never finish a run
    suite = make_suite(tmp_path / "s", TASK, k=1, extra=f"seeds = [{seed}]\n", freeze=False)
    _assert_refused(suite, "seeds: seeds must lie within -2")


def test_seeds_at_the_edges_are_accepted(tmp_path: Path) -> None:
    extra = f"seeds = [{2**53}, {-(2**53)}]\n"
    suite = make_suite(tmp_path / "s", TASK, k=2, extra=extra, freeze=False)
    assert load_suite(suite).seeds == (2**53, -(2**53))


def test_a_task_id_ending_in_a_newline_is_refused(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "s", TASK, freeze=False)
    os.rename(suite / "tasks/t1", suite / "tasks/t\n")
    _assert_refused(suite, "task id must be")


def test_a_fixture_file_name_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "s", TASK, freeze=False)
    bad = os.fsencode(suite / "tasks/t1/fixture") + b"/caf\xe9.txt"
    with open(bad, "wb") as f:
        f.write(b"x\n")
    _assert_refused(suite, "not UTF-8")
