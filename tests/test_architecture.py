"""The house rules that keep the code readable: public API, one-way data flow, docs for every command."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import click

import trialbook
from trialbook import errors, ledger
from trialbook.cli import main

SRC = Path(trialbook.__file__).parent
ROOT = SRC.parents[1]


def _documented_api() -> dict[str, set[str]]:
    """docs/architecture.md, "Public names": one line per package, its names in backticks."""
    text = (ROOT / "docs" / "architecture.md").read_text().split("## Public names", 1)[1]
    api: dict[str, set[str]] = {}
    for line in text.splitlines():
        if line.startswith("- `trialbook"):
            head, _, names = line[2:].partition(": ")
            api[head.strip("`")] = {n.strip("`") for n in names.split(", ") if n}
    return api


def test_every_package_exports_exactly_its_documented_names() -> None:
    documented = _documented_api()
    packages = {
        "trialbook." + ".".join(p.relative_to(SRC).parent.parts)
        for p in SRC.rglob("__init__.py")
        if "demo/suite" not in p.as_posix()
    } | {
        "trialbook",
        "trialbook.background",
        "trialbook.errors",
        "trialbook.harness.testing",
        "trialbook.harness.grading",
    }
    packages = {p.rstrip(".") for p in packages}
    assert packages == set(documented), "docs/architecture.md must list every package"
    for name, names in documented.items():
        module = importlib.import_module(name)
        assert set(module.__all__) == names, name
        assert len(module.__all__) == len(names), f"{name}: a name listed twice in __all__"
        for attr in module.__all__:
            assert getattr(module, attr) is not None, f"{name}.{attr}"


def test_errors_share_one_root_and_the_matching_builtin() -> None:
    for cls in (
        errors.LedgerError,
        errors.SuiteError,
        errors.InsufficientAttemptsError,
        errors.ArgumentError,
    ):
        assert issubclass(cls, errors.TrialbookError)
        assert issubclass(cls, ValueError)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


# Which rooms each room may not import (docs/architecture.md draws the arrows). Every package
# under src/trialbook must have an entry, so a new room cannot arrive without its rules.
_TOP = ("trialbook.cli", "trialbook.demo", "trialbook.race")
_BANNED: dict[str, tuple[str, ...]] = {
    "errors": ("trialbook.", "numpy", "rich", "click"),
    "background": ("trialbook.", "numpy", "rich", "click"),
    "stats": (
        "trialbook.ledger",
        "trialbook.suite",
        "trialbook.harness",
        "trialbook.importers",
        "trialbook.analysis",
        "trialbook.report",
        *_TOP,
        "rich",
        "click",
        "pyarrow",
    ),
    "suite": (
        "trialbook.ledger",
        "trialbook.harness",
        "trialbook.importers",
        "trialbook.stats",
        "trialbook.analysis",
        "trialbook.report",
        *_TOP,
        "rich",
        "click",
    ),
    "ledger": (
        "trialbook.suite",
        "trialbook.harness",
        "trialbook.importers",
        "trialbook.stats",
        "trialbook.analysis",
        "trialbook.report",
        *_TOP,
        "rich",
        "click",
    ),
    # the harness writes rows; it never scores, renders or talks to the terminal
    "harness": (
        "trialbook.importers",
        "trialbook.stats",
        "trialbook.analysis",
        "trialbook.report",
        *_TOP,
        "rich",
        "click",
    ),
    "importers": (
        "trialbook.suite",
        "trialbook.harness",
        "trialbook.stats",
        "trialbook.analysis",
        "trialbook.report",
        *_TOP,
        "rich",
        "click",
    ),
    "analysis": (
        "trialbook.suite",
        "trialbook.harness",
        "trialbook.importers",
        "trialbook.report",
        *_TOP,
        "rich",
        "click",
    ),
    # a race's result is a type the renderers read (imported for type checking only)
    "report": (
        "trialbook.ledger",
        "trialbook.importers",
        "trialbook.cli",
        "trialbook.demo",
        "click",
    ),
    "demo": ("trialbook.cli", "trialbook.race", "click"),
    # the race drives the harness and asks analysis; it never renders or talks to the terminal
    "race": (
        "trialbook.importers",
        "trialbook.report",
        "trialbook.cli",
        "trialbook.demo",
        "rich",
        "click",
    ),
    # the model proxy the harness starts: it knows nothing of ledgers, suites or scores
    "gateway": (
        "trialbook.ledger",
        "trialbook.suite",
        "trialbook.harness",
        "trialbook.importers",
        "trialbook.stats",
        "trialbook.analysis",
        "trialbook.report",
        *_TOP,
        "rich",
        "click",
    ),
    "cli": (),
}

# The harness's own rooms, lowest first (docs/architecture.md, "The harness's rooms"): each keeps
# the harness's rules and never imports a room after it.
_HARNESS_ROOMS = ("sandbox", "attempt", "executors", "run")
for _i, _room in enumerate(_HARNESS_ROOMS):
    _BANNED[f"harness.{_room}"] = (
        *_BANNED["harness"],
        *(f"trialbook.harness.{higher}" for higher in _HARNESS_ROOMS[_i + 1 :]),
    )


def _package_of(path: Path) -> str:
    """The room of a module: its top package, or a sub-package with rules of its own
    (``harness.sandbox``)."""
    rel = path.relative_to(SRC)
    if len(rel.parts) == 1:
        return rel.stem
    if len(rel.parts) > 2 and f"{rel.parts[0]}.{rel.parts[1]}" in _BANNED:
        return f"{rel.parts[0]}.{rel.parts[1]}"
    return rel.parts[0]


def _modules() -> list[Path]:
    return [p for p in SRC.rglob("*.py") if "demo/suite" not in p.relative_to(SRC).as_posix()]


def _banned_imports(path: Path) -> set[str]:
    room = _package_of(path)
    if room not in _BANNED:
        return set()  # __init__.py, __main__.py: the public API at the top
    return {m for m in _imports(path) if m.startswith(_BANNED[room])}


def test_data_flows_one_way() -> None:
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(_BANNED), f"rooms without rules: {sorted(packages - set(_BANNED))}"
    for path in _modules():
        bad = _banned_imports(path)
        assert not bad, f"{path.relative_to(SRC)} imports {sorted(bad)}"


def test_the_harness_rooms_are_its_sub_packages() -> None:
    # a new room of the harness cannot arrive without its place in the order
    harness = SRC / "harness"
    rooms = {p.name for p in harness.iterdir() if (p / "__init__.py").exists()}
    assert rooms == set(_HARNESS_ROOMS)
    # and no module of the harness lies outside them but its public API and public modules
    loose = {p.name for p in harness.glob("*.py")}
    assert loose == {"__init__.py", "testing.py", "grading.py"}


def test_a_lower_harness_room_may_not_import_a_higher_one() -> None:
    # the order can fail: the sandbox reaching up to the run, or the attempt to the executors
    probes = {
        "sandbox": "from trialbook.harness.run import RunOptions\n",
        "attempt": "import trialbook.harness.executors._ray\n",
    }
    for room, source in probes.items():
        fake = SRC / "harness" / room / "_probe_for_the_architecture_test.py"
        try:
            fake.write_text(source)
            assert _banned_imports(fake), room
        finally:
            fake.unlink()
    # while a higher room importing a lower one's public API is the order itself
    fake = SRC / "harness" / "run" / "_probe_for_the_architecture_test.py"
    try:
        fake.write_text("from trialbook.harness.sandbox import Tier\n")
        assert _banned_imports(fake) == set()
        assert _private_imports(fake) == set()
    finally:
        fake.unlink()


def _private_imports(path: Path) -> set[str]:
    """Modules named by ``path`` that are private to another package than its own."""
    own = "trialbook." + _package_of(path)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] != "trialbook" or name == own or name.startswith(own + "."):
                continue
            if any(part.startswith("_") and part != "__init__" for part in parts[1:]):
                found.add(name)
    return found


def test_no_package_imports_another_packages_private_modules() -> None:
    for path in _modules():
        if path.parent == SRC:
            continue  # trialbook/__init__.py re-exports; checked by the public API test
        bad = _private_imports(path)
        assert not bad, f"{path.relative_to(SRC)} imports private {sorted(bad)}"


def test_the_private_import_check_sees_one_between_harness_rooms() -> None:
    # a room of the harness is a package: its private modules are its own
    fake = SRC / "harness" / "run" / "_probe_for_the_architecture_test.py"
    try:
        fake.write_text("from trialbook.harness.sandbox._sandbox import Tier\n")
        assert _private_imports(fake) == {
            "trialbook.harness.sandbox._sandbox",
            "trialbook.harness.sandbox._sandbox.Tier",
        }
    finally:
        fake.unlink()


def test_the_private_import_check_sees_one(tmp_path: Path) -> None:
    # the rule above must be able to fail: a module of analysis that reaches into ledger._table
    fake = SRC / "analysis" / "_probe_for_the_architecture_test.py"
    try:
        fake.write_text(
            "from trialbook.ledger._table import Ledger\nfrom trialbook.ledger import _rows\n"
        )
        assert _private_imports(fake) == {
            "trialbook.ledger._table",
            "trialbook.ledger._table.Ledger",
            "trialbook.ledger._rows",
        }
    finally:
        fake.unlink()


def _encoding_reads(path: Path) -> list[str]:
    """``x.codes[...]``, ``x.labels[...]``, ``x.values[...]``: reads of the Ledger's encoding."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr in ("codes", "labels", "values")
        ):
            found.append(f"line {node.lineno}: .{node.value.attr}[...]")
    return found


def test_only_the_ledger_reads_its_encoding() -> None:
    for path in _modules():
        if _package_of(path) == "ledger":
            continue
        bad = _encoding_reads(path)
        assert not bad, f"{path.relative_to(SRC)} reads the ledger's encoding: {bad}"
    probe = SRC.parent / "_probe.py"
    try:  # the rule can fail
        probe.write_text('x = ledger.codes["run_id"]\n')
        assert _encoding_reads(probe) == ["line 1: .codes[...]"]
    finally:
        probe.unlink()


def test_help_does_not_import_the_numerical_stack() -> None:
    code = (
        "import sys; from trialbook.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'pyarrow', 'rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_every_command_has_help_and_a_doc_entry() -> None:
    docs = (ROOT / "docs" / "cli.md").read_text()
    assert isinstance(main, click.Group)
    for name, command in main.commands.items():
        assert command.help, name
        assert f"## trialbook {name}" in docs, f"docs/cli.md lacks a section for {name}"


def test_ledger_doc_lists_every_field() -> None:
    docs = (ROOT / "docs" / "ledger.md").read_text()
    for f in ledger.FIELDS:
        assert f"| `{f.name}` |" in docs, f.name
