"""`plan` states its assumptions and does not credit extra runs against a disagreement it cannot split.

Formulas (docs/statistics.md, "Planning"; Miller 2024, arXiv 2411.00640): with ψ = 1 − agreement the
paired per-task variance at R attempts is (ψ − w) + w/R, w the part of ψ that is attempt noise.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import base_row, write_jsonl
from trialbook.analysis import plan_from_options
from trialbook.cli import main
from trialbook.errors import ArgumentError
from trialbook.stats import plan_design


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_runs_with_only_an_agreement_do_not_assume_all_disagreement_is_noise() -> None:
    # T = 500, agreement 0.92: ψ = 0.08. The agreement cannot tell attempt noise from task-level
    # disagreement, so 5 runs are credited nothing: SE = sqrt(0.08/500) = 1.26 pp, as with one run.
    # The old code took w = min(2σ_w², ψ) = ψ with the assumed σ_w² = 0.125 and printed
    # sqrt(0.08/5/500) = 0.57 pp.
    p = plan_design(tasks=500, attempts=5, baseline=0.5, effect=0.03, agreement=0.92)
    one = plan_design(tasks=500, attempts=1, baseline=0.5, effect=0.03, agreement=0.92)
    assert p.se_paired == pytest.approx(math.sqrt(0.08 / 500))
    assert p.se_paired == pytest.approx(one.se_paired)
    assert p.paired_noise_share == 0.0
    # the optimistic bound is reported beside it: all of ψ attempt noise
    assert p.se_paired_all_noise == pytest.approx(math.sqrt(0.08 / 5 / 500))
    assert any("none of the discordant share" in a for a in p.assumptions)


def test_a_known_within_variance_is_credited() -> None:
    # σ_w² = 0.02: w = 2σ_w² = 0.04 of ψ = 0.08 is noise; per task 0.04 + 0.04/5 = 0.048
    p = plan_design(
        tasks=500, attempts=5, baseline=0.5, effect=0.03, agreement=0.92, within_var=0.02
    )
    assert p.se_paired == pytest.approx(math.sqrt(0.048 / 500))
    assert p.paired_noise_share == pytest.approx(0.5)


def test_a_within_variance_too_large_for_the_agreement_is_capped_and_said() -> None:
    # σ_w² = 0.1 would make 2σ_w² = 0.2 > ψ = 0.08: all of ψ is taken as noise, and said so
    p = plan_design(
        tasks=500, attempts=5, baseline=0.5, effect=0.03, agreement=0.92, within_var=0.1
    )
    assert p.se_paired == pytest.approx(math.sqrt(0.08 / 5 / 500))
    assert p.se_paired == pytest.approx(p.se_paired_all_noise)
    assert any("implies more disagreement" in a for a in p.assumptions)


def test_the_documented_check_values_hold() -> None:
    # docs: T = 500, R = 1, P = 0.5: SE 2.24 pp, ±4.38 pp, unpaired MDE 8.86 pp, paired SE √40/500
    p = plan_design(tasks=500, attempts=1, baseline=0.5, effect=0.03, agreement=0.92)
    assert 100 * p.se_unpaired == pytest.approx(2.236, abs=1e-3)
    assert 100 * p.halfwidth == pytest.approx(4.383, abs=1e-3)
    assert 100 * p.mde_unpaired == pytest.approx(8.86, abs=5e-3)
    assert p.se_paired == pytest.approx(math.sqrt(40) / 500)


def test_an_agreement_that_leaves_too_few_discordant_tasks_is_refused() -> None:
    # a difference of pass rates comes only from discordant tasks: |δ| <= ψ; 0.99 leaves 0.01 < 0.03
    with pytest.raises(ArgumentError) as info:
        plan_design(tasks=500, attempts=1, baseline=0.5, effect=0.03, agreement=0.99)
    assert info.value.argument == "agreement"
    result = run(
        "plan", "--tasks", "500", "--baseline", "0.5", "--effect", "0.03", "--agreement", "0.99"
    )
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "error: --agreement 0.99 leaves" in lines[0], result.output


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_every_format_states_the_assumptions(fmt: str) -> None:
    result = run(
        "plan", "--tasks", "500", "--runs", "5", "--baseline", "0.5", "--effect", "0.03",
        "--agreement", "0.92", "--format", fmt,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    if fmt == "json":
        doc = json.loads(result.output)
        text = "\n".join(doc["assumptions"])
        assert doc["se_paired_all_noise"] == pytest.approx(math.sqrt(0.016 / 500))
    else:
        text = result.output
        assert "assumes:" in text
        assert "optimistic bound" in text
    assert "normal approximation" in text
    assert "variance split: between tasks 0.125, within tasks 0.125" in text
    assert "split equally" in text
    assert "none of the discordant share" in text


def _single_attempt_pilot(tmp_path: Path) -> Path:
    # 10 tasks, one attempt each in two runs, 5 passes each; they disagree on t0 (only the baseline
    # passes) and t9 (only the candidate) -> agreement 8/10
    base = [i < 5 for i in range(10)]
    cand = [False, *base[1:9], True]
    rows = [
        base_row(f"t{i}", 0, passed=ok, k=1, run_id=run_id, system=run_id)
        for run_id, outcomes in (("base", base), ("cand", cand))
        for i, ok in enumerate(outcomes)
    ]
    return write_jsonl(tmp_path / "pilot.jsonl", rows)


def test_a_paired_pilot_of_single_attempt_runs_is_accepted(tmp_path: Path) -> None:
    pilot = _single_attempt_pilot(tmp_path)
    p = plan_from_options(tasks=200, attempts=3, baseline=None, effect=0.1, pilot=pilot)
    assert p.agreement == pytest.approx(0.8)
    assert p.baseline == pytest.approx(0.5)  # both runs pass 5 of 10
    # no variance split from one attempt per task: the assumed one, named as such
    assert p.between_var == p.within_var == pytest.approx(0.125)
    assert "one attempt per task cannot separate" in p.variance_source
    assert p.paired_noise_share == 0.0  # assumed split: no credit for the extra attempts
    assert p.se_paired == pytest.approx(math.sqrt(0.2 / 200))
    result = run("plan", "--tasks", "200", "--runs", "3", "--effect", "0.1", "--pilot", str(pilot))
    assert result.exit_code == 0, result.output
    assert "one attempt per task cannot separate" in result.output


@pytest.mark.parametrize(
    ("between", "within", "larger"),
    [(0.026, 0.198, "within-task"), (0.2, 0.05, "between-task")],
)
def test_the_spending_sentence_follows_the_variance_numbers(
    between: float, within: float, larger: str
) -> None:
    # SE^2 of one score = between / T + within / (T R): 2x tasks halves both parts, 2x attempts
    # only the within part (so tasks win whenever between > 0); which part is larger decides
    # whether more attempts come close. The demo's pilot (0.026 between, 0.198 within at 5
    # attempts) was told "tasks win when between-task variance dominates".
    t, r = 21, 5
    args = ["plan", "--tasks", str(t), "--runs", str(r), "--baseline", "0.6", "--effect", "0.1"]
    args += ["--between-var", str(between), "--within-var", str(within)]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    flat = " ".join(out.output.split())  # the sentence wraps at 80 columns
    line = flat[flat.index("adding tasks") : flat.index("assumes:")]
    se_tasks = math.sqrt(between / (2 * t) + within / (2 * t * r))
    se_attempts = math.sqrt(between / t + within / (t * 2 * r))
    assert f"(SE {100 * se_tasks:.2f} against {100 * se_attempts:.2f} pp)" in line
    assert f"within-task part ({within:.4f} / {r} attempts = {within / r:.4f})" in line
    assert f"the {larger} part is the larger here" in line
    assert "dominates" not in line
