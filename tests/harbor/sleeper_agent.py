"""A Harbor 0.25.0 agent that sleeps past any short timeout, for the parity test's timeout check.

Harbor has no such agent built in (its ``nop`` returns at once); Harbor imports this one by its
import path (``AgentConfig.import_path``) in the Harbor venv. It is trialbook's ``sleep 20`` agent.
"""

from __future__ import annotations

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

__all__ = ["SleeperAgent"]

SLEEP_S = 20


class SleeperAgent(BaseAgent):
    """Runs ``sleep 20`` in the environment and does nothing else."""

    @staticmethod
    def name() -> str:
        return "sleeper"

    def version(self) -> str:
        return "1.0.0"

    async def setup(self, environment: BaseEnvironment) -> None:
        return None

    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        await environment.exec(f"sleep {SLEEP_S}")
