"""The sandbox room: how one command (an agent's or a grader's) runs, and what every tier shares.

The tiers (``_sandbox``: process, bwrap; ``_container``, ``_container_wrap`` and ``_seccomp``:
podman or docker, each task's image made ready by ``_environments``), the command runner that
enforces the wall-clock timeout and leaves no process behind (``_process``, its raw output in
``_captured``, ``_sweep``, ``_cgroup``, ``_limits``, ``_cancel``), which program a command starts
and whether the tier shows it (``_programs``), the file system of an attempt (``_fs``), a run's
scratch folder, its watchdog and the clearing of what killed harnesses left (``_scratch``,
``_watchdog``, ``_stamp``), the environment every command starts from (``_env``) and the model
gateway's door inside a sandbox (``_forward``, run by its path).

It imports no other room of the harness. Exports load lazily, so that the run's watchdog
(``python -m trialbook.harness.sandbox._watchdog``) starts without importing the rest of the room.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trialbook.harness.sandbox._cancel import cancellable, cancelled
    from trialbook.harness.sandbox._captured import Captured
    from trialbook.harness.sandbox._cgroup import Cgroup, not_capped
    from trialbook.harness.sandbox._container import (
        LABEL_RUN,
        ContainerTarget,
        find_engine,
        seed_workspace,
    )
    from trialbook.harness.sandbox._container_wrap import agent_files
    from trialbook.harness.sandbox._env import base_env
    from trialbook.harness.sandbox._environments import prepare_environments
    from trialbook.harness.sandbox._forward import RELAY_VAR, Door, ensure_relay, forwarded
    from trialbook.harness.sandbox._fs import (
        Free,
        agent_filled_the_disk,
        bound_problem,
        free_space,
        mount_bound,
        remove_tree,
        unbound_notes,
    )
    from trialbook.harness.sandbox._process import NOT_STARTED, Outcome, run_sandboxed
    from trialbook.harness.sandbox._programs import check_agent, check_grader, command_words
    from trialbook.harness.sandbox._sandbox import (
        Limits,
        SandboxSpec,
        Tier,
        bwrap_problem,
        limit_notes,
        resolve_tier,
    )
    from trialbook.harness.sandbox._scratch import (
        clean_stale_runs,
        live_run_ids,
        make_scratch,
        start_detached_watchdog,
        start_watchdog,
        stop_watchdog,
    )
    from trialbook.harness.sandbox._stamp import stamp
    from trialbook.harness.sandbox._sweep import RELEASE_S, TOKEN_VAR, run_key, start_key

__all__ = [
    "LABEL_RUN",
    "NOT_STARTED",
    "RELAY_VAR",
    "RELEASE_S",
    "TOKEN_VAR",
    "Captured",
    "Cgroup",
    "ContainerTarget",
    "Door",
    "Free",
    "Limits",
    "Outcome",
    "SandboxSpec",
    "Tier",
    "agent_files",
    "agent_filled_the_disk",
    "base_env",
    "bound_problem",
    "bwrap_problem",
    "cancellable",
    "cancelled",
    "check_agent",
    "check_grader",
    "clean_stale_runs",
    "command_words",
    "ensure_relay",
    "find_engine",
    "forwarded",
    "free_space",
    "limit_notes",
    "live_run_ids",
    "make_scratch",
    "mount_bound",
    "not_capped",
    "prepare_environments",
    "remove_tree",
    "resolve_tier",
    "run_key",
    "run_sandboxed",
    "seed_workspace",
    "stamp",
    "start_detached_watchdog",
    "start_key",
    "start_watchdog",
    "stop_watchdog",
    "unbound_notes",
]

_LAZY = {
    "cancellable": "_cancel",
    "cancelled": "_cancel",
    "Cgroup": "_cgroup",
    "not_capped": "_cgroup",
    "ContainerTarget": "_container",
    "LABEL_RUN": "_container",
    "find_engine": "_container",
    "seed_workspace": "_container",
    "agent_files": "_container_wrap",
    "base_env": "_env",
    "prepare_environments": "_environments",
    "Door": "_forward",
    "RELAY_VAR": "_forward",
    "ensure_relay": "_forward",
    "forwarded": "_forward",
    "Free": "_fs",
    "agent_filled_the_disk": "_fs",
    "bound_problem": "_fs",
    "free_space": "_fs",
    "mount_bound": "_fs",
    "remove_tree": "_fs",
    "unbound_notes": "_fs",
    "Captured": "_captured",
    "NOT_STARTED": "_process",
    "Outcome": "_process",
    "run_sandboxed": "_process",
    "check_agent": "_programs",
    "check_grader": "_programs",
    "command_words": "_programs",
    "Limits": "_sandbox",
    "SandboxSpec": "_sandbox",
    "Tier": "_sandbox",
    "bwrap_problem": "_sandbox",
    "limit_notes": "_sandbox",
    "resolve_tier": "_sandbox",
    "clean_stale_runs": "_scratch",
    "live_run_ids": "_scratch",
    "make_scratch": "_scratch",
    "start_detached_watchdog": "_scratch",
    "start_watchdog": "_scratch",
    "stop_watchdog": "_scratch",
    "stamp": "_stamp",
    "RELEASE_S": "_sweep",
    "TOKEN_VAR": "_sweep",
    "run_key": "_sweep",
    "start_key": "_sweep",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trialbook.harness.sandbox' has no attribute {name!r}")
    return getattr(import_module(f"trialbook.harness.sandbox.{module}"), name)
