"""How a command is wrapped for each tier (argv-level checks; behaviour is tested in test_run.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trialbook.harness import _sandbox
from trialbook.harness._sandbox import Limits, SandboxSpec, wrap


def test_process_tier_is_sh_with_rlimits() -> None:
    argv = wrap("process", "echo hi", SandboxSpec(workspace=Path("/w")), {}, Limits(cpu_s=7))
    assert argv[:2] == ["/bin/sh", "-c"]
    assert argv[2].startswith("ulimit -t 7 && ulimit -v ")
    assert argv[2].endswith("\necho hi")


def test_a_python_under_tmp_is_mounted_back_without_the_hidden_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clone under /tmp (its .venv and editable src) must stay usable inside the fresh /tmp, while
    a suite inside that src stays hidden: the folders that hold it are rebuilt without it."""
    src = tmp_path / "clone" / "src"
    suite = src / "pkg" / "suite"
    suite.mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("")
    (src / "top.py").write_text("")
    monkeypatch.setattr(_sandbox, "_clean_import_path", lambda: [str(src), "/usr/lib/python3"])
    _sandbox._python_paths.cache_clear()
    try:
        argv = wrap(
            "bwrap",
            "true",
            SandboxSpec(workspace=tmp_path / "ws", hidden=(suite,)),
            {"A": "1"},
            Limits(cpu_s=1),
        )
    finally:
        _sandbox._python_paths.cache_clear()
    src, suite = src.resolve(), suite.resolve()
    shown = argv.index(str(src))
    assert argv[shown - 1] == "--tmpfs"
    assert argv.index("--tmpfs") < shown  # after the fresh /tmp itself
    for entry in (src / "top.py", src / "pkg" / "mod.py"):
        bind = argv.index(str(entry))
        assert argv[bind - 1 : bind + 2] == ["--ro-bind", str(entry), str(entry)]
    assert str(suite) not in argv  # neither bound nor named: not there at all
    assert "/usr/lib/python3" not in argv  # in a system folder, already there: not bound again
    assert "--unshare-net" in argv
    assert "--clearenv" in argv
    assert "--die-with-parent" in argv


@pytest.mark.parametrize("shell", ["dash", "bash"])
def test_the_limits_prefix_runs_where_sh_is_dash_or_bash(shell: str) -> None:
    # bash's ulimit -p is the read-only pipe size: a prefix written for dash failed every attempt
    # with 126 where /bin/sh is bash; the process count must be set there too
    import shutil
    import subprocess

    from trialbook.harness._sandbox import Limits, _script

    path = shutil.which(shell)
    if path is None:
        pytest.fail(f"{shell} is not installed (Debian ships both)")
    flag = "-u" if shell == "bash" else "-p"
    script = _script(f"ulimit {flag}", Limits(cpu_s=5, memory_mb=1024))
    out = subprocess.run([path, "-c", script], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(Limits(cpu_s=5, memory_mb=1024).processes)
