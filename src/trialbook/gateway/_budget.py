"""Per-attempt budgets: past its cost or token budget, an attempt's next call is refused."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from trialbook.errors import ArgumentError

__all__ = ["Budgets", "budget_refusal"]


@dataclass(frozen=True)
class Budgets:
    """What one attempt may spend through the gateway; None: no limit."""

    max_cost: float | None = None
    """Dollars (priced by the price table) an attempt may spend."""
    max_tokens: int | None = None
    """Tokens (input, output, cache read and cache write together) an attempt may use."""

    def __post_init__(self) -> None:
        if self.max_cost is not None and (
            isinstance(self.max_cost, bool)
            or not isinstance(self.max_cost, int | float)
            or not math.isfinite(self.max_cost)
            or self.max_cost <= 0
        ):
            raise ArgumentError(
                f"max_cost: must be a positive number of dollars, got {self.max_cost!r}",
                argument="max_cost",
            )
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool)
            or not isinstance(self.max_tokens, int)
            or self.max_tokens <= 0
        ):
            raise ArgumentError(
                f"max_tokens: must be a positive whole number of tokens, got {self.max_tokens!r}",
                argument="max_tokens",
            )


def budget_refusal(
    budgets: Budgets, *, tokens: int, cost: Decimal | None, unpriced: str | None
) -> str | None:
    """Why the next call is refused (the message the agent reads), or None while within budget.

    A budget is spent once the attempt has used all of it (``tokens >= max_tokens``): calls in
    flight together are each let through, so an attempt can end a little past its budget, never
    further than the calls it had open when it reached it. A cost budget cannot be held once a
    call used a model the price table does not price (``unpriced``): the next call is refused too.
    """
    if budgets.max_tokens is not None and tokens >= budgets.max_tokens:
        return (
            f"trialbook gateway: this attempt's token budget is spent ({tokens} of "
            f"{budgets.max_tokens} tokens used); no further model calls are allowed"
        )
    if budgets.max_cost is not None:
        if unpriced is not None:
            return (
                f"trialbook gateway: this attempt has a cost budget, but model {unpriced!r} is not "
                "in the price table, so its cost cannot be measured; no further model calls are "
                "allowed"
            )
        if cost is not None and cost >= Decimal(str(budgets.max_cost)):
            return (
                f"trialbook gateway: this attempt's cost budget is spent (${float(cost):.6g} of "
                f"${budgets.max_cost:.6g} used); no further model calls are allowed"
            )
    return None
