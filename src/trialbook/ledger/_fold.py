"""Runs tallied chunk by chunk: what a ledger file read in pieces folds into, and the cross-chunk
rules checked on the way.

:class:`RunFold` keeps, per task and per class of row (``infra_error`` by status, or not), the
counts and sums a :class:`~trialbook.ledger.RunTally` is made of; so one fold answers every tally
a scorecard asks for (with or without the infrastructure errors, with or without fault strata set
aside). Per attempt it keeps only what no per-task sum can stand for, exactly:

- ``elapsed_s`` and ``cost`` in row order (their float totals, mean and median depend on the order
  and on every value: numpy's pairwise sum is what the in-memory tally computes);
- each attempt's task, ``attempt_index`` and class (duplicates across chunks, and the attempts
  before a task's first pass, which is only known once every chunk is read).

That is 15 bytes per attempt (23 when rows record a cost; ``attempt_index`` in the narrowest
integer the run's ``k_budget`` allows, 2 bytes below 32,768), against the several hundred a
whole-file read holds; everything else grows with the tasks. Per-task ``score`` totals are summed
with ``np.add.at``, one value after the other in row order, as ``np.bincount`` sums them in the
in-memory tally, so they are the same to the bit.

Every rule that spans rows is checked across chunks here (``k_budget``, ``system``, ``dataset_id``
and ``graded_after_timeout`` constant within a run, ``stratum`` and ``weight`` within a task of a
run, ``(run_id, task_id, attempt_index)`` unique, ``run_id`` named by every row or by none); each
chunk's own rows are checked by the readers' :func:`~trialbook.ledger._rules.check_rules`. A fold
only *accepts*: at a broken rule it says so (:attr:`FileFold.broken`), and the caller reads the
file whole, whose rules name every problem with its line, as they always have.

A file with re-runs (a row with ``retry`` > 0: docs/ledger.md, "Re-runs") is read whole: which row
of an attempt counts, and whether a re-run follows an ``infra_error``, is the whole read's rule
(``check_attempt_keys``); re-runs are rare (an attempt the harness lost), so the cost is rare too.
The attempt ``protocol`` is held constant within a run like the other constants.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trialbook.errors import ArgumentError, TrialbookError
from trialbook.ledger._table import Ledger
from trialbook.ledger._tally import Known, RunTally

__all__ = ["FileFold", "RunFold"]

# per (task, class) integer columns
(ATTEMPTS, PASSES, TIMEOUTS, AFTER_TIMEOUT, HELPER, CACHE, CACHE_ROWS, TOOLS, TOOLS_ROWS,
 TIN, TIN_ROWS, TOUT, TOUT_ROWS, SELECTED, SCORED, FAIL_PLAIN, FAIL_TIMED, FAIL_INFRA,
 LEAKS) = range(19)  # fmt: skip
_COLUMNS = 19
_BIG = np.iinfo(np.int64).max


def _same(a: object, b: object) -> bool:
    """Equal values, NaN equal to NaN (a field not recorded on both)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return a == b


def _value(rows: Ledger, name: str, i: int) -> str | float | None:
    """Row ``i``'s value of a field: a label (None: not recorded) or a number (NaN: not recorded)."""
    if name in rows.values:
        return float(rows.values[name][i])
    code = int(rows.codes[name][i])
    return None if code < 0 else rows.labels[name][code]


class RunFold:
    """One run's rows, folded chunk by chunk (see the module's docstring)."""

    def __init__(self, run_id: str, source: str, first: Ledger, reserve: int = 0) -> None:
        self.run_id = run_id
        self.source = source
        self.constants = {
            name: _value(first, name, 0)
            for name in ("k_budget", "system", "dataset_id", "graded_after_timeout", "protocol")
        }
        self.task_index: dict[str, int] = {}
        self.task_ids: list[str] = []
        self.stratum: list[str | None] = []
        self.weight: list[float] = []
        self.acc = np.zeros((16, 2, _COLUMNS), dtype=np.int64)
        self.first_row = np.full((16, 2), _BIG, dtype=np.int64)
        self.lowest = np.full((16, 2), _BIG, dtype=np.int64)
        self.lowest_passed = np.zeros((16, 2), dtype=bool)
        self.first_pass = np.full(16, _BIG, dtype=np.int64)
        self.score_all = np.zeros(16, dtype=np.float64)
        self.score_kept = np.zeros(16, dtype=np.float64)  # the rows that are not infra errors
        self.errors: dict[tuple[str, int, int], list[int]] = {}
        self.leaked: list[tuple[int, int]] = []
        self.checks_rows = 0
        self._reserve = reserve  # rows the file may still hold (an estimate: it grows past it)
        self._task = _Grown(np.int32, reserve)
        budget = int(self.constants["k_budget"] or 1)  # attempt_index < k_budget: the narrowest
        self._attempt = _Grown(
            np.int16 if budget <= 2**15 else np.int32 if budget <= 2**31 else np.int64, reserve
        )
        self._infra = _Grown(np.bool_, reserve)
        self._elapsed = _Grown(np.float64, reserve)
        self._cost: _Grown | None = None  # made when a row records a cost
        self.rows_seen = 0
        self._finished: (
            tuple[NDArray[Any], NDArray[Any], NDArray[Any], NDArray[Any], NDArray[Any] | None]
            | None
        ) = None

    # ------------------------------------------------------------------ folding

    def _grow(self, tasks: int) -> None:
        cap = self.first_pass.size
        if tasks <= cap:
            return
        new = max(tasks, 2 * cap)

        def wider(a: NDArray[Any], fill: Any) -> NDArray[Any]:
            out = np.full((new, *a.shape[1:]), fill, dtype=a.dtype)
            out[:cap] = a
            return out

        self.acc = wider(self.acc, 0)
        self.first_row = wider(self.first_row, _BIG)
        self.lowest = wider(self.lowest, _BIG)
        self.lowest_passed = wider(self.lowest_passed, False)
        self.first_pass = wider(self.first_pass, _BIG)
        self.score_all = wider(self.score_all, 0.0)
        self.score_kept = wider(self.score_kept, 0.0)

    def fold(self, rows: Ledger, row0: int) -> bool:
        """Fold a chunk's rows of this run (validated on their own; ``row0``: the file's row number
        of the chunk's first row). False when a rule across chunks is broken."""
        for name, value in self.constants.items():
            if not _same(_value(rows, name, 0), value):
                return False  # the chunk's own rules hold it constant from its first row on
        retry = rows.values["retry"]
        if bool((retry > 0).any()):
            return False  # a re-run: which row of an attempt counts is the whole read's to say
        self.checks_rows += int((rows.codes["checks"] >= 0).sum())
        codes, labels = rows.codes["task_id"], rows.labels["task_id"]
        first = np.full(len(labels), codes.size, dtype=np.int64)
        first[codes[::-1]] = np.arange(codes.size - 1, -1, -1)
        present = np.flatnonzero(first < codes.size)
        order = present[np.argsort(first[present], kind="stable")]
        u = order.size
        local = np.empty(len(labels), dtype=np.int64)  # code -> the task's place in this chunk
        local[order] = np.arange(u)
        glob = np.empty(u, dtype=np.int64)  # the chunk's tasks -> the run's
        for j, c in enumerate(order.tolist()):
            label, row = labels[c], int(first[c])
            stratum, weight = _value(rows, "stratum", row), _value(rows, "weight", row)
            known = self.task_index.get(label)
            if known is None:
                known = self.task_index[label] = len(self.task_ids)
                self.task_ids.append(label)
                self.stratum.append(stratum if isinstance(stratum, str) else None)
                self.weight.append(float(weight) if isinstance(weight, float) else np.nan)
            elif not (_same(self.stratum[known], stratum) and _same(self.weight[known], weight)):
                return False
            glob[j] = known
        self._grow(len(self.task_ids))
        mine = local[codes]
        task = glob[mine]
        infra = np.asarray(rows.has_status("infra_error"), dtype=bool)
        cell = mine * 2 + infra
        v = rows.values
        passed = np.asarray(v["passed"], dtype=bool)
        timed = np.asarray(v["timed_out"], dtype=bool)
        attempt = np.asarray(v["attempt_index"], dtype=np.int64)
        count = 2 * u

        def tally(mask: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
            picked = cell if mask is None else cell[mask]
            return np.bincount(picked, minlength=count).astype(np.int64)

        def total(name: str) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
            col = np.asarray(v[name], dtype=np.float64)
            known = ~np.isnan(col)
            if not known.any():
                return np.zeros(count, np.int64), np.zeros(count, np.int64)
            sums = np.bincount(cell[known], weights=col[known], minlength=count)
            return sums.astype(np.int64), tally(known)

        new = np.zeros((count, _COLUMNS), dtype=np.int64)
        new[:, ATTEMPTS] = tally()
        new[:, PASSES] = tally(passed)
        new[:, TIMEOUTS] = tally(timed)
        new[:, AFTER_TIMEOUT] = tally(passed & timed)
        new[:, HELPER] = total("helper_calls")[0]
        for name, s, r in (
            ("cache_hit", CACHE, CACHE_ROWS),
            ("tool_calls", TOOLS, TOOLS_ROWS),
            ("tokens_in", TIN, TIN_ROWS),
            ("tokens_out", TOUT, TOUT_ROWS),
        ):
            new[:, s], new[:, r] = total(name)
        new[:, SELECTED] = tally(~np.isnan(v["selected"]))
        scored = ~np.isnan(v["score"])
        new[:, SCORED] = tally(scored)
        new[:, FAIL_PLAIN] = tally(~passed & ~timed & ~infra)
        new[:, FAIL_TIMED] = tally(timed & ~passed & ~infra)
        new[:, FAIL_INFRA] = tally(infra & ~passed)
        leak = np.asarray(v["oracle_leak"], dtype=bool)
        new[:, LEAKS] = tally(leak)
        self.acc[glob] += new.reshape(u, 2, _COLUMNS)  # glob: each of the run's tasks once

        # first row, lowest attempt (and whether it passed) per (task, class); first pass per task
        n = codes.size
        first_row = np.full(count, _BIG, dtype=np.int64)
        first_row[cell[::-1]] = np.arange(n - 1, -1, -1) + row0
        self.first_row[glob] = np.minimum(self.first_row[glob], first_row.reshape(u, 2))
        lowest = np.full(count, _BIG, dtype=np.int64)
        np.minimum.at(lowest, cell, attempt)
        at = np.flatnonzero(attempt == lowest[cell])
        lowest_passed = np.zeros(count, dtype=bool)
        lowest_passed[cell[at]] = passed[at]
        low, low_passed = self.lowest[glob], self.lowest_passed[glob]
        better = lowest.reshape(u, 2) < low
        self.lowest[glob] = np.where(better, lowest.reshape(u, 2), low)
        self.lowest_passed[glob] = np.where(better, lowest_passed.reshape(u, 2), low_passed)
        np.minimum.at(self.first_pass, task[passed], attempt[passed])
        if scored.any():
            score = v["score"]
            np.add.at(self.score_all, task, score)
            np.add.at(self.score_kept, task[~infra], score[~infra])

        err_codes = rows.codes["error"]
        with_error = np.flatnonzero((err_codes >= 0) & ~passed)
        for i in with_error.tolist():
            key = (rows.labels["error"][err_codes[i]], int(task[i]), int(infra[i]))
            seen = self.errors.get(key)
            if seen is None:
                self.errors[key] = [row0 + i, 1]
            else:
                seen[1] += 1
        for i in np.flatnonzero(leak).tolist():
            self.leaked.append((int(task[i]), int(attempt[i])))

        self._task.append(task)
        self._attempt.append(attempt)
        self._infra.append(infra)
        self._elapsed.append(v["elapsed_s"])
        cost = v["cost"]
        if self._cost is None and not np.isnan(cost).all():
            self._cost = _Grown(np.float64, self._reserve)
            self._cost.append(np.full(self.rows_seen, np.nan))
        if self._cost is not None:
            self._cost.append(cost)
        self.rows_seen += n
        return True

    def finish(self) -> bool:
        """Close the per-attempt arrays; False when an attempt repeats across chunks."""
        task, attempt = self._task.done(), self._attempt.done()
        infra, elapsed = self._infra.done(), self._elapsed.done()
        cost = None if self._cost is None else self._cost.done()
        self._finished = (task, attempt, infra, elapsed, cost)
        return not _repeated(
            task, attempt, len(self.task_ids), int(self.constants["k_budget"] or 1)
        )

    # ------------------------------------------------------------------ tallying

    def tally(self, *, drop_status: str | None = None, set_aside: Collection[str] = ()) -> RunTally:
        """The run tallied as :func:`~trialbook.ledger.tally_ledger` tallies its rows."""
        if drop_status is not None and drop_status != "infra_error":
            raise ArgumentError(
                f"drop_status must be 'infra_error' or None, got {drop_status!r}",
                argument="drop_status",
            )
        assert self._finished is not None, "finish() before tally()"
        task, attempt, infra, elapsed, cost = self._finished
        t = len(self.task_ids)
        acc = self.acc[:t]
        leaked_task = acc[:, :, LEAKS].sum(axis=1) > 0
        keep = ~leaked_task
        if set_aside:
            keep &= ~np.array([s in set_aside for s in self.stratum], dtype=bool)
        status_rows = int(acc[keep, 1, ATTEMPTS].sum())
        kept_rows = int(acc[keep, :, ATTEMPTS].sum())
        classes = 1 if drop_status is not None else 2
        use = acc[:, :classes]
        present = keep & (use[:, :, ATTEMPTS].sum(axis=1) > 0)
        emptied: tuple[str, ...] = ()
        if drop_status is not None:
            had = keep & (acc[:, :, ATTEMPTS].sum(axis=1) > 0)
            emptied = tuple(self.task_ids[i] for i in np.flatnonzero(had & ~present).tolist())
        if not present.any():
            raise TrialbookError(
                f"run {self.run_id!r}: no attempts left to score after quarantine and drops"
            )
        kept = use[present]  # (tasks kept, classes, columns)
        per_task = kept.sum(axis=1)
        whole = per_task.sum(axis=0)
        rows_kept = int(whole[ATTEMPTS])

        low = self.lowest[:t][present, :classes]
        which = np.argmin(low, axis=1)
        first_passed = self.lowest_passed[:t][present, :classes][np.arange(which.size), which]
        first_rows = self.first_row[:t][present, :classes].min(axis=1)

        row_kept = present[task] if classes == 2 else present[task] & ~infra
        all_kept = bool(row_kept.all())
        fp = self.first_pass[:t]
        below = row_kept & (attempt < fp[task])
        before = np.bincount(task[below], minlength=t).astype(np.int64)[present]
        before[fp[present] == _BIG] = -1

        kept_elapsed = elapsed if all_kept else elapsed[row_kept]
        kept_cost = _EMPTY
        if cost is not None:
            candidate = cost if all_kept else cost[row_kept]
            if not np.isnan(candidate).all():
                kept_cost = np.ascontiguousarray(candidate)
        score_rows = int(whole[SCORED])
        sums = self.score_kept if drop_status is not None else self.score_all
        score = np.array(sums[:t][present], dtype=np.float64) if score_rows == rows_kept else None

        strata_of = [self.stratum[i] for i in np.flatnonzero(present).tolist()]
        strata = tuple(
            dict.fromkeys(
                strata_of[j] for j in np.argsort(first_rows, kind="stable").tolist()
                if strata_of[j] is not None
            )
        )  # fmt: skip
        kept_ids = tuple(self.task_ids[i] for i in np.flatnonzero(present).tolist())
        infra_per_task = kept[:, 1, ATTEMPTS] if classes == 2 else np.zeros(len(kept_ids), np.int64)

        def known(s: int, r: int) -> Known:
            return Known(int(whole[s]), int(whole[r]))

        errors: dict[str, list[int]] = {}
        for (label, ti, cls), (row, n) in self.errors.items():
            if present[ti] and cls < classes:
                seen = errors.setdefault(label, [row, 0])
                seen[0] = min(seen[0], row)
                seen[1] += n
        failed_errors = tuple(
            (label, n) for label, (_, n) in sorted(errors.items(), key=lambda e: e[1][0])
        )
        k_budget = self.constants["k_budget"]
        assert isinstance(k_budget, float)
        return RunTally(
            run_id=self.run_id,
            source=self.source,
            provenance=None,
            completion=None,
            system=_text(self.constants["system"]),
            dataset_id=_text(self.constants["dataset_id"]),
            protocol=_text(self.constants["protocol"]),
            k_budget=int(k_budget),
            quarantined=tuple(sorted((self.task_ids[ti], a) for ti, a in self.leaked)),
            leaked_tasks=tuple(self.task_ids[i] for i in np.flatnonzero(leaked_task).tolist()),
            status_rows=status_rows,
            kept_rows=kept_rows,
            emptied_tasks=emptied,
            task_ids=kept_ids,
            attempts=per_task[:, ATTEMPTS].copy(),
            passes=per_task[:, PASSES].copy(),
            first_passed=np.asarray(first_passed, dtype=bool),
            before_first_pass=before,
            timeouts=per_task[:, TIMEOUTS].copy(),
            timeouts_recorded=per_task[:, ATTEMPTS].copy(),
            infra_errors=np.asarray(infra_per_task, dtype=np.int64),
            stratum=tuple(strata_of),
            weight=np.array([self.weight[i] for i in np.flatnonzero(present).tolist()]),
            strata=strata,
            passes_after_timeout=int(whole[AFTER_TIMEOUT]),
            infra_rows=int(infra_per_task.sum()),
            helper_calls=Known(int(whole[HELPER]), rows_kept),
            timed_out=Known(int(whole[TIMEOUTS]), rows_kept),
            cache_hit=known(CACHE, CACHE_ROWS),
            tool_calls=known(TOOLS, TOOLS_ROWS),
            tokens_in=known(TIN, TIN_ROWS),
            tokens_out=known(TOUT, TOUT_ROWS),
            elapsed_s=np.ascontiguousarray(kept_elapsed, dtype=np.float64),
            cost=kept_cost,
            score=score,
            score_rows=score_rows,
            not_recorded={},
            selected_rows=int(whole[SELECTED]),
            # every row of the run recording checks (the views that read them load the rows)
            checks_rows=self.checks_rows,
            failed={
                "failed": int(whole[FAIL_PLAIN]),
                "timed_out": int(whole[FAIL_TIMED]),
                "infra_error": int(whole[FAIL_INFRA]) if classes == 2 else 0,
            },
            failed_errors=failed_errors,
        )


_EMPTY = np.zeros(0, dtype=np.float64)
_BLOCK = 1 << 20


class _Grown:
    """A column appended chunk by chunk, grown in place (``ndarray.resize``: a realloc, which moves
    pages rather than copying them), so it never stands twice in memory."""

    def __init__(self, dtype: Any, reserve: int = 0) -> None:
        # reserved, not touched: pages no row was written to cost no memory
        self.data: NDArray[Any] = np.empty(reserve, dtype=dtype)
        self.size = 0

    def append(self, part: NDArray[Any]) -> None:
        end = self.size + part.size
        if end > self.data.size:
            self.data.resize(max(end, self.data.size * 3 // 2 + 4096), refcheck=False)
        self.data[self.size : end] = part
        self.size = end

    def done(self) -> NDArray[Any]:
        self.data.resize(self.size, refcheck=False)
        return self.data


def _repeated(task: NDArray[Any], attempt: NDArray[Any], tasks: int, k: int) -> bool:
    """Whether a (task, attempt_index) pair occurs twice: a flag per budgeted attempt (tasks x k,
    set a block of rows at a time) when that is dense enough, else a sort of packed keys."""
    rows = task.size
    if tasks * k <= max(8 * rows, 1 << 20):
        seen = np.zeros(tasks * k, dtype=bool)
        for start in range(0, rows, _BLOCK):
            stop = start + _BLOCK
            seen[task[start:stop].astype(np.int64) * k + attempt[start:stop].astype(np.int64)] = (
                True
            )
        return int(np.count_nonzero(seen)) < rows
    if tasks * k < 2**62:
        key = np.sort(task.astype(np.int64) * k + attempt.astype(np.int64))
        return bool((key[1:] == key[:-1]).any())
    order = np.lexsort((attempt, task))  # a budget too large to pack
    t, a = task[order], attempt[order]
    return bool(((t[1:] == t[:-1]) & (a[1:] == a[:-1])).any())


def _text(value: str | float | None) -> str | None:
    return value if isinstance(value, str) else None


class FileFold:
    """Every run of a file, folded chunk by chunk, with the rules across chunks."""

    def __init__(self, source: str, default_run: str, size: int = 0) -> None:
        self.source = source
        self.size = size
        """The file's bytes: with the first chunk's bytes per row, how many rows to reserve."""
        self._bytes = 0
        self.default_run = default_run
        self.runs: dict[str, RunFold] = {}
        self.broken = False
        self._named: bool | None = None  # whether rows name their run (every row, or none)
        self._rows = 0

    def fold(self, chunk: Ledger, size: int = 0) -> None:
        """Fold one chunk read on its own (its rules checked, ``run_id`` left unset when absent;
        ``size``: its bytes)."""
        if self.broken or len(chunk) == 0:
            return
        self._bytes += size
        run_codes = chunk.codes["run_id"]
        named = bool(run_codes[0] >= 0)  # the chunk's rules: all rows name their run, or none
        if self._named is None:
            self._named = named
        elif self._named != named:
            self.broken = True
            return
        ids = chunk.run_ids if named else (self.default_run,)
        for run_id in ids:
            rows = chunk.run(run_id) if named else chunk
            fold = self.runs.get(run_id)
            if fold is None:
                left = self.size - self._bytes + size
                reserve = int(left * len(chunk) / size * 1.05) + 1024 if size else 0
                fold = self.runs[run_id] = RunFold(run_id, self.source, rows, reserve)
            # positions in a run's subset keep their order: numbered from the chunk's start
            if not fold.fold(rows, self._rows):
                self.broken = True
                return
        self._rows += len(chunk)

    def finish(self) -> bool:
        """Whether every rule held (the file had rows, no attempt repeats across chunks)."""
        if self.broken or not self.runs:
            return False
        return all(fold.finish() for fold in self.runs.values())
