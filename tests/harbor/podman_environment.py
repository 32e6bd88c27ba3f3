"""A Harbor 0.25.0 environment on the podman command line, for the parity test only.

Harbor names an environment by import path (``EnvironmentConfig.import_path``); this module is
imported by Harbor itself in the Harbor venv (Python 3.12, ``make harbor-venv``), never by
trialbook's tests. It does what Harbor's own Docker environment does for a single-container task,
without compose and without a network (``--network=none``, the only network this machine's podman
has): the image is the task's ``environment/Dockerfile`` built once per task (or the task's
``docker_image``), the container idles (``sleep infinity``) while Harbor ``exec``s the agent's and
the verifier's commands in it (``bash -c``, at the task's workdir, as the container's user unless
Harbor names one), and files move by ``podman cp``. Nothing is bind-mounted: Harbor then uploads
/solution and /tests and downloads /logs/verifier itself, as it does for any remote sandbox.

The engine flags this machine needs (``--runtime runc``, ``--ulimit``) are not guessed here: the
caller passes the ones trialbook's own engine probe found (``global_args``, ``run_args`` in
``environment.kwargs``), and ``label``, the value of the images' ``LABEL``.
"""

from __future__ import annotations

import asyncio
import hashlib
import shlex
from pathlib import Path
from typing import Any, ClassVar

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.models.task.config import NetworkMode

__all__ = ["PodmanCliEnvironment"]

_KEEP_ALIVE = ("sh", "-c", "sleep infinity")
LABEL = "trialbook.harbor-parity"
"""The label of the images built and the containers started here (its value from
``environment.kwargs["label"]``), by which the caller removes what a killed Harbor left."""


class PodmanCliEnvironment(BaseEnvironment):
    """One container per trial, driven through ``podman`` (build, run, exec, cp, rm)."""

    _build_locks: ClassVar[dict[str, asyncio.Lock]] = {}

    def __init__(
        self,
        *args: Any,
        global_args: list[str] | None = None,
        run_args: list[str] | None = None,
        engine: str = "podman",
        label: str | None = None,
        **kwargs: Any,
    ) -> None:
        self._engine = engine
        self._global_args = list(global_args or [])
        self._run_args = list(run_args or [])
        self._label = label
        self._container: str | None = None
        super().__init__(*args, **kwargs)

    @staticmethod
    def type() -> str:
        return "trialbook-podman-cli"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        # only --network=none runs here; nothing is mounted from the host
        return EnvironmentCapabilities(disable_internet=True)

    def _validate_definition(self) -> None:
        if not self._dockerfile.is_file() and not self.task_env_config.docker_image:
            raise FileNotFoundError(
                f"{self.environment_dir}: no Dockerfile and no docker_image in task.toml"
            )
        if self.network_policy.network_mode != NetworkMode.NO_NETWORK:
            raise ValueError(
                f"{self.environment_name}: this environment runs without a network only "
                f"(the task asks for {self.network_policy.network_mode.value!r})"
            )

    @property
    def _dockerfile(self) -> Path:
        return self.environment_dir / "Dockerfile"

    def _argv(self, *args: str) -> list[str]:
        return [self._engine, *self._global_args, *args]

    async def _podman(
        self, *args: str, timeout_sec: float | None = None, check: bool = True
    ) -> ExecResult:
        process = await asyncio.create_subprocess_exec(
            *self._argv(*args),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout=timeout_sec)
        except BaseException:
            # a timeout here, or Harbor cancelling the agent at its own timeout: the podman
            # client dies with the coroutine (what it started in the container is stopped with
            # the container)
            if process.returncode is None:
                process.kill()
                await process.wait()
            raise
        result = ExecResult(
            stdout=out.decode(errors="replace"),
            stderr=err.decode(errors="replace"),
            return_code=process.returncode if process.returncode is not None else -1,
        )
        if check and result.return_code != 0:
            raise RuntimeError(
                f"{' '.join(map(shlex.quote, args[:2]))} failed ({result.return_code}): "
                f"{(result.stderr or result.stdout or '').strip()[-500:]}"
            )
        return result

    async def _image(self) -> str:
        if not self._dockerfile.is_file():
            image = self.task_env_config.docker_image
            assert image is not None  # _validate_definition
            return image
        digest = hashlib.sha256()
        for path in sorted(p for p in self.environment_dir.rglob("*") if p.is_file()):
            digest.update(str(path.relative_to(self.environment_dir)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
        tag = f"localhost/harbor-parity-env:{digest.hexdigest()[:32]}"
        lock = self._build_locks.setdefault(tag, asyncio.Lock())
        async with lock:
            exists = await self._podman("image", "exists", tag, check=False)
            if exists.return_code != 0:
                labels = ["--label", f"{LABEL}={self._label}"] if self._label else []
                await self._podman(
                    "build", "--network=none", *labels, "-t", tag, "-f", str(self._dockerfile),
                    str(self.environment_dir),
                )  # fmt: skip
        return tag

    async def start(self, force_build: bool) -> None:
        image = await self._image()
        name = f"harbor-parity-{self.session_id}".lower().replace("_", "-")[:120]
        args = ["run", "-d", "--name", name, "--network=none", *self._run_args]
        if self._label:
            args += ["--label", f"{LABEL}={self._label}"]
        if self.task_env_config.cpus:
            args += ["--cpus", str(self.task_env_config.cpus)]
        if self.task_env_config.memory_mb:
            args += ["--memory", f"{self.task_env_config.memory_mb}m"]
        if self.task_env_config.workdir:
            args += ["-w", self.task_env_config.workdir]
        await self._podman(*args, image, *_KEEP_ALIVE)
        self._container = name
        # where Harbor's agents and verifier write their logs (its Docker environment mounts these)
        await self.ensure_dirs(["/logs/agent", "/logs/verifier", "/logs/artifacts"])
        await self._upload_environment_dir_after_start()

    async def stop(self, delete: bool) -> None:
        if self._container is not None:
            await self._podman("rm", "--force", "--time", "0", self._container, check=False)
            self._container = None

    def _running(self) -> str:
        if self._container is None:
            raise RuntimeError(f"{self.session_id}: the environment is not started")
        return self._container

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        args = ["exec"]
        if cwd or self.task_env_config.workdir:
            args += ["-w", str(cwd or self.task_env_config.workdir)]
        for key, value in (self._merge_env(env) or {}).items():
            args += ["-e", f"{key}={value}"]
        who = self._resolve_user(user)
        if who is not None:
            args += ["-u", str(who)]
        args += [self._running(), "bash", "-c", command]
        try:
            return await self._podman(*args, timeout_sec=timeout_sec, check=False)
        except TimeoutError:
            # as Harbor's Docker environment says it (the agent's own timeout is Harbor's, above)
            raise RuntimeError(f"Command timed out after {timeout_sec} seconds") from None

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        parent = str(Path(target_path).parent)
        await self.exec(f"mkdir -p {shlex.quote(parent)}", user="root")
        await self._podman("cp", str(source_path), f"{self._running()}:{target_path}")

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        # podman cp makes the folder itself; only missing parents need an exec (one call fewer
        # inside Harbor's agent timeout, which the oracle's upload of /solution counts against)
        copy = ("cp", f"{source_dir}/.", f"{self._running()}:{target_dir}")
        if (await self._podman(*copy, check=False)).return_code != 0:
            await self.exec(f"mkdir -p {shlex.quote(target_dir)}", user="root")
            await self._podman(*copy)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        await self._podman("cp", f"{self._running()}:{source_path}", str(target_path))

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        Path(target_dir).mkdir(parents=True, exist_ok=True)
        await self._podman("cp", f"{self._running()}:{source_dir}/.", str(target_dir))
