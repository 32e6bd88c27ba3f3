"""The ``passk`` calculator's output: every step of one task's pass@k and pass^k, as text or JSON."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the renderer only reads attributes
    from trialbook.stats import PassKStep

__all__ = ["PASSK_SCHEMA", "passk_json", "passk_text", "passk_to_dict"]

PASSK_SCHEMA = "trialbook.passk/1"


def passk_to_dict(s: PassKStep) -> dict[str, Any]:
    """``trialbook.passk/1``: the inputs used, the three binomial counts and the four rates."""
    return {
        "schema": PASSK_SCHEMA,
        "n": s.n,
        "c": s.c,
        "k": s.k,
        "clamped": list(s.clamped),
        "C(n,k)": s.total,
        "C(n-c,k)": s.all_fail,
        "C(c,k)": s.all_pass,
        "pass@k": s.pass_at_k,
        "pass^k": s.pass_hat_k,
        "independent_pass@k": s.independent,
        "independent_pass^k": s.independent_hat,
    }


def passk_json(s: PassKStep) -> str:
    """The JSON text. The standard library's encoder, not orjson: binomial counts grow past 64 bits."""
    return json.dumps(passk_to_dict(s), indent=2)


def passk_text(s: PassKStep, *, width: int = 80) -> str:
    """The worked calculation, one step a line, and why the independent-trials value differs,
    in paragraphs that fit ``width``."""
    from trialbook.report._wrap import wrap

    return "\n".join(wrap(line, width, indent=0) for line in _lines(s))


def _lines(s: PassKStep) -> list[str]:
    lines = [f"effective settings: n={s.n}, c={s.c}, k={s.k}"]
    if s.clamped:
        lines[0] += f"   (clamped: {'; '.join(s.clamped)})"
    nc = s.n - s.c
    lines += [
        f"C(n, k)   = C({s.n},{s.k}) = {s.total}   ways to choose {s.k} of the {s.n} attempts",
        f"C(n-c, k) = C({nc},{s.k}) = {s.all_fail}   of them hold no pass",
        f"pass@{s.k} = 1 - {s.all_fail}/{s.total} = {100 * s.pass_at_k:.2f}%"
        "   (at least one of k attempts passes)",
        f"C(c, k)   = C({s.c},{s.k}) = {s.all_pass}   of them hold only passes",
        f"pass^{s.k} = {s.all_pass}/{s.total} = {100 * s.pass_hat_k:.2f}%   (all k attempts pass)",
        "",
        f"independent trials at p = c/n = {s.c}/{s.n}: 1 - (1 - {s.c / s.n:.4g})^{s.k} = "
        f"{100 * s.independent:.2f}%, and p^k = {100 * s.independent_hat:.2f}%",
    ]
    if _shown(s.pass_at_k) == _shown(s.independent) and _shown(s.pass_hat_k) == _shown(
        s.independent_hat
    ):
        # c = 0 or c = n (or k = 1): drawing with or without replacement gives the same values
        lines.append(
            "the two agree here: with c = 0, c = n or k = 1, drawing k of the n attempts with or "
            "without replacement gives the same rates."
        )
        return lines
    lines.append(
        "why they differ: pass@k above counts draws of k from the n attempts already made (without "
        "replacement), which is the unbiased estimate; 1 - (1 - c/n)^k plugs the observed rate into "
        "the with-replacement formula, which is biased low as an estimate of pass@k. Retries that "
        "read earlier failures are not independent at all: say which protocol produced the attempts."
    )
    return lines


def _shown(x: float) -> str:
    return f"{100 * x:.2f}"
