"""Renderers for suites (freeze, check), grader-check and run summaries. No logic beyond layout."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trialbook.report._wrap import wrap

if TYPE_CHECKING:  # renderers only read attributes: no need to import the harness to print
    from trialbook.harness import GraderCheck, RunResult
    from trialbook.suite import Lock, LockCheck

__all__ = [
    "GRADER_CHECK_SCHEMA",
    "SUITE_CHECK_SCHEMA",
    "grader_check_text",
    "grader_check_to_dict",
    "lock_check_text",
    "lock_check_to_dict",
    "lock_text",
    "run_text",
]

GRADER_CHECK_SCHEMA = "trialbook.grader_check/1"
SUITE_CHECK_SCHEMA = "trialbook.suite_check/1"


def lock_text(lock: Lock, path: str, *, width: int = 80) -> str:
    """What ``suite freeze`` prints on a terminal, in lines that fit ``width``."""
    lines = [
        f"suite {lock.name}: {len(lock.task_hashes)} tasks, k = {lock.budget['k']}, "
        f"timeout {lock.budget['timeout_s']:g} s",
        f"dataset_id {lock.dataset_id}",
        f"lock written to {path}",
    ]
    if lock.quarantined:
        lines.append(f"quarantined (oracle leak; never run for score): {len(lock.quarantined)}")
        for task, reasons in sorted(lock.quarantined.items()):
            for reason in reasons:
                lines.append(f"  {task}: {reason}")
    else:
        lines.append("no oracle leak found")
    return wrap("\n".join(lines), width)


def lock_check_text(check: LockCheck, root: str, *, width: int = 80) -> str:
    """What ``suite check`` prints, in lines that fit ``width``."""
    if check.matches:
        return wrap(
            f"{root}: the lock matches the files (dataset_id {check.current.dataset_id})", width
        )
    lines = [f"{root}: the lock does not match the files"]
    lines += [f"  {c}" for c in check.changed]
    if check.locked_id is not None:
        lines.append(f"  locked {check.locked_id}, files now {check.current.dataset_id}")
        lines.append(f"  freeze again with 'trialbook suite freeze {root}' (a new dataset_id)")
    return wrap("\n".join(lines), width)


def lock_check_to_dict(check: LockCheck) -> dict[str, Any]:
    """``trialbook.suite_check/1``."""
    return {
        "schema": SUITE_CHECK_SCHEMA,
        "matches": check.matches,
        "locked_dataset_id": check.locked_id,
        "dataset_id": check.current.dataset_id,
        "changed": list(check.changed),
    }


def grader_check_to_dict(check: GraderCheck) -> dict[str, Any]:
    """``trialbook.grader_check/1`` (docs/cli.md, "grader-check")."""
    return {
        "schema": GRADER_CHECK_SCHEMA,
        "suite": check.suite,
        "grader_version": check.grader_version,
        "sandbox": check.tier,
        "false_accepts": check.false_accepts,
        "false_rejects": check.false_rejects,
        "check_false_accepts": check.check_false_accepts,
        "check_false_rejects": check.check_false_rejects,
        "failed": check.failed,
        "unvalidated": list(check.unvalidated),
        "graders": [
            {
                "grader": grader,
                "grader_version": check.grader_version,
                "tasks": tasks,
                "cases": n,
                "false_accepts": fa,
                "false_rejects": fr,
            }
            for grader, (tasks, n, fa, fr) in check.per_grader().items()
        ],
        "tasks": {
            task: {"cases": n, "false_accepts": fa, "false_rejects": fr}
            for task, (n, fa, fr) in check.per_task().items()
        },
        "checks": [
            {
                "task_id": task,
                "check": name,
                "samples": n,
                "false_accepts": fa,
                "false_rejects": fr,
            }
            for (task, name), (n, fa, fr) in check.per_check().items()
        ],
        "cases": [
            {
                "task_id": c.task_id,
                "case": c.case,
                "should_pass": c.should_pass,
                "passed": c.passed,
                "verdict": c.kind or "ok",
                "note": c.note,
                "checks": None
                if c.checks is None
                else {n: {"passed": v.passed, "reason": v.reason} for n, v in c.checks.items()},
                "expected": c.expected,
                "check_errors": [{"check": n, "verdict": k} for n, k in c.check_errors()],
            }
            for c in check.cases
        ],
    }


def grader_check_text(check: GraderCheck, *, width: int = 80) -> str:
    """What ``grader-check`` prints on a terminal, in lines that fit ``width``."""
    lines = [
        f"grader check of suite {check.suite} (grader version {check.grader_version or 'not recorded'}, "
        f"{check.tier} sandbox)",
        f"{'task':<28} {'cases':>5} {'false accepts':>14} {'false rejects':>14}",
    ]
    for task, (n, fa, fr) in check.per_task().items():
        lines.append(f"{task:<28} {n:>5} {fa:>14} {fr:>14}")
    lines.append(
        f"{'overall':<28} {len(check.cases):>5} {check.false_accepts:>14} {check.false_rejects:>14}"
    )
    lines += ["", f"{'tasks':>5} {'false accepts':>14} {'false rejects':>14}  grader"]
    for grader, (tasks, _, fa, fr) in check.per_grader().items():
        lines.append(f"{tasks:>5} {fa:>14} {fr:>14}  {grader}")
    per_check = check.per_check()
    if per_check:
        lines += ["", f"{'samples':>7} {'false accepts':>14} {'false rejects':>14}  task: check"]
        for (task, name), (n, fa, fr) in per_check.items():
            lines.append(f"{n:>7} {fa:>14} {fr:>14}  {task}: {name}")
    for c in check.cases:
        if not c.ok:
            want = "pass" if c.should_pass else "fail"
            note = f" ({c.note})" if c.note else ""
            lines.append(f"  {c.kind}: {c.task_id} {c.case} should {want}{note}")
        for name, kind in c.check_errors():
            want = "pass" if (c.expected or {})[name] else "fail"
            got = (c.checks or {}).get(name)
            saw = "not reported" if got is None else "passed" if got.passed else "failed"
            why = f": {got.reason}" if got is not None and got.reason else ""
            lines.append(
                f"  {kind} of check {name!r}: {c.task_id} {c.case} should {want}, {saw}{why}"
            )
    if check.unvalidated:
        every = {c.task_id for c in check.cases}
        lines += [
            "",
            f"NOT VALIDATED: {len(check.unvalidated)} of {len(every)} task(s) have no known-good "
            "sample (reference/ or references/<name>/): false rejects are not measured there, so "
            "a grader that fails everything looks clean: " + ", ".join(check.unvalidated),
        ]
    return wrap("\n".join(lines), width)


def run_text(result: RunResult, program: str = "trialbook", *, width: int = 80) -> str:
    """The closing lines of ``trialbook run``, in lines that fit ``width``; ``program``: how to
    call trialbook in the resume command printed after an interruption (the exact command to
    paste: its line is never broken, whatever the width)."""
    state = "interrupted" if result.interrupted else "finished"
    lines = [
        f"run {result.run_id} {state}: {result.written} of {result.planned} attempts written to "
        f"{result.ledger} ({result.tier} sandbox)"
    ]
    if result.cut_off:
        lines.append(f"{result.cut_off} attempt(s) cut off by an earlier stop were run again")
    if result.reruns:
        lines.append(f"{result.reruns} lost attempt(s) run again, each as a new row (retry)")
    if result.refused_unattributed:
        lines.append(
            f"the model gateway refused {result.refused_unattributed} call(s) at the address of "
            "no open attempt (a guessed address, or an attempt that had ended): no row holds them"
        )
    if result.interrupted:
        import shlex

        text = wrap("\n".join(lines), width)
        return f"{text}\nresume with: {program} {shlex.join(result.resume_command)}"
    return wrap("\n".join(lines), width)
