"""A scripted agent: the test double for the harness, its tests and the demo.

A real agent is a command the harness runs in a fresh workspace (docs/harness.md, "The agent
contract"). :class:`ScriptedAgent` is such a command whose behaviour is data: for each task id and
attempt index, one :class:`Attempt` says what to print, how long to think, which usage lines to
report, whether to leave a process behind or hang past the timeout, which files to write or copy
into the workspace, and the exit code. It calls no model and draws no random number.

>>> from trialbook.harness.testing import Attempt, ScriptedAgent
>>> agent = ScriptedAgent(
...     attempts={"t": [Attempt(files={"a.txt": "good"}), Attempt(hang=True)]},
...     default=Attempt(exit_code=1),
... )
>>> options = RunOptions(suite=..., agent=agent.command(), ledger=...)  # doctest: +SKIP

Attempt 0 of task ``t`` writes ``a.txt``; attempt 1 hangs until the harness kills it; every other
task fails at once. The last attempt listed for a task repeats for higher attempt indexes.

:meth:`ScriptedAgent.command` gives a command line that carries the script in itself (nothing to
make visible inside the sandbox); :meth:`ScriptedAgent.write` writes it as an executable Python
program instead. Both run ``python -m trialbook.harness.testing``, so the Python they name must be
able to import trialbook (the one running the harness can, in both sandbox tiers). Files named in
``copy_from`` must be readable by the agent: the bwrap tier hides ``/tmp``, the suite, the ledger's
folder and the other attempts.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Attempt", "ScriptedAgent", "main", "perform"]


@dataclass(frozen=True)
class Attempt:
    """What the scripted agent does in one attempt; the steps run in the order of the fields."""

    say: str = ""
    """Printed on standard output first (kept in the attempt's transcript)."""
    sleep_s: float = 0.0
    """Seconds of "thinking" before anything else happens."""
    usage: tuple[Mapping[str, Any], ...] = ()
    """JSON lines appended to ``$TRIALBOOK_USAGE_FILE`` (tokens_in, tokens_out, cost, ...)."""
    leave_process: bool = False
    """Start a detached ``sleep 120`` in its own session, left running when the agent exits."""
    hang: bool = False
    """Then sleep for an hour: past any timeout, so the harness must kill it (nothing below runs)."""
    files: Mapping[str, str] = field(default_factory=dict)
    """Written into the workspace: relative path -> text."""
    copy_from: str | None = None
    """A folder whose files are copied over the workspace, keeping their relative paths."""
    said_after: str = ""
    """Printed once the files are in place."""
    exit_code: int = 0
    """The agent's exit status."""


@dataclass(frozen=True)
class ScriptedAgent:
    """An agent command whose behaviour per (task, attempt) is given as data."""

    attempts: Mapping[str, Sequence[Attempt]] = field(default_factory=dict)
    """Task id -> what attempt 0, 1, ... does; the last entry repeats for later attempts."""
    default: Attempt = Attempt()
    """What an attempt of any other task does (by default: nothing, exit 0)."""

    def attempt_for(self, task_id: str, attempt_index: int) -> Attempt:
        """The scripted behaviour of one attempt."""
        listed = self.attempts.get(task_id)
        if not listed:
            return self.default
        return listed[min(attempt_index, len(listed) - 1)]

    def to_json(self) -> str:
        """The script as compact JSON (what :func:`main` reads back)."""
        doc = {
            "attempts": {t: [asdict(a) for a in seq] for t, seq in self.attempts.items()},
            "default": asdict(self.default),
        }
        return json.dumps(doc, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ScriptedAgent:
        """The inverse of :meth:`to_json`."""
        doc = json.loads(text)
        return cls(
            attempts={t: [_attempt(a) for a in seq] for t, seq in doc["attempts"].items()},
            default=_attempt(doc["default"]),
        )

    def command(self, python: str = sys.executable) -> str:
        """An agent command line (for ``RunOptions.agent`` or ``trialbook run --agent``)."""
        return shlex.join([python, "-m", "trialbook.harness.testing", self.to_json()])

    def write(self, path: Path, python: str = sys.executable) -> Path:
        """Write the agent as an executable Python program at ``path``; returns ``path``."""
        path.write_text(
            f"#!{python}\n"
            '"""A scripted agent written by trialbook.harness.testing.ScriptedAgent.write."""\n'
            "import sys\n\n"
            "from trialbook.harness.testing import main\n\n"
            f"sys.exit(main([{self.to_json()!r}]))\n",
            encoding="utf-8",
        )
        path.chmod(0o755)
        return path


def _attempt(doc: Mapping[str, Any]) -> Attempt:
    return Attempt(**{**doc, "usage": tuple(doc.get("usage", ()))})


def perform(
    attempt: Attempt, *, workspace: Path | None = None, usage_file: Path | None = None
) -> int:
    """Carry out one scripted attempt in ``workspace`` (default: the working directory) and return
    its exit code. ``usage_file`` defaults to ``$TRIALBOOK_USAGE_FILE``."""
    root = Path.cwd() if workspace is None else workspace
    if attempt.say:
        print(attempt.say, flush=True)
    if attempt.sleep_s > 0:
        time.sleep(attempt.sleep_s)
    if attempt.usage:
        target = usage_file or Path(os.environ["TRIALBOOK_USAGE_FILE"])
        with target.open("a", encoding="utf-8") as fh:
            for line in attempt.usage:
                fh.write(json.dumps(dict(line)) + "\n")
    if attempt.leave_process:
        subprocess.Popen(
            ["sleep", "120"],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        print("left a background process running", flush=True)
    if attempt.hang:
        print("hanging (the harness must stop this at the timeout)", flush=True)
        time.sleep(3600)
    for name, text in attempt.files.items():
        target_file = root / name
        target_file.parent.mkdir(parents=True, exist_ok=True)
        target_file.write_text(text, encoding="utf-8")
    if attempt.copy_from is not None:
        shutil.copytree(attempt.copy_from, root, dirs_exist_ok=True, copy_function=shutil.copy)
    if attempt.said_after:
        print(attempt.said_after, flush=True)
    return attempt.exit_code


def main(argv: list[str] | None = None) -> int:
    """``python -m trialbook.harness.testing SCRIPT_JSON``: one attempt of the task named by
    ``$TRIALBOOK_TASK_ID`` and ``$TRIALBOOK_ATTEMPT``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m trialbook.harness.testing SCRIPT_JSON", file=sys.stderr)
        return 2
    agent = ScriptedAgent.from_json(args[0])
    task_id = os.environ.get("TRIALBOOK_TASK_ID", "")
    attempt_index = int(os.environ.get("TRIALBOOK_ATTEMPT", "0"))
    return perform(agent.attempt_for(task_id, attempt_index))


if __name__ == "__main__":
    sys.exit(main())
