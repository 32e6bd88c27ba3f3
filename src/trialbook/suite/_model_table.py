"""The ``[model]`` table: how ``trialbook run`` reaches a model through its gateway, kept in a
suite's ``suite.toml`` or a project's ``trialbook.toml`` (docs/gateway.md, "In a run").

Both files read it here, with the same checks: the types are checked when the file is read, the
values by the gateway when a run starts it. It sits in the suite room because the suite loader
reads it and may not import the harness; the harness's project file imports it from here.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, fields, replace
from pathlib import Path

from trialbook.errors import SuiteError
from trialbook.suite._checker import Checker

__all__ = ["MODEL_KEYS", "ModelTable", "read_model_table", "suite_model"]

MODEL_KEYS = (
    "upstream",
    "key_env",
    "prices",
    "max_cost_per_attempt",
    "max_tokens_per_attempt",
    "accept_open_network",
)
"""The keys of the ``[model]`` table: ``trialbook run --model-upstream`` and its companions."""


@dataclass(frozen=True)
class ModelTable:
    """A ``[model]`` table, its types checked (None: not set)."""

    upstream: str | None = None
    """The provider's root URL (``--model-upstream``)."""
    key_env: str | None = None
    """The name of the variable holding the real key, never its value (``--model-key-env``)."""
    prices: Path | None = None
    """The price table, absolute (a relative path is relative to the file's folder)."""
    max_cost_per_attempt: float | None = None
    max_tokens_per_attempt: int | None = None
    accept_open_network: bool | None = None

    def over(self, below: ModelTable | None) -> ModelTable:
        """These settings, each one left unset here taken from ``below``."""
        if below is None:
            return self
        taken = {
            f.name: getattr(below, f.name) for f in fields(self) if getattr(self, f.name) is None
        }
        return replace(self, **taken)

    def keys_set(self) -> tuple[str, ...]:
        """The keys this table sets, in the order of ``MODEL_KEYS``."""
        return tuple(key for key in MODEL_KEYS if getattr(self, key) is not None)


def read_model_table(path: Path, table: object) -> tuple[ModelTable, list[str]]:
    """The ``[model]`` table of the file ``path`` and its problems, one line each, each naming
    its key (``model.max_tokens_per_attempt: expected a whole number, got 'many'``)."""
    problems: list[str] = []
    if not isinstance(table, dict):
        return ModelTable(), [f"model: expected a table ([model]), got {table!r:.80}"]
    for key in table:
        if key not in MODEL_KEYS:
            hint = difflib.get_close_matches(key, MODEL_KEYS, n=1, cutoff=0.7)
            extra = f" (did you mean {hint[0]!r}?)" if hint else ""
            problems.append(f"model.{key}: unknown key{extra}; allowed: {', '.join(MODEL_KEYS)}")
    values: dict[str, object] = {}
    for key in ("upstream", "key_env", "prices"):
        if key in table:
            value = table[key]
            if isinstance(value, str) and value.strip():
                values[key] = value
            else:
                problems.append(f"model.{key}: expected a non-empty string, got {value!r:.80}")
    if isinstance(values.get("prices"), str):
        values["prices"] = (path.parent / str(values["prices"])).resolve()
    if "upstream" in table and "key_env" not in table:
        problems.append("model.key_env: missing (the name of the real key's variable)")
    cost = table.get("max_cost_per_attempt")
    if cost is not None:
        if isinstance(cost, bool) or not isinstance(cost, int | float):
            problems.append(f"model.max_cost_per_attempt: expected a number, got {cost!r:.80}")
        else:
            values["max_cost_per_attempt"] = float(cost)
    tokens = table.get("max_tokens_per_attempt")
    if tokens is not None:
        if isinstance(tokens, bool) or not isinstance(tokens, int):
            problems.append(
                f"model.max_tokens_per_attempt: expected a whole number, got {tokens!r:.80}"
            )
        else:
            values["max_tokens_per_attempt"] = tokens
    accept = table.get("accept_open_network")
    if accept is not None:
        if isinstance(accept, bool):
            values["accept_open_network"] = accept
        else:
            problems.append(
                f"model.accept_open_network: expected true or false, got {accept!r:.80}"
            )
    return ModelTable(**values), problems  # type: ignore[arg-type]


def suite_model(root: str | Path) -> ModelTable | None:
    """The ``[model]`` table of a suite's suite.toml alone (None: it has none), read and checked
    as ``load_suite`` reads it, without reading the tasks. Raises :class:`SuiteError`."""
    root = Path(root)
    if not root.is_dir():
        raise SuiteError(f"{root}: no such suite folder")
    check = Checker()
    path = root / "suite.toml"
    data = check.toml(path)
    model = None
    if data is not None and "model" in data:
        model, problems = read_model_table(path, data["model"])
        for problem in problems:
            check.add(path, None, problem)
    if check.problems:
        raise SuiteError(check.problems)
    return model
