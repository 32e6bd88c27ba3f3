"""The run's model gateway: started for the run, one address and token per attempt, its figures
in the row.

``ModelOptions`` are ``trialbook run --model-upstream URL --model-key-env VAR [--prices F]
[--max-cost-per-attempt X] [--max-tokens-per-attempt N]`` (or a ``[model]`` table of
trialbook.toml or suite.toml, which the command reads for a new run, never for a resume).
The driver opens an attempt on the gateway before it submits the attempt (the agent's
environment gets the attempt's base URLs and token: the real key stays in this process) and
closes it when the result comes back, before the row is validated and written. The row then
says what the gateway measured, not what the agent wrote in its usage file (docs/gateway.md,
"In a run").
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from trialbook.errors import ArgumentError
from trialbook.harness.attempt import AttemptSpec
from trialbook.harness.sandbox import RELAY_VAR, Door, find_engine, forwarded
from trialbook.suite import Task

if TYPE_CHECKING:  # the gateway (and its 'gateway' extra) loads only for a run that uses it
    from trialbook.gateway import AttemptUsage

__all__ = [
    "CALL_LOG",
    "ModelGateway",
    "ModelOptions",
    "check_model_tasks",
    "check_resume_model",
    "merge_usage",
    "model_gateway",
    "model_record",
    "resumed_model",
]

CALL_LOG = "model_calls.jsonl"
"""The attempt's call log, in its transcript folder beside the agent's raw output."""


@dataclass(frozen=True)
class ModelOptions:
    """How the run reaches a model: through the gateway, to this upstream, with this key."""

    upstream: str
    """The provider's root URL: OpenAI calls go to ``UPSTREAM/v1/...``, Anthropic calls to
    ``UPSTREAM/v1/messages`` (``https://api.openai.com``, ``https://api.anthropic.com``, a
    proxy serving both). A trailing ``/v1`` is dropped."""
    key_env: str
    """The variable of this process's environment that holds the real key (never passed on)."""
    prices: Path | None = None
    """The price table (docs/gateway.md, "Prices"); None: cost not measured."""
    max_cost_per_attempt: float | None = None
    max_tokens_per_attempt: int | None = None
    accept_open_network: bool = False
    """The process tier cannot close the network: the agent can reach the internet beside the
    gateway, and read this process's environment (the real key). True: the user accepts that."""


def _node_address() -> str:
    """This node's address as the Ray cluster knows it (where its other nodes reach the driver)."""
    import ray

    address: str = ray.util.get_node_ip_address()
    return address


def model_gateway(
    options: ModelOptions | None,
    tasks: Sequence[Task],
    *,
    tier: str,
    executor: str,
    pass_env: Mapping[str, str],
    network_model: bool,
    resumed: tuple[Path, str] | None,
    notes: list[str],
) -> tuple[list[Task], ModelGateway | None]:
    """The run's tasks (``network_model``: each as if it declared ``network = "model"``) and its
    gateway (None: the run has none), every check done; the run's note on it added to ``notes``.
    ``resumed``: the ledger and run id of a resume."""
    if resumed is not None:
        check_resume_model(resumed[0], resumed[1], options)
    if network_model:
        if options is None:
            raise ArgumentError(
                "network_model: every task reaching the model gateway needs one (model)",
                argument="network_model",
            )
        tasks = [dataclasses.replace(t, network=False, model=True) for t in tasks]
    check_model_tasks(tasks, options)
    if options is None:
        return list(tasks), None
    model = ModelGateway(options, tier=tier, executor=executor)
    model.check_pass_env(pass_env)
    notes.append(model.note)
    return list(tasks), model


def _prices_digest(path: Path) -> str | None:
    try:
        return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def model_record(options: ModelOptions | None, network_model: bool) -> str | None:
    """The run record's ``model``: what a resume needs to reach the model as the run did (the
    key's variable by name, never its value; the price table by path and digest)."""
    if options is None:
        return None
    prices = None
    if options.prices is not None:
        prices = {"path": str(options.prices.resolve()), "sha256": _prices_digest(options.prices)}
    return json.dumps(
        {
            "upstream": options.upstream,
            "key_env": options.key_env,
            "prices": prices,
            "max_cost_per_attempt": options.max_cost_per_attempt,
            "max_tokens_per_attempt": options.max_tokens_per_attempt,
            "accept_open_network": options.accept_open_network,
            "network_model": network_model,
        },
        sort_keys=True,
    )


_RECORDED: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "upstream": ("model_upstream", str),
    "key_env": ("model_key_env", str),
    "max_cost_per_attempt": ("max_cost_per_attempt", (int, float, type(None))),
    "max_tokens_per_attempt": ("max_tokens_per_attempt", (int, type(None))),
    "accept_open_network": ("accept_open_network", bool),
    "network_model": ("network_model", bool),
}


def _from_record(run_id: str, text: str) -> tuple[ModelOptions, bool]:
    """The options a run's record keeps; ArgumentError (``resume``) for a record this harness
    did not write."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    bad = not isinstance(data, dict) or any(
        not isinstance(data.get(key), kind) for key, (_, kind) in _RECORDED.items()
    )
    prices = data.get("prices") if isinstance(data, dict) else None
    if prices is not None and not (
        isinstance(prices, dict)
        and isinstance(prices.get("path"), str)
        and isinstance(prices.get("sha256"), (str, type(None)))
    ):
        bad = True
    if bad:
        raise ArgumentError(
            f"run {run_id!r}: its record's model settings are not what trialbook writes there",
            argument="resume",
        )
    assert isinstance(data, dict)
    if prices is not None and _prices_digest(Path(prices["path"])) != prices["sha256"]:
        raise ArgumentError(
            f"prices: run {run_id!r} priced its calls by {prices['path']}, which has changed or "
            "is gone since: its costs would not all come from one table (restore it, or start a "
            "new run)",
            argument="prices",
        )
    options = ModelOptions(
        upstream=data["upstream"],
        key_env=data["key_env"],
        prices=Path(prices["path"]) if prices is not None else None,
        max_cost_per_attempt=data["max_cost_per_attempt"],
        max_tokens_per_attempt=data["max_tokens_per_attempt"],
        accept_open_network=data["accept_open_network"],
    )
    return options, bool(data["network_model"])


def resumed_model(
    run_id: str, recorded: str | None, options: ModelOptions | None, network_model: bool
) -> tuple[ModelOptions | None, bool]:
    """A resume's gateway options: the record's (``recorded``), checked against any the caller
    gave again (an ArgumentError names the one that differs). A record without them (no gateway,
    or a run stored before schema 14) keeps what was given."""
    if recorded is None:
        return options, network_model
    kept, kept_network = _from_record(run_id, recorded)
    if network_model and not kept_network:
        raise ArgumentError(
            f'run {run_id!r} did not keep every task to the model gateway (network "model"): '
            "resume it without --network model, or start a new run",
            argument="network_model",
        )
    if options is not None:
        given = dataclasses.replace(
            options,
            prices=options.prices.resolve() if options.prices is not None else None,
            accept_open_network=options.accept_open_network or kept.accept_open_network,
        )
        for field in dataclasses.fields(ModelOptions):
            if getattr(given, field.name) != getattr(kept, field.name):
                name = {"upstream": "model_upstream", "key_env": "model_key_env"}.get(
                    field.name, field.name
                )
                raise ArgumentError(
                    f"{name}: run {run_id!r} reached its model with {name} "
                    f"{getattr(kept, field.name)!r}, not {getattr(given, field.name)!r}: resume "
                    "it with its own (leave the --model-* options out), or start a new run",
                    argument=name,
                )
    return kept, kept_network


def check_resume_model(ledger: Path, run_id: str, options: ModelOptions | None) -> None:
    """A run whose attempts reached their model through the gateway resumes only with one (its
    record does not keep the options: they are given again)."""
    if options is not None:
        return
    from trialbook.ledger import LedgerStore

    with LedgerStore(ledger) as store:
        metered = store.read(run_id).recorded("model_calls")
    if metered:
        raise ArgumentError(
            f"model_upstream: run {run_id!r} reached its model through the gateway: resume it "
            "with the same model_upstream and model_key_env (and prices and budgets)",
            argument="model_upstream",
        )


def check_model_tasks(tasks: Sequence[Task], options: ModelOptions | None) -> None:
    """Tasks declaring ``network = "model"`` need the run's gateway."""
    needing = [t.id for t in tasks if t.model]
    if needing and options is None:
        shown = ", ".join(needing[:5]) + (
            f" and {len(needing) - 5} more" if len(needing) > 5 else ""
        )
        raise ArgumentError(
            f'model_upstream: task {shown} declares network = "model": give the run a model '
            "gateway (model_upstream and model_key_env)",
            argument="model_upstream",
        )


def _container_door_problem() -> str | None:
    """Why a container cannot reach the gateway here (None: it can). It joins the network
    namespace of a forwarder the harness starts (``_forward.Door``): podman can be given one by
    its path, docker cannot; and making one needs the privilege to (root)."""
    name, _ = find_engine()
    if name != "podman":
        return (
            f"{name} cannot join a container to a network namespace by its path: in the container "
            "tier the model gateway needs podman (or use the bwrap tier)"
        )
    try:
        Door(os.devnull, 0).close()
    except OSError as exc:
        return (
            "the container tier reaches the model gateway through a network namespace the "
            f"harness makes, and it cannot make one here ({exc}): run as root, or use the bwrap "
            "tier"
        )
    return None


class ModelGateway:
    """The gateway of one run, as the driver uses it."""

    def __init__(self, options: ModelOptions, *, tier: str, executor: str) -> None:
        if tier == "container" and (why := _container_door_problem()):
            raise ArgumentError(f"model_upstream: {why}", argument="model_upstream")
        if tier == "process" and not options.accept_open_network:
            raise ArgumentError(
                "model_upstream: the process tier cannot close the network: the agent could reach "
                "the internet beside the gateway and read the real key from this process; accept "
                "that explicitly (accept_open_network), or use the bwrap tier",
                argument="accept_open_network",
            )
        if not options.upstream.startswith(("http://", "https://")):
            raise ArgumentError(
                f"model_upstream: must be an http:// or https:// URL, got {options.upstream!r}",
                argument="model_upstream",
            )
        try:
            from trialbook.gateway import Budgets, Gateway, Prices, read_prices
        except ImportError as exc:
            raise ArgumentError(
                f"model_upstream: the model gateway needs its extra ({exc}): "
                "pip install 'trialbook[gateway]'",
                argument="model_upstream",
            ) from None
        key = os.environ.get(options.key_env, "")
        if not key:
            raise ArgumentError(
                f"model_key_env: {options.key_env} is not set (or empty) in this environment",
                argument="model_key_env",
            )
        prices = read_prices(options.prices) if options.prices is not None else Prices()
        root = options.upstream.rstrip("/").removesuffix("/v1")
        try:
            budgets = Budgets(
                max_cost=options.max_cost_per_attempt, max_tokens=options.max_tokens_per_attempt
            )
        except ArgumentError as exc:  # spoken of by the run's own names for the two limits
            name = f"{exc.argument}_per_attempt"
            line = str(exc).replace(f"{exc.argument}:", f"{name}:", 1)
            raise ArgumentError(line, argument=name) from None
        # A bwrap agent without network reaches the gateway by its unix socket, in a folder of
        # its own that the sandbox shows read-only (the forwarder inside names it); a container
        # joins the network namespace of a forwarder the harness runs, which names it. On a Ray
        # cluster the gateway listens on this node's address instead, and each worker relays a
        # socket of its node to it (_forward.ensure_relay).
        self.executor = executor
        local_bwrap = tier in ("bwrap", "container") and executor == "local"
        # named here, made when the gateway starts (and removed when it stops)
        folder = Path(tempfile.gettempdir()) / f"tb-gw-{secrets.token_hex(8)}"
        self._socket_dir = folder if local_bwrap else None
        socket = self._socket_dir / "gateway.sock" if self._socket_dir is not None else None
        host = _node_address() if executor == "ray" else "127.0.0.1"
        self.gateway = Gateway(
            root + "/v1", root, key, prices, budgets, unix_socket=socket, host=host
        )
        self.key_env = options.key_env
        self.priced = options.prices is not None
        """Whether the run has a price table (without one, no cost is measured: not noted)."""
        self.note = (
            "model gateway: the agent's model calls are metered; the process tier does not keep "
            "it to them (it can reach the internet and read the harness's environment: accepted)"
            if tier == "process"
            else "model gateway: an agent without network reaches the model gateway and nothing "
            "else (a task with network = true reaches it and the whole network)"
        )
        """What the run says of its gateway, where the tier is chosen."""
        self._open: dict[tuple[str, int], str] = {}

    def start(self) -> None:
        if self._socket_dir is not None:
            self._socket_dir.mkdir(mode=0o700)
        self.gateway.start()

    def stop(self) -> None:
        self.gateway.stop()
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)

    @property
    def refused_unattributed(self) -> int:
        """Calls refused at the address of no open attempt (a guessed one, or an attempt that
        had ended): no row holds them, so the run says them."""
        return self.gateway.refused_unattributed

    def check_pass_env(self, pass_env: Mapping[str, str]) -> None:
        """The real key's variable may not be passed to the agent."""
        if self.key_env in pass_env:
            raise ArgumentError(
                f"pass_env: {self.key_env} holds the model's real key: it stays in the harness "
                "(the agent reaches the model through the gateway)",
                argument="pass_env",
            )

    def open(self, spec: AttemptSpec, log_folder: Path) -> AttemptSpec:
        """The spec with the attempt's gateway variables in its environment."""
        key = f"{spec.task_id}#{spec.attempt_index}.{spec.start_id}"
        log_folder.mkdir(parents=True, exist_ok=True)
        env = self.gateway.open_attempt(key, log=log_folder / CALL_LOG)
        self._open[(spec.task_id, spec.start_id)] = key
        agent = spec.agent
        socket = self.gateway.unix_socket
        port = self.gateway.url.rsplit(":", 1)[1]
        door = None
        if spec.tier in ("bwrap", "container") and not spec.budget.network:
            # the gateway and nothing else: its forwarder listens inside the agent's own network
            # namespace on the port the URLs name, then the agent's command runs as given (in a
            # container: the namespace is the forwarder's, which the container joins)
            if socket is not None and spec.tier == "container":
                door = (str(socket), int(port))
            elif socket is not None:
                agent = forwarded(spec.agent, str(socket), port)
            else:  # on a cluster: the worker relays a socket of its node to this address, and
                # inside the sandbox the gateway is the forwarder's loopback address
                here = self.gateway.url
                env = {k: v.replace(here, f"http://127.0.0.1:{port}", 1) for k, v in env.items()}
                env[RELAY_VAR] = here.removeprefix("http://")
        return dataclasses.replace(
            spec, agent=agent, gateway=door, pass_env={**spec.pass_env, **env}
        )

    def close(self, spec: AttemptSpec) -> AttemptUsage | None:
        key = self._open.pop((spec.task_id, spec.start_id), None)
        return self.gateway.close_attempt(key) if key is not None else None


def _note(row: dict[str, object], note: str) -> None:
    row["error"] = f"{row['error']}; {note}" if row.get("error") else note


def merge_usage(
    row: Mapping[str, object], usage: AttemptUsage, *, priced: bool = True
) -> dict[str, object]:
    """The row with the gateway's figures in place of the agent's own.

    Tokens in are every input token (uncached, cache read, cache write); cost is the price
    table's (None: not measured, whatever the agent wrote; always None when the run has no table,
    ``priced`` False); a model call answered without usage leaves the tokens and the cost not
    measured (the sums lack its part). A usage file that disagrees is noted, and so is a model the
    table does not price (in a run that has one), and a call log that could not be written whole.
    A provider failure before a failed (or timed-out) attempt makes it an ``infra_error`` marked
    ``lost`` (a resume runs it again, as a recorded re-run), without its grader's ``score``: the
    measurement is not the agent's failure. A spent budget says ``stop_reason = "budget"``.
    """
    out = dict(row)
    # without a price table no cost is measured, not even the 0 of an attempt that made no call
    cost = usage.cost if priced else None
    counted = not usage.unmetered_calls  # else the sums lack an unknown part: not measured
    # whether a call read the prompt cache: known when every call was metered, or once one did
    hit = usage.cache_read_tokens > 0 if counted or usage.cache_read_tokens else None
    measured: dict[str, object] = {
        "tokens_in": None,
        "tokens_out": None,
        "cost": cost,
        "cache_hit": hit,
    }
    if counted:
        measured["tokens_in"] = (
            usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        )
        measured["tokens_out"] = usage.output_tokens
    said = {k: row.get(k) for k in measured if row.get(k) is not None}
    differ = [
        f"{k} {said[k]!r} vs {'not measured' if measured[k] is None else repr(measured[k])}"
        for k in said
        if said[k] != measured[k]
    ]
    if differ:
        _note(
            out,
            f"usage file disagrees with the model gateway ({', '.join(differ)}): the gateway's "
            "figures are recorded",
        )
    measured["cache_read_tokens"] = usage.cache_read_tokens if counted else None
    measured["cache_write_tokens"] = usage.cache_write_tokens if counted else None
    for name, value in measured.items():
        if value is None:
            out.pop(name, None)
        else:
            out[name] = value
    out["model_calls"] = usage.calls
    out["model_call_s"] = usage.seconds_in_calls
    if usage.model_version is not None:
        out["model_version"] = usage.model_version
    if usage.unpriced_models and priced:
        _note(out, f"cost not measured: no price for {', '.join(usage.unpriced_models)}")
    if usage.unmetered_calls:
        _note(
            out,
            f"tokens and cost not measured: {usage.unmetered_calls} model call(s) ended without "
            "usage",
        )
    if usage.log_error:
        _note(out, f"{CALL_LOG} not kept whole: {usage.log_error}")
    if usage.refused_calls:
        _note(
            out,
            f"the model gateway refused {usage.refused_calls} call(s) with a token not this attempt's",
        )
    if usage.provider_failures:
        failed = f"model provider failed: {usage.failure_text()}"
        if out.get("status") in ("failed", "timed_out"):
            # the measurement is invalid, not the agent's failure: an infra error that a resume
            # runs again (lost), its cause first in the error (the run's early stop reads it)
            was = "timed out" if out.get("timed_out") else "failed"
            out.update(status="infra_error", passed=False, timed_out=False, lost=True)
            out.pop("score", None)  # as on every infra_error the harness writes: not the agent's
            rest = out.get("error")
            out["error"] = f"{failed}; the attempt then {was}" + (f"; {rest}" if rest else "")
        elif out.get("status") == "passed":
            _note(out, f"{failed}; the attempt passed regardless")
        else:
            _note(out, failed)
    if usage.budget_hit and out.get("stop_reason") is None:
        out["stop_reason"] = "budget"
    return out
