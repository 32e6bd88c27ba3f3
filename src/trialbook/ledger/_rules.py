"""The table-level rules of a ledger (docs/ledger.md, "Rules"), checked on whole columns.

Row-level type errors are found where rows are read (``_rows``, the format readers); these rules
assume well-typed columns and check ranges, timestamps, statuses, contradictions, budgets,
uniqueness and per-run identity. Every reader and the store end in :func:`check_rules`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import numpy as np
from numpy.typing import NDArray

from trialbook.errors import Problem
from trialbook.ledger._checks import read_checks
from trialbook.ledger._fields import FIELDS, NOT_RECORDABLE, STATUSES
from trialbook.ledger._table import Ledger

__all__ = ["check_rules"]


def _first_of_group(group: NDArray[np.int64]) -> NDArray[np.int64]:
    """For each row, the position of the first row of its group."""
    _, first, inverse = np.unique(group, return_index=True, return_inverse=True)
    result: NDArray[np.int64] = first[inverse]
    return result


def _repeats(key: NDArray[np.int64]) -> bool:
    """Whether any value occurs twice (a bincount when the keys are dense enough, else a sort)."""
    if key.size < 2:
        return False
    if int(key.max()) < 8 * key.size + 1024:
        return bool(np.bincount(key).max() > 1)
    ordered = np.sort(key)
    return bool((ordered[1:] == ordered[:-1]).any())


def _group_key(*parts: NDArray[np.int64]) -> NDArray[np.int64]:
    """Combine non-negative integer columns into one int64 key per row."""
    key = np.zeros(parts[0].size, dtype=np.int64)
    for part in parts:
        span = int(part.max()) + 2 if part.size else 1
        key = key * span + (part + 1)
    return key


def check_rules(ledger: Ledger) -> list[Problem]:
    """Every table-level rule of a ledger (docs/ledger.md, "Rules"); one Problem per offending row.

    Row-level type errors are found by the readers; this assumes well-typed columns and checks ranges,
    timestamps, statuses, contradictions, budgets, uniqueness and per-run identity.
    """
    src, lines = ledger.source, ledger.lines
    if len(ledger) == 0:
        return [Problem(0, "the ledger holds no attempts", src)]
    problems: list[Problem] = []
    task_codes = ledger.codes["task_id"]
    task_labels = ledger.labels["task_id"]

    def add(mask: NDArray[np.bool_], text: str | Callable[..., str]) -> None:
        if not mask.any():  # the common case: one cheap test instead of an index array
            return
        for i in np.flatnonzero(mask).tolist():
            message = text(i) if callable(text) else text
            problems.append(
                Problem(int(lines[i]), f"task {task_labels[task_codes[i]]!r}: {message}", src)
            )

    for f in FIELDS:
        if f.kind == "float":
            col = ledger.values[f.name]
            name = f.name
            add(
                np.isinf(col),
                lambda i, n=name, c=col: f"field {n!r}: must be a finite number, got {c[i]}",
            )
        if f.kind not in ("int", "float") or (f.low is None and f.high is None):
            continue
        col = np.asarray(ledger.values[f.name], dtype=np.float64)  # no copy of a float column
        known = np.isfinite(col)
        bad = np.zeros(col.size, dtype=bool)
        rule = ""
        if f.low is not None:
            bad |= known & ((col <= f.low) if f.low_open else (col < f.low))
            rule = f"> {f.low:g}" if f.low_open else f">= {f.low:g}"
        if f.high is not None:
            bad |= known & (col > f.high)
            rule = f"in {f.low:g}..{f.high:g}" if f.low is not None else f"<= {f.high:g}"
        name = f.name
        add(
            bad,
            lambda i, n=name, r=rule, c=col: f"field {n!r}: must be {r}, got {c[i]:g}",
        )

    empty = [j for j, label in enumerate(task_labels) if not label.strip()]
    for i in np.flatnonzero(np.isin(task_codes, empty)).tolist():
        problems.append(Problem(int(lines[i]), "field 'task_id': must not be empty", src))

    passed = ledger.values["passed"]
    timed_out = ledger.values["timed_out"]
    # a run whose grader judged the workspace after a timeout may pass a timed-out attempt
    after_timeout = ledger.values["graded_after_timeout"] == 1  # NaN (not recorded) is False
    add(
        passed & timed_out & ~after_timeout,
        "contradiction: 'timed_out' and 'passed' are both true (allowed only in a run that "
        "declares 'graded_after_timeout')",
    )
    attempt, budget = ledger.values["attempt_index"], ledger.values["k_budget"]
    add(
        attempt >= budget,
        lambda i: f"field 'attempt_index': {attempt[i]} is not below k_budget {budget[i]}",
    )

    status_codes, status_labels = ledger.codes["status"], ledger.labels["status"]
    bad_labels = [j for j, s in enumerate(status_labels) if s not in STATUSES]
    if bad_labels:
        add(
            np.isin(status_codes, bad_labels),
            lambda i: (
                f"field 'status': must be one of {', '.join(STATUSES)}, "
                f"got {status_labels[status_codes[i]]!r}"
            ),
        )
    label_code = {s: j for j, s in enumerate(status_labels)}
    known_status = (status_codes >= 0) & ~np.isin(status_codes, bad_labels)
    pass_after_timeout = passed & timed_out & after_timeout  # its status is 'passed'
    for flag, name, text in ((passed, "passed", "passed"), (timed_out, "timed_out", "timed_out")):
        code = label_code.get(text, -2)
        exempt = (
            pass_after_timeout | ledger.unrecorded_mask("timed_out")
            if name == "timed_out"
            else np.zeros_like(passed)
        )
        add(
            known_status & ~exempt & (flag != (status_codes == code)),
            lambda i, n=name: (
                f"contradiction: field {n!r} is {str(bool(ledger.values[n][i])).lower()} "
                f"but 'status' is {status_labels[status_codes[i]]!r}"
            ),
        )

    moments: dict[str, NDArray[np.float64]] = {}
    for name in ("started_at", "finished_at"):
        labels = ledger.labels[name]
        wrong: dict[int, str] = {}
        seconds = np.full(len(labels) + 1, np.nan)  # the last one: not recorded (code -1)
        for j, text in enumerate(labels):
            try:
                stamp = datetime.fromisoformat(text)
            except ValueError:
                wrong[j] = f"field {name!r}: not an ISO 8601 timestamp: {text!r}"
                continue
            if stamp.tzinfo is None:
                wrong[j] = f"field {name!r}: timestamp {text!r} has no UTC offset"
            else:
                seconds[j] = stamp.timestamp()
        moments[name] = seconds[ledger.codes[name]]
        if wrong:
            codes = ledger.codes[name]
            add(
                np.isin(codes, list(wrong)),
                lambda i, c=codes, w=wrong: w[int(c[i])],
            )

    started, finished = moments["started_at"], moments["finished_at"]
    add(
        finished < started,  # NaN (not recorded, or not a timestamp) compares false
        lambda i: (
            f"contradiction: 'finished_at' ({ledger.labels['finished_at'][ledger.codes['finished_at'][i]]})"
            f" is before 'started_at' ({ledger.labels['started_at'][ledger.codes['started_at'][i]]})"
        ),
    )

    nr_codes, nr_labels = ledger.codes["not_recorded"], ledger.labels["not_recorded"]
    wrong_nr: dict[int, str] = {}
    for j, text in enumerate(nr_labels):
        parts = [p.strip() for p in text.split(",")]
        outside = [p for p in parts if p not in NOT_RECORDABLE]
        if outside:
            wrong_nr[j] = (
                f"field 'not_recorded': {', '.join(repr(b) for b in outside)} cannot be left "
                f"unrecorded (only {', '.join(NOT_RECORDABLE)} may be)"
            )
    if wrong_nr:
        add(np.isin(nr_codes, list(wrong_nr)), lambda i: wrong_nr[int(nr_codes[i])])
    for name in NOT_RECORDABLE:
        col = ledger.values[name]
        if col.dtype.kind == "f":
            listed = ledger.unrecorded_mask(name)
            add(
                listed & ~np.isnan(col),
                lambda i, n=name: (
                    f"contradiction: field {n!r} has a value but 'not_recorded' names it"
                ),
            )
            add(
                ~listed & np.isnan(col),
                lambda i, n=name: f"missing required field {n!r}",
            )

    ch_codes, ch_labels = ledger.codes["checks"], ledger.labels["checks"]
    wrong_checks: dict[int, str] = {}
    for j, text in enumerate(ch_labels):
        try:
            read_checks(text)
        except ValueError as exc:
            wrong_checks[j] = f"field 'checks': {exc}"
    if wrong_checks:
        add(np.isin(ch_codes, list(wrong_checks)), lambda i: wrong_checks[int(ch_codes[i])])
    # a protected-but-failed attempt (task outcome false) is a failure in every rate
    add(
        passed & (ledger.values["task_outcome"] == 0),  # NaN (not recorded) compares false
        "contradiction: 'passed' is true but 'task_outcome' is false (an attempt whose task was "
        "not done is a failure, whatever its protection outcome)",
    )

    problems.extend(_check_runs(ledger))
    return problems


def _check_runs(ledger: Ledger) -> list[Problem]:
    src, lines = ledger.source, ledger.lines
    problems: list[Problem] = []
    run = ledger.codes["run_id"]
    task = ledger.codes["task_id"]
    task_labels = ledger.labels["task_id"]
    run_labels = ledger.labels["run_id"]
    if (run < 0).any() and (run >= 0).any():
        for i in np.flatnonzero(run < 0)[:50].tolist():
            problems.append(
                Problem(
                    int(lines[i]), "field 'run_id': missing while other rows name their run", src
                )
            )
        return problems

    if run.size == 1:
        return problems  # one row cannot vary within its run or repeat an attempt

    def describe(i: int) -> str:
        where = f"run {run_labels[run[i]]!r}, " if run[i] >= 0 else ""
        return f"{where}task {task_labels[task[i]]!r}"

    def constant_within(group: NDArray[np.int64], name: str, scope: str) -> None:
        col0 = ledger.values[name] if name in ledger.values else ledger.codes[name]
        if col0.dtype.kind == "f" and np.isnan(col0).all():
            return
        if (col0 == col0[0]).all():
            return  # constant over the whole ledger: constant within every group (no sort needed)
        first = _first_of_group(group)
        if name in ledger.values:
            col = ledger.values[name]
            same = col == col[first]
            if col.dtype.kind == "f":
                same |= np.isnan(col) & np.isnan(col[first])

            def show(i: int) -> str:
                return (
                    f"{col[i]:g}" if col.dtype.kind == "f" and not np.isnan(col[i]) else str(col[i])
                )
        else:
            col = ledger.codes[name]
            same = col == col[first]
            labels = ledger.labels[name]

            def show(i: int) -> str:
                return repr(labels[col[i]]) if col[i] >= 0 else "null"

        for i in np.flatnonzero(~same)[:50].tolist():
            j = int(first[i])
            problems.append(
                Problem(
                    int(lines[i]),
                    f"{describe(i)}: field {name!r}: {show(i)} differs from {show(j)} on line "
                    f"{int(lines[j])} ({name} must not vary within a {scope})",
                    src,
                )
            )

    run_group = np.maximum(run, 0)
    constant_within(run_group, "k_budget", "run")
    constant_within(run_group, "system", "run")
    constant_within(run_group, "dataset_id", "run")
    constant_within(run_group, "graded_after_timeout", "run")
    run_task = _group_key(run_group, task)
    constant_within(run_task, "weight", "task of a run")
    constant_within(run_task, "stratum", "task of a run")

    key = _group_key(run_group, task, ledger.values["attempt_index"].astype(np.int64))
    if not _repeats(key):
        return problems
    first = _first_of_group(key)
    for i in np.flatnonzero(first != np.arange(key.size)).tolist():
        j = int(first[i])
        problems.append(
            Problem(
                int(lines[i]),
                f"{describe(i)}: attempt_index {int(ledger.values['attempt_index'][i])} duplicates line "
                f"{int(lines[j])} ((run_id, task_id, attempt_index) must be unique)",
                src,
            )
        )
    return problems
