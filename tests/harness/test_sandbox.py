"""How a command is wrapped for each tier (argv-level checks; behaviour is tested in test_run.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trialbook.harness.sandbox import _sandbox
from trialbook.harness.sandbox._sandbox import Limits, SandboxSpec, wrap


def test_process_tier_is_sh_with_rlimits() -> None:
    argv = wrap("process", "echo hi", SandboxSpec(workspace=Path("/w")), {}, Limits(cpu_s=7))
    assert argv[:2] == ["/bin/sh", "-c"]
    assert argv[2].startswith("ulimit -t 7 && ulimit -v ")
    assert argv[2].endswith("\necho hi")


def test_a_python_under_tmp_is_mounted_back_without_the_hidden_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clone under /tmp (its .venv and editable src) must stay usable inside the fresh /tmp, while
    a suite inside that src stays hidden: the Python's folders are shown whole (a site-packages may
    hold thousands of entries) and the suite covered by an empty tmpfs after them."""
    src = tmp_path / "clone" / "src"
    suite = src / "pkg" / "suite"
    suite.mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("")
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
    bind = argv.index(str(src))
    assert argv[bind - 1 : bind + 2] == ["--ro-bind", str(src), str(src)]
    assert argv.index("--tmpfs") < bind  # after the fresh /tmp itself
    hide = argv.index(str(suite))
    assert argv[hide - 1] == "--tmpfs"
    assert hide > bind
    assert "/usr/lib/python3" not in argv  # in a system folder, already there: not bound again
    assert "--unshare-net" in argv
    assert "1" not in argv  # the environment's values are not in the argv (the caller passes env)
    assert "--die-with-parent" in argv


@pytest.mark.parametrize("shell", ["dash", "bash"])
def test_the_limits_prefix_runs_where_sh_is_dash_or_bash(shell: str) -> None:
    # bash's ulimit -p is the read-only pipe size: a prefix written for dash failed every attempt
    # with 126 where /bin/sh is bash; the process count must be set there too
    import shutil
    import subprocess

    from trialbook.harness.sandbox._sandbox import Limits, _script

    path = shutil.which(shell)
    if path is None:
        pytest.fail(f"{shell} is not installed (Debian ships both)")
    flag = "-u" if shell == "bash" else "-p"
    script = _script(f"ulimit {flag}", Limits(cpu_s=5, memory_mb=1024))
    out = subprocess.run([path, "-c", script], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(Limits(cpu_s=5, memory_mb=1024).processes)


def test_a_hidden_folder_the_command_names_is_neither_shown_nor_covered(tmp_path: Path) -> None:
    """Naming the suite in the command must not show it, nor make a mount point for a tmpfs over it
    (the mount point's parents would then exist, writable, in the sandbox's /var/tmp, and
    mountinfo would name the suite)."""
    suite = tmp_path / "project" / "suite"
    (suite / "tasks" / "t" / "oracle").mkdir(parents=True)
    (suite / "tasks" / "t" / "oracle" / "answer.txt").write_text("42\n")
    argv = wrap(
        "bwrap",
        f"python3 attack.py {suite} {suite}/tasks/t/oracle/answer.txt",
        SandboxSpec(workspace=tmp_path / "ws", hidden=(suite,)),
        {"PATH": "/usr/bin:/bin"},
        Limits(cpu_s=1),
    )
    mounts = argv[: argv.index("--")]  # the command itself comes after
    assert not any(str(suite) in a for a in mounts), mounts


def test_a_long_stream_is_kept_as_its_head_and_tail() -> None:
    from trialbook.harness.sandbox._captured import Captured

    captured = Captured()
    try:
        head, tail = Captured.KEEP_HEAD, Captured.KEEP_TAIL
        fd = captured.fds["agent.stdout"]
        os.pwrite(fd, b"H" * head, 0)
        os.pwrite(fd, b"M" * 1000, head)
        os.pwrite(fd, b"T" * (tail - 5) + b"last\n", head + 1000)
        os.pwrite(captured.fds["agent.stderr"], b"short\n", 0)
        out, notes = captured.contents()
        kept = out["agent.stdout"]
        assert kept.startswith(b"H" * head + b"\n[trialbook: 1000 bytes dropped here]\n")
        assert kept.endswith(b"T" * (tail - 5) + b"last\n")
        assert b"M" not in kept
        assert out["agent.stderr"] == b"short\n"
        assert notes == ["agent.stdout: 4.0 MiB written; its first 3 MiB and last 1 MiB kept"]
        assert captured.text("agent.stdout").endswith("last\n")
        assert len(captured.text("agent.stdout")) == tail
    finally:
        captured.close()


def test_a_disk_that_is_not_full_is_never_the_agents_doing(tmp_path: Path) -> None:
    """A harness step that fails after the agent ran is the agent's failure only when the disk is
    full now AND the attempt's own folder took at least half of what was free at its start."""
    from trialbook.harness.sandbox._fs import Free, agent_filled_the_disk, free_space

    (tmp_path / "big").write_bytes(b"x" * 100_000)
    free = free_space(tmp_path)
    assert free.bytes > 0
    assert not agent_filled_the_disk(tmp_path, free)  # not full now
    assert not agent_filled_the_disk(tmp_path, Free(0, 0))  # free space unknown: the harness's
