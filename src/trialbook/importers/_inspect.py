"""Inspect AI: ``.eval`` and ``.json`` logs, read through inspect-ai's own reader (``inspect_ai.log``).

Needs the optional extra ``trialbook[inspect]``. The header is read alone (``header_only``) and the
samples are streamed (``read_eval_log_samples``), so a large log is never held whole. One row per
sample x epoch (``attempt_index`` = epoch - 1, ``k_budget`` = the epochs configured):

- passed exactly as Inspect's reducers decide: ``value_to_float(value) >= 1.0`` on the chosen
  scorer's value (so a partial ``"P"`` fails, and its 0.5 is kept as ``score``); with several scorers
  the caller names one (``scorer``), nothing is guessed;
- a sample with ``error`` is an infrastructure error;
- a sample without a value for the scorer, or whose value is NaN, is *unscored*: Inspect leaves it
  out of its metrics; here it is a failure (status failed, error "unscored"), counted in a note;
- a ``limit`` of type time or working marks ``timed_out``; Inspect still scores such a sample, so it
  may pass (the run is ``graded_after_timeout``);
- ``timeout_s`` is the log's time limit (``eval.config.time_limit``, or the limit a sample hit);
  none configured: not recorded. ``elapsed_s`` is the sample's ``total_time``;
- ``error_retries`` (earlier tries of the same sample and epoch that errored and were re-run,
  unscored) stay out of the rows as Inspect keeps them out of its scores, and are counted in a note;
- tokens from ``model_usage`` (input + cache read + cache write in, output out), ``cache_hit`` when
  a cache read is recorded, ``cost`` from ``total_cost`` (null unless Inspect priced every model).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from trialbook.errors import ArgumentError, Problem, TrialbookError
from trialbook.importers._base import ImportedRun, ImportOptions
from trialbook.importers._common import (
    attempt_row,
    expand,
    fail,
    raise_problems,
    show,
    source_file,
    too_large,
)
from trialbook.importers._inflate import inflated_past

__all__ = ["INSPECT", "InspectLogs"]

_EXCLUDED = {"events", "attachments", "store"}
"""Sample fields never needed for a row (the bulk of a log)."""


def _reader() -> Any:
    try:
        import inspect_ai.log as log_module
    except ImportError:
        raise TrialbookError(
            "reading Inspect logs needs inspect-ai: pip install 'trialbook[inspect]'"
        ) from None
    return log_module


class InspectLogs:
    """Inspect AI eval logs (one run per log)."""

    name = "inspect"

    def detect(self, path: Path) -> bool:
        """An ``.eval`` file (a zip: its first bytes say so); a ``.json`` log is not detected (name
        the source: many JSON files are not logs)."""
        if path.suffix.lower() != ".eval" or not path.is_file():
            return False
        try:
            with path.open("rb") as fh:
                return fh.read(4) == b"PK\x03\x04"
        except OSError:
            return False

    def read(self, paths: Sequence[Path], options: ImportOptions) -> Iterator[ImportedRun]:
        """One run per log."""
        files = expand(paths, (".eval", ".json"))
        if options.run_id is not None and len(files) > 1:
            raise ArgumentError(
                f"run_id names one run, but {len(files)} logs were given", argument="run_id"
            )
        for path in files:
            yield _read_log(path, options)


def _bounded(path: Path, limit: int) -> None:
    """Refuse a log that would inflate past ``limit``: a ``.json`` log larger than it, or an
    ``.eval`` (a zip) with a member that inflates to more (measured by inflating it, as
    inspect-ai will: the size a zip's directory records is whatever its writer put there)."""
    if path.suffix.lower() != ".eval":
        if (size := path.stat().st_size) > limit:
            raise too_large(path, f"holds {size:,} bytes", limit)
        return
    try:
        found = inflated_past(path, limit)
    except Exception as exc:  # zipfile, zlib and zstandard each raise their own kinds
        raise fail(path, f"not a readable Inspect log: {_reason(exc)}") from None
    if found is not None:
        raise too_large(path, f"member {found!r} inflates to more", limit)


def _read_log(path: Path, options: ImportOptions) -> ImportedRun:
    _bounded(path, options.max_bytes)
    log_module = _reader()
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    try:
        header = log_module.read_eval_log(path, header_only=True)
    except (
        Exception
    ) as exc:  # inspect-ai raises many kinds for a broken log; each is the file's fault
        raise fail(path, f"not a readable Inspect log: {_reason(exc)}") from None
    config = header.eval.config
    epochs = config.epochs or 1
    time_limit = config.time_limit
    scorer_names = [s.name for s in (header.results.scores if header.results else [])]
    scorers = list(dict.fromkeys(scorer_names))
    scorer = options.scorer
    if scorer is None and len(scorers) > 1:
        raise ArgumentError(
            f"{path}: the log has several scorers ({', '.join(scorers)}): name one",
            argument="scorer",
        )
    if scorer is not None and scorers and scorer not in scorers:
        raise ArgumentError(
            f"{path}: no scorer {scorer!r} in the log (scorers: {', '.join(scorers)})",
            argument="scorer",
        )
    version = header.eval.packages.get("inspect_ai")
    run_id = options.run_id or path.stem
    system = options.system or header.eval.model
    problems: list[Problem] = []
    rows: list[dict[str, object]] = []
    unscored = errored = retried_samples = retries = 0
    try:
        samples = log_module.read_eval_log_samples(
            path, all_samples_required=False, exclude_fields=_EXCLUDED
        )
        for sample in samples:
            where = f"sample {sample.id!r} epoch {sample.epoch}"
            if not isinstance(sample.epoch, int) or not 1 <= sample.epoch <= epochs:
                problems.append(
                    Problem(0, f"{where}: field 'epoch': expected 1..{epochs}", str(path))
                )
                continue
            scores = sample.scores or {}
            if scorer is None and len(scores) > 1:
                raise ArgumentError(
                    f"{path}: {where} has several scores ({', '.join(scores)}): name a scorer",
                    argument="scorer",
                )
            name = scorer or next(iter(scores), None)
            value = scores[name].value if name is not None and name in scores else None
            number: float | None = None
            if value is not None:
                try:
                    number = float(to_float(value))
                except (TypeError, ValueError):
                    problems.append(
                        Problem(
                            0,
                            f"{where}: field 'scores.{name}.value': not a score Inspect can "
                            f"reduce: {show(value)}",
                            str(path),
                        )
                    )
                    continue
                if math.isnan(number):
                    number = None
            error = sample.error.message if sample.error is not None else None
            hit = sample.limit.type if sample.limit is not None else None
            timed_out: bool | None = hit in ("time", "working")
            limit_s = time_limit
            if hit == "time" and sample.limit.limit is not None:
                limit_s = sample.limit.limit
            passed = error is None and number is not None and number >= 1.0
            if error is not None:
                errored += 1
                timed_out = None if timed_out else False  # an error after a limit: unclear
                status = "infra_error"
            elif number is None:
                unscored += 1
                status = "timed_out" if timed_out else "failed"
            else:
                status = "passed" if passed else "timed_out" if timed_out else "failed"
            tries = len(sample.error_retries or [])
            retried_samples += tries > 0
            retries += tries
            usage = list((sample.model_usage or {}).values())
            tokens_in = sum(
                u.input_tokens
                + (u.input_tokens_cache_read or 0)
                + (u.input_tokens_cache_write or 0)
                for u in usage
            )
            cache = [
                u.input_tokens_cache_read for u in usage if u.input_tokens_cache_read is not None
            ]
            costs = [u.total_cost for u in usage]
            rows.append(
                attempt_row(
                    run_id=run_id,
                    system=system,
                    task_id=str(sample.id),
                    attempt_index=sample.epoch - 1,
                    k_budget=epochs,
                    timeout_s=float(limit_s) if limit_s else None,
                    elapsed_s=sample.total_time,
                    passed=passed,
                    timed_out=timed_out,
                    status=status,
                    score=number if number is not None and 0 <= number <= 1 else None,
                    error=error if error is not None else ("unscored" if number is None else None),
                    tokens_in=tokens_in if usage else None,
                    tokens_out=sum(u.output_tokens for u in usage) if usage else None,
                    cache_hit=any(c > 0 for c in cache) if cache else None,
                    cost=sum(costs) if usage and all(c is not None for c in costs) else None,
                    model_version=header.eval.model,
                    harness_version=None if version is None else f"inspect_ai {version}",
                    started_at=_stamp(sample.started_at),
                    finished_at=_stamp(sample.completed_at),
                    graded_after_timeout=True,
                )
            )
    except TrialbookError:
        raise
    except (
        Exception
    ) as exc:  # a truncated member, a sample the model cannot parse: the file's fault
        raise fail(path, f"not a readable Inspect log: {_reason(exc)}") from None
    raise_problems(problems)
    if not rows:
        raise fail(path, "the log holds no samples")
    notes = [
        "Inspect records no hidden-helper calls or oracle leaks: not recorded by the source",
        "passed: value_to_float(value) >= 1.0 on "
        + (f"scorer {scorer or scorers[0]!r}" if scorers else "the sample's score")
        + ", as Inspect's reducers decide; Inspect scores a sample after a time limit, so a "
        "timed-out sample may pass",
    ]
    if not time_limit:
        notes.append("the log sets no time limit: timeout_s is not recorded by the source")
    if header.status != "success":
        notes.append(f"the log's status is {header.status!r}: it may not hold every sample")
    if unscored:
        notes.append(
            f"{unscored} unscored sample(s) (no value, or NaN): Inspect leaves them out of its "
            "metrics; counted here as failures"
        )
    if errored:
        notes.append(
            f"{errored} sample(s) ended in an error: infrastructure errors here, counted as "
            "failures unless dropped"
        )
    if retries:
        notes.append(
            f"{retried_samples} sample(s) were retried after errors ({retries} errored tries in "
            "all, Inspect's error_retries): the tries are not rows, as Inspect does not score them"
        )
    return ImportedRun(
        run_id=run_id,
        source="inspect",
        source_version=f"log version {header.version}"
        + (f", inspect_ai {version}" if version else ""),
        files=(source_file(path),),
        rows=rows,
        notes=tuple(notes),
    )


def _stamp(value: object) -> str | None:
    """An Inspect timestamp as ISO text (None when absent or without a UTC offset)."""
    if value is None:
        return None
    text = value if isinstance(value, str) else getattr(value, "isoformat", lambda: None)()
    if not isinstance(text, str):
        return None
    from datetime import datetime

    try:
        return text if datetime.fromisoformat(text).tzinfo is not None else None
    except ValueError:
        return None


def _reason(exc: BaseException) -> str:
    """One line: for a log that breaks Inspect's schema (pydantic), the first field at fault."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            found = errors()
        except Exception:  # not pydantic's errors(): fall back to the message
            found = None
        if found:
            first = found[0]
            where = ".".join(str(part) for part in first.get("loc", ()))
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            return f"field {where!r}: {first.get('msg', 'invalid')}{more}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:120]}" if text else type(exc).__name__


INSPECT = InspectLogs()
