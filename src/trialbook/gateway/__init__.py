"""The model gateway: the OpenAI and Anthropic APIs behind one address and token per attempt.

The harness starts a :class:`Gateway` for a run and opens an attempt on it for each attempt it
runs: the agent's environment gets base URLs and a token of its own (the real key stays here), and
closing the attempt revokes the token and returns an :class:`AttemptUsage` measured from the
upstream's own answers, priced by the user's :class:`Prices`, held to the :class:`Budgets`. The
gateway knows nothing of ledgers or suites (docs/gateway.md).
"""

from __future__ import annotations

from trialbook.gateway._api import ENV_NAMES, Gateway
from trialbook.gateway._budget import Budgets
from trialbook.gateway._meter import AttemptUsage, ProviderFailure
from trialbook.gateway._prices import ModelPrice, Prices, read_prices

__all__ = [
    "ENV_NAMES",
    "AttemptUsage",
    "Budgets",
    "Gateway",
    "ModelPrice",
    "Prices",
    "ProviderFailure",
    "read_prices",
]
