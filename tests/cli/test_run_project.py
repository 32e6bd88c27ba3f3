"""``trialbook run`` in a project: the project file, the exact resume command after Ctrl-C, the
progress line's counts, ``trialbook runs`` and the scorecard of an interrupted run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.harness.test_project import TASKS, make_project, outside_tmp
from tests.harness.test_run import unique_run_id
from trialbook.cli import main

__all__ = ["outside_tmp"]

SLOW = "#!/bin/sh\nsleep 0.4\ntouch done.txt\n"


def project_file(root: Path, text: str, name: str = "trialbook.toml") -> None:
    (root / name).write_text(text)


def rows(ledger: Path) -> list[tuple[str, int, str]]:
    with sqlite3.connect(ledger) as conn:
        return conn.execute(
            "SELECT run_id, count(*), group_concat(status) FROM attempts GROUP BY run_id"
        ).fetchall()


def test_trialbook_run_alone_runs_the_project(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(outside_tmp)
    project_file(
        root,
        'suite = "suite"\nagent = "./agent.sh"\nledger = "runs.db"\nsystem = "mine"\n'
        'sandbox = "process"\njobs = 2\n',
    )
    monkeypatch.chdir(root / "suite")  # a folder below the project's: the file is found above
    result = CliRunner().invoke(main, ["run"])
    assert result.exit_code == 0, result.output
    ((run_id, count, _),) = rows(root / "runs.db")
    assert count == len(TASKS)
    assert run_id.startswith("mine-")
    # options on the command line take precedence over the file
    result = CliRunner().invoke(main, ["run", "--system", "other", "--task", "beta"])
    assert result.exit_code == 0, result.output
    assert {r[0].split("-")[0]: r[1] for r in rows(root / "runs.db")} == {"mine": 3, "other": 1}


def test_tool_trialbook_in_pyproject_is_a_project_file(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(outside_tmp)
    project_file(
        root,
        '[project]\nname = "x"\n\n[tool.trialbook]\nsuite = "suite"\nagent = "./agent.sh"\n'
        'ledger = "out/runs.db"\n',
        name="pyproject.toml",
    )
    monkeypatch.chdir(root)
    result = CliRunner().invoke(main, ["run", "--limit", "1"])
    assert result.exit_code == 0, result.output
    assert [r[1] for r in rows(root / "out" / "runs.db")] == [1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('agnet = "./agent.sh"\n', "unknown key 'agnet'"),
        ("jobs = 0\n", "jobs must be a whole number >= 1, got 0"),
        ('sandbox = "docker"\n', "sandbox must be auto, bwrap, process or container"),
        ("suite = [\n", "not a readable TOML file"),
    ],
)
def test_a_bad_project_file_is_one_line_naming_the_file_and_key(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    root = make_project(outside_tmp)
    project_file(root, text)
    monkeypatch.chdir(root)
    result = CliRunner().invoke(main, ["run"])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"trialbook: error: {root / 'trialbook.toml'}: ")
    assert message in line


def test_the_printed_resume_command_works_when_pasted(outside_tmp: Path) -> None:
    root = make_project(outside_tmp, k=2, agent=SLOW)
    project_file(root, 'suite = "suite"\nagent = "./agent.sh"\nledger = "runs.db"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIALBOOK")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "trialbook", "run", "--system", "s", "--pass-env", "HOME"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # stop once the first attempt has its row
        time.sleep(0.2)
        try:
            if (root / "runs.db").exists() and rows(root / "runs.db"):
                break
        except sqlite3.OperationalError:  # the file is there, its tables not yet (a loaded machine)
            continue
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    (line,) = [x for x in out.splitlines() if x.startswith("resume with: ")]
    command = line.removeprefix("resume with: ")
    elsewhere = root.parent  # pasted in another folder (no project file there) it still works
    done = subprocess.run(
        command, shell=True, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    ((_, count, statuses),) = rows(root / "runs.db")
    assert count == 2 * len(TASKS)
    assert set(statuses.split(",")) == {"passed"}
    # the progress of the resumed session counts the whole run: its first line is past the
    # attempts already done, and the passes include theirs
    first = next(x for x in done.stderr.splitlines() if x.startswith("["))
    done_before = int(first[1:].split("/")[0]) - 1
    assert done_before >= 1
    assert f"· {done_before + 1} passed," in first


def test_runs_lists_status_attempts_of_planned_and_pass_at_1(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from trialbook.harness import RunOptions, run_suite

    root = make_project(outside_tmp, k=2)
    ledger = root / "runs.db"
    base = {"suite": root / "suite", "ledger": ledger, "sandbox": "process"}
    run_suite(RunOptions(agent="touch done.txt", run_id="done-run", system="a", **base))
    stop = threading.Event()

    class StopAtOnce:
        def begin(self, *_: object) -> None:
            stop.set()

        def attempt(self, _: object) -> None: ...

    stopped = run_suite(
        RunOptions(agent="true", run_id="cut-run", system="b", subset="smoke", **base),
        progress=StopAtOnce(),
        stop=stop,
    )
    assert stopped.interrupted
    result = CliRunner().invoke(main, ["runs", str(ledger), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["schema"] == "trialbook.runs/1"
    by_id = {r["run_id"]: r for r in doc["runs"]}
    assert by_id["done-run"]["status"] == "finished"
    assert (by_id["done-run"]["attempts"], by_id["done-run"]["planned"]) == (6, 6)
    assert by_id["done-run"]["pass@1"] == 1.0
    assert by_id["cut-run"]["status"] == "interrupted"
    assert by_id["cut-run"]["planned"] == 4  # the smoke subset's 2 tasks, k = 2
    assert by_id["cut-run"]["attempts"] < 4
    assert by_id["cut-run"]["selection"] == "subset smoke"
    monkeypatch.chdir(root)
    project_file(root, 'ledger = "runs.db"\n')
    table = CliRunner().invoke(main, ["runs"])  # the project's ledger
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()
    assert max(len(x) for x in lines) <= 80
    assert any(x.startswith("done-run ") and "finished" in x and "6/6" in x for x in lines)
    assert any(x.startswith("cut-run ") and "interrupted" in x and "/4" in x for x in lines)
    assert "  tasks: subset smoke" in lines


def test_a_killed_run_is_interrupted_and_a_live_one_running(outside_tmp: Path) -> None:
    root = make_project(outside_tmp, k=1, agent="#!/bin/sh\nsleep 30\n")
    ledger = root / "runs.db"
    run_id = unique_run_id()
    proc = subprocess.Popen(
        [sys.executable, "-m", "trialbook", "run", str(root / "suite"), "--agent",
         str(root / "agent.sh"), "--ledger", str(ledger), "--run-id", run_id],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        status = None
        while time.monotonic() < deadline:
            time.sleep(0.3)
            if not ledger.exists():
                continue
            listed = CliRunner().invoke(main, ["runs", str(ledger), "--format", "json"])
            found = json.loads(listed.output)["runs"] if listed.exit_code == 0 else []
            if found and (status := found[0]["status"]) == "running":
                break
        assert status == "running"
    finally:
        proc.kill()
        proc.communicate()
    time.sleep(0.5)  # the watchdog removes the killed harness's scratch folder
    listed = CliRunner().invoke(main, ["runs", str(ledger), "--format", "json"])
    assert json.loads(listed.output)["runs"][0]["status"] == "interrupted"


def test_score_and_compare_mark_an_interrupted_run(outside_tmp: Path) -> None:
    import threading

    from trialbook.harness import RunOptions, run_suite

    root = make_project(outside_tmp, k=2)
    ledger = root / "runs.db"
    base = {"suite": root / "suite", "ledger": ledger, "sandbox": "process"}
    run_suite(RunOptions(agent="touch done.txt", run_id="full", **base))
    stop = threading.Event()

    class StopAfterThree:
        seen = 0

        def begin(self, *_: object) -> None: ...

        def attempt(self, _: object) -> None:
            self.seen += 1
            if self.seen == 3:
                stop.set()

    cut = run_suite(
        RunOptions(agent="sleep 0.2; touch done.txt", run_id="cut", **base),
        progress=StopAfterThree(),
        stop=stop,
    )
    done = cut.written
    assert cut.interrupted
    assert done < 6
    scored = CliRunner().invoke(main, ["score", str(ledger), "--format", "markdown"])
    assert scored.exit_code == 0, scored.output
    header = next(x for x in scored.output.splitlines() if x.startswith("### `cut`"))
    assert header.endswith(f"INTERRUPTED: {done} of 6 attempts")  # in the headline itself
    full = next(x for x in scored.output.splitlines() if x.startswith("### `full`"))
    assert "INTERRUPTED" not in full
    as_json = CliRunner().invoke(main, ["score", str(ledger), "--run", "cut", "--format", "json"])
    (run,) = json.loads(as_json.output)["runs"]
    assert run["completion"] == {
        "status": "interrupted",
        "complete": False,
        "attempts": done,
        "planned": 6,
    }
    compared = CliRunner().invoke(main, ["compare", f"{ledger}:full", f"{ledger}:cut"])
    assert compared.exit_code == 0, compared.output
    # the decision leads; the mark sits right under it, before the two runs' figures
    words = " ".join(compared.output.split())
    assert words.startswith("DECISION: ")
    warning = (
        f"WARNING: candidate run cut is INTERRUPTED: {done} of 6 attempts: compared on the "
        "attempts made so far"
    )
    assert words.index("paired tasks WARNING: candidate run cut") < words.index("candidate cut (")
    assert warning in words
