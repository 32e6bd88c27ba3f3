"""Which of an Inspect log's scores decides ``passed``, and what Inspect itself reported for it.

Inspect names a score in its results (``EvalScore.name``) either after its scorer (a scorer whose
value is one number or letter) or after a key of the scorer's dict value
(``Score(value={"correct": 1, "style": 0})`` gives results ``correct`` and ``style`` of scorer
``dict_value``, while each sample keeps the dict under ``scores["dict_value"]``). A
:class:`Named` score is read from a sample the same way in both cases. A log without a results
section (an eval that failed) is named from its samples' own scores.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from trialbook.errors import ArgumentError

__all__ = [
    "Named",
    "check_request",
    "inspect_figures",
    "listed",
    "names_in_sample",
    "result_names",
]


@dataclass(frozen=True)
class Named:
    """One score a log names: a scorer's own value, or one key of a scorer's dict value."""

    name: str
    """The name Inspect's results give it (what ``scorer`` names on our side)."""
    scorer: str
    """The scorer whose value holds it: the key of each sample's ``scores``."""
    key: str | None
    """The key in the scorer's dict value; None for the scorer's own value."""

    def describe(self) -> str:
        """The score in words, for a note."""
        if self.key is None:
            return f"scorer {self.name!r}"
        return f"key {self.key!r} of scorer {self.scorer!r} (a dict value)"

    def value_in(self, scores: Mapping[str, Any]) -> object | None:
        """The value this score has in a sample's ``scores`` (None: the sample has none)."""
        own = scores.get(self.name)
        if own is not None:
            if not isinstance(own.value, Mapping):
                return cast(object, own.value)
            if (self.key or self.name) in own.value:  # a scorer named like its dict's key
                return cast(object, own.value[self.key or self.name])
        parent = scores.get(self.scorer)
        if self.key is not None and parent is not None and isinstance(parent.value, Mapping):
            return parent.value.get(self.key)
        return None


def result_names(results: Any) -> dict[str, Named]:
    """The scores a log's results section names, in its order (empty without results)."""
    out: dict[str, Named] = {}
    for entry in results.scores if results is not None else []:
        key = None if entry.name == entry.scorer else entry.name
        out.setdefault(entry.name, Named(entry.name, entry.scorer, key))
    return out


def names_in_sample(scores: Mapping[str, Any]) -> tuple[dict[str, Named], dict[str, list[str]]]:
    """The scores one sample holds, as the results would name them, and the scorers whose value is
    a dict (with their keys)."""
    named: dict[str, Named] = {}
    parents: dict[str, list[str]] = {}
    for scorer, score in scores.items():
        if isinstance(score.value, Mapping):
            keys = [str(key) for key in score.value]
            parents[scorer] = keys
            for key in keys:
                named.setdefault(key, Named(key, scorer, key))
        else:
            named.setdefault(scorer, Named(scorer, scorer, None))
    return named, parents


def check_request(
    path: Path, requested: str, named: Mapping[str, Named], parents: Mapping[str, Iterable[str]]
) -> Named:
    """The score ``requested`` names; an ArgumentError (argument ``scorer``) naming those that
    exist when it is none of them, or the keys to choose from when it names a dict-valued scorer."""
    if requested in named:
        return named[requested]
    if requested in parents:
        keys = ", ".join(repr(k) for k in parents[requested])
        raise ArgumentError(
            f"{path}: scorer {requested!r} gives a dict of scores, not one: name one of its "
            f"keys ({keys})",
            argument="scorer",
        )
    known = ", ".join(repr(n) for n in named) or "none: no sample has a score"
    raise ArgumentError(
        f"{path}: no scorer {requested!r} in the log (scores: {known})", argument="scorer"
    )


def inspect_figures(results: Any, named: Named) -> str | None:
    """What Inspect's results section reports for ``named``, one clause per reducer (None when the
    log has no results for it)."""
    clauses = []
    for entry in results.scores if results is not None else []:
        if entry.name != named.name:
            continue
        metrics = ", ".join(
            f"{_plain(name)} {_number(metric.value)}" for name, metric in entry.metrics.items()
        )
        counted = "" if entry.scored_samples is None else f" over {entry.scored_samples} samples"
        unscored = f", {entry.unscored_samples} unscored" if entry.unscored_samples else ""
        reducer = f"reducer {_plain(entry.reducer)}" if entry.reducer else "no reducer"
        clauses.append(f"{reducer}: {metrics or 'no metric'}{counted}{unscored}")
    if not clauses:
        return None
    return f"Inspect's own figures for {named.name!r} (the log's results): " + "; ".join(clauses)


def _number(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return repr(value)
    return "NaN" if math.isnan(value) else f"{value:.6g}"


def _plain(text: str) -> str:
    """A name from the log as it is when printable and short, else quoted (escapes shown)."""
    return text if text.isprintable() and len(text) <= 40 else repr(text[:40])


def listed(names: Iterable[str]) -> str:
    """Names from a log, comma-separated, for a message (each quoted when not plain)."""
    return ", ".join(_plain(name) for name in names)
