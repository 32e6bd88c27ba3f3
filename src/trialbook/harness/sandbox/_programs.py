"""Pre-flight: before the first attempt, every program and path the agent's and the graders'
commands name is resolved and checked to be there, executable and visible inside the chosen tier.

A command that would fail in every attempt (a program not on the sandbox's PATH, a script that is not
executable, a path relative to the caller's folder, a file the bwrap tier hides) is refused here with
a message that says why and what to do, instead of burning the suite on "failed (0.0 s)" attempts.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from trialbook.errors import ArgumentError, SuiteError
from trialbook.harness.sandbox._sandbox import Limits, SandboxSpec, Tier, wrap

__all__ = ["check_agent", "check_grader", "command_words", "start_program"]

_SHELL_WORDS = frozenset(
    [
        "!",
        "{",
        "}",
        "(",
        ")",
        "[",
        "[[",
        ".",
        ":",
        "alias",
        "bg",
        "break",
        "case",
        "cd",
        "command",
        "continue",
        "echo",
        "eval",
        "exec",
        "exit",
        "export",
        "false",
        "fc",
        "fg",
        "for",
        "function",
        "getopts",
        "hash",
        "if",
        "jobs",
        "kill",
        "local",
        "printf",
        "pwd",
        "read",
        "readonly",
        "return",
        "select",
        "set",
        "shift",
        "test",
        "then",
        "time",
        "times",
        "trap",
        "true",
        "type",
        "ulimit",
        "umask",
        "unalias",
        "unset",
        "until",
        "wait",
        "while",
    ]
)
"""Shell builtins and keywords: the first word is then no program file to check."""

_PLAIN = re.compile(r"[A-Za-z0-9_./+@%,-]+")
"""A first word that is a program's name or path and nothing of the shell's syntax (``(cd``,
``env;``): only such a word is checked as a program."""


def command_words(command: str, who: str) -> list[str]:
    """The command's words without leading ``VAR=value`` assignments; refuses bad quoting."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ArgumentError(f"not a valid shell command ({exc})", argument=who) from None
    if not words:
        raise ArgumentError("empty command", argument=who)
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]
    return words


def start_program(command: str, *, in_workspace_is_agents: bool) -> str | None:
    """The word the harness's start check tests before the command runs (the first program the
    command names, variables unexpanded), None when there is none to test (a builtin, shell
    syntax, bad quoting). ``in_workspace_is_agents`` (a grader): a relative path names a file of
    the workspace, which the agent may have removed: not the harness's to test."""
    try:
        program = command_words(command, "command")[0]
    except ArgumentError:
        return None
    if program in _SHELL_WORDS:
        return None
    if in_workspace_is_agents and "/" in program and not program.startswith("/"):
        return None
    return program


def _names_file(word: str, base: Path) -> bool:
    """Whether a relative word of a command looks like a path to a file of ``base``."""
    if word.startswith("-") or "$" in word or "`" in word or "*" in word:
        return False
    path = base / word
    try:
        return ("/" in word and path.exists()) or path.is_file()
    except OSError:  # a name too long to be a file
        return False


def check_agent(
    agent: str,
    *,
    fixtures: Sequence[Path],
    tier: Tier,
    hidden: Mapping[Path, str],
    env: dict[str, str],
    scratch: Path,
) -> None:
    """Refuse an agent command that cannot start in its sandbox, saying why and what to do."""
    words = command_words(agent, "agent")
    cwd = Path.cwd()

    def in_every_workspace(word: str) -> bool:
        return bool(fixtures) and all(os.path.lexists(f / word) for f in fixtures)

    for word in words:
        if word.startswith("/") or not _names_file(word, cwd) or in_every_workspace(word):
            continue
        raise ArgumentError(
            f"{word!r} is relative to this folder, but the agent runs in a fresh workspace (a "
            f"copy of the task's fixture): give its absolute path ({(cwd / word).resolve()})",
            argument="agent",
        )
    program = words[0]
    if "/" in program and not program.startswith("/") and _PLAIN.fullmatch(program):
        if not in_every_workspace(program):
            raise ArgumentError(
                f"{program!r} is not in the workspace of every task (the agent runs in a copy of "
                "the task's fixture): give its absolute path",
                argument="agent",
            )
    else:
        _check_program(program, "agent", env["PATH"], ArgumentError)
    _check_visible(agent, words, "agent", tier, hidden, env, scratch, ArgumentError)


def check_grader(
    grader: str,
    *,
    task_id: str,
    tier: Tier,
    hidden: Mapping[Path, str],
    env: dict[str, str],
    scratch: Path,
) -> None:
    """Refuse a task's grader command whose program cannot start in its sandbox. A relative path
    names a file of the workspace, which the agent may make: it is not checked."""
    try:
        words = command_words(grader, "grader")
    except ArgumentError as exc:
        raise SuiteError(f"task {task_id!r}: grader: {exc}") from None
    if "/" not in words[0] or words[0].startswith("/"):
        _check_program(words[0], f"task {task_id!r}: grader", env["PATH"], SuiteError)
    _check_visible(
        grader, words, f"task {task_id!r}: grader", tier, hidden, env, scratch, SuiteError
    )


def _fail(error: type[Exception], who: str, message: str) -> Exception:
    if error is ArgumentError:
        return ArgumentError(message, argument=who)
    return SuiteError(f"{who}: {message}")


def _check_program(program: str, who: str, path: str, error: type[Exception]) -> None:
    if program in _SHELL_WORDS or not _PLAIN.fullmatch(program):
        return
    if "/" not in program:
        if shutil.which(program, path=path) is None:
            raise _fail(
                error,
                who,
                f"program {program!r} is not on the sandbox's PATH ({path}): give its absolute "
                "path, or install it there",
            )
        return
    if not os.path.lexists(program):
        raise _fail(error, who, f"program {program!r} does not exist")
    if os.path.isdir(program):
        raise _fail(error, who, f"{program!r} is a folder, not a program")
    if not os.access(program, os.X_OK):
        raise _fail(
            error,
            who,
            f"{program!r} is not executable: 'chmod +x {program}', or name its interpreter "
            f"first ('sh {program}')",
        )


def _check_visible(
    command: str,
    words: Sequence[str],
    who: str,
    tier: Tier,
    hidden: Mapping[Path, str],
    env: dict[str, str],
    scratch: Path,
    error: type[Exception],
) -> None:
    """Every absolute path the command names that exists here must exist inside its sandbox."""
    named = []
    for word in words:
        for part in word.split("="):
            if part.startswith("/") and "$" not in part and os.path.lexists(part):
                named.append(part)
    program = words[0]
    found = shutil.which(program, path=env["PATH"]) if _PLAIN.fullmatch(program) else None
    if found is not None and "/" not in program:
        named.append(found)
    for path in named:
        real = Path(path).resolve()
        for secret, why in hidden.items():
            if real.is_relative_to(secret):
                raise _fail(error, who, f"{path!r} {why}")
    if tier != "bwrap" or not named:
        return
    missing = _probe(command, named, tuple(hidden), env, scratch)
    if missing:
        raise _fail(
            error,
            who,
            f"{missing[0]!r} is not visible inside the bwrap sandbox: move it out of /tmp and "
            "of the folders trialbook hides, or use --sandbox process",
        )


def _probe(
    command: str,
    paths: Sequence[str],
    hidden: tuple[Path, ...],
    env: dict[str, str],
    scratch: Path,
) -> list[str]:
    """The paths among ``paths`` that the bwrap sandbox of ``command`` does not show."""
    tests = "; ".join(f"test -e {shlex.quote(p)} || echo {shlex.quote(p)}" for p in paths)
    workspace = Path(tempfile.mkdtemp(prefix="preflight.", dir=scratch))
    try:
        argv = wrap(
            "bwrap",
            tests,
            SandboxSpec(workspace=workspace, hidden=hidden),
            env,
            Limits(cpu_s=10),
            names=command,
        )
        done = subprocess.run(
            argv, env=env, capture_output=True, timeout=60, check=False, text=True
        )
    except (OSError, subprocess.TimeoutExpired):
        return []  # the attempts will say what goes wrong, as infra errors
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return [line for line in done.stdout.splitlines() if line in paths]
