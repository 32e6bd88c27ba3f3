"""Shared fixtures: where the reference vectors and real published data live, and ledger writers."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TRIALBOOK_SHARED", ROOT.parent / "shared"))


def shared_path(*parts: str) -> Path:
    """A file under ../shared; skipped (with the reason) only when ../shared is absent outside CI."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing, and CI must run the reference and real-data tests")
        pytest.skip(f"{path} is absent (the shared reference material sits beside the repo)")
    return path


@pytest.fixture(scope="session")
def vectors() -> dict[str, Any]:
    """../shared/reference/stats_vectors.json, computed by stats_vectors.py (scipy/statsmodels)."""
    data: dict[str, Any] = json.loads(shared_path("reference", "stats_vectors.json").read_text())
    return data


def base_row(task: str, attempt: int, *, passed: bool, k: int = 5, **extra: Any) -> dict[str, Any]:
    """A valid ledger row with the nine required fields."""
    row: dict[str, Any] = {
        "task_id": task,
        "attempt_index": attempt,
        "k_budget": k,
        "timeout_s": 60.0,
        "elapsed_s": 1.5,
        "passed": passed,
        "timed_out": False,
        "helper_calls": 0,
        "oracle_leak": False,
    }
    row.update(extra)
    return row


def matrix_rows(successes: Mapping[str, Iterable[int]], **extra: Any) -> list[dict[str, Any]]:
    """Rows from {task: [0/1 per attempt]}."""
    rows = []
    for task, outcomes in successes.items():
        seq = list(outcomes)
        for i, ok in enumerate(seq):
            rows.append(base_row(task, i, passed=bool(ok), k=len(seq), **extra))
    return rows


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def make_suite(
    root: Path,
    tasks: Mapping[str, Mapping[str, Any]],
    *,
    k: int = 2,
    timeout_s: float = 10,
    extra: str = "",
    freeze: bool = True,
) -> Path:
    """Write a suite folder: ``tasks`` maps id -> {prompt, grader, fixture: {path: text},
    oracle: {path: text}, toml: extra task.toml lines}; freezes it unless told not to."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "suite.toml").write_text(
        f'name = "{root.name}"\nk = {k}\ntimeout_s = {timeout_s}\ngrader_version = "test-1"\n{extra}'
    )
    for task_id, spec in tasks.items():
        tdir = root / "tasks" / task_id
        (tdir / "fixture").mkdir(parents=True, exist_ok=True)
        lines = [
            f"prompt = {json.dumps(spec.get('prompt', 'do the task'))}",
            f"grader = {json.dumps(spec.get('grader', 'true'))}",
        ]
        lines += list(spec.get("toml", []))
        (tdir / "task.toml").write_text("\n".join(lines) + "\n")
        for folder in ("fixture", "oracle", "reference"):
            for rel, text in spec.get(folder, {}).items():
                path = tdir / folder / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        for name, files in spec.get("decoys", {}).items():
            for rel, text in files.items():
                path = tdir / "decoys" / name / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    if freeze:
        from trialbook.suite import freeze as freeze_suite
        from trialbook.suite import load_suite, write_lock

        suite = load_suite(root)
        write_lock(suite, freeze_suite(suite))
    return root
