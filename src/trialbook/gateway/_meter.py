"""What one attempt used, summed call by call, and the frozen record handed back at its end."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from decimal import Decimal

from trialbook.gateway._prices import Prices
from trialbook.gateway._usage import CallUsage

__all__ = ["AttemptUsage", "Meter", "ProviderFailure"]


@dataclass(frozen=True)
class ProviderFailure:
    """One call the upstream failed: an error status, a timeout or a broken connection."""

    status: int | None
    """The upstream's HTTP status (5xx or 429); None when no status came (timeout, connection)."""
    reason: str
    """``"status"``, ``"timeout"``, ``"connection"`` (could not connect or no answer) or
    ``"dropped"`` (the connection broke while the answer streamed)."""

    def __str__(self) -> str:
        return str(self.status) if self.status is not None else self.reason


@dataclass(frozen=True)
class AttemptUsage:
    """What one attempt used through the gateway, measured from the upstream's own answers."""

    input_tokens: int
    """Input tokens neither read from nor written to the prompt cache."""
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    calls: int
    """Calls passed to the upstream (refused calls are not among them)."""
    unmetered_calls: int
    """Model calls answered without a usage figure (a stream the client left before its end):
    their tokens are unknown, so ``cost`` is not measured when there is one."""
    model_version: str | None
    """The model the upstream answered with; several joined by ``", "`` in first-seen order."""
    seconds_in_calls: float
    """Wall-clock seconds spent in calls, summed over calls (overlapping calls count each)."""
    cost: float | None
    """Dollars by the price table; None (not measured) when a call used an unpriced model or a
    model call's usage is unknown (``unmetered_calls``), never 0 for what was not measured."""
    unpriced_models: tuple[str, ...]
    """The models that made ``cost`` unmeasurable."""
    refused_calls: int
    """Calls at this attempt's address refused for their credentials (another attempt's token...)."""
    budget_refusals: int
    """Calls refused because the attempt's budget was spent."""
    provider_failures: tuple[ProviderFailure, ...]
    """Calls the upstream failed, in order."""
    log: str | None = None
    """The JSONL file of this attempt's calls, when one was kept."""
    log_error: str | None = None
    """Why that file stopped short of the attempt's calls (a write failed: a full disk), or None."""

    @property
    def tokens(self) -> int:
        """Every token the model read or wrote."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    @property
    def budget_hit(self) -> bool:
        """True when a call was refused for the budget: a ``stop_reason = "budget"`` candidate."""
        return self.budget_refusals > 0

    def failure_text(self) -> str:
        """``"2 (500, timeout)"``: the count and statuses of provider failures, or ``""``."""
        if not self.provider_failures:
            return ""
        return f"{len(self.provider_failures)} ({', '.join(map(str, self.provider_failures))})"


@dataclass
class _ModelTokens:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0


@dataclass
class Meter:
    """The running sums of one attempt; every method is safe to call from any thread."""

    prices: Prices
    log: str | None = None
    _lock: threading.Condition = field(default_factory=threading.Condition)
    _models: dict[str | None, _ModelTokens] = field(default_factory=dict)
    _answered: list[str] = field(default_factory=list)
    _cost_keys: dict[str | None, str | None] = field(default_factory=dict)
    calls: int = 0
    unmetered: int = 0
    seconds: float = 0.0
    refused: int = 0
    budget_refusals: int = 0
    failures: list[ProviderFailure] = field(default_factory=list)
    in_flight: int = 0

    def begin(self) -> None:
        with self._lock:
            self.in_flight += 1

    def end(
        self,
        usage: CallUsage,
        *,
        requested: str | None,
        seconds: float,
        failure: ProviderFailure | None,
        expected: bool,
    ) -> None:
        """One call ended; ``expected``: a model call answered 2xx, whose usage must be known."""
        with self._lock:
            self.calls += 1
            self.seconds += seconds
            if failure is not None:
                self.failures.append(failure)
            if usage.model and usage.model not in self._answered:
                self._answered.append(usage.model)
            if not usage.reported:
                self.unmetered += int(expected)
            else:
                # priced by the model the upstream answered with, else the one asked for
                model = usage.model if usage.model in self.prices.models else requested
                self._cost_keys.setdefault(model, usage.model or requested)
                sums = self._models.setdefault(model, _ModelTokens())
                sums.input += usage.input
                sums.output += usage.output
                sums.cache_read += usage.cache_read
                sums.cache_write += usage.cache_write

    def finish(self) -> None:
        """A call begun is over, its answer sent and its log line written."""
        with self._lock:
            self.in_flight -= 1
            self._lock.notify_all()

    def refuse(self, *, budget: bool) -> None:
        with self._lock:
            if budget:
                self.budget_refusals += 1
            else:
                self.refused += 1

    def spent(self, *, cost: bool = True) -> tuple[int, Decimal | None, str | None]:
        """Tokens, cost (None when not measurable, or not asked for) and the first unpriced
        model, so far."""
        with self._lock:
            tokens = sum(
                s.input + s.output + s.cache_read + s.cache_write for s in self._models.values()
            )
            if not cost:
                return tokens, None, None
            cost_now, unpriced = self._cost()
            return tokens, cost_now, unpriced[0] if unpriced else None

    def _cost(self) -> tuple[Decimal | None, list[str]]:
        total = Decimal(0)
        unpriced: list[str] = []
        for model, s in self._models.items():
            cost = self.prices.cost(
                model,
                input=s.input,
                output=s.output,
                cache_read=s.cache_read,
                cache_write=s.cache_write,
            )
            if cost is None:
                unpriced.append(self._cost_keys.get(model) or "(no model named)")
            else:
                total += cost
        return (None if unpriced or self.unmetered else total), unpriced

    def wait_idle(self, timeout: float) -> None:
        """Wait (up to ``timeout`` seconds) for the calls in flight to end."""
        with self._lock:
            self._lock.wait_for(lambda: self.in_flight <= 0, timeout)

    def usage(self, *, log_error: str | None = None) -> AttemptUsage:
        """The attempt's figures so far; ``log_error``: why its call log stopped, if it did."""
        with self._lock:
            cost, unpriced = self._cost()
            sums = list(self._models.values())
            return AttemptUsage(
                input_tokens=sum(s.input for s in sums),
                output_tokens=sum(s.output for s in sums),
                cache_read_tokens=sum(s.cache_read for s in sums),
                cache_write_tokens=sum(s.cache_write for s in sums),
                calls=self.calls,
                unmetered_calls=self.unmetered,
                model_version=", ".join(self._answered) or None,
                seconds_in_calls=self.seconds,
                cost=None if cost is None else float(cost),
                unpriced_models=tuple(unpriced),
                refused_calls=self.refused,
                budget_refusals=self.budget_refusals,
                provider_failures=tuple(self.failures),
                log=self.log,
                log_error=log_error,
            )
