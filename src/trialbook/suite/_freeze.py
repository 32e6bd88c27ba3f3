"""Freezing a suite: the content hash (``dataset_id``), oracle-leak quarantine, and the lock file.

The hash covers everything that could change a score: the budget (k, timeout, temperature, seeds) and,
per task in id order, its settings (grader command, timeouts, scratch bound, network, stratum, weight,
outcome kinds), its prompt,
and every fixture and oracle file (relative path, executable bit, bytes) in path order. Each piece is
framed with a tag and its length, so no two different suites serialise to the same byte stream. File
system order, timestamps and the machine play no part.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from trialbook.suite._images import base_images, image_ids
from trialbook.suite._load import (
    DEFAULT_FEEDBACK,
    DEFAULT_SCRATCH_INODES,
    DEFAULT_SCRATCH_MB,
    Suite,
    SuiteError,
    Task,
    load_suite,
)

__all__ = [
    "LOCK_SCHEMA",
    "Lock",
    "LockCheck",
    "check_lock",
    "feedback_warnings",
    "find_leaks",
    "fixture_hash",
    "freeze",
    "oracle_hash",
    "read_lock",
    "suite_files",
    "tree_hash",
    "write_lock",
]

LOCK_SCHEMA = "trialbook.suite/1"
MIN_LINE_CHARS = 20
"""A line of an oracle this long (whitespace collapsed) is specific enough to count as leaked if the
prompt or the fixture contains it."""
MIN_VALUE_CHARS = 6
"""An expected value the oracle asserts (a string or number literal) this long is specific enough."""
_BOILERPLATE = ("import ", "from ", "#", "def ", "class ", "@", '"""', "'''", "if __name__")


@dataclass(frozen=True)
class Lock:
    """What ``suite freeze`` records in ``suite.lock.json``."""

    name: str
    dataset_id: str
    task_hashes: Mapping[str, str]
    quarantined: Mapping[str, tuple[str, ...]]
    """Task id -> why its oracle counts as leaked."""
    budget: Mapping[str, Any]
    grader_version: str | None
    images: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Task id -> each image its environment rests on (its ``image``, or its Dockerfile's
    ``FROM``) -> the image ID the engine had under that name at the freeze; part of the task's
    hash. Empty for a suite without container environments."""

    def to_dict(self) -> dict[str, Any]:
        """The lock as JSON (the first four keys are the printed contract of ``suite freeze``)."""
        images = {"images": {t: dict(sorted(m.items())) for t, m in sorted(self.images.items())}}
        return {
            "schema": LOCK_SCHEMA,
            "dataset_id": self.dataset_id,
            "tasks": len(self.task_hashes),
            "quarantined": sorted(self.quarantined),
            "name": self.name,
            "task_ids": sorted(self.task_hashes),
            "leaks": {t: list(r) for t, r in sorted(self.quarantined.items())},
            "budget": dict(self.budget),
            "grader_version": self.grader_version,
            "task_hashes": dict(sorted(self.task_hashes.items())),
            **(images if self.images else {}),  # a suite without containers: as before
        }


class _Hasher:
    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def put(self, tag: str, data: bytes | str) -> None:
        raw = data.encode() if isinstance(data, str) else data
        self._h.update(f"{tag}\0{len(raw)}\0".encode())
        self._h.update(raw)

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def _canonical(data: Mapping[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def suite_files(folder: Path) -> Iterator[tuple[str, Path]]:
    """(relative posix path, path) of every file under ``folder``, sorted by the relative path.

    Symbolic links, special files and names that are not UTF-8 are refused: what a link points at is
    not part of the suite.
    """
    if folder.is_symlink():
        raise SuiteError(f"{folder}: symbolic links are not allowed in a suite (copy the folder)")
    if not folder.is_dir():
        return
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        base = Path(dirpath)
        for name in [*dirnames, *filenames]:
            p = base / name
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                raise SuiteError(
                    f"{str(p)!a}: the file name is not UTF-8 (rename it): the lock, the ledger "
                    "and every report name files as UTF-8 text"
                ) from None
            mode = p.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise SuiteError(f"{p}: symbolic links are not allowed in a suite (copy the file)")
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise SuiteError(f"{p}: not a regular file")
        for name in filenames:
            p = base / name
            found.append((p.relative_to(folder).as_posix(), p))
    yield from sorted(found)


def _hash_folder(h: _Hasher, kind: str, folder: Path) -> None:
    for rel, path in suite_files(folder):
        h.put(f"{kind}-file", rel)
        h.put("mode", "x" if path.stat().st_mode & 0o111 else "-")
        h.put("content", path.read_bytes())


def tree_hash(folder: Path, kind: Literal["fixture", "oracle"]) -> str:
    """Content hash of the files under ``folder`` (relative path, executable bit, bytes), framed as
    the ``kind`` folder of a task; a missing folder hashes like an empty one.

    The hash of a copy equals the hash of its source, which is how an attempt checks that the
    fixture it was given is the one the run was planned with.
    """
    h = _Hasher()
    _hash_folder(h, kind, folder)
    return "sha256:" + h.hexdigest()


def fixture_hash(task: Task) -> str:
    """Content hash of a task's fixture alone (recorded in every ledger row as ``fixture_hash``)."""
    return tree_hash(task.fixture, "fixture")


def oracle_hash(task: Task) -> str:
    """Content hash of a task's oracle alone (an attempt checks its oracle copy against it)."""
    return tree_hash(task.oracle, "oracle")


def _task_hash(task: Task, images: Mapping[str, str]) -> str:
    h = _Hasher()
    h.put(
        "settings",
        _canonical(
            {
                "grader": task.grader,
                "timeout_s": task.timeout_s,
                "grader_timeout_s": task.grader_timeout_s,
                # "model" only where declared: other tasks keep their ids
                "network": "model" if task.model else task.network,
                "stratum": task.stratum,
                "weight": task.weight,
                # only when declared: the ids of suites without outcome kinds stay as they were
                **({"outcomes": list(task.outcomes)} if task.outcomes else {}),
                # likewise: a task with the default repair feedback keeps its id
                **({"feedback": task.feedback} if task.feedback != DEFAULT_FEEDBACK else {}),
                # the environment, where the task names one: an image by its reference, a
                # Dockerfile by its build context's content (below)
                **({"image": task.image} if task.image is not None else {}),
                **({"container": task.container.settings()} if task.container else {}),
                # the scratch bound, like the timeouts, is part of what an attempt is given; only
                # when not the default, so that every other suite keeps its dataset_id
                **(
                    {"scratch_mb": task.scratch_mb} if task.scratch_mb != DEFAULT_SCRATCH_MB else {}
                ),
                **(
                    {"scratch_inodes": task.scratch_inodes}
                    if task.scratch_inodes != DEFAULT_SCRATCH_INODES
                    else {}
                ),
            }
        ),
    )
    h.put("prompt", task.prompt)
    _hash_folder(h, "fixture", task.fixture)
    _hash_folder(h, "oracle", task.oracle)
    if task.dockerfile is not None:
        h.put("dockerfile", str(task.dockerfile.relative_to(task.dir)))
        _hash_folder(h, "environment", task.dockerfile.parent)
    for ref, image_id in sorted(images.items()):  # what the environment rests on, by digest
        h.put("image", f"{ref}\0{image_id}")
    return h.hexdigest()


def _images(suite: Suite) -> dict[str, dict[str, str]]:
    """Task id -> reference -> image ID, for every task with a container environment."""
    refs: dict[str, list[str]] = {}
    for task in suite.tasks:
        if task.dockerfile is not None:
            refs[task.id] = base_images(task.dockerfile)
        elif task.image is not None:
            refs[task.id] = [task.image]
    task_of = {ref: task_id for task_id, named in reversed(refs.items()) for ref in named}
    ids = image_ids(task_of)
    return {task_id: {ref: ids[ref] for ref in named} for task_id, named in refs.items()}


def _budget(suite: Suite) -> dict[str, Any]:
    budget: dict[str, Any] = {
        "k": suite.k,
        "timeout_s": suite.timeout_s,
        "temperature": suite.temperature,
        "seeds": list(suite.seeds),
    }
    if suite.grade_after_timeout:  # only when set, so that every other suite keeps its dataset_id
        budget["grade_after_timeout"] = True
    if suite.protocol != "independent":  # likewise: an independent suite keeps its dataset_id
        budget["protocol"] = suite.protocol
    return budget


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def _squash(text: str) -> str:
    return " ".join(text.split())


def _asserted_values(source: str) -> list[str]:
    """Literal values a Python oracle checks against: the constant sides of comparisons
    (``assert f(x) == "expected"``) and the constant arguments of unittest-style ``assert*`` calls
    (``self.assertEqual(f(x), "expected")``)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    candidates: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            candidates += [node.left, *node.comparators]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name.startswith("assert"):
                candidates += node.args
    values: list[str] = []
    for side in candidates:
        if isinstance(side, ast.Constant) and isinstance(side.value, str | int | float):
            if isinstance(side.value, bool):
                continue
            text = str(side.value).strip()
            if len(text) >= MIN_VALUE_CHARS:
                values.append(text)
    return values


def feedback_warnings(suite: Suite) -> list[str]:
    """What ``suite freeze`` warns of in a repair suite: tasks whose feedback hands the next round
    more than which checks passed (docs/harness.md, "Attempt protocols"). A check's reason is
    written by the grader about the oracle (``AssertionError: 0 != 42`` names the expected value)
    and the grader's stdout relays whatever code it ran printed (the oracle files, read by the
    agent's own module), so either can carry the oracle to the next round."""
    if suite.protocol != "repair":
        return []
    what = {
        "reasons": "the checks' reasons, which a grader writes about the oracle "
        "('AssertionError: 0 != 42' names the expected value)",
        "grader-stdout": "the grader's stdout, which relays what the code it ran printed (the "
        "agent's code can print the oracle there)",
    }
    return [
        f"task {task.id!r}: its repair feedback ({task.feedback}) hands the next round "
        f'{what[task.feedback]}: it can reveal the oracle (feedback = "checks" tells which '
        "checks failed, not why)"
        for task in suite.tasks
        if task.feedback in what
    ]


def find_leaks(task: Task) -> tuple[str, ...]:
    """Why the task's oracle counts as leaked into its prompt or fixture (empty: no leak found).

    Two checks (docs/methodology.md, "Oracle leaks and quarantine"): a significant line of any oracle file (at least ``MIN_LINE_CHARS``
    characters once whitespace is collapsed, not an import, definition or comment) appearing in the
    prompt or in a fixture file; and an expected value a Python oracle asserts (a literal of at least
    ``MIN_VALUE_CHARS`` characters) appearing there.
    """
    haystacks: list[tuple[str, str]] = [("the prompt", _squash(task.prompt))]
    for rel, path in suite_files(task.fixture):
        text = _text(path)
        if text is not None:
            haystacks.append((f"fixture/{rel}", _squash(text)))
    reasons: list[str] = []
    for rel, path in suite_files(task.oracle):
        text = _text(path)
        if text is None:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            squashed = _squash(line)
            if len(squashed) < MIN_LINE_CHARS or squashed.startswith(_BOILERPLATE):
                continue
            for where, hay in haystacks:
                if squashed in hay:
                    reasons.append(f"oracle/{rel} line {lineno} appears in {where}")
                    break
        if rel.endswith(".py"):
            for value in _asserted_values(text):
                for where, hay in haystacks:
                    if value in hay:
                        reasons.append(f"oracle/{rel} asserts {value!r}, which appears in {where}")
                        break
    return tuple(dict.fromkeys(reasons))


def _hashes(suite: Suite) -> tuple[str, dict[str, str], dict[str, dict[str, str]]]:
    """The dataset_id and each task's hash (and the images they rest on)."""
    images = _images(suite)
    task_hashes = {task.id: _task_hash(task, images.get(task.id, {})) for task in suite.tasks}
    h = _Hasher()
    h.put("schema", LOCK_SCHEMA)
    h.put("budget", _canonical(_budget(suite)))
    for task_id in sorted(task_hashes):
        h.put("task", task_id)
        h.put("task-hash", task_hashes[task_id])
    return "sha256:" + h.hexdigest(), task_hashes, images


def freeze(suite: Suite) -> Lock:
    """Hash the suite and find leaks (writes nothing; reads the digests of the images its
    container environments rest on from the local engine, ``_images``)."""
    dataset_id, task_hashes, images = _hashes(suite)
    leaks = {t.id: r for t in suite.tasks if (r := find_leaks(t))}
    return _lock(suite, dataset_id, task_hashes, leaks, images)


def _lock(
    suite: Suite,
    dataset_id: str,
    task_hashes: dict[str, str],
    quarantined: Mapping[str, tuple[str, ...]],
    images: Mapping[str, Mapping[str, str]],
) -> Lock:
    return Lock(
        name=suite.name,
        dataset_id=dataset_id,
        task_hashes=task_hashes,
        quarantined=quarantined,
        budget=_budget(suite),
        grader_version=suite.grader_version,
        images=images,
    )


def write_lock(suite: Suite, lock: Lock) -> Path:
    """Write ``suite.lock.json`` beside ``suite.toml`` (whole or not at all)."""
    path = suite.lock_path
    tmp = path.with_suffix(".json.partial")
    tmp.write_text(json.dumps(lock.to_dict(), indent=2) + "\n")
    os.replace(tmp, path)
    return path


def read_lock(suite: Suite) -> dict[str, Any] | None:
    """The lock as written, or None when there is none."""
    path = suite.lock_path
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except ValueError as exc:
        raise SuiteError(f"{path}: not valid JSON ({exc}): freeze the suite again") from None
    if not isinstance(data, dict) or data.get("schema") != LOCK_SCHEMA:
        raise SuiteError(f"{path}: not a {LOCK_SCHEMA} lock: freeze the suite again")
    return data


def _what_changed(task_id: str, locked: object, now: Mapping[str, Mapping[str, str]]) -> str:
    was = locked.get(task_id) if isinstance(locked, dict) else None
    is_now = now.get(task_id, {})
    if isinstance(was, dict):
        for ref, image_id in sorted(is_now.items()):
            if was.get(ref) not in (None, image_id):
                return (
                    f"task {task_id!r} changed: its image {ref} is now {image_id[:19]}, "
                    f"the lock has {str(was[ref])[:19]}"
                )
    return f"task {task_id!r} changed (prompt, fixture, oracle, environment or settings)"


@dataclass(frozen=True)
class LockCheck:
    """Whether the lock on disk still matches the suite's files."""

    current: Lock
    locked_id: str | None
    """The dataset_id in the lock (None: no lock)."""
    changed: tuple[str, ...]
    """What differs, one line each (tasks added, removed or changed; the budget)."""

    @property
    def matches(self) -> bool:
        """True when the lock exists and every hash agrees."""
        return self.locked_id is not None and self.locked_id == self.current.dataset_id


def check_lock(suite: Suite | str | Path) -> LockCheck:
    """Re-hash the suite and compare with its lock.

    When the hashes match, the lock's quarantine is the one computed from these very files and is
    taken from the lock (leak detection reads every text file again; a run does not need that).
    """
    if not isinstance(suite, Suite):
        suite = load_suite(suite)
    dataset_id, task_hashes, images = _hashes(suite)
    data = read_lock(suite)
    leaks = data.get("leaks") if data is not None else None
    if data is not None and data.get("dataset_id") == dataset_id and isinstance(leaks, dict):
        found = {t: tuple(r) for t, r in leaks.items()}
    else:
        found = {t.id: r for t in suite.tasks if (r := find_leaks(t))}
    current = _lock(suite, dataset_id, task_hashes, found, images)
    if data is None:
        return LockCheck(current, None, (f"no lock: run 'trialbook suite freeze {suite.root}'",))
    changed: list[str] = []
    old = data.get("task_hashes", {})
    new = current.task_hashes
    for task_id in sorted(set(old) | set(new)):
        if task_id not in new:
            changed.append(f"task {task_id!r} was removed")
        elif task_id not in old:
            changed.append(f"task {task_id!r} was added")
        elif old[task_id] != new[task_id]:
            changed.append(_what_changed(task_id, data.get("images"), current.images))
    if data.get("budget") != current.budget:
        changed.append(f"the budget changed: {data.get('budget')} -> {current.budget}")
    locked_id = data.get("dataset_id")
    if locked_id != current.dataset_id and not changed:
        changed.append("the lock's dataset_id does not match the files")
    return LockCheck(current, locked_id if isinstance(locked_id, str) else "", tuple(changed))
