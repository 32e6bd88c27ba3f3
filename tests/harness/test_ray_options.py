"""``trialbook run --executor ray`` without a cluster: Ray is imported only when asked for, and a
mistake (no Ray installed, nothing at the address, an address without the executor) is one line,
exit 2, nothing written."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from trialbook.cli import main

TASKS = {"t0": {"prompt": "p", "grader": "test -f done", "fixture": {"a": "x"}}}


def test_a_local_run_never_imports_ray(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", TASKS, k=1)
    code = (
        "import sys\nfrom trialbook.cli import main\n"
        f"args = ['run', {str(suite)!r}, '--agent', 'touch done', '--ledger', "
        f"{str(tmp_path / 'l.db')!r}, '--sandbox', 'process']\n"
        "try:\n    main(args)\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print('ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def _run(tmp_path: Path, *extra: str) -> tuple[int, str]:
    suite = make_suite(tmp_path / "suite", TASKS, k=1)
    args = ["run", str(suite), "--agent", "touch done", "--ledger", str(tmp_path / "l.db")]
    result = CliRunner().invoke(main, [*args, "--sandbox", "process", *extra])
    return result.exit_code, result.output


def _refused(tmp_path: Path, code: int, output: str) -> str:
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert "Traceback" not in output
    assert not (tmp_path / "l.db").exists()  # nothing written
    return lines[0]


def test_an_address_without_the_ray_executor_is_refused(tmp_path: Path) -> None:
    line = _refused(tmp_path, *_run(tmp_path, "--ray-address", "127.0.0.1:6379"))
    assert "--ray-address needs --executor ray" in line


def test_nothing_listening_at_the_address_is_refused_at_once(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        code, output = _run(tmp_path, "--executor", "ray", "--ray-address", f"127.0.0.1:{port}")
    line = _refused(tmp_path, code, output)
    assert f"--ray-address: no Ray cluster answers at 127.0.0.1:{port}" in line


def test_the_ray_executor_without_ray_installed_says_which_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    line = _refused(tmp_path, *_run(tmp_path, "--executor", "ray"))
    assert "pip install 'trialbook[ray]'" in line


def test_the_project_file_may_choose_the_executor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "trialbook.toml").write_text('executor = "ray"\nray_address = "127.0.0.1:1"\n')
    monkeypatch.chdir(tmp_path)
    line = _refused(tmp_path, *_run(tmp_path))
    assert "no Ray cluster answers at 127.0.0.1:1" in line
    (tmp_path / "trialbook.toml").write_text('executor = "slurm"\n')
    line = _refused(tmp_path, *_run(tmp_path))
    assert "executor must be local or ray, got 'slurm'" in line


class _Refusing:
    """Stands in for ``ray.init``: records the address asked for, then fails to connect."""

    def __init__(self) -> None:
        self.addresses: list[object] = []

    def __call__(self, **kwargs: object) -> None:
        self.addresses.append(kwargs["address"])
        raise ConnectionError("not this time")


def test_without_an_address_a_new_local_instance_is_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Never a cluster an old session file names (Ray's own default): that one may be long gone,
    and Ray then retries it for minutes."""
    from trialbook.errors import ArgumentError, HarnessError
    from trialbook.harness import RayExecutor

    init = _Refusing()
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(
        HarnessError, match=r"cannot start or reach the Ray cluster \(a new instance here\)"
    ):
        RayExecutor(1, init=init)
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        address = f"127.0.0.1:{listening.getsockname()[1]}"
        monkeypatch.setenv("RAY_ADDRESS", address)
        with pytest.raises(HarnessError, match="not this time"):
            RayExecutor(1, init=init)
        with pytest.raises(ArgumentError, match=r"no Ray cluster answers at 127\.0\.0\.1:1"):
            RayExecutor(1, "127.0.0.1:1", init=init)  # refused before init: nothing listens
    assert init.addresses == ["local", address]
