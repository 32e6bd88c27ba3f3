"""SWE-bench: the evaluation harness's run report, and the leaderboard's per-instance lists.

The run report (``swebench.harness.run_evaluation`` writes ``<model>.<run_id>.json``) counts
``total_instances`` and lists ids: ``resolved_ids``, ``unresolved_ids``, ``error_ids`` (the patch did
not apply, the tests timed out or crashed), ``empty_patch_ids``, ``incomplete_ids`` (no evaluation
finished) and, where the report has it, ``infra_failure_ids``. One attempt per instance, with
``total_instances`` as the denominator: resolved passes; an infrastructure failure is an
infrastructure error; every other instance fails, and the errors, empty patches and unfinished
instances are each counted in a note. The leaderboard's per-instance format (``per_instance_details``
of swe-bench.github.io's leaderboards, one object per system with ``resolved_ids`` and
``unresolved_ids`` and ``n_instances``) is one run per system; the site's ``leaderboards.json``
(``_swebench_site``) one run per submission with per-instance details. None records a time limit, a
duration, whether the agent timed out, helper calls or oracle leaks: not recorded.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from trialbook.errors import ArgumentError, Problem
from trialbook.importers._base import ImportedRun, ImportOptions
from trialbook.importers._common import (
    Record,
    attempt_row,
    expand,
    fail,
    head,
    load_json,
    raise_problems,
    source_file,
)
from trialbook.importers._swebench_site import is_site_file, site_runs

__all__ = ["SWE_BENCH", "SweBench"]

# (list, status, what the note calls it), in order of precedence for an id in two lists
_REPORT_LISTS = (
    ("resolved_ids", "passed", None),
    ("infra_failure_ids", "infra_error", "infrastructure failures (infrastructure errors here)"),
    ("error_ids", "failed", "evaluation errors (patch did not apply, tests timed out or crashed)"),
    ("empty_patch_ids", "failed", "empty patches"),
    ("unresolved_ids", "failed", None),
    ("incomplete_ids", "failed", "instances whose evaluation never finished"),
)
_UNRECORDED = (
    "SWE-bench records no time limit, duration, agent timeout, hidden-helper calls or oracle "
    "leaks: not recorded by the source"
)


class SweBench:
    """SWE-bench run reports and leaderboard per-instance files."""

    name = "swe-bench"

    def detect(self, path: Path) -> bool:
        """A .json object naming ``resolved_ids`` with ``total_instances`` (a run report) or
        ``n_instances`` (the leaderboard's per-instance lists), or ``leaderboards`` (the site's
        leaderboard file)."""
        text = head(path)
        return text.lstrip().startswith("{") and (
            ('"resolved_ids"' in text and ('"total_instances"' in text or '"n_instances"' in text))
            or '"leaderboards"' in text
        )

    def read(self, paths: Sequence[Path], options: ImportOptions) -> Iterator[ImportedRun]:
        """One run per report, one per system of a leaderboard file."""
        files = expand(paths, (".json",))
        runs: list[ImportedRun] = []
        for path in files:
            doc = load_json(path, options.max_bytes)
            if is_site_file(doc):
                assert isinstance(doc, Mapping)
                runs.extend(site_runs(path, doc, options))
            elif isinstance(doc, Mapping) and "total_instances" in doc:
                runs.append(_report(path, doc, options))
            elif (
                isinstance(doc, Mapping)
                and doc
                and all(isinstance(v, Mapping) for v in doc.values())
            ):
                runs.extend(_leaderboard(path, doc, options))
            else:
                raise fail(
                    path,
                    "not a SWE-bench run report (an object with total_instances) nor a "
                    "leaderboard per-instance file (an object of systems with resolved_ids)",
                )
        if options.run_id is not None and len(runs) > 1:
            raise ArgumentError(
                f"run_id names one run, but the files hold {len(runs)} runs", argument="run_id"
            )
        yield from runs


def _ids(rec: Record, name: str, required: bool) -> list[str]:
    items = rec.items(name, required=required)
    out: list[str] = []
    for i, item in enumerate(items or [], 1):
        if not isinstance(item, str) or not item:
            rec.problem(f"item {i}: expected an instance id, got {item!r}", name)
        else:
            out.append(item)
    if len(set(out)) != len(out):
        rec.problem("an instance id is listed twice", name)
    return out


def _rows(
    rec: Record, run_id: str, system: str | None, total: int, lists: dict[str, list[str]]
) -> tuple[list[dict[str, object]], list[str]]:
    status_of: dict[str, tuple[str, str]] = {}
    for name, status, _ in _REPORT_LISTS:
        for iid in lists.get(name, []):
            status_of.setdefault(iid, (status, name))
    both = set(lists.get("resolved_ids", [])) & set(lists.get("unresolved_ids", []))
    if both:
        rec.problem(
            f"{len(both)} instance(s) are both resolved and unresolved, e.g. {sorted(both)[0]!r}"
        )
    if len(status_of) != total:
        rec.problem(
            f"the id lists name {len(status_of)} distinct instances, but the denominator is {total}"
        )
    rows: list[dict[str, object]] = []
    counts: dict[str, int] = {}
    for iid, (status, name) in status_of.items():
        counts[name] = counts.get(name, 0) + 1
        rows.append(
            attempt_row(
                run_id=run_id,
                system=system,
                task_id=iid,
                attempt_index=0,
                k_budget=1,
                passed=status == "passed",
                status=status,
                error=None
                if name in ("resolved_ids", "unresolved_ids")
                else name.removesuffix("_ids"),
            )
        )
    notes = [
        f"{counts[name]} {what}, counted as {'failures' if status == 'failed' else 'infrastructure errors'}"
        for name, status, what in _REPORT_LISTS
        if what and counts.get(name)
    ]
    return rows, notes


def _report(path: Path, doc: Mapping[str, Any], options: ImportOptions) -> ImportedRun:
    problems: list[Problem] = []
    rec = Record(doc, path, "the report", problems)
    total = rec.integer("total_instances", low=1)
    lists = {
        name: _ids(rec, name, required=name in ("resolved_ids", "unresolved_ids"))
        for name, _, _ in _REPORT_LISTS
    }
    version = rec.integer("schema_version", required=False)
    raise_problems(problems)
    assert total is not None
    run_id = options.run_id or path.stem
    rows, notes = _rows(rec, run_id, options.system, total, lists)
    raise_problems(problems)
    resolved = len(lists["resolved_ids"])
    return ImportedRun(
        run_id=run_id,
        source="swe-bench",
        source_version=None if version is None else f"report schema {version}",
        files=(source_file(path),),
        rows=rows,
        notes=(
            _UNRECORDED,
            f"denominator: total_instances {total} (resolved {resolved}, "
            f"{resolved / total:.2%} as the harness reports it)",
            *notes,
        ),
    )


def _leaderboard(path: Path, doc: Mapping[str, Any], options: ImportOptions) -> list[ImportedRun]:
    problems: list[Problem] = []
    out = []
    digest = source_file(path)
    for key, entry in doc.items():
        rec = Record(entry, path, f"system {key!r}", problems)
        total = rec.integer("n_instances", low=1)
        name = rec.text("name", required=False)
        reported = rec.number("reported_resolved_pct", required=False)
        lists = {n: _ids(rec, n, required=True) for n in ("resolved_ids", "unresolved_ids")}
        if total is None or not rec.ok:
            continue
        rows, notes = _rows(rec, options.run_id or key, options.system or name or key, total, lists)
        resolved = len(lists["resolved_ids"])
        if reported is not None:
            notes.append(
                f"the leaderboard reports {reported:g}% resolved; its listed ids give "
                f"{resolved}/{total} = {100 * resolved / total:.4g}% (the ids are scored)"
            )
        out.append(
            ImportedRun(
                run_id=options.run_id or key,
                source="swe-bench",
                source_version="leaderboard per-instance lists",
                files=(digest,),
                rows=rows,
                notes=(_UNRECORDED, *notes),
            )
        )
    raise_problems(problems)
    return out


SWE_BENCH = SweBench()
