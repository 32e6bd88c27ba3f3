"""Reading a suite from disk: ``suite.toml`` and ``tasks/<id>/task.toml``, every key checked.

A malformed suite is a :class:`SuiteError` with one line per problem, each naming the file and the key.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trialbook.errors import SuiteError
from trialbook.suite._checker import Checker
from trialbook.suite._container_keys import (
    CONTAINER_KEYS,
    ContainerSettings,
    container_settings,
    dockerfile_key,
    image_key,
)
from trialbook.suite._model_table import ModelTable, read_model_table

__all__ = [
    "FEEDBACK",
    "LOCK_NAME",
    "PROTOCOLS",
    "Suite",
    "SuiteError",
    "Task",
    "load_suite",
]

LOCK_NAME = "suite.lock.json"
DEFAULT_GRADER_TIMEOUT_S = 120.0
_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
MAX_K = 100_000
"""Attempts per task beyond this are refused: the seeds and the plan are built in memory."""
PROTOCOLS = ("independent", "repair", "human-selected")
"""How a suite's attempts are made (docs/harness.md, "Attempt protocols"); the same words as the
ledger's ``protocol`` field (a test holds the two lists equal: the suite may not import the ledger)."""
FEEDBACK = ("outcome", "checks", "reasons", "grader-stdout")
"""What a repair round is told of the round before (``feedback`` in suite.toml or task.toml; each
tells what the one before it does and more, docs/harness.md "Attempt protocols"): its outcome; and
which named checks passed; and each check's reason; and the tail of the grader's stdout."""
DEFAULT_FEEDBACK = "checks"
"""The outcome and the named checks by name: nothing the grader printed about why."""
DEFAULT_SCRATCH_MB = 4096
"""An attempt's own scratch (its workspace and io folder), MiB, where the harness can bound it."""
DEFAULT_SCRATCH_INODES = 1_000_000
"""Files and folders an attempt's scratch may hold, where the harness can bound it."""
SEED_RANGE = (-(2**53), 2**53)
"""Seeds go into every row's ``seed``, and the ledger keeps integers exact up to 2**53 in size."""


@dataclass(frozen=True)
class Task:
    """One task of a suite, as declared on disk."""

    id: str
    dir: Path
    prompt: str
    """The prompt text (from ``prompt`` or the file ``prompt_file`` names)."""
    grader: str
    """Shell command run in the workspace after the agent; exit 0 = pass."""
    timeout_s: float
    """Wall-clock limit of one attempt (the task's own, else the suite's)."""
    grader_timeout_s: float
    stratum: str | None = None
    weight: float | None = None
    network: bool = False
    """Whether the agent may reach the network (bwrap tier; opt-in per task)."""
    model: bool = False
    """``network = "model"``: the agent needs a model and may reach the run's model gateway and
    nothing else (a run of it without a gateway is refused; ``network`` is then false)."""
    outcomes: tuple[str, ...] = ()
    """The outcome kinds its grader reports beside the verdict: ``protection``, ``task`` and
    ``stop_reason`` (fault-injection and permission tasks, docs/harness.md)."""
    feedback: str = DEFAULT_FEEDBACK
    """What a repair round of this task is told of the round before (one of ``FEEDBACK``): the
    task's own ``feedback``, else the suite's."""
    image: str | None = None
    """The container image its attempts run in (container tier): the task's ``image``, else the
    suite's."""
    dockerfile: Path | None = None
    """The Dockerfile (in the task folder) its image is built from, in the Dockerfile's folder."""
    container: ContainerSettings | None = None
    """How its container is laid out and limited (container tier); None: the defaults."""

    @property
    def environment(self) -> str | None:
        """What the task names as its environment, in words (None: the host's)."""
        if self.dockerfile is not None:
            return f"dockerfile {self.dockerfile.relative_to(self.dir)}"
        return None if self.image is None else f"image {self.image}"

    scratch_mb: int = DEFAULT_SCRATCH_MB
    """Bytes (MiB) of the attempt's own scratch, its workspace and io folder (the task's own
    ``scratch_mb``, else the suite's), where the harness can bound it (docs/harness.md)."""
    scratch_inodes: int = DEFAULT_SCRATCH_INODES
    """Files and folders the attempt's scratch may hold (likewise)."""

    @property
    def fixture(self) -> Path:
        """Copied into each attempt's fresh workspace."""
        return self.dir / "fixture"

    @property
    def oracle(self) -> Path:
        """Seen only by the grader (may be absent: an empty oracle)."""
        return self.dir / "oracle"


@dataclass(frozen=True)
class Suite:
    """A suite on disk: tasks plus the budget every attempt gets."""

    root: Path
    name: str
    k: int
    timeout_s: float
    temperature: float | None
    seeds: tuple[int, ...]
    """One seed per attempt index, the same for every system run on the suite."""
    tasks: tuple[Task, ...]
    subsets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Named subsets of the tasks (``[subsets]`` in suite.toml, e.g. ``smoke``), run alone on request."""
    strata: tuple[str, ...] = ()
    grader_version: str | None = None
    description: str | None = None
    grade_after_timeout: bool = False
    """The graders judge the workspace even when the agent hit its timeout (a timed-out attempt may
    then pass, and every row of the run says so in ``graded_after_timeout``)."""
    protocol: str = "independent"
    """How attempts are made: ``independent`` (fresh workspace, no memory of earlier attempts),
    ``repair`` (attempt i runs after attempt i-1 and is handed its outcome and grader output) or
    ``human-selected`` (a person picks which attempt counts)."""
    model: ModelTable | None = None
    """The ``[model]`` table: how ``trialbook run`` reaches a model for this suite's tasks (its
    gateway), under any trialbook.toml or command-line setting. Not part of the ``dataset_id``:
    it says how to reach a model, not what a task is."""

    @property
    def lock_path(self) -> Path:
        """Where ``trialbook suite freeze`` writes the lock."""
        return self.root / LOCK_NAME

    def task(self, task_id: str) -> Task:
        """The task with this id."""
        return next(t for t in self.tasks if t.id == task_id)


_SUITE_KEYS = {
    "name": "suite name",
    "description": "free text",
    "k": "attempts per task",
    "timeout_s": "wall-clock limit per attempt, seconds",
    "grader_timeout_s": "limit for one grader run, seconds",
    "temperature": "sampling temperature given to the agent",
    "seeds": "one integer per attempt index",
    "weights": "table: task id -> weight",
    "strata": "list of the strata tasks may declare",
    "subsets": "table: subset name -> list of task ids",
    "grader_version": "version string of the suite's graders",
    "grade_after_timeout": "true: grade the workspace even after a timeout (default false)",
    "protocol": "how attempts are made: independent (default), repair or human-selected",
    "feedback": "what a repair round is told: outcome, checks (default), reasons or grader-stdout",
    "image": "container image every task runs in (container tier) unless it names its own",
    "network": 'every task\'s default: false (default), true, or "model" (the model gateway only)',
    "scratch_mb": f"an attempt's own scratch, MiB (default {DEFAULT_SCRATCH_MB})",
    "scratch_inodes": f"files and folders an attempt's scratch may hold (default {DEFAULT_SCRATCH_INODES})",
    "model": "table: how a run reaches a model through its gateway (upstream, key_env, prices, ...)",
}
_TASK_KEYS = {
    "prompt": "prompt text",
    "prompt_file": "file (in the task folder) holding the prompt",
    "grader": "shell command, exit 0 = pass",
    "stratum": "task family",
    "weight": "task weight",
    "timeout_s": "this task's wall-clock limit",
    "grader_timeout_s": "this task's grader limit",
    "network": 'true to let the agent reach the network; "model": the model gateway only',
    "outcomes": "outcome kinds its grader reports: any of protection, task, stop_reason",
    "feedback": "what a repair round is told: outcome, checks, reasons or grader-stdout",
    "image": "container image the task runs in (container tier)",
    "dockerfile": "Dockerfile in the task folder its image is built from (container tier)",
    "workdir": "absolute path in the image where the workspace is bound (container tier)",
    "oracle_dir": "absolute path where the grader finds the oracle (container tier)",
    "cpus": "CPUs of the task's containers (container tier)",
    "memory_mb": "memory of the task's containers, MiB (container tier)",
    "verdict": "grader (default) or harbor-reward (the verifier's /logs/verifier reward file)",
    "scratch_mb": "this task's scratch, MiB",
    "scratch_inodes": "files and folders this task's scratch may hold",
    "description": "free text",
}


def _refuse_link(path: Path, check: Checker) -> None:
    """A suite's folders must be its own: a ``tasks/``, task, ``fixture/`` or ``oracle/`` that is a
    symbolic link would be read (and hashed) through the link while the sandbox hides the suite
    folder only, so the agent could read the oracle by its real path; a fixture linked to ``~/.ssh``
    would be copied into every workspace."""
    if path.is_symlink():
        check.add(
            path,
            None,
            f"is a symbolic link (to {str(path.readlink())!r}): a suite's folders must be inside it "
            "(copy the folder into the suite)",
        )


def load_suite(root: str | Path) -> Suite:
    """Read and check a suite folder. Raises :class:`SuiteError` listing every problem."""
    root = Path(root)
    check = Checker()
    if not root.is_dir():
        raise SuiteError(f"{root}: no such suite folder")
    path = root / "suite.toml"
    data = check.toml(path)
    if data is None:
        raise SuiteError(check.problems)
    if "tiers" in data:
        # "tier" means a sandbox tier only; the task subsets were called tiers before
        check.add(path, "tiers", "the table of task subsets is now called [subsets]: rename it")
    check.unknown(path, {k: v for k, v in data.items() if k != "tiers"}, _SUITE_KEYS)
    name = check.text(path, data, "name")
    if "name" not in data:
        check.add(path, "name", "required")
    k = 0
    if "k" not in data:
        check.add(path, "k", "required (attempts per task, >= 1)")
    elif isinstance(data["k"], bool) or not isinstance(data["k"], int):
        check.add(path, "k", f"expected a whole number >= 1, got {data['k']!r}")
    elif data["k"] < 1:
        check.add(path, "k", f"must be >= 1, got {data['k']}")
    elif data["k"] > MAX_K:
        check.add(path, "k", f"must be <= {MAX_K}, got {data['k']}")
    else:
        k = data["k"]
    timeout = check.number(path, data, "timeout_s", low=0, open_low=True)
    if "timeout_s" not in data:
        check.add(path, "timeout_s", "required (wall-clock limit per attempt, seconds)")
    grader_timeout = check.number(path, data, "grader_timeout_s", low=0, open_low=True)
    temperature = check.number(path, data, "temperature", low=0, open_low=False)
    seeds: tuple[int, ...] = tuple(range(k))
    if "seeds" in data:
        raw = data["seeds"]
        if not isinstance(raw, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) for s in raw
        ):
            check.add(path, "seeds", f"expected a list of whole numbers, got {raw!r:.80}")
        elif bad := [s for s in raw if not SEED_RANGE[0] <= s <= SEED_RANGE[1]]:
            check.add(
                path,
                "seeds",
                f"seeds must lie within -2**53..2**53 (exact in the ledger), got {bad[0]}",
            )
        elif k and len(raw) != k:
            check.add(path, "seeds", f"expected one seed per attempt index ({k}), got {len(raw)}")
        else:
            seeds = tuple(raw)
    strata: tuple[str, ...] = ()
    if "strata" in data:
        raw = data["strata"]
        if not isinstance(raw, list) or not all(isinstance(s, str) and s for s in raw):
            check.add(path, "strata", f"expected a list of names, got {raw!r}")
        else:
            strata = tuple(raw)
    grader_version = check.text(path, data, "grader_version")
    grade_after_timeout = data.get("grade_after_timeout", False)
    if not isinstance(grade_after_timeout, bool):
        check.add(
            path, "grade_after_timeout", f"expected true or false, got {grade_after_timeout!r}"
        )
        grade_after_timeout = False
    protocol = data.get("protocol", "independent")
    if protocol not in PROTOCOLS:
        check.add(path, "protocol", f"expected one of {', '.join(PROTOCOLS)}, got {protocol!r}")
        protocol = "independent"
    feedback = _feedback(path, data, check, DEFAULT_FEEDBACK)
    image = image_key(path, data, check)
    network = data.get("network", False)
    if not isinstance(network, bool) and network != "model":
        check.add(path, "network", f'expected true, false or "model", got {network!r}')
        network = False
    scratch_mb = check.count(path, data, "scratch_mb") or DEFAULT_SCRATCH_MB
    scratch_inodes = check.count(path, data, "scratch_inodes") or DEFAULT_SCRATCH_INODES
    model = None
    if "model" in data:
        model, model_problems = read_model_table(path, data["model"])
        for problem in model_problems:
            check.add(path, None, problem)

    tasks_dir = root / "tasks"
    _refuse_link(tasks_dir, check)
    task_dirs = sorted(p for p in tasks_dir.iterdir() if p.is_dir()) if tasks_dir.is_dir() else []
    if not task_dirs:
        check.add(tasks_dir, None, "no task folders (expected tasks/<id>/task.toml)")
    weights_raw = data.get("weights", {})
    if not isinstance(weights_raw, dict):
        check.add(path, "weights", "expected a table: task id = weight")
        weights_raw = {}
    tasks: list[Task] = []
    for tdir in task_dirs:
        task = _load_task(
            tdir,
            check,
            timeout=timeout or 1.0,
            grader_timeout=grader_timeout or DEFAULT_GRADER_TIMEOUT_S,
            strata=strata,
            suite_weight=weights_raw.get(tdir.name),
            feedback=feedback,
            image=image,
            network=network,
            scratch=(scratch_mb, scratch_inodes),
        )
        if task is not None:
            tasks.append(task)
    ids = {t.name for t in task_dirs}
    for task_id, w in weights_raw.items():
        where = f"weights.{task_id}"
        if task_id not in ids:
            check.add(path, where, f"names no task (tasks: {', '.join(sorted(ids))})")
        elif isinstance(w, bool) or not isinstance(w, int | float) or not w > 0:
            check.add(path, where, f"expected a number > 0, got {w!r}")
    subsets: dict[str, tuple[str, ...]] = {}
    raw_subsets = data.get("subsets", {})
    if not isinstance(raw_subsets, dict):
        check.add(path, "subsets", "expected a table: subset name = [task ids]")
        raw_subsets = {}
    for subset, members in raw_subsets.items():
        where = f"subsets.{subset}"
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            check.add(path, where, f"expected a list of task ids, got {members!r}")
            continue
        for m in members:
            if m not in ids:
                hint = difflib.get_close_matches(m, sorted(ids), n=1)
                extra = f" (did you mean {hint[0]!r}?)" if hint else ""
                check.add(path, where, f"names unknown task {m!r}{extra}")
        subsets[subset] = tuple(members)
    if check.problems:
        raise SuiteError(check.problems)
    assert name is not None
    assert timeout is not None
    return Suite(
        root=root,
        name=name,
        k=k,
        timeout_s=timeout,
        temperature=temperature,
        seeds=seeds,
        tasks=tuple(tasks),
        subsets=subsets,
        strata=strata,
        grader_version=grader_version,
        description=data.get("description"),
        grade_after_timeout=grade_after_timeout,
        protocol=protocol,
        model=model,
    )


def _load_task(
    tdir: Path,
    check: Checker,
    *,
    timeout: float,
    grader_timeout: float,
    strata: tuple[str, ...],
    feedback: str,
    suite_weight: object,
    image: str | None = None,
    network: bool | str = False,
    scratch: tuple[int, int] = (DEFAULT_SCRATCH_MB, DEFAULT_SCRATCH_INODES),
) -> Task | None:
    before = len(check.problems)
    if not _TASK_ID.fullmatch(tdir.name):
        check.add(tdir, None, "task id must be letters, digits, '.', '_' or '-'")
    for folder in (tdir, tdir / "fixture", tdir / "oracle"):
        _refuse_link(folder, check)
    path = tdir / "task.toml"
    data = check.toml(path)
    if data is None:
        return None
    check.unknown(path, data, _TASK_KEYS)
    prompt = check.text(path, data, "prompt")
    prompt_file = check.text(path, data, "prompt_file")
    if "prompt" in data and "prompt_file" in data:
        check.add(path, "prompt", "give prompt or prompt_file, not both")
    elif "prompt" not in data and "prompt_file" not in data:
        check.add(path, "prompt", "required (or prompt_file)")
    elif prompt_file is not None:
        pfile = (tdir / prompt_file).resolve()
        if not pfile.is_relative_to(tdir.resolve()) or not pfile.is_file():
            check.add(path, "prompt_file", f"no file {prompt_file!r} in {tdir}")
        else:
            prompt = pfile.read_text(encoding="utf-8")
    grader = check.text(path, data, "grader")
    if "grader" not in data:
        check.add(path, "grader", "required: the shell command that judges the workspace")
    stratum = check.text(path, data, "stratum")
    if stratum is not None and strata and stratum not in strata:
        check.add(
            path, "stratum", f"{stratum!r} is not among the suite's strata ({', '.join(strata)})"
        )
    weight = check.number(path, data, "weight", low=0, open_low=True)
    if weight is not None and suite_weight is not None:
        check.add(path, "weight", "also set in suite.toml [weights]: declare it in one place")
    elif (
        weight is None
        and isinstance(suite_weight, int | float)
        and not isinstance(suite_weight, bool)
    ):
        weight = float(suite_weight)
    task_timeout = check.number(path, data, "timeout_s", low=0, open_low=True)
    task_grader_timeout = check.number(path, data, "grader_timeout_s", low=0, open_low=True)
    network = data.get("network", network)  # the task's own, else the suite's
    if not isinstance(network, bool) and network != "model":
        check.add(path, "network", f'expected true, false or "model", got {network!r}')
    scratch_mb = check.count(path, data, "scratch_mb") or scratch[0]
    scratch_inodes = check.count(path, data, "scratch_inodes") or scratch[1]
    outcomes = data.get("outcomes", [])
    kinds = ("protection", "task", "stop_reason")
    if not isinstance(outcomes, list) or not all(o in kinds for o in outcomes):
        check.add(path, "outcomes", f"expected a list of {', '.join(kinds)}, got {outcomes!r}")
    elif len(set(outcomes)) != len(outcomes):
        check.add(path, "outcomes", f"names an outcome kind twice: {outcomes!r}")
    if not (tdir / "fixture").is_dir():
        check.add(
            tdir / "fixture", None, "missing folder (the workspace every attempt starts from)"
        )
    own_image = image_key(path, data, check)
    dockerfile = dockerfile_key(path, data, check, tdir)
    if own_image is not None and dockerfile is not None:
        check.add(path, "image", "give image or dockerfile, not both")
    settings = container_settings(path, data, check, tdir)
    if settings is not None and own_image is None and dockerfile is None and image is None:
        check.add(path, next(iter(CONTAINER_KEYS & set(data))), "only for a task with an image")
    if len(check.problems) > before or prompt is None or grader is None:
        return None
    return Task(
        image=None if dockerfile is not None else own_image or image,
        dockerfile=dockerfile,
        container=settings,
        id=tdir.name,
        dir=tdir,
        prompt=prompt,
        grader=grader,
        timeout_s=task_timeout or timeout,
        grader_timeout_s=task_grader_timeout or grader_timeout,
        stratum=stratum,
        weight=weight,
        network=network is True,
        model=network == "model",
        outcomes=tuple(o for o in kinds if isinstance(outcomes, list) and o in outcomes),
        feedback=_feedback(path, data, check, feedback),
        scratch_mb=scratch_mb,
        scratch_inodes=scratch_inodes,
    )


def _feedback(path: Path, data: Mapping[str, Any], check: Checker, default: str) -> str:
    """The ``feedback`` key of a suite.toml or task.toml (``default`` when absent)."""
    value = data.get("feedback", default)
    if value not in FEEDBACK:
        check.add(path, "feedback", f"expected one of {', '.join(FEEDBACK)}, got {value!r}")
        return default
    return str(value)
