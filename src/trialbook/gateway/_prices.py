"""The user's price table: dollars per million tokens, per model, read from a TOML file.

    [models."gpt-4o-2024-08-06"]
    input = 2.5          # uncached input tokens
    output = 10.0
    cache_read = 1.25    # optional: input tokens read from the provider's cache
    cache_write = 3.75   # optional: input tokens written to it (Anthropic's cache creation)

Prices are kept as :class:`~decimal.Decimal` (TOML floats are parsed straight into decimals), so a
cost is the exact sum of tokens × price, rounded once to a float at the end. A model that is not in
the table, or a call that used a kind of token whose price the table does not give, has no cost:
cost not measured (None), never 0.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from trialbook.errors import ArgumentError

__all__ = ["ModelPrice", "Prices", "read_prices"]

_KINDS = ("input", "output", "cache_read", "cache_write")
_REQUIRED = ("input", "output")
_MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class ModelPrice:
    """Dollars per million tokens of one model."""

    input: Decimal
    """Uncached input tokens."""
    output: Decimal
    """Output tokens (reasoning tokens included, as the providers bill them)."""
    cache_read: Decimal | None = None
    """Input tokens read from the provider's prompt cache; None: not priced."""
    cache_write: Decimal | None = None
    """Input tokens written to the provider's prompt cache; None: not priced."""


@dataclass(frozen=True)
class Prices:
    """A price table: model name (as the upstream answers it) -> its price."""

    models: Mapping[str, ModelPrice] = field(default_factory=dict)
    """The priced models."""

    def cost(
        self, model: str | None, *, input: int, output: int, cache_read: int, cache_write: int
    ) -> Decimal | None:
        """Dollars for these tokens of ``model``; None when the model or a used kind is unpriced."""
        price = self.models.get(model) if model is not None else None
        if price is None:
            return None
        total = Decimal(input) * price.input + Decimal(output) * price.output
        for tokens, rate in ((cache_read, price.cache_read), (cache_write, price.cache_write)):
            if tokens:
                if rate is None:
                    return None
                total += Decimal(tokens) * rate
        return total / _MILLION


def read_prices(source: Path | str | Mapping[str, object]) -> Prices:
    """Read a price table from a TOML file (or an already parsed mapping).

    Raises :class:`~trialbook.errors.ArgumentError` (``argument="prices"``) with one line naming
    the key at fault.
    """
    where = "prices"
    if isinstance(source, Mapping):
        data: Mapping[str, object] = source
    else:
        path = Path(source)
        where = str(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)
        except OSError as exc:
            raise ArgumentError(
                f"{where}: cannot read: {exc.strerror}", argument="prices"
            ) from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ArgumentError(f"{where}: not valid TOML: {exc}", argument="prices") from None
    unknown = sorted(set(data) - {"models"})
    if unknown:
        raise ArgumentError(
            f'{where}: unknown key {unknown[0]!r} (expected only [models."NAME"] tables)',
            argument="prices",
        )
    models = data.get("models", {})
    if not isinstance(models, Mapping):
        raise ArgumentError(f"{where}: 'models' must be a table of models", argument="prices")
    table: dict[str, ModelPrice] = {}
    for name, entry in models.items():
        key = f"models.{_quoted(name)}"
        if not isinstance(entry, Mapping):
            raise ArgumentError(f"{where}: {key} must be a table of prices", argument="prices")
        extra = sorted(set(entry) - set(_KINDS))
        if extra:
            raise ArgumentError(
                f"{where}: {key}.{extra[0]}: unknown price (expected {', '.join(_KINDS)})",
                argument="prices",
            )
        values: dict[str, Decimal | None] = {}
        for kind in _KINDS:
            if kind not in entry:
                if kind in _REQUIRED:
                    raise ArgumentError(f"{where}: {key}.{kind}: missing", argument="prices")
                values[kind] = None
                continue
            values[kind] = _price(entry[kind], f"{where}: {key}.{kind}")
        table[str(name)] = ModelPrice(
            input=values["input"] or Decimal(0),
            output=values["output"] or Decimal(0),
            cache_read=values["cache_read"],
            cache_write=values["cache_write"],
        )
    return Prices(table)


def _price(value: object, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise ArgumentError(
            f"{where}: must be a number of dollars per million tokens, got {value!r}",
            argument="prices",
        )
    number = Decimal(str(value)) if isinstance(value, float) else Decimal(value)
    if not number.is_finite() or number < 0:
        raise ArgumentError(f"{where}: must be >= 0, got {value!r}", argument="prices")
    return number


def _quoted(name: object) -> str:
    text = str(name)
    return text if text.replace("_", "").replace("-", "").isalnum() else f'"{text}"'
