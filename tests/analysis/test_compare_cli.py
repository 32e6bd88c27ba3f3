"""`trialbook compare` and `trialbook plan` from the command line: real data, refusals, gates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scipy.stats import binom

from tests.conftest import base_row, matrix_rows, shared_path, write_jsonl
from trialbook.cli import main


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _swe_ledgers(tmp_path: Path) -> dict[str, Path]:
    data = json.loads(
        shared_path("realdata", "swe-bench-verified", "mini-swe-agent-4-systems.json").read_text()
    )
    out = {}
    for key, system in data.items():
        rows = [
            base_row(i, 0, passed=ok, k=1, system=key, dataset_id="swe-bench-verified")
            for ok, ids in ((True, system["resolved_ids"]), (False, system["unresolved_ids"]))
            for i in ids
        ]
        out[key] = write_jsonl(tmp_path / f"{key}.jsonl", rows)
    return out


@pytest.mark.parametrize(
    ("other", "table", "p"),
    [
        # realdata README (statsmodels mcnemar(exact=True)): both / only first / only second / neither
        ("20251124_mini-v1.16.0_gpt-5.1-codex", (296, 42, 34, 128), 0.422191),
        ("20250807_mini-v1.7.0_gpt-5", (296, 42, 29, 133), 0.153913),
        ("20250726_mini-v1.0.0_claude-sonnet-4-20250514", (296, 42, 28, 134), 0.119609),
    ],
)
def test_swe_bench_verified_mcnemar(
    tmp_path: Path, other: str, table: tuple[int, ...], p: float
) -> None:
    paths = _swe_ledgers(tmp_path)
    base = paths["20250802_mini-v1.0.0_claude-4-opus-20250514"]
    doc = json.loads(invoke("compare", str(base), str(paths[other]), "--format", "json").output)
    assert doc["schema"] == "trialbook.compare/1"
    m = doc["mcnemar"]
    assert (m["both"], m["only_baseline"], m["only_candidate"], m["neither"]) == table
    assert m["exact_p_value"] == pytest.approx(p, abs=5e-7)
    # the decision's own p-value is the mid-p form of the same test (first principles: the exact
    # p less half the probability of the observed table and its mirror)
    b, c = m["only_baseline"], m["only_candidate"]
    mid = p - binom.pmf(min(b, c), b + c, 0.5)
    assert doc["difference"]["p_value"] == pytest.approx(mid, abs=5e-7)
    assert m["p_value"] == doc["difference"]["p_value"]  # one p-value on the screen
    assert doc["tasks"] == 500
    assert doc["decision"] == "no detectable difference"
    assert doc["baseline"]["estimate"] == pytest.approx(338 / 500)


def _pair(
    tmp_path: Path, base: dict[str, list[int]], cand: dict[str, list[int]], **extra: Any
) -> tuple[Path, Path]:
    a = write_jsonl(
        tmp_path / "a.jsonl", matrix_rows(base, dataset_id="d1", system="old", grader_version="g1")
    )
    rows = matrix_rows(cand, dataset_id="d1", system="new", grader_version="g1")
    for r in rows:
        r.update(extra)
    return a, write_jsonl(tmp_path / "b.jsonl", rows)


def test_clear_improvement_and_gates(tmp_path: Path) -> None:
    base = {f"t{i}": [0, 0, 0, 1] for i in range(40)}
    cand = {f"t{i}": [1, 1, 1, 0] for i in range(40)}
    a, b = _pair(tmp_path, base, cand)
    doc = json.loads(invoke("compare", str(a), str(b), "--format", "json").output)
    assert doc["decision"] == "improvement"
    assert doc["difference"]["estimate"] == pytest.approx(0.5)
    assert doc["mcnemar"] is None  # several attempts: the task-clustered analysis decides
    ok = CliRunner().invoke(main, ["compare", str(a), str(b), "--gate", "require-improvement"])
    assert ok.exit_code == 0
    backwards = CliRunner().invoke(
        main, ["compare", str(b), str(a), "--gate", "fail-on-regression"]
    )
    assert backwards.exit_code == 1
    assert "regression" in backwards.output


def test_strata_get_holm_adjusted_p_values(tmp_path: Path) -> None:
    base = {f"t{i}": [0, 1] for i in range(30)}
    cand = {f"t{i}": [1, 1] if i < 15 else [0, 1] for i in range(30)}
    a, b = _pair(tmp_path, base, cand)
    for path in (a, b):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for r in rows:
            r["stratum"] = "repair" if int(r["task_id"][1:]) < 15 else "greenfield"
        write_jsonl(path, rows)
    doc = json.loads(invoke("compare", str(a), str(b), "--format", "json").output)
    strata = {s["stratum"]: s for s in doc["strata"]}
    assert set(strata) == {"repair", "greenfield"}
    assert strata["greenfield"]["estimate"] == 0.0
    ps = sorted(s["p_value"] for s in strata.values())
    assert sorted(s["p_holm"] for s in strata.values()) == pytest.approx(
        [2 * ps[0], max(2 * ps[0], ps[1])]
    )


@pytest.mark.parametrize(
    ("extra", "args", "message"),
    [
        ({"dataset_id": "d2"}, [], "different suites"),
        ({"grader_version": "g2"}, [], "grader_version differs"),
        ({}, ["--metric", "pass@9"], "k=9 exceeds"),
        ({}, ["--metric", "accuracy"], "--metric must be pass@K, pass^K or within@K"),
    ],
)
def test_refusals(tmp_path: Path, extra: dict[str, Any], args: list[str], message: str) -> None:
    a, b = _pair(tmp_path, {"t": [1, 0]}, {"t": [1, 1]}, **extra)
    result = CliRunner().invoke(main, ["compare", str(a), str(b), *args])
    assert result.exit_code == 2
    assert message in result.output


def test_allowed_differences_are_said_first(tmp_path: Path) -> None:
    a, b = _pair(
        tmp_path,
        {"t": [1, 0], "u": [0, 0]},
        {"t": [1, 1], "u": [0, 1]},
        dataset_id="d2",
        grader_version="g2",
    )
    out = invoke(
        "compare", str(a), str(b), "--allow-different-suites", "--allow-grader-change"
    ).output
    # the decision leads; what was allowed comes straight under it, before the figures
    words = " ".join(out.split())
    assert words.startswith("DECISION: ")
    assert "paired tasks WARNING: NOT THE SAME SUITE" in words
    assert words.index("WARNING: NOT THE SAME SUITE") < words.index("candidate b")
    assert "grader_version differs" in out


def test_runs_inside_one_ledger_and_dropped_tasks(tmp_path: Path) -> None:
    rows = [dict(r, run_id="r1", system="s") for r in matrix_rows({"a": [1], "b": [0], "c": [1]})]
    rows += [dict(r, run_id="r2", system="s") for r in matrix_rows({"a": [1], "b": [1]})]
    path = write_jsonl(tmp_path / "l.jsonl", rows)
    many = CliRunner().invoke(main, ["compare", str(path), str(path)])
    assert many.exit_code == 2
    assert "name one as LEDGER:RUN_ID" in many.output
    doc = json.loads(invoke("compare", f"{path}:r1", f"{path}:r2", "--format", "json").output)
    assert doc["tasks"] == 2
    assert doc["dropped"] == {"baseline_only": 1, "candidate_only": 0}
    assert any("other run(s) of this candidate system" in w for w in doc["warnings"])
    # without a recorded system, runs cannot be matched: no re-run is claimed
    bare = [{k: v for k, v in r.items() if k != "system"} for r in rows]
    path = write_jsonl(tmp_path / "bare.jsonl", bare)
    doc = json.loads(invoke("compare", f"{path}:r1", f"{path}:r2", "--format", "json").output)
    assert doc["candidate"]["earlier_runs"] == 0


def test_plan_json_contract() -> None:
    doc = json.loads(
        invoke(
            "plan",
            "--tasks",
            "500",
            "--runs",
            "1",
            "--baseline",
            "0.5",
            "--effect",
            "0.03",
            "--agreement",
            "0.92",
            "--format",
            "json",
        ).output
    )
    for key in ("se_unpaired", "halfwidth", "mde_unpaired", "se_paired", "mde_paired", "power"):
        assert isinstance(doc[key], float), key
    bad = CliRunner().invoke(
        main, ["plan", "--tasks", "1", "--baseline", "0.5", "--effect", "0.03"]
    )
    assert bad.exit_code == 2
    assert "--tasks must be a whole number >= 2" in bad.output


def test_plan_from_pilot(tmp_path: Path) -> None:
    rows = [dict(r, run_id="a") for r in matrix_rows({f"t{i}": [i % 2, 1, 0] for i in range(20)})]
    rows += [
        dict(r, run_id="b") for r in matrix_rows({f"t{i}": [1, i % 3 == 0, 0] for i in range(20)})
    ]
    path = write_jsonl(tmp_path / "pilot.jsonl", rows)
    doc = json.loads(
        invoke(
            "plan",
            "--tasks",
            "200",
            "--runs",
            "3",
            "--effect",
            "0.05",
            "--pilot",
            str(path),
            "--format",
            "json",
        ).output
    )
    assert doc["variance_source"].startswith("pilot")
    assert doc["agreement"] == pytest.approx(0.5)  # first attempts agree on the odd-numbered tasks
    assert doc["se_paired"] is not None


def _runs_ledger(path: Path, runs: dict[str, list[int]]) -> Path:
    rows = []
    for run_id, outcomes in runs.items():
        for i, ok in enumerate(outcomes):
            rows.append(base_row(f"t{i}", 0, passed=bool(ok), k=1, run_id=run_id, dataset_id="d"))
    return write_jsonl(path, rows)


def test_compare_of_one_ledger_of_two_runs_compares_them_earlier_first(tmp_path: Path) -> None:
    # as after `make demo`: one ledger, two runs; the earlier run is the baseline
    ledger = _runs_ledger(tmp_path / "l.jsonl", {"old": [1, 0, 0, 1, 0], "new": [1, 1, 0, 1, 1]})
    runner = CliRunner()
    alone = runner.invoke(main, ["compare", str(ledger), "--format", "json"])
    assert alone.exit_code == 0, alone.output
    named = invoke("compare", f"{ledger}:old", f"{ledger}:new", "--format", "json")
    doc = json.loads(alone.stdout)
    assert doc == json.loads(named.output)
    assert (doc["baseline"]["run_id"], doc["candidate"]["run_id"]) == ("old", "new")
    assert doc["difference"]["estimate"] == pytest.approx(2 / 5)  # t1 and t4 won, none lost
    assert f"comparing baseline {ledger}:old (the earlier run) with candidate {ledger}:new" in (
        alone.stderr
    )


def test_compare_of_one_ledger_without_two_runs_says_the_command_to_type(tmp_path: Path) -> None:
    three = _runs_ledger(tmp_path / "3.jsonl", {"a": [1, 0], "b": [0, 1], "c": [1, 1]})
    out = invoke("compare", str(three))
    assert out.exit_code == 2
    assert out.output.strip() == (
        f"trialbook: error: {three} holds 3 runs (a, b, c): name two, e.g. "
        f"trialbook compare {three}:a {three}:b"
    )
    one = _runs_ledger(tmp_path / "1.jsonl", {"a": [1, 0]})
    out = invoke("compare", str(one))
    assert out.exit_code == 2
    assert f"{one} holds one run (a): give CANDIDATE" in out.output
    out = invoke("compare", f"{one}:a")
    assert out.exit_code == 2
    assert "give CANDIDATE too" in out.output


def test_the_order_rows_finished_in_changes_no_figure(tmp_path: Path) -> None:
    # parallel workers finish tasks in another order on every run: the same attempts listed in
    # another order must give the same comparison, to the last digit (above 16 tasks the test draws
    # random sign patterns and the paired bootstrap resamples tasks: both met them in row order)
    import numpy as np

    rng = np.random.default_rng(11)
    tasks = [f"t{i:02d}" for i in range(21)]
    runs = {
        name: matrix_rows({t: rng.binomial(1, rate, 5).tolist() for t in tasks}, run_id=name)
        for name, rate in (("base", 0.45), ("cand", 0.6))
    }
    outputs = []
    for order in ("as-is", "reversed"):
        paths = []
        for name, rows in runs.items():
            listed = rows if order == "as-is" else rows[::-1]
            paths.append(str(write_jsonl(tmp_path / f"{name}-{order}.jsonl", listed)))
        result = invoke("compare", *paths, "--format", "json")
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        data.pop("baseline"), data.pop("candidate")  # they name their files
        outputs.append(data)
    assert outputs[0]["difference"]["ci_method"].startswith("sign-flip test, ")
    assert outputs[0] == outputs[1]


def test_run_ids_holding_colons_are_compared_as_themselves(tmp_path: Path) -> None:
    # a run id may hold colons (org:model:v2, a URL): LEDGER:RUN splits at the ledger's own end,
    # not at the last colon ("LEDGER:org:model" is no file)
    rows = [
        *matrix_rows({f"t{i}": [0] for i in range(6)}, run_id="org:model:v2"),
        *matrix_rows({f"t{i}": [1] for i in range(6)}, run_id="org:model:v3"),
    ]
    ledger = str(write_jsonl(tmp_path / "l.jsonl", rows))
    named = invoke(
        "compare", f"{ledger}:org:model:v2", f"{ledger}:org:model:v3", "--format", "json"
    )
    assert named.exit_code == 0, named.output
    data = json.loads(named.output)
    assert (data["baseline"]["run_id"], data["candidate"]["run_id"]) == (
        "org:model:v2",
        "org:model:v3",
    )
    alone = CliRunner().invoke(main, ["compare", ledger, "--format", "json"])
    assert alone.exit_code == 0, alone.output
    assert json.loads(alone.stdout)["candidate"]["run_id"] == "org:model:v3"
    missing = invoke("compare", f"{tmp_path}/nope.db:org:model:v2", ledger)
    assert missing.exit_code == 2
    assert "nope.db" in missing.output
