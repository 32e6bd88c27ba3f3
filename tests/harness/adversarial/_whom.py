"""Who runs the harness in a red-team test: root (this process, as CI does) or the unprivileged user
``tbhostile`` (issue 27: "run as root in CI and as an unprivileged user where the machine allows").

The ``harness`` fixture is parametrised over both. Its ``run`` has the signature of
``tests.harness.test_run.run``: as root it is that function; as the user it writes the suite as
root, hands the work folder to the user and runs ``python -m trialbook run`` as the user (runuser),
with THIS project's trialbook (``tests.harness._users.checkout_for``: a copy where the user cannot read
the checkout, as under /root), then reads the ledger back. Where the user cannot be had (no
runuser/useradd, no Python the user can run) the user case skips with the reason, and fails under
CI, which runs as root and so can always make the user. Run as an unprivileged user already (the
whole module as ``tbhostile``, tests/harness/test_as_a_user.py), the root case is that user's and
the second is skipped: it would repeat it.

``test_as_a_user.py`` runs every hostile module as the user from the start (the harness and the
test itself unprivileged); this fixture covers what that cannot: a root test that sets the machine
up (a small tmpfs as the temporary folder, a watcher of every command line) around a harness run
by someone else.
"""

from __future__ import annotations

import functools
import os
import pwd
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT, make_suite
from tests.harness._users import checkout_for, make_user, python_for
from tests.harness.test_run import run as run_as_this_process
from tests.harness.test_run import unique_run_id
from trialbook.cli import main
from trialbook.ledger import ledger_rows, read_ledger

__all__ = ["USER", "Harness", "harness"]

USER = "tbhostile"


@dataclass
class Harness:
    """Who runs the harness, and a folder outside /tmp that this harness's user owns."""

    who: str
    """``root`` (this process) or ``USER``."""
    work: Path
    tmpdir: Path | None = None
    """The user's harness's temporary folder (its scratch goes there); None: the system's. As
    root, a test sets ``tempfile.tempdir`` instead (the harness runs in this process)."""
    python: str = ""
    src: Path | None = None
    output: str = ""
    """What the last run printed (the user's: its command's stdout and stderr)."""

    def file(self, path: str | Path) -> Path:
        """``path`` of THIS project's source as this harness's user reads it (its copy, where the
        user cannot read the checkout)."""
        path = Path(path).resolve()
        if self.src is None or path.is_relative_to(self.src):
            return path
        return self.src / path.relative_to(ROOT / "src")

    def give(self, path: Path) -> Path:
        """Hand ``path`` (and everything under it) to this harness's user."""
        if self.who != "root":
            subprocess.run(["chown", "-R", f"{USER}:", str(path)], check=True)
        return path

    def run(
        self, tmp_path: Path, tasks: dict[str, dict[str, Any]], agent: str, tier: str, **kw: Any
    ) -> list[dict[str, Any]]:
        """One run of ``agent`` on a suite of ``tasks`` (``tests.harness.test_run.run``)."""
        if self.who == "root":
            return run_as_this_process(tmp_path, tasks, agent, tier, **kw)
        return self._run_as_user(tmp_path, tasks, agent, tier, **kw)

    def trialbook(self, args: list[str], env: Mapping[str, str] | None = None) -> int:
        """``trialbook ARGS`` run by this harness's user; its exit code (the output in
        ``output``). ``env``: variables its environment adds (a ``--pass-env`` value)."""
        if self.who == "root":
            with pytest.MonkeyPatch.context() as patch:
                for name, value in (env or {}).items():
                    patch.setenv(name, value)
                result = CliRunner().invoke(main, args)
            self.output = result.output
            return result.exit_code
        # the environment through runuser's own (it keeps it), never in an argv: a --pass-env
        # value in a command line is readable by every user (the pass-env test watches for it)
        environment = {
            "HOME": f"/home/{USER}",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": str(self.src),
            "TMPDIR": str(self.tmpdir or tempfile.gettempdir()),
            **(env or {}),
        }
        argv = ["runuser", "-u", USER, "--", self.python, "-m", "trialbook", *args]
        # from the work folder: the checkout may be one the user cannot enter (under /root), and
        # trialbook looks for a project file (trialbook.toml) in the folder it starts in
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
            env=environment,
            cwd=self.work,
        )
        self.output = done.stdout + done.stderr
        return done.returncode

    def _run_as_user(
        self,
        tmp_path: Path,
        tasks: dict[str, dict[str, Any]],
        agent: str,
        tier: str,
        *,
        k: int = 1,
        timeout_s: float = 10,
        pass_env: Mapping[str, str] | None = None,
        extra: str = "",
        run_id: str | None = None,
    ) -> list[dict[str, Any]]:
        suite = make_suite(tmp_path / "suite", tasks, k=k, timeout_s=timeout_s, extra=extra)
        ledger = tmp_path / "out" / "ledger.db"
        ledger.parent.mkdir(parents=True, exist_ok=True)
        self.give(tmp_path)
        passed = dict(pass_env or {})
        args = [
            "run", str(suite), "--agent", agent, "--ledger", str(ledger), "--system", "test",
            "--sandbox", tier, "--run-id", run_id or unique_run_id(),
            *(arg for name in passed for arg in ("--pass-env", name)),
        ]  # fmt: skip
        code = self.trialbook(args, env=passed)
        assert code == 0, f"trialbook {shlex.join(args)}\n{self.output}"
        # written by the user's harness, not by root's
        assert ledger.stat().st_uid == pwd.getpwnam(USER).pw_uid
        return list(ledger_rows(read_ledger(ledger)))


@functools.cache
def _user_case() -> tuple[str, Path] | str:
    """The user's Python and trialbook source, or why the user case cannot run here (found once
    per test session: a copy of the checkout, where one is needed, is made once)."""
    problem = make_user(USER)
    if problem:
        return problem
    checkout = checkout_for(USER)
    python, why = python_for(USER, checkout)
    if python is None:
        return why
    return python, checkout / "src"


@pytest.fixture(params=["root", USER])
def harness(request: pytest.FixtureRequest, outside_tmp: Path) -> Iterator[Harness]:
    if request.param == "root":
        yield Harness("root", outside_tmp)
        return
    if os.geteuid() != 0:
        pytest.skip("the harness already runs as an unprivileged user: the first case was its")
    case = _user_case()
    if isinstance(case, str):
        if os.environ.get("CI"):
            pytest.fail(f"CI runs as root and must run this as {USER}: {case}")
        pytest.skip(f"the machine does not allow a run as {USER}: {case}")
    python, src = case
    # a folder the user can reach: outside_tmp when every folder above it lets others through,
    # else one at the top of the file system (not under /tmp or /var/tmp, which the bwrap tier
    # replaces, hiding a suite there whether or not the harness hides it itself)
    work = outside_tmp
    if any(not os.stat(p).st_mode & 0o001 for p in outside_tmp.parents):
        work = Path(tempfile.mkdtemp(prefix="trialbook-user-test-", dir="/"))
    work.chmod(0o755)
    try:
        yield Harness(USER, work, python=python, src=src)
    finally:
        if work != outside_tmp:
            shutil.rmtree(work, ignore_errors=True)
