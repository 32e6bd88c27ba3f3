"""The ledger's fields: one row per attempt (docs/ledger.md, "Fields"). This table is the contract.

Nine fields are required in every row; the rest are recorded when known, and an absent or
null value means "not recorded", never zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "EXACT_INT",
    "FIELDS",
    "FIELD_BY_NAME",
    "NOT_RECORDABLE",
    "PROTOCOLS",
    "REQUIRED",
    "STATUSES",
    "Field",
    "Kind",
]

Kind = Literal["str", "int", "float", "bool", "time"]
STATUSES = ("passed", "failed", "timed_out", "infra_error")
PROTOCOLS = ("independent", "repair", "human-selected")
"""How a run's attempts were made (docs/ledger.md, "Attempt protocol"): independent trials (what
pass@k and pass^k assume), rounds of repair (attempt i saw attempt i-1's outcome), or a person's pick."""
EXACT_INT = 2**53
"""The largest magnitude of an optional integer (seed, tokens_in, tokens_out, tool_calls, retry): a ledger
holds those as float64 with NaN for "not recorded", exact up to 2**53; a larger one is refused
rather than rounded. Required integers are int64."""


@dataclass(frozen=True)
class Field:
    """One column of the ledger."""

    name: str
    """Column name, as written in JSONL keys, CSV headers and SQLite columns."""
    kind: Kind
    """str, int, float, bool, or time (an ISO 8601 timestamp with a UTC offset)."""
    required: bool
    """Whether every row must carry a value."""
    doc: str
    """What the field means, for the docs and --help."""
    low: float | None = None
    """Smallest allowed value (numbers only)."""
    low_open: bool = False
    """Whether ``low`` itself is excluded (e.g. timeout_s > 0)."""
    high: float | None = None
    """Largest allowed value (numbers only)."""


FIELDS: tuple[Field, ...] = (
    Field("task_id", "str", True, "the task attempted"),
    Field("attempt_index", "int", True, "0-based index of the attempt, below k_budget", low=0),
    Field(
        "k_budget",
        "int",
        True,
        "attempts per task allowed by the suite, fixed before the run",
        low=1,
    ),
    Field("timeout_s", "float", True, "wall-clock limit the harness enforced, seconds", 0, True),
    Field("elapsed_s", "float", True, "wall-clock seconds the attempt took", low=0),
    Field("passed", "bool", True, "the grader accepted the workspace"),
    Field("timed_out", "bool", True, "the harness stopped the attempt at timeout_s"),
    Field("helper_calls", "int", True, "hidden-helper calls (search, critic models, ...)", low=0),
    Field("oracle_leak", "bool", True, "the task's oracle leaked to the agent: quarantined"),
    Field("run_id", "str", False, "one harness invocation; a file without it is one run"),
    Field("system", "str", False, "what is under test (agent + model + settings)"),
    Field("dataset_id", "str", False, "content hash of the frozen suite"),
    Field("status", "str", False, "passed, failed, timed_out or infra_error"),
    Field("score", "float", False, "partial credit in 0..1", low=0, high=1),
    Field("error", "str", False, "what went wrong, in words"),
    Field("stratum", "str", False, "task family, e.g. repair / greenfield / regression"),
    Field("weight", "float", False, "task weight declared in the suite", 0, True),
    Field("seed", "int", False, "seed given to the agent for this attempt index"),
    Field("temperature", "float", False, "sampling temperature", low=0),
    Field("fixture_hash", "str", False, "content hash of the task's fixture"),
    Field("cache_hit", "bool", False, "a prompt cache answered part of the attempt"),
    Field("tokens_in", "int", False, "input tokens", low=0),
    Field("tokens_out", "int", False, "output tokens", low=0),
    Field("tool_calls", "int", False, "tool calls the agent made", low=0),
    Field("cost", "float", False, "money spent on the attempt; null when not measured", low=0),
    Field("model_version", "str", False, "model snapshot"),
    Field("grader_version", "str", False, "grader version"),
    Field("harness_version", "str", False, "harness version"),
    Field("sandbox", "str", False, "isolation tier used (bwrap, process, ...)"),
    Field("started_at", "time", False, "start, ISO 8601 with UTC offset"),
    Field("finished_at", "time", False, "end, ISO 8601 with UTC offset"),
    Field("transcript", "str", False, "path of the kept raw output"),
    Field("selected", "bool", False, "the candidate a selector delivered"),
    Field(
        "graded_after_timeout",
        "bool",
        False,
        "the run's grader judged the workspace after a timeout (as Terminal-Bench does): a timed-"
        "out attempt may then pass; constant within a run",
    ),
    Field(
        "protocol",
        "str",
        False,
        "how the run's attempts were made: independent, repair or human-selected; constant "
        "within a run; null (older ledgers) reads as not recorded",
    ),
    Field(
        "not_recorded",
        "str",
        False,
        "imported runs only: the required fields the source did not record, comma-separated "
        "(each then null in the row, never a made-up value)",
    ),
    Field(
        "retry",
        "int",
        False,
        "the how-many-th re-run of the attempt (run_id, task_id, attempt_index); null = 0. A row "
        "with retry r > 0 follows the attempt's infra_error row of retry r - 1, and only the "
        "highest retry of an attempt counts",
        low=0,
    ),
    Field(
        "lost",
        "bool",
        False,
        "infra_error rows only: the harness lost the attempt (its worker or node died, its task "
        "was cancelled by someone else, no result in time, its model provider failed), so a "
        "resume runs it again",
    ),
    Field(
        "checks",
        "str",
        False,
        'the grader\'s named checks: canonical JSON of {name: {"passed": bool, "reason": '
        'str or null}}, sorted keys (docs/harness.md, "The grader contract")',
    ),
    Field(
        "protection",
        "bool",
        False,
        "tasks declaring outcome kinds: the protection held (e.g. a forbidden write refused)",
    ),
    Field(
        "task_outcome",
        "bool",
        False,
        "tasks declaring outcome kinds: the task itself was done; false means 'passed' is false",
    ),
    Field(
        "stop_reason",
        "str",
        False,
        "why the agent stopped: in the grader's words (tasks declaring outcome kinds), or "
        "'budget' when the model gateway refused a call past the attempt's budget",
    ),
    Field(
        "model_calls",
        "int",
        False,
        "calls the agent made to the model through the run's model gateway (docs/gateway.md)",
        low=0,
    ),
    Field(
        "cache_read_tokens",
        "int",
        False,
        "of tokens_in, the tokens the provider read from its prompt cache (model gateway)",
        low=0,
    ),
    Field(
        "cache_write_tokens",
        "int",
        False,
        "of tokens_in, the tokens the provider wrote to its prompt cache (model gateway)",
        low=0,
    ),
    Field(
        "model_call_s",
        "float",
        False,
        "wall-clock seconds in model calls through the run's model gateway, summed over calls "
        "(calls at once each count)",
        low=0,
    ),
)

FIELD_BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}
REQUIRED: tuple[str, ...] = tuple(f.name for f in FIELDS if f.required)
NOT_RECORDABLE: tuple[str, ...] = (
    "timeout_s",
    "elapsed_s",
    "timed_out",
    "helper_calls",
    "oracle_leak",
)
"""The required fields an imported run may leave unrecorded (its source never recorded them), when it
names them in ``not_recorded``. The others (task, attempt index, budget, passed) every source has."""
