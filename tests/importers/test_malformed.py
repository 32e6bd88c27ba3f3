"""Every source's malformed files: exit 2, one line per problem naming file, record and field, and
nothing written to the ledger (not even the file, when the import would have created it)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import shared_path
from tests.importers.conftest import (
    need_inspect,
    run,
    swe_report,
    tau2_results,
    tau_bench,
    terminal_bench,
    write,
)


def refused(tmp_path: Path, source: str, *paths: Path) -> list[str]:
    """Import ``paths``; require exit 2 and no ledger; the error lines."""
    db = tmp_path / "out.db"
    result = run("import", source, *map(str, paths), "--ledger", str(db))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert not db.exists()
    assert not Path(str(db) + "-wal").exists()
    lines = [line for line in result.output.splitlines() if line]
    assert lines
    assert all(line.startswith("trialbook: error: ") for line in lines), lines
    return lines


VALID: dict[str, Callable[[], Any]] = {
    "tau-bench": lambda: tau_bench({0: [1.0, 0.0], 1: [0.0, 0.0]}),
    "terminal-bench": lambda: terminal_bench({"a": [True, False], "b": [False, None]}),
    "swe-bench": lambda: swe_report(["x__x-1"], ["x__x-2"]),
    "tau2-bench": lambda: tau2_results([("1", 0, 1.0, "user_stop"), ("1", 1, 0.0, "agent_stop")]),
}


@pytest.mark.parametrize("source", sorted(VALID))
def test_a_valid_file_imports(tmp_path: Path, source: str) -> None:
    path = write(tmp_path / "good.json", VALID[source]())
    db = tmp_path / "out.db"
    result = run("import", source, str(path), "--ledger", str(db))
    assert result.exit_code == 0, result.output
    assert db.exists()


@pytest.mark.parametrize("source", sorted(VALID))
def test_truncated(tmp_path: Path, source: str) -> None:
    text = json.dumps(VALID[source]())
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2])
    (line,) = refused(tmp_path, source, path)
    assert str(path) in line
    assert "not valid JSON (line 1, column" in line


@pytest.mark.parametrize(
    ("source", "mutate", "where", "field"),
    [
        ("tau-bench", lambda d: d[1].update(reward="1"), "record 2 (task '0')", "'reward'"),
        ("tau-bench", lambda d: d[2].update(trial=1.5), "record 3 (task '1')", "'trial'"),
        ("tau-bench", lambda d: d[0].update(task_id=[1]), "record 1", "'task_id'"),
        (
            "terminal-bench",
            lambda d: d["results"][1].update(is_resolved="yes"),
            "results entry 2 (task 'a')",
            "'is_resolved'",
        ),
        (
            "terminal-bench",
            lambda d: d["results"][0].update(total_input_tokens=-3),
            "results entry 1 (task 'a')",
            "'total_input_tokens'",
        ),
        (
            "terminal-bench",
            lambda d: d["results"][2].update(trial_name="b-run"),
            "results entry 3 (task 'b')",
            "'trial_name'",
        ),
        ("swe-bench", lambda d: d.update(total_instances="2"), "the report", "'total_instances'"),
        (
            "tau2-bench",
            lambda d: d["simulations"][1].update(duration="60"),
            "simulation 2 (task '1')",
            "'duration'",
        ),
        (
            "tau2-bench",
            lambda d: d["simulations"][0].update(termination_reason="gave_up"),
            "simulation 1 (task '1')",
            "'termination_reason'",
        ),
        ("swe-bench", lambda d: d.update(resolved_ids=[7]), "the report", "'resolved_ids'"),
    ],
)
def test_wrong_types(
    tmp_path: Path, source: str, mutate: Callable[[Any], None], where: str, field: str
) -> None:
    doc = VALID[source]()
    mutate(doc)
    path = write(tmp_path / "bad.json", doc)
    (line,) = refused(tmp_path, source, path)
    assert f"{path}: {where}: field {field}" in line, line


@pytest.mark.parametrize(
    ("source", "mutate", "expected"),
    [
        ("tau-bench", lambda d: d[1].pop("reward"), "record 2 (task '0'): field 'reward': missing"),
        ("tau-bench", lambda d: d[3].pop("trial"), "record 4 (task '1'): field 'trial': missing"),
        (
            "terminal-bench",
            lambda d: d["results"][3].pop("is_resolved"),
            "results entry 4 (task 'b'): field 'is_resolved': missing",
        ),
        ("terminal-bench", lambda d: d.pop("results"), "the file: field 'results': missing"),
        (
            "tau2-bench",
            lambda d: d["simulations"][0].pop("trial"),
            "simulation 1 (task '1'): field 'trial': missing",
        ),
        (
            "tau2-bench",
            lambda d: d["info"].pop("num_trials"),
            "the results: info: field 'num_trials': missing",
        ),
        (
            "swe-bench",
            lambda d: d.pop("unresolved_ids"),
            "the report: field 'unresolved_ids': missing",
        ),
    ],
)
def test_missing_keys(
    tmp_path: Path, source: str, mutate: Callable[[Any], None], expected: str
) -> None:
    doc = VALID[source]()
    mutate(doc)
    path = write(tmp_path / "bad.json", doc)
    lines = refused(tmp_path, source, path)
    assert any(f"{path}: {expected}" in line for line in lines), lines


def test_swe_bench_denominator_must_match_the_ids(tmp_path: Path) -> None:
    doc = swe_report(["a"], ["b"])
    doc["total_instances"] = 3  # one instance named by no list: it cannot be given a row
    path = write(tmp_path / "r.json", doc)
    (line,) = refused(tmp_path, "swe-bench", path)
    assert "the id lists name 2 distinct instances, but the denominator is 3" in line


@pytest.mark.parametrize("source", sorted(set(VALID) - {"tau2-bench"}))
def test_a_folder_of_mixed_files(tmp_path: Path, source: str) -> None:
    folder = tmp_path / "job"
    folder.mkdir()
    write(folder / "a.json", VALID[source]())
    other = next(s for s in sorted(VALID) if s != source)
    write(folder / "b.json", VALID[other]())  # another harness's file in the same folder
    lines = refused(tmp_path, source, folder)
    assert any(str(folder / "b.json") in line for line in lines), lines


def test_inspect_truncated_and_foreign(tmp_path: Path) -> None:
    need_inspect()
    real = shared_path("realdata", "inspect", "flaky_20x5.eval")
    cut = tmp_path / "cut.eval"
    cut.write_bytes(real.read_bytes()[: real.stat().st_size // 2])
    (line,) = refused(tmp_path, "inspect", cut)
    assert str(cut) in line
    assert "not a readable Inspect log" in line
    fake = write(tmp_path / "fake.json", {"results": []})
    (line,) = refused(tmp_path, "inspect", fake)
    assert str(fake) in line
    assert "not a readable Inspect log" in line


def test_inspect_wrong_type_and_missing_key_in_a_json_log(tmp_path: Path) -> None:
    log_module = need_inspect("inspect_ai.log")
    real = shared_path("realdata", "inspect", "flaky_20x5.eval")
    log = log_module.read_eval_log(real)
    good = tmp_path / "log.json"
    log_module.write_eval_log(log, str(good), format="json")
    doc = json.loads(good.read_text())
    doc["samples"][3]["epoch"] = "two"
    bad = write(tmp_path / "bad.json", doc)
    (line,) = refused(tmp_path, "inspect", bad)
    assert str(bad) in line
    assert "epoch" in line
    doc = json.loads(good.read_text())
    del doc["eval"]
    missing = write(tmp_path / "missing.json", doc)
    (line,) = refused(tmp_path, "inspect", missing)
    assert str(missing) in line
    assert "eval" in line


def test_inspect_folder_of_mixed_files(tmp_path: Path) -> None:
    need_inspect()
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(shared_path("realdata", "inspect", "flaky_20x5.eval"), folder / "a.eval")
    write(folder / "b.json", tau_bench({0: [1.0]}))
    not_inspect, hint = refused(tmp_path, "inspect", folder)
    assert str(folder / "b.json") in not_inspect
    assert hint.endswith(
        f"{folder / 'b.json'}: read as inspect, but it looks like tau-bench: try --source tau-bench"
    )


def test_tau2_directory_format_with_a_foreign_file(tmp_path: Path) -> None:
    doc = tau2_results([("1", 0, 1.0, "user_stop"), ("1", 1, 0.0, "agent_stop")])
    folder = tmp_path / "run"
    (folder / "simulations").mkdir(parents=True)
    for sim in doc.pop("simulations"):
        write(folder / "simulations" / f"{sim['id']}.json", sim)
    write(folder / "results.json", doc)
    db = tmp_path / "ok.db"
    assert run("import", "tau2-bench", str(folder), "--ledger", str(db)).exit_code == 0
    write(folder / "simulations" / "zz.json", tau_bench({0: [1.0]}))  # not a simulation
    lines = refused(tmp_path, "tau2-bench", folder)
    assert any(str(folder / "simulations" / "zz.json") in line for line in lines), lines
