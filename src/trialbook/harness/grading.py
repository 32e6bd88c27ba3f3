"""An oracle test runner that a workspace cannot talk into a pass: ``python -I -m
trialbook.harness.grading ORACLE_DIR``.

A grader that runs ``python -m unittest`` on oracle tests which import the agent's modules shares its
process with the agent's code, and judges by that process's exit code: a module that calls
``os._exit(0)`` when imported (or from an ``atexit`` handler after the tests failed) passes every test
it never ran. This runner keeps the verdict out of that process. It

1. reads the test names from the oracle's ``test_*.py`` files without importing them (their classes
   deriving from ``TestCase`` and their ``test*`` methods);
2. runs them with :mod:`unittest` in a child process (the oracle folder as top level; the workspace,
   the current directory, importable only where the tests put it), which reports each test's
   outcome on a pipe as it finishes;
3. passes (exit 0) only if the child reported the end of its run and exited 0, reported every named
   test as passed and none as failed, in error or skipped;
4. with ``--checks``, prints as its last line each test as a named check of the grader contract
   (``{"checks": {"doubled quote": {"passed": false, "reason": "AssertionError: ..."}}}``: the
   method's name without ``test_``; the reason is the first line of the failure), unless the
   result pipe held something else (then no checks: nothing on it can be trusted); with
   ``--class-checks``, each ``TestCase`` class is one check instead (``class
   ExistingBehaviourKept`` is ``existing behaviour kept``), passed when all its tests passed.

So workspace code that exits early, exits 0 after failures or prints a fake "OK" fails. What it
cannot stop is workspace code that changes the tests or the runner inside the child (patching
``TestCase.assertEqual``, or writing this pipe's protocol itself): the child runs the agent's code,
and a process cannot defend itself against code it runs. A verdict no workspace code can reach needs
the comparison done where that code never runs (docs/harness.md, "Graders").
"""

from __future__ import annotations

import ast
import ctypes
import json
import os
import re
import selectors
import socket
import subprocess
import sys
from pathlib import Path

__all__ = [
    "check_names",
    "checks_line",
    "class_check_name",
    "expected_tests",
    "main",
    "verdict_channel",
]

_CHILD = r"""
import json, os, sys, unittest

oracle, fd = sys.argv[1], int(sys.argv[2])
channel = os.fdopen(fd, "w", buffering=1)

def say(kind, test, err=None):
    message = {kind: test.id()}
    if err is not None:
        message["why"] = err if isinstance(err, str) else f"{err[0].__name__}: {err[1]}"
    channel.write(json.dumps(message) + "\n")

class Reporting(unittest.TextTestResult):
    def addSuccess(self, test):
        super().addSuccess(test)
        say("ok", test)
    def addFailure(self, test, err):
        super().addFailure(test, err)
        say("fail", test, err)
    def addError(self, test, err):
        super().addError(test, err)
        say("fail", test, err)
    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        say("fail", test, f"skipped: {reason}")
    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        say("fail", test, "an expected failure (counted as a fail)")
    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        say("fail", test, "an unexpected success (counted as a fail)")

tests = unittest.TestLoader().discover(oracle, pattern="test_*.py", top_level_dir=oracle)
result = unittest.TextTestRunner(resultclass=Reporting, verbosity=2).run(tests)
channel.write(json.dumps({"end": result.testsRun}) + "\n")
channel.close()
sys.exit(0 if result.wasSuccessful() else 1)
"""


def _is_test_case(base: ast.expr) -> bool:
    name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
    return name in ("TestCase", "IsolatedAsyncioTestCase")


def expected_tests(oracle: Path) -> set[str]:
    """Ids (``module.Class.method``) of the tests in ``oracle``'s ``test_*.py`` files, read without
    importing them: methods named ``test*`` of classes deriving from ``TestCase``."""
    found: set[str] = set()
    for path in sorted(oracle.glob("test_*.py")):
        tree = ast.parse(path.read_bytes(), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(_is_test_case(b) for b in node.bases):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                        item.name.startswith("test")
                    ):
                        found.add(f"{path.stem}.{node.name}.{item.name}")
    return found


Outcomes = dict[str, tuple[bool, str | None]]
"""Test id -> (passed, the first line of why not)."""


def _verdict(expected: set[str], lines: list[str], code: int) -> tuple[bool, str, Outcomes | None]:
    """The verdict, why, and each test's outcome (None when the result pipe cannot be trusted)."""
    passed: set[str] = set()
    failed: dict[str, str | None] = {}
    ended = False
    wrong = (False, "the test process wrote something else on its result pipe", None)
    for line in lines:
        try:
            message = json.loads(line)
        except ValueError:
            return wrong
        if not isinstance(message, dict) or not 1 <= len(message) <= 2:
            return wrong
        why = message.pop("why", None) if "fail" in message else None
        if len(message) != 1 or not (why is None or isinstance(why, str)):
            return wrong
        ((kind, value),) = message.items()
        if kind == "ok" and isinstance(value, str):
            passed.add(value)
        elif kind == "fail" and isinstance(value, str):
            failed[value] = why.splitlines()[0][:200] if why and why.strip() else None
        elif kind == "end" and not ended:
            ended = True
        else:
            return wrong
    outcomes: Outcomes = {t: (t in passed and t not in failed, None) for t in sorted(expected)}
    outcomes.update({t: (False, why) for t, why in failed.items() if t in expected})
    for t in expected - passed - set(failed):
        outcomes[t] = (False, "never ran")
    if not ended:
        return False, f"the test process ended (exit {code}) before its tests had run", outcomes
    if failed:
        return False, f"{len(failed)} test(s) failed: {', '.join(sorted(failed)[:5])}", outcomes
    if missing := expected - passed:
        return (
            False,
            f"{len(missing)} test(s) never ran: {', '.join(sorted(missing)[:5])}",
            outcomes,
        )
    if code != 0:
        return False, f"the test process exited with {code}", outcomes
    if not passed:
        return False, "no test ran", outcomes
    return True, f"{len(passed)} test(s) passed", outcomes


def check_names(tests: set[str]) -> dict[str, str]:
    """Test id -> check name: the method's name without ``test_``, words spaced (``test_doubled_quote``
    -> ``doubled quote``); the whole id where two tests would share a name."""
    short = {t: t.rsplit(".", 1)[-1].removeprefix("test_").replace("_", " ") or t for t in tests}
    counts: dict[str, int] = {}
    for name in short.values():
        counts[name] = counts.get(name, 0) + 1
    return {t: name if counts[name] == 1 else t for t, name in short.items()}


def class_check_name(class_name: str) -> str:
    """A TestCase class as a check name: ``ExistingBehaviourKept`` -> ``existing behaviour kept``
    (a leading ``Test`` dropped)."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", class_name.removeprefix("Test"))
    return " ".join(w.lower() for w in words) or class_name


def checks_line(outcomes: Outcomes, *, by_class: bool = False) -> str:
    """The grader's last line (docs/harness.md, "The grader contract"): each test a named check, or
    with ``by_class`` each TestCase class one check, passed when all its tests passed, its reason
    the first failing test's (``key: AssertionError: ...``)."""
    if not by_class:
        names = check_names(set(outcomes))
        checks = {
            names[t]: {"passed": ok, "reason": why} for t, (ok, why) in sorted(outcomes.items())
        }
        return json.dumps({"checks": checks}, sort_keys=True)
    groups: dict[str, list[str]] = {}
    for test in sorted(outcomes):
        groups.setdefault(test.rsplit(".", 1)[0], []).append(test)
    short = {g: class_check_name(g.rsplit(".", 1)[-1]) for g in groups}
    clash = {n for n in short.values() if list(short.values()).count(n) > 1}
    by_name: dict[str, dict[str, object]] = {}
    for group, tests in groups.items():
        failing = [t for t in tests if not outcomes[t][0]]
        reason = None
        if failing:
            test = failing[0].rsplit(".", 1)[-1].removeprefix("test_").replace("_", " ")
            reason = f"{test}: {outcomes[failing[0]][1] or 'failed'}"
        name = group if short[group] in clash else short[group]
        by_name[name] = {"passed": not failing, "reason": reason}
    return json.dumps({"checks": by_name}, sort_keys=True)


_RESULTS_MAX = 1 << 20
_RELAY_MAX = 4 << 20


def _drain(limits: dict[int, int]) -> dict[int, tuple[bytes, bool]]:
    """Read each pipe to its end, keeping at most its limit (and whether more came)."""
    kept: dict[int, list[bytes]] = {fd: [] for fd in limits}
    size = dict.fromkeys(limits, 0)
    cut = dict.fromkeys(limits, False)
    with selectors.DefaultSelector() as selector:
        for fd in limits:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            for key, _ in selector.select():
                fd = int(key.fd)
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    selector.unregister(fd)
                    continue
                room = limits[fd] - size[fd]
                if len(chunk) > room:
                    cut[fd] = True
                    chunk = chunk[: max(room, 0)]
                kept[fd].append(chunk)
                size[fd] += len(chunk)
    return {fd: (b"".join(kept[fd]), cut[fd]) for fd in limits}


def _undumpable() -> None:
    """Make this process undumpable, so that a process of the same user (the agent's code in the
    test child) cannot open its stdout through /proc/PID/fd."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass  # not Linux: nothing that relies on it here


def verdict_channel() -> socket.socket | None:
    """The harness's verdict channel (docs/harness.md, "The verdict channel"), connected; None when
    the harness offers none (``TRIALBOOK_VERDICT_SOCKET`` unset). Connect before running any of the
    agent's code, write the verdict line on it at the end: the harness then reads that line, not
    the last one of stdout, which any process holding the grader's stdout can append to. The
    socket is not inherited by child processes. Raises ``OSError`` when the channel is named but
    cannot be reached."""
    path = os.environ.get("TRIALBOOK_VERDICT_SOCKET")
    if not path:
        return None
    channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        channel.connect(path)
    except OSError:
        channel.close()
        raise
    return channel


def main(argv: list[str] | None = None) -> int:
    """Run the oracle tests in ``argv[0]`` against the current directory; 0 when all passed."""
    args = sys.argv[1:] if argv is None else argv
    named = args[:1] in (["--checks"], ["--class-checks"])
    by_class = args[:1] == ["--class-checks"]
    args = args[1:] if named else args
    if len(args) != 1 or not Path(args[0]).is_dir():
        print(
            "usage: python -I -m trialbook.harness.grading [--checks|--class-checks] ORACLE_DIR",
            file=sys.stderr,
        )
        return 2
    oracle = Path(args[0]).resolve()
    try:
        expected = expected_tests(oracle)
    except (OSError, SyntaxError, ValueError) as exc:
        print(f"grading: cannot read the oracle tests: {exc}", file=sys.stderr)
        return 2
    if not expected:
        print(f"grading: no unittest tests in {oracle}/test_*.py", file=sys.stderr)
        return 2
    _undumpable()
    try:
        channel = verdict_channel()
    except OSError as exc:
        print(f"grading: cannot reach the harness's verdict channel: {exc}", file=sys.stderr)
        return 2
    read_end, write_end = os.pipe()
    try:
        # the child's output goes through pipes this runner relays: the child never holds this
        # process's stdout, a file it could write past the verdict line (a forged {"score": 1})
        child = subprocess.Popen(
            [sys.executable, "-I", "-c", _CHILD, str(oracle), str(write_end)],
            pass_fds=(write_end,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    finally:
        os.close(write_end)
    assert child.stdout is not None  # both are pipes: Popen was asked for them
    assert child.stderr is not None
    streams = _drain(
        {
            read_end: _RESULTS_MAX,
            child.stdout.fileno(): _RELAY_MAX,
            child.stderr.fileno(): _RELAY_MAX,
        }
    )
    os.close(read_end)
    code = child.wait()
    for fd, target in ((child.stdout.fileno(), sys.stdout), (child.stderr.fileno(), sys.stderr)):
        data, cut = streams[fd]
        target.buffer.write(data)
        if cut:
            target.buffer.write(
                f"\n[grading: the test process wrote more than {_RELAY_MAX} bytes here]\n".encode()
            )
        target.flush()
    raw, flooded = streams[read_end]
    outcomes: Outcomes | None = None
    if flooded:
        ok, why = False, "the test process wrote more than 1 MiB on its result pipe"
    else:
        try:
            lines = raw.decode().splitlines()
        except UnicodeDecodeError:
            lines = ["not text"]
        ok, why, outcomes = _verdict(expected, lines, code)
    print(f"grading: {'PASS' if ok else 'FAIL'}: {why}")
    line = checks_line(outcomes, by_class=by_class) if named and outcomes is not None else ""
    if line:  # last: the line a reader of the output (or a harness without the channel) reads
        print(line)
    sys.stdout.flush()
    if channel is not None:  # the verdict line the harness reads, with the verdict itself
        said = {"passed": ok, **(json.loads(line) if line else {})}
        with channel:
            channel.sendall(json.dumps(said, sort_keys=True).encode() + b"\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
