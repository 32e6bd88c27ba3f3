"""``trialbook grader-check``: the grader's own regression set.

For each task: the untouched fixture must fail the grader (else the grader accepts doing nothing), the
task's ``reference/`` must pass (else it rejects a known-good solution), and every ``decoys/<name>/``
must fail (each is a known-bad solution). ``reference/`` and each decoy are laid over a copy of the
fixture (their files replace or add to the fixture's), so they need hold only what they change.

Two decoys are always tried, generated. ``decoy:shadow-stdlib`` lays over the fixture modules named
like the ones a grader imports (``unittest``, ``pytest``, ``json``, ``sitecustomize``, a
``conftest.py``...) that end the process with exit 0 when imported: a grader that runs its tests
with the workspace ahead of the standard library (``python -m unittest`` from the workspace) is
fooled by it. ``decoy:exit-on-import`` writes each module the oracle's Python files import from the
workspace (every top-level name not in the standard library) as one that ends the process with exit
0 when imported: a grader that judges by the exit code of the process importing the agent's code
(``python -I -m unittest`` on oracle tests) is fooled by it. Either is a false accept.

A task may hold more known-good samples than ``reference/``: each ``references/<name>/`` must pass
too. Any sample folder (``reference/``, ``references/<name>/``, ``decoys/<name>/``) may hold an
``expect.json``, ``{"checks": {"NAME": true | false}}``: the named checks the grader must report as
passed (true) or failed (false) on it (docs/harness.md, "The grader contract"). A check expected to
fail that passed is a false accept of that check, one expected to pass that failed (or that the
grader did not report) a false reject. ``expect.json`` is never laid into the workspace.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from trialbook.harness.attempt._grade import grade_workspace
from trialbook.harness.sandbox import (
    Captured,
    ContainerTarget,
    Tier,
    prepare_environments,
    remove_tree,
    stamp,
)
from trialbook.ledger import CheckVerdict
from trialbook.suite import Suite, SuiteError, Task

__all__ = ["GraderCase", "GraderCheck", "grader_check"]


@dataclass(frozen=True)
class GraderCase:
    """One workspace judged by a task's grader."""

    task_id: str
    case: str
    """``fixture``, ``reference`` or ``decoy:<name>``."""
    should_pass: bool
    passed: bool
    note: str | None = None
    grader: str = ""
    """The task's grader command (cases are summed per grader)."""
    checks: dict[str, CheckVerdict] | None = None
    """The named checks the grader reported on this workspace (None: it reported none)."""
    expected: dict[str, bool] | None = None
    """The sample's ``expect.json``: check name -> must pass (None: the sample has none)."""

    def check_errors(self) -> tuple[tuple[str, str], ...]:
        """(check, ``false accept`` | ``false reject``) for each expectation the grader broke; a
        check expected but not reported is a false reject (the grader did not confirm it)."""
        out = []
        for name, want in (self.expected or {}).items():
            got = (self.checks or {}).get(name)
            if got is None or got.passed != want:
                out.append(
                    (name, "false accept" if got is not None and not want else "false reject")
                )
        return tuple(out)

    @property
    def ok(self) -> bool:
        """The grader judged this workspace as it should."""
        return self.passed == self.should_pass

    @property
    def kind(self) -> str | None:
        """``false accept``, ``false reject`` or None."""
        if self.ok:
            return None
        return "false reject" if self.should_pass else "false accept"


@dataclass(frozen=True)
class GraderCheck:
    """Every case of every task."""

    suite: str
    grader_version: str | None
    tier: str
    cases: tuple[GraderCase, ...]

    @property
    def false_accepts(self) -> int:
        """Known-bad workspaces (fixture, decoys) the grader passed."""
        return sum(c.kind == "false accept" for c in self.cases)

    @property
    def false_rejects(self) -> int:
        """Known-good workspaces (references) the grader failed."""
        return sum(c.kind == "false reject" for c in self.cases)

    @property
    def check_false_accepts(self) -> int:
        """Checks the grader passed on a sample whose ``expect.json`` says they must fail."""
        return sum(kind == "false accept" for c in self.cases for _, kind in c.check_errors())

    @property
    def check_false_rejects(self) -> int:
        """Checks the grader failed (or did not report) where ``expect.json`` says they pass."""
        return sum(kind == "false reject" for c in self.cases for _, kind in c.check_errors())

    @property
    def unvalidated(self) -> tuple[str, ...]:
        """Tasks with no known-good sample (no ``reference/`` nor ``references/<name>/``), in suite
        order: their grader's false rejects are not measured, so one that fails every workspace
        would look clean there (``grader-check`` fails on them unless told to allow them)."""
        good = {c.task_id for c in self.cases if c.should_pass}
        return tuple(dict.fromkeys(c.task_id for c in self.cases if c.task_id not in good))

    @property
    def failed(self) -> bool:
        """Any false accept or false reject, of a workspace or of a check."""
        return bool(
            self.false_accepts
            or self.false_rejects
            or self.check_false_accepts
            or self.check_false_rejects
        )

    def per_grader(self) -> dict[str, tuple[int, int, int, int]]:
        """grader command -> (tasks, cases, false accepts, false rejects)."""
        tasks: dict[str, set[str]] = {}
        out: dict[str, tuple[int, int, int, int]] = {}
        for c in self.cases:
            tasks.setdefault(c.grader, set()).add(c.task_id)
            _, n, fa, fr = out.get(c.grader, (0, 0, 0, 0))
            out[c.grader] = (
                len(tasks[c.grader]),
                n + 1,
                fa + (c.kind == "false accept"),
                fr + (c.kind == "false reject"),
            )
        return out

    def per_check(self) -> dict[tuple[str, str], tuple[int, int, int]]:
        """(task id, check) -> (samples expecting it, false accepts, false rejects), for every
        check some sample's ``expect.json`` names."""
        out: dict[tuple[str, str], tuple[int, int, int]] = {}
        for c in self.cases:
            errors = dict(c.check_errors())
            for name in c.expected or {}:
                n, fa, fr = out.get((c.task_id, name), (0, 0, 0))
                out[(c.task_id, name)] = (
                    n + 1,
                    fa + (errors.get(name) == "false accept"),
                    fr + (errors.get(name) == "false reject"),
                )
        return out

    def per_task(self) -> dict[str, tuple[int, int, int]]:
        """task id -> (cases, false accepts, false rejects)."""
        out: dict[str, tuple[int, int, int]] = {}
        for c in self.cases:
            n, fa, fr = out.get(c.task_id, (0, 0, 0))
            out[c.task_id] = (
                n + 1,
                fa + (c.kind == "false accept"),
                fr + (c.kind == "false reject"),
            )
        return out


SHADOW_DECOY = "decoy:shadow-stdlib"
"""A generated decoy every task is checked against: modules shadowing what a grader imports."""
EXIT_DECOY = "decoy:exit-on-import"
"""A generated decoy every task is checked against: the agent's modules exit 0 when imported."""

_SHADOWED = (
    "unittest",
    "pytest",
    "_pytest",
    "json",
    "doctest",
    "subprocess",
    "importlib_metadata",
    "typing_extensions",
)
"""Packages a grader is likely to import; with ``sitecustomize`` and ``conftest`` as modules."""

_EXIT_0 = "import os\n\nos._exit(0)  # a grader that imports this from the workspace passes\n"


def _shadow_decoy(workspace: Path) -> None:
    """Lay the shadowing modules over ``workspace`` (never over a file the fixture has)."""
    for name in _SHADOWED:
        package = workspace / name
        if not package.exists() and not (workspace / f"{name}.py").exists():
            package.mkdir()
            (package / "__init__.py").write_text(_EXIT_0)
            (package / "__main__.py").write_text(_EXIT_0)
    for name in ("sitecustomize.py", "usercustomize.py", "conftest.py"):
        if not (workspace / name).exists():
            (workspace / name).write_text(_EXIT_0)


def _workspace_imports(oracle: Path) -> set[str]:
    """Top-level modules the oracle's Python files import that are not in the standard library."""
    names: set[str] = set()
    for path in oracle.rglob("*.py"):
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    local = {p.stem for p in oracle.rglob("*.py")}  # the oracle's own helper modules
    return {n for n in names if n not in sys.stdlib_module_names and n not in local}


def _exit_decoy(workspace: Path, oracle: Path) -> None:
    """Write each workspace module the oracle imports as one that exits 0 when imported."""
    for name in _workspace_imports(oracle):
        package = workspace / name
        if package.is_dir():
            (package / "__init__.py").write_text(_EXIT_0)
        else:
            (workspace / f"{name}.py").write_text(_EXIT_0)


EXPECT = "expect.json"
"""The file of a sample folder naming the checks the grader must pass or fail on it."""


def read_expect(folder: Path) -> dict[str, bool] | None:
    """The sample's ``expect.json`` (None when it has none); SuiteError naming the file and the
    field when it is not ``{"checks": {"NAME": true | false}}``."""
    path = folder / EXPECT
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SuiteError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise SuiteError(f'{path}: must be an object {{"checks": {{...}}}}')
    if unknown := sorted(set(data) - {"checks"}):
        raise SuiteError(f"{path}: {unknown[0]}: unknown key (expected only 'checks')")
    checks = data.get("checks")
    if not isinstance(checks, dict) or not checks:
        raise SuiteError(f"{path}: checks: must be a non-empty object of check name -> true/false")
    for name, want in checks.items():
        if not isinstance(want, bool):
            raise SuiteError(f"{path}: checks.{name}: must be true or false, got {want!r}")
    return dict(checks)


def _cases(task: Task) -> list[tuple[str, Path | None, bool]]:
    cases: list[tuple[str, Path | None, bool]] = [("fixture", None, False)]
    cases.append((SHADOW_DECOY, None, False))
    if _workspace_imports(task.oracle):
        cases.append((EXIT_DECOY, None, False))
    if (task.dir / "reference").is_dir():
        cases.append(("reference", task.dir / "reference", True))
    for folder, kind, good in (("references", "reference", True), ("decoys", "decoy", False)):
        if (task.dir / folder).is_dir():
            for d in sorted(p for p in (task.dir / folder).iterdir() if p.is_dir()):
                cases.append((f"{kind}:{d.name}", d, good))
    return cases


def _judge(
    task: Task,
    case: str,
    overlay: Path | None,
    should_pass: bool,
    tier: Tier,
    scratch: Path,
    hidden: tuple[Path, ...],
    expected: dict[str, bool] | None,
    container: ContainerTarget | None = None,
) -> GraderCase:
    work = Path(tempfile.mkdtemp(prefix=f"{task.id}.", dir=scratch))
    captured = Captured()
    try:
        workspace = work / "workspace"
        shutil.copytree(task.fixture, workspace, symlinks=False)
        if overlay is not None:
            shutil.copytree(
                overlay,
                workspace,
                symlinks=False,
                dirs_exist_ok=True,
                ignore=lambda folder, _: [EXPECT] if Path(folder) == overlay else [],
            )
        if case == SHADOW_DECOY:
            _shadow_decoy(workspace)
        elif case == EXIT_DECOY:
            _exit_decoy(workspace, task.oracle)
        verdict = grade_workspace(
            workspace,
            work,
            captured,
            task_id=task.id,
            grader=task.grader,
            oracle=task.oracle,
            grader_timeout_s=task.grader_timeout_s,
            tier=tier,
            token=f"grader-check/{work.name}",
            hidden=hidden,
            outcomes=task.outcomes,
            container=container,
        )
        return GraderCase(
            task.id,
            case,
            should_pass,
            verdict is not None and verdict.passed,
            None if verdict is None else "; ".join(verdict.notes) or None,
            grader=task.grader,
            checks=None if verdict is None else verdict.checks,
            expected=expected,
        )
    except OSError as exc:
        return GraderCase(
            task.id, case, should_pass, False, f"harness error: {exc}", task.grader, None, expected
        )
    finally:
        captured.close()
        remove_tree(work)


def grader_check(suite: Suite, tier: Tier, jobs: int = 1) -> GraderCheck:
    """Run every task's grader on its fixture, references and decoys; SuiteError (before any
    grader runs) when a sample's ``expect.json`` is malformed."""
    work = [(t, *case) for t in suite.tasks for case in _cases(t)]
    expects = [None if w[2] is None else read_expect(w[2]) for w in work]
    # the container tier: each task's image had before any grader runs (ArgumentError if not)
    environments = prepare_environments(list(suite.tasks), tier, stamp(os.getpid()) or "unknown")
    scratch = Path(tempfile.mkdtemp(prefix="trialbook-grader-check-")).resolve()
    hidden = (suite.root.resolve(), scratch.resolve())
    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            cases = list(
                pool.map(
                    lambda w, e: _judge(
                        w[0],
                        w[1],
                        w[2],
                        w[3],
                        tier,
                        scratch,
                        hidden,
                        e,
                        environments.get(w[0].id),
                    ),
                    work,
                    expects,
                )
            )
    finally:
        remove_tree(scratch)
    return GraderCheck(
        suite=suite.name, grader_version=suite.grader_version, tier=tier, cases=tuple(cases)
    )
