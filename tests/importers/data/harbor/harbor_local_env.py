"""A Harbor environment that runs commands on this machine, for making test fixtures.

Harbor's own environments need a container engine. This one gives each trial a fresh temporary
folder and runs every command under bubblewrap with that folder's ``app``, ``logs``, ``tests`` and
``solution`` bound at ``/app``, ``/logs``, ``/tests`` and ``/solution`` (the paths Harbor's agents
and verifier use), so Harbor's own code runs unchanged. Used only by ``make_fixtures.py`` (run with
Harbor installed, ``--env harbor_local_env:LocalEnvironment``, and ``ScriptedAgent`` below with
``--agent harbor_local_env:ScriptedAgent``); never imported by trialbook.

Two sandbox failures are staged on purpose, named as Harbor's error-policy table names them: a
task whose name contains ``flaky-start`` fails to start on its first try in a job (Harbor retries
it), one containing ``broken-start`` fails every time.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import tempfile
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.models.agent.context import AgentContext

MAPPED = ("app", "logs", "tests", "solution", "installed-agent")


class HealthcheckError(RuntimeError):
    """Raised on a staged start failure (a name in Harbor's SANDBOX_FAILED group)."""


class LocalEnvironment(BaseEnvironment):
    """Commands run under bwrap in a per-trial temporary folder."""

    @staticmethod
    def type() -> str:
        return "trialbook-local"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities()

    def _validate_definition(self) -> None:
        return None

    def _host(self, path: str | os.PathLike[str]) -> Path:
        text = str(path)
        if not text.startswith("/"):
            text = "/app/" + text
        parts = Path(text).parts[1:]
        if not parts or parts[0] not in MAPPED:
            raise ValueError(f"path outside the mapped folders: {text}")
        return self._root.joinpath(*parts)

    async def start(self, force_build: bool) -> None:
        marker_dir = Path(os.environ["HARBOR_LOCAL_MARKERS"])
        name = self.environment_name
        if "broken-start" in name:
            raise HealthcheckError(f"{name}: staged start failure (every try)")
        if "flaky-start" in name:
            # the session id names the trial, the same on a retry: its first try fails
            first = marker_dir / f"{self.session_id}.first"
            if not first.exists():
                first.touch()
                raise HealthcheckError(f"{name}: staged start failure (first try)")
        self._root = Path(tempfile.mkdtemp(prefix="harbor-local-"))
        for sub in MAPPED:
            (self._root / sub).mkdir()
        for sub in ("agent", "verifier", "artifacts"):
            (self._root / "logs" / sub).mkdir()

    async def stop(self, delete: bool) -> None:
        root = getattr(self, "_root", None)
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        target = self._host(target_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_path, target)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        shutil.copytree(source_dir, self._host(target_dir), dirs_exist_ok=True)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self._host(source_path), target_path)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        if getattr(self, "_root", None) is None:
            return  # the sandbox never started: nothing to collect
        source = self._host(source_dir)
        if source.is_dir():
            shutil.copytree(source, target_dir, dirs_exist_ok=True)

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        args = ["bwrap", "--die-with-parent"]
        for entry in sorted(os.listdir("/")):
            if entry in MAPPED or entry in ("proc", "dev", "tmp"):
                continue
            args += ["--bind", f"/{entry}", f"/{entry}"]
        args += ["--proc", "/proc", "--dev-bind", "/dev", "/dev", "--tmpfs", "/tmp"]
        for sub in MAPPED:
            args += ["--bind", str(self._root / sub), f"/{sub}"]
        args += ["--chdir", cwd or "/app", "bash", "-c", command]
        merged = {**os.environ, **self._persistent_env, **(env or {})}
        proc = await asyncio.create_subprocess_exec(
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=merged,
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout_sec)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(BaseException):
                await proc.wait()
            raise
        return ExecResult(
            stdout=out.decode(errors="replace"),
            stderr=err.decode(errors="replace"),
            return_code=proc.returncode if proc.returncode is not None else -1,
        )


class ScriptedAgent(BaseAgent):
    """An agent without a model: it follows "Write N to PATH" (", then wait" makes it outstay
    its time) and reports a fixed usage, so the fixtures carry token counts and a cost."""

    @staticmethod
    def name() -> str:
        return "scripted"

    def version(self) -> str:
        return "1.0.0"

    async def setup(self, environment: BaseEnvironment) -> None:
        return None

    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        context.n_input_tokens = 100 + len(instruction)
        context.n_cache_tokens = 40
        context.n_output_tokens = 7
        context.cost_usd = 0.0025
        match = re.search(r"Write (\S+) to (\S+?)[.,]?(?:\s|$)", instruction)
        if match is not None:
            await environment.exec(f"echo {match.group(1)} > {match.group(2)}")
        if "then wait" in instruction:
            await asyncio.sleep(30)
