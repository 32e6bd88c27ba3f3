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
from trialbook.ledger._fields import FIELDS, NOT_RECORDABLE, PROTOCOLS, STATUSES
from trialbook.ledger._table import Ledger, once, per_row

__all__ = ["check_attempt_keys", "check_rules", "retry_of"]


def _first_of_group(group: NDArray[np.int64]) -> NDArray[np.int64]:
    """For each row, the position of the first row of its group."""
    _, first, inverse = np.unique(group, return_index=True, return_inverse=True)
    result: NDArray[np.int64] = first[inverse]
    return result


def _repeats(key: NDArray[np.int64]) -> bool:
    """Whether any value occurs twice (a bincount when the keys are dense enough, else a sort)."""
    if key.size < 2:
        return False
    if (key[1:] > key[:-1]).all():  # rows in key order, as a store and most files hold them
        return False
    if int(key.max()) < 8 * key.size + 1024:
        return bool(np.bincount(key).max() > 1)
    ordered = np.sort(key)
    return bool((ordered[1:] == ordered[:-1]).any())


def _group_key(*parts: NDArray[np.int64]) -> NDArray[np.int64]:
    """Combine non-negative integer columns into one int64 key per row, rows alike in every part
    alike in key. A part of one value seen per row (stride 0) tells no rows apart and is left out
    (all parts such: one key for every row)."""
    varying = [part for part in parts if once(part).size == part.size]
    if not varying:
        return np.zeros(parts[0].size, dtype=np.int64)
    key = varying[0] + 1  # the key of the first part alone, in a new array
    for part in varying[1:]:
        span = int(part.max()) + 2 if part.size else 1
        key *= span  # in place: the same integers as key * span + (part + 1), no temporaries
        key += part
        key += 1
    return key


def check_rules(ledger: Ledger, *, appended: bool = False) -> list[Problem]:
    """Every table-level rule of a ledger (docs/ledger.md, "Rules"); one Problem per offending row.

    Row-level type errors are found by the readers; this assumes well-typed columns and checks ranges,
    timestamps, statuses, contradictions, budgets, uniqueness and per-run identity. ``appended``:
    the rows are a batch joining a store's rows, which checks a re-run's predecessor itself.
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
        col = ledger.values[f.name]
        one = once(col)
        # an integer column is finite everywhere and compares with a bound as its float does
        known = np.isfinite(one) if one.dtype.kind == "f" else np.ones(1, dtype=bool)
        bad = np.zeros(one.size, dtype=bool)
        rule = ""
        if f.low is not None:
            bad |= known & ((one <= f.low) if f.low_open else (one < f.low))
            rule = f"> {f.low:g}" if f.low_open else f">= {f.low:g}"
        if f.high is not None:
            bad |= known & (one > f.high)
            rule = f"in {f.low:g}..{f.high:g}" if f.low is not None else f"<= {f.high:g}"
        name = f.name
        add(
            per_row(bad, col),
            lambda i, n=name, r=rule, c=col: f"field {n!r}: must be {r}, got {float(c[i]):g}",
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
    protocol_codes, protocol_labels = ledger.codes["protocol"], ledger.labels["protocol"]
    bad_protocols = [j for j, s in enumerate(protocol_labels) if s not in PROTOCOLS]
    if bad_protocols:
        add(
            np.isin(protocol_codes, bad_protocols),
            lambda i: (
                f"field 'protocol': must be one of {', '.join(PROTOCOLS)}, "
                f"got {protocol_labels[protocol_codes[i]]!r}"
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
        if labels:  # none recorded: NaN on every row, which compares false
            moments[name] = seconds[ledger.codes[name]]
        if wrong:
            codes = ledger.codes[name]
            add(
                np.isin(codes, list(wrong)),
                lambda i, c=codes, w=wrong: w[int(c[i])],
            )

    if len(moments) == 2:
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
    problems.extend(check_attempt_keys(ledger, appended=appended))
    return problems


def _check_runs(ledger: Ledger) -> list[Problem]:
    src, lines = ledger.source, ledger.lines
    problems: list[Problem] = []
    run = ledger.codes["run_id"]
    task = ledger.codes["task_id"]
    task_labels = ledger.labels["task_id"]
    run_labels = ledger.labels["run_id"]
    if (once(run) < 0).any() and (once(run) >= 0).any():
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

    def constant_within(group: Callable[[], NDArray[np.int64]], name: str, scope: str) -> None:
        col0 = once(ledger.values[name] if name in ledger.values else ledger.codes[name])
        if col0.dtype.kind == "f" and np.isnan(col0).all():
            return
        if (col0 == col0[0]).all():
            return  # constant over the whole ledger: constant within every group (no sort needed)
        first = _first_of_group(group())
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

    # the group keys are made only for a field that is not constant over the whole ledger
    def run_group() -> NDArray[np.int64]:
        return per_row(np.maximum(once(run), 0), run)

    def run_task() -> NDArray[np.int64]:
        return _group_key(run_group(), task)

    constant_within(run_group, "k_budget", "run")
    constant_within(run_group, "system", "run")
    constant_within(run_group, "dataset_id", "run")
    constant_within(run_group, "graded_after_timeout", "run")
    constant_within(run_group, "protocol", "run")
    constant_within(run_task, "weight", "task of a run")
    constant_within(run_task, "stratum", "task of a run")

    return problems


def retry_of(ledger: Ledger) -> NDArray[np.int64]:
    """Each row's ``retry``, not recorded read as 0 (the attempt's first run)."""
    col = ledger.values["retry"]
    one = once(col)  # often one value for every row (a column nobody recorded): read-only
    return per_row(np.where(np.isnan(one), 0.0, one).astype(np.int64), col)


def check_attempt_keys(ledger: Ledger, *, appended: bool = False) -> list[Problem]:
    """The rule of attempt keys and re-runs (docs/ledger.md, "Rules"), apart so that a reader that
    checks rows as they stream can apply the same rule.

    1. ``(run_id, task_id, attempt_index, retry)`` is unique (``retry`` not recorded = 0).
    2. A row with ``retry`` r > 0 needs a row of the same attempt with retry r - 1 whose status is
       ``infra_error`` (a re-run follows the infrastructure error it replaces, and nothing else).

    Also ``lost`` may be true only on an ``infra_error`` row. One Problem per offending row, naming
    run, task, attempt and field. ``appended``: rule 2 is left to the store the rows join (the
    retry before may be stored, ``store/_keys.unfollowed``).
    """
    src, lines = ledger.source, ledger.lines
    problems: list[Problem] = []
    run, task = ledger.codes["run_id"], ledger.codes["task_id"]
    run_labels, task_labels = ledger.labels["run_id"], ledger.labels["task_id"]
    attempt = ledger.values["attempt_index"]
    status_codes, status_labels = ledger.codes["status"], ledger.labels["status"]
    infra_code = status_labels.index("infra_error") if "infra_error" in status_labels else -2
    infra = status_codes == infra_code

    def describe(i: int) -> str:
        where = f"run {run_labels[run[i]]!r}, " if run[i] >= 0 else ""
        return f"{where}task {task_labels[task[i]]!r}: attempt_index {int(attempt[i])}"

    lost = ledger.values["lost"] == 1  # NaN (not recorded) is False
    for i in np.flatnonzero(lost & ~infra)[:50].tolist():
        problems.append(
            Problem(
                int(lines[i]),
                f"{describe(i)}: field 'lost': true only on an infra_error row",
                src,
            )
        )
    if (once(run) < 0).any() and (once(run) >= 0).any():
        return problems  # named by the run rule: the attempts of such rows have no run to be in
    if run.size < 2 and not (ledger.values["retry"] > 0).any():
        return problems
    retry = retry_of(ledger)
    run_group = per_row(np.maximum(once(run), 0), run)
    attempt_key = _group_key(run_group, task, np.asarray(attempt, dtype=np.int64))
    key = _group_key(attempt_key, retry)
    if _repeats(key):
        first = _first_of_group(key)
        for i in np.flatnonzero(first != np.arange(key.size))[:50].tolist():
            j = int(first[i])
            again = f" retry {int(retry[i])}" if retry[i] else ""
            problems.append(
                Problem(
                    int(lines[i]),
                    f"{describe(i)}{again} duplicates line {int(lines[j])} ((run_id, task_id, "
                    "attempt_index, retry) must be unique)",
                    src,
                )
            )
    later = np.flatnonzero(retry > 0)
    if later.size and not appended:
        # the key of each re-run's predecessor, looked up among the infra_error rows
        if once(retry).size < retry.size:  # one retry for every row: none is another's r - 1
            found = np.zeros(later.size, dtype=bool)
        else:
            wanted = _group_key_like(attempt_key, retry, later, retry[later] - 1)
            found = np.isin(wanted, key[infra])
        for n, i in enumerate(later.tolist()):
            if found[n]:
                continue
            problems.append(
                Problem(
                    int(lines[i]),
                    f"{describe(i)}: field 'retry': {int(retry[i])} follows no infra_error row of "
                    f"retry {int(retry[i]) - 1} of the same attempt (a re-run replaces only an "
                    "infra_error)",
                    src,
                )
            )
            if len(problems) >= 50:
                break
    return problems


def _group_key_like(
    outer: NDArray[np.int64],
    inner: NDArray[np.int64],
    rows: NDArray[np.int64],
    value: NDArray[np.int64],
) -> NDArray[np.int64]:
    """``_group_key(outer, inner)`` of the rows ``rows`` with ``inner`` replaced by ``value``
    (the same spans as the whole columns, so the keys compare with ``_group_key(outer, inner)``)."""
    span = int(inner.max()) + 2 if inner.size else 1
    return (outer[rows] + 1) * span + (value + 1)
