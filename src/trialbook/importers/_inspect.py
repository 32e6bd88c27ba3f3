"""Inspect AI: ``.eval`` and ``.json`` logs, read through inspect-ai's own reader (``inspect_ai.log``).

Needs the optional extra ``trialbook[inspect]``. The header is read alone (``header_only``) and the
samples are streamed (``read_eval_log_samples``), so a large log is never held whole. One row per
sample x epoch (``attempt_index`` = epoch - 1, ``k_budget`` = the epochs configured):

- passed exactly as Inspect's reducers decide: ``value_to_float(value) >= 1.0`` on the chosen
  score's value (so a partial ``"P"`` fails, and its 0.5 is kept as ``score``); a score is named
  as the log's results name it, a key of a dict-valued scorer included
  (:mod:`trialbook.importers._inspect_scores`); with several the caller names one (``scorer``),
  nothing is guessed; a log without results (a failed eval) is checked against its samples' scores;
- a sample with ``error`` and no score is an infrastructure error (Inspect leaves it out of its
  figures); one with an error that Inspect scored all the same (``score_on_error``) is a graded
  attempt, its score decides and the error is kept, as Inspect counts it;
- a sample without a value for the scorer, or whose value is NaN, is *unscored*: Inspect leaves it
  out of its metrics; here it is a failure (status failed, error "unscored"), counted in a note;
- a ``limit`` of type time or working marks ``timed_out``; Inspect still scores such a sample, so it
  may pass (the run is ``graded_after_timeout``);
- ``timeout_s`` is the log's time limit (``eval.config.time_limit``, or the limit a sample hit);
  none configured: not recorded. ``elapsed_s`` is the sample's ``total_time``;
- ``error_retries`` (earlier tries of the same sample and epoch that errored and were re-run,
  unscored) stay out of the rows as Inspect keeps them out of its scores, and are counted in a note;
- tokens from ``model_usage`` (input + cache read + cache write in, output out): a sample that
  never called a model has no usage and zero tokens, as in Inspect's totals; ``cache_hit`` when a
  cache read is recorded, ``cost`` from ``total_cost`` (null unless Inspect priced every model).

The run's notes give Inspect's own figures from the log's results section beside ours, and what
makes them differ (errored and NaN-scored samples, which Inspect leaves out).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from trialbook.errors import ArgumentError, Problem, TrialbookError
from trialbook.importers._base import ImportedRun, ImportOptions
from trialbook.importers._common import (
    attempt_row,
    expand,
    fail,
    head,
    raise_problems,
    show,
    source_file,
    too_large,
)
from trialbook.importers._inflate import inflated_past
from trialbook.importers._inspect_scores import (
    Named,
    check_request,
    inspect_figures,
    listed,
    names_in_sample,
    result_names,
)

__all__ = ["INSPECT", "InspectLogs"]

_JSON_LOG = re.compile(
    r'\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"[a-z_]+"\s*,\s*"eval"\s*:\s*\{\s*"eval_id"'
)
"""The head of a JSON log: inspect-ai writes ``version``, ``status``, then ``eval`` (its
``EvalLog`` field order), ``eval_id`` first within it."""

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
        """An ``.eval`` file (a zip: its first bytes say so), or a ``.json`` log: an object whose
        first key is ``version`` and whose ``eval`` block follows ``status``, as inspect-ai writes
        them (a peek at the head; the reader checks the rest)."""
        if path.suffix.lower() == ".json":
            return _JSON_LOG.match(head(path)) is not None
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
    declared = result_names(header.results)
    requested = options.scorer
    chosen: Named | None = None
    if declared:
        if requested is None and len(declared) > 1:
            raise ArgumentError(
                f"{path}: the log has several scorers ({listed(declared)}): name one",
                argument="scorer",
            )
        dict_scorers = {
            n.scorer: [k.name for k in declared.values() if k.scorer == n.scorer]
            for n in declared.values()
            if n.key is not None
        }
        chosen = (
            check_request(path, requested, declared, dict_scorers)
            if requested is not None
            else next(iter(declared.values()))
        )
    version = header.eval.packages.get("inspect_ai")
    # Whether Inspect priced every model the run called: then a sample that called none cost 0.
    priced = all(u.total_cost is not None for u in header.stats.model_usage.values())
    run_id = options.run_id or path.stem
    system = options.system or header.eval.model
    problems: list[Problem] = []
    rows: list[dict[str, object]] = []
    seen: dict[str, Named] = {}
    seen_parents: dict[str, list[str]] = {}
    used: dict[str, Named] = {}
    unscored = nan = errored = errored_scored = retried_samples = retries = unused = 0
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
            named = chosen
            if named is None:  # no results section: the sample's own scores name them
                here, parents = names_in_sample(scores)
                seen.update(here)
                seen_parents.update(parents)
                if requested is None and len(here) > 1:
                    raise ArgumentError(
                        f"{path}: {where} has several scores ({listed(here)}): name a scorer",
                        argument="scorer",
                    )
                named = (
                    here.get(requested)
                    if requested is not None
                    else next(iter(here.values()), None)
                )
            value = named.value_in(scores) if named is not None else None
            if named is not None and value is not None:
                used.setdefault(named.name, named)
            number: float | None = None
            if value is not None:
                try:
                    number = float(to_float(value))
                except (TypeError, ValueError):
                    problems.append(
                        Problem(
                            0,
                            f"{where}: field 'scores.{named.scorer if named else None}.value': "
                            f"not a score Inspect can reduce: {show(value)}",
                            str(path),
                        )
                    )
                    continue
                if math.isnan(number):
                    nan += 1
                    number = None
            error = sample.error.message if sample.error is not None else None
            hit = sample.limit.type if sample.limit is not None else None
            timed_out: bool | None = hit in ("time", "working")
            limit_s = time_limit
            if hit == "time" and sample.limit.limit is not None:
                limit_s = sample.limit.limit
            # An errored sample that Inspect scored all the same (score_on_error) is graded,
            # as Inspect counts it in its metrics; without a score it is an infrastructure error.
            graded = error is None or value is not None
            passed = graded and number is not None and number >= 1.0
            if not graded:
                errored += 1
                timed_out = None if timed_out else False  # an error after a limit: unclear
                status = "infra_error"
            else:
                errored_scored += error is not None
                if number is None:
                    unscored += 1
                status = "passed" if passed else "timed_out" if timed_out else "failed"
            tries = len(sample.error_retries or [])
            retried_samples += tries > 0
            retries += tries
            # Inspect records each model's usage; a sample that never called a model has none:
            # zero tokens, as Inspect's own totals count it.
            usage = list((sample.model_usage or {}).values())
            unused += not usage
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
                    tokens_in=tokens_in,
                    tokens_out=sum(u.output_tokens for u in usage),
                    cache_hit=any(c > 0 for c in cache) if cache else None,
                    cost=sum(costs)
                    if all(c is not None for c in costs) and (usage or priced)
                    else None,
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
    if requested is not None and chosen is None:
        check_request(path, requested, seen, seen_parents)  # refuses a name no sample holds
    raise_problems(problems)
    if not rows:
        raise fail(path, "the log holds no samples")
    decided = [chosen] if chosen is not None else list(used.values())
    notes = [
        "Inspect records no hidden-helper calls or oracle leaks: not recorded by the source",
        "passed: value_to_float(value) >= 1.0 on "
        + (" or ".join(n.describe() for n in decided) if decided else "the sample's score")
        + ", as Inspect's reducers decide; Inspect scores a sample after a time limit, so a "
        "timed-out sample may pass",
    ]
    figures = inspect_figures(header.results, chosen) if chosen is not None else None
    if figures is not None:
        notes.append(figures)
    if not time_limit:
        notes.append("the log sets no time limit: timeout_s is not recorded by the source")
    if header.status != "success":
        notes.append(
            f"the log's status is {header.status!r}: it may not hold every sample"
            + ("" if header.results else ", and Inspect computed no figures (no results)")
        )
    if errored:
        notes.append(
            f"{errored} sample(s) ended in an error without a score: Inspect leaves them out of "
            "its figures; here they are infrastructure errors counted as failures, so ours are "
            "no higher than Inspect's; --drop-infra-errors leaves them out as Inspect does (pass@1 "
            "is then its mean reducer's figure)"
        )
    if errored_scored:
        notes.append(
            f"{errored_scored} sample(s) ended in an error but Inspect scored them "
            "(score_on_error): graded attempts here as in Inspect's figures, decided by their "
            "score, the error kept in the row"
        )
    if nan:
        notes.append(
            f"{nan} sample(s) scored NaN: Inspect leaves them out of its figures; counted here as "
            "failures (error 'unscored'), with or without --drop-infra-errors"
        )
    if unscored - nan:
        notes.append(
            f"{unscored - nan} sample(s) without a value for the scorer: Inspect leaves them out "
            "of its metrics; counted here as failures (error 'unscored')"
        )
    if unused:
        notes.append(
            f"{unused} sample(s) never called a model (no usage recorded): zero tokens, as in "
            "Inspect's totals"
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
