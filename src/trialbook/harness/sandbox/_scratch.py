"""A run's throwaway folder and its watchdog, and the clearing of what killed harnesses left.

The scratch folder is named after the harness (its pid stamp), with the run id inside: a harness
killed with SIGKILL leaves it behind for the next run to recognise and clear; ``trialbook runs``
tells a running run from a killed one by it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from trialbook.harness.sandbox._cgroup import clean_stale
from trialbook.harness.sandbox._container import clean_stale_containers
from trialbook.harness.sandbox._fs import remove_tree
from trialbook.harness.sandbox._stamp import is_dead, stamp
from trialbook.harness.sandbox._sweep import sweep

__all__ = [
    "clean_stale_runs",
    "live_run_ids",
    "make_scratch",
    "start_detached_watchdog",
    "start_watchdog",
    "stop_watchdog",
]


_SCRATCH_PREFIX = "trialbook-run-"


def make_scratch(run_id: str, key: str) -> Path:
    """The run's throwaway folder, named after this harness, with the run id and the run's token
    key (``_sweep.run_key``) inside: a harness killed with SIGKILL leaves it
    behind for the next run to recognise and clear."""
    scratch = Path(tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{stamp(os.getpid())}.")).resolve()
    (scratch / "run_id").write_text(run_id)
    (scratch / "run_key").write_text(key)
    return scratch


def clean_stale_runs() -> int:
    """Clear what killed harnesses left on this machine: the processes of their runs, their
    cgroups and their scratch folders (workspaces, prompts, oracle copies); returns how many
    scratch folders were removed. A live harness's folder is never touched."""
    removed = 0
    clean_stale()
    clean_stale_containers(is_dead)  # the engine keeps a killed harness's containers running
    for folder in Path(tempfile.gettempdir()).glob(f"{_SCRATCH_PREFIX}*"):
        harness = folder.name[len(_SCRATCH_PREFIX) :].split(".", 1)[0]
        if not is_dead(harness):
            continue  # a live harness's, or one of another pid namespace (a container sharing /tmp)
        run_id, key = _read(folder / "run_id"), _read(folder / "run_key")
        if key:  # that harness's processes only (tokens RUN_KEY/HARNESS/START_KEY)
            sweep(f"{key}/{harness}/", prefix=True)
        elif run_id:
            # before run keys: tokens RUN_ID/HARNESS/START; trialbook 0.1's carried no harness
            # (RUN_ID/START), and a 0.1 stamp has no namespace part
            legacy = not harness.startswith("ns")
            sweep(f"{run_id}/" if legacy else f"{run_id}/{harness}/", prefix=True)
        remove_tree(folder)
        removed += 1
    return removed


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def start_watchdog(
    prefix: str, scratch: Path, withheld: Sequence[str] = ()
) -> subprocess.Popen[bytes]:
    """A process that outlives a killed harness just long enough to kill the run's processes (those
    whose token starts with ``prefix``: ``RUN_KEY/HARNESS/``) and remove its scratch folder.
    It runs with this process's environment (its import path) but for ``withheld`` (the model's
    real key: it needs none, and lives the whole run)."""
    watchdog = [sys.executable, "-m", "trialbook.harness.sandbox._watchdog", str(os.getpid())]
    return subprocess.Popen(
        [*watchdog, prefix, str(scratch)],
        env={name: value for name, value in os.environ.items() if name not in withheld},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )


def start_detached_watchdog(prefix: str, scratch: Path) -> None:
    """The same watchdog, but no child of this process: started through a shell that exits at
    once, so that it is an orphan in a session of its own. A cluster worker (Ray) kills its own
    children and process group when it is cancelled or crashes; this one survives that, kills what
    the worker's attempts left and removes the scratch folder. It ends when this process ends."""
    watchdog = [sys.executable, "-m", "trialbook.harness.sandbox._watchdog", str(os.getpid())]
    subprocess.run(
        [
            "/bin/sh",
            "-c",
            '"$@" </dev/null >/dev/null 2>&1 &',
            "sh",
            *watchdog,
            prefix,
            str(scratch),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        check=True,
    )


def stop_watchdog(watchdog: subprocess.Popen[bytes]) -> None:
    watchdog.kill()
    watchdog.wait()


def live_run_ids() -> set[str]:
    """Ids of the runs a live harness on this machine (this pid namespace) is running now."""
    ids: set[str] = set()
    for folder in Path(tempfile.gettempdir()).glob(f"{_SCRATCH_PREFIX}*"):
        if is_dead(folder.name[len(_SCRATCH_PREFIX) :].split(".", 1)[0]):
            continue
        try:
            ids.add((folder / "run_id").read_text())
        except OSError:
            continue
    return ids
