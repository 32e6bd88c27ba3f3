"""The worker's side of the Ray executor: what runs inside one Ray task on a cluster node.

A task gets the attempt's spec and the fixture and oracle as packed folders in Ray's object store
(a reference and the content digest the run was planned with), so a node needs no shared file
system, only trialbook at the driver's version. The first task of a run in a worker process sweeps
what dead workers of this node left behind (their processes, cgroups and scratch folders, each
named after its worker), makes the worker's scratch folder and starts a detached watchdog that
kills the attempt's processes when the worker dies (a crash, a force-cancel, a lost node). The
attempt itself is ``run_attempt``: workspace, sandbox, agent, grader, timeout, process-tree kill,
and the check of each copy against its digest, all on the worker.

Nothing here imports Ray at module level: the object store is read through ``ray.get`` only when a
task runs on a worker.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import os
import tarfile
import tempfile
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from trialbook.harness._attempt import attempt_fields
from trialbook.harness._forward import RELAY_VAR, ensure_relay, forwarded
from trialbook.harness._fs import remove_tree
from trialbook.harness._scratch import clean_stale_runs, make_scratch, start_detached_watchdog
from trialbook.harness._spec import AttemptResult, AttemptSpec
from trialbook.harness._stamp import stamp
from trialbook.ledger import now

__all__ = ["Material", "lost_result", "pack", "run_on_worker"]

FETCH_TIMEOUT_S = 120.0
"""How long a worker waits for a fixture or oracle from the object store (the node holding it may
be gone): past it the attempt is an infrastructure error, never a hang."""


@dataclasses.dataclass(frozen=True)
class Material:
    """A task's fixture or oracle on its way to the workers: its digest and, unless the folder is
    empty or absent, a reference to its packed content in the object store (inside a list, so that
    Ray hands the worker the reference, fetched only when the worker has no copy yet)."""

    kind: str
    digest: str
    ref: tuple[Any, ...] = ()


def pack(folder: Path) -> bytes | None:
    """The folder's files as an uncompressed tar (symlinks followed, as the attempt's copy does);
    None when it is absent or empty."""
    if not folder.is_dir() or not any(folder.iterdir()):
        return None
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", dereference=True) as tar:
        for path in sorted(folder.rglob("*")):
            tar.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return buffer.getvalue()


def lost_result(
    spec: AttemptSpec, message: str, started_at: str | None = None, *, lost: bool = True
) -> AttemptResult:
    """The ``infra_error`` row of an attempt the cluster lost (a dead worker or node, a task
    cancelled on the cluster, no result in time): not the agent's failure, and never run again
    behind the ledger's back. The row says ``lost`` (a resume runs it again, as a recorded new
    row) unless ``lost`` is false: a failure the same attempt would meet again (a node without
    trialbook)."""
    row = attempt_fields(spec)
    if started_at is not None:
        row["started_at"] = started_at
    row.update(
        passed=False,
        timed_out=False,
        status="infra_error",
        elapsed_s=0.0,
        score=None,
        error=f"harness error: {message}",
        lost=True if lost else None,
    )
    row["finished_at"] = max(now(), str(row["started_at"]))
    return AttemptResult(row=row)


@functools.cache
def _version() -> str:
    return f"trialbook {version('trialbook')}"


_SCRATCH: dict[str, Path] = {}
"""This worker process's scratch folder per run (a worker may serve several runs of one driver)."""


def _scratch(run_id: str, key: str) -> Path:
    """The worker's scratch folder of the run, made (with its watchdog) by the first attempt;
    ``key`` is the run's token key, made by the driver (``AttemptSpec.run_key``)."""
    scratch = _SCRATCH.get(run_id)
    if scratch is not None and scratch.is_dir():
        return scratch
    clean_stale_runs()  # the node's sweep: what workers that died without their clean-up left
    scratch = make_scratch(run_id, key)
    start_detached_watchdog(f"{key}/{stamp(os.getpid())}/", scratch)
    _SCRATCH[run_id] = scratch
    return scratch


def _materialize(scratch: Path, material: Material) -> Path:
    """The worker's copy of a fixture or oracle, unpacked once per worker and run (the attempt
    copies it again and checks that copy against the digest)."""
    folder = scratch / "material" / f"{material.kind}-{material.digest.replace(':', '-')}"
    if folder.is_dir():
        return folder
    if not material.ref:  # an empty (or absent) folder travels as no data: an empty folder here,
        folder.mkdir(parents=True, exist_ok=True)  # which the attempt copies and hashes as empty
        return folder
    import ray

    data = ray.get(material.ref[0], timeout=FETCH_TIMEOUT_S)
    folder.parent.mkdir(exist_ok=True)
    unpacking = Path(tempfile.mkdtemp(prefix="unpacking.", dir=folder.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            tar.extractall(unpacking, filter="tar")
        unpacking.rename(folder)
    finally:
        remove_tree(unpacking)
    return folder


def run_on_worker(
    worker: Callable[[AttemptSpec], AttemptResult],
    spec: AttemptSpec,
    fixture: Material,
    oracle: Material,
    harness_version: str,
) -> AttemptResult:
    """Run the attempt here, in this worker's scratch folder, with its processes carrying this
    worker's stamp (so this node's sweeps and the watchdog find them)."""
    here = _version()
    if here != harness_version:
        return lost_result(spec, f"the worker runs {here}, the driver {harness_version}")
    started = now()
    try:
        scratch = _scratch(spec.run_id, spec.run_key)
        fixture_copy = _materialize(scratch, fixture)
        oracle_copy = _materialize(scratch, oracle)
    except Exception as exc:  # OSError, a tar error, a lost object or a fetch timeout
        what = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}"
        return lost_result(spec, f"the worker could not get the task's files ({what})", started)
    relay = spec.pass_env.get(RELAY_VAR)
    if relay is not None:  # a bwrap agent reaching the driver's model gateway from this node
        try:
            socket_path = ensure_relay(relay)
        except OSError as exc:
            return lost_result(
                spec, f"the worker could not relay the model gateway ({exc})", started
            )
        port = relay.rpartition(":")[2]
        spec = dataclasses.replace(
            spec,
            pass_env={k: v for k, v in spec.pass_env.items() if k != RELAY_VAR},
            **(
                {"gateway": (socket_path, int(port))}
                if spec.tier == "container"
                else {"agent": forwarded(spec.agent, socket_path, port)}
            ),
        )
    local = dataclasses.replace(
        spec,
        fixture=fixture_copy,
        oracle=oracle_copy,
        scratch=scratch,
        harness=stamp(os.getpid()) or spec.harness,
        hidden=(*spec.hidden, scratch),
    )
    return worker(local)
