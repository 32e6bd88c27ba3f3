"""The bwrap tier against a hostile agent run as root (issue 12, item 1): no capability is left, so
mount, umount, a remount of / read-write, raw sockets, a nested user namespace, the hidden oracle
and the ledger all fail from inside. CI runs as root; elsewhere the test runs as whoever runs it
(an unprivileged user never had those capabilities, and the same attacks must fail)."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.harness.adversarial._whom import Harness, harness  # noqa: F401  (fixture)
from tests.harness.test_run import CHECK, TIERS, at_runtime, outside_tmp, run, transcript
from trialbook.harness.sandbox._sandbox import Limits, SandboxSpec, wrap

__all__ = ["outside_tmp"]  # the fixture, imported for its use here

ATTACKS = Path(__file__).parent / "adversarial" / "root_attacks.py"
BWRAP = [t for t in TIERS if getattr(t, "values", (t,))[0] == "bwrap"]


@pytest.mark.parametrize("tier", BWRAP)
def test_a_root_agent_keeps_no_capability_and_reaches_nothing(outside_tmp: Path, tier: str) -> None:
    tmp_path = outside_tmp
    suite, ledger = tmp_path / "suite", tmp_path / "out" / "ledger.db"
    host_file = tmp_path / "written-from-the-sandbox.txt"
    agent = f"{sys.executable} {ATTACKS} {at_runtime(suite)} {at_runtime(ledger)} {host_file}"
    (row,) = run(
        tmp_path,
        {"t": {"grader": "test -f done.txt", "oracle": {"answer.txt": "the-answer-42\n"}}},
        agent,
        tier,
    )
    out = transcript(tmp_path, row)
    assert row["passed"] is True, (row, out)
    assert out.count("held:") == 13, out
    assert "ESCAPE" not in out, out
    assert not host_file.exists()
    with sqlite3.connect(ledger) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert "hostile" not in tables


def test_every_bwrap_command_drops_all_capabilities() -> None:
    argv = wrap("bwrap", "true", SandboxSpec(workspace=Path("/w")), {}, Limits(cpu_s=1))
    drop = argv.index("--cap-drop")
    assert argv[drop + 1] == "ALL"
    assert drop < argv.index("--")


@pytest.fixture
def var_tmp() -> Any:
    """A folder in /var/tmp: on the host file system, outside /tmp (which the sandbox replaces
    anyway) and outside every folder the sandbox shows."""
    folder = Path(tempfile.mkdtemp(prefix="tb-test-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _listen(path: Path) -> tuple[socket.socket, list[bytes]]:
    """A unix socket listening at ``path``; what each connection sends lands in the list."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    os.chmod(path, 0o777)
    server.listen(8)
    server.settimeout(0.2)
    received: list[bytes] = []

    def serve() -> None:
        while server.fileno() != -1:
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                received.append(conn.recv(100))

    threading.Thread(target=serve, daemon=True).start()
    return server, received


@pytest.mark.parametrize("tier", BWRAP)
def test_no_unix_socket_on_the_host_is_reachable_with_the_network_off(
    outside_tmp: Path, var_tmp: Path, tier: str
) -> None:
    """A read-only mount does not stop connect(): a socket anywhere on the host (a docker.sock, an
    agent's socket in a home folder) was reachable. Only the system folders are shown now."""
    sockets = [var_tmp / "s.sock", outside_tmp / "s.sock"]
    servers = [_listen(path) for path in sockets]
    try:
        attempts = "; ".join(
            f'{sys.executable} -c "import socket; s = socket.socket(socket.AF_UNIX); '
            f"s.connect('{path}'); s.sendall(b'escaped')\" && echo CONNECTED {path}"
            for path in sockets
        )
        (row,) = run(outside_tmp, {"t": CHECK}, f"{attempts}; touch done.txt", tier)
        out = transcript(outside_tmp, row)
        assert row["passed"] is True, row
        assert "CONNECTED" not in out, out
        for _, received in servers:
            assert received == []
    finally:
        for server, _ in servers:
            server.close()


@pytest.mark.parametrize("tier", BWRAP)
def test_host_files_outside_the_system_folders_are_not_there(
    outside_tmp: Path, var_tmp: Path, tier: str
) -> None:
    secrets = [var_tmp / "secret.txt", outside_tmp / "secret" / "key.txt"]
    for secret in secrets:
        secret.parent.mkdir(exist_ok=True)
        secret.write_text("s3cr3t\n")
    # the paths reach the agent as data (a path in the command itself is shown, see below)
    agent = 'for p in $SECRETS; do cat "$p"; done; ls $FOLDERS; touch done.txt'
    pass_env = {"SECRETS": " ".join(str(s) for s in secrets), "FOLDERS": "/root /home /srv"}
    (row,) = run(outside_tmp, {"t": CHECK}, agent, tier, pass_env=pass_env)
    assert row["passed"] is True, row
    assert "s3cr3t" not in transcript(outside_tmp, row)


@pytest.mark.parametrize("tier", BWRAP)
def test_mountinfo_does_not_name_the_hidden_folders(outside_tmp: Path, tier: str) -> None:
    """The suite and the ledger's folder are simply not there (nothing shown contains them), so no
    tmpfs over them names them in /proc/self/mountinfo."""
    suite, ledger_dir = outside_tmp / "suite", outside_tmp / "out"
    (row,) = run(outside_tmp, {"t": CHECK}, "cat /proc/self/mountinfo; touch done.txt", tier)
    mounts = transcript(outside_tmp, row)
    assert row["passed"] is True, row
    assert " /proc " in mounts  # it did read the table
    assert str(suite) not in mounts, mounts
    assert str(ledger_dir) not in mounts, mounts


@pytest.mark.parametrize("tier", BWRAP)
def test_a_program_the_command_names_runs_from_its_folder(outside_tmp: Path, tier: str) -> None:
    """An agent outside the system folders is shown read-only with the folder it lives in (its
    helper files), because the command names it."""
    tools = outside_tmp / "agent"
    tools.mkdir()
    (tools / "helper.txt").write_text("from the agent's folder\n")
    program = tools / "agent.sh"
    program.write_text('#!/bin/sh\ncat "$(dirname "$0")/helper.txt" > done.txt\n')
    program.chmod(0o755)
    grader = 'grep -q "from the agent" done.txt'
    (row,) = run(outside_tmp, {"t": {"grader": grader}}, str(program), tier)
    assert row["passed"] is True, (row, transcript(outside_tmp, row, "agent.stderr"))


def _command_lines_with(value: bytes, found: list[bytes], done: threading.Event) -> None:
    """Every command line on the machine holding ``value``, looked at until ``done``: what any local
    user can read (/proc/PID/cmdline is world-readable)."""
    while not done.is_set():
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    cmdline = Path(entry.path, "cmdline").read_bytes()
                except OSError:
                    continue  # exited since the listing
                if value in cmdline:
                    found.append(cmdline)


@pytest.mark.parametrize("tier", TIERS)
def test_passed_values_are_in_no_command_line(harness: Harness, tier: str) -> None:  # noqa: F811
    """A --pass-env value (an API key) reaches the agent, and no other user of the machine: it is in
    no process's argv (bwrap's ``--setenv NAME VALUE`` put it there), only in environments, which
    only the same user can read. As root and as an unprivileged user (``_whom.harness``)."""
    secret = f"sk-test-{os.urandom(8).hex()}"
    found: list[bytes] = []
    done = threading.Event()
    watcher = threading.Thread(target=_command_lines_with, args=(secret.encode(), found, done))
    watcher.start()
    try:
        (row,) = harness.run(
            harness.work,
            {"t": CHECK},
            'sleep 1; [ "$TB_API_KEY" = "$TB_EXPECTED" ] && touch done.txt',
            tier,
            pass_env={"TB_API_KEY": secret, "TB_EXPECTED": secret},
        )
    finally:
        done.set()
        watcher.join()
    assert row["passed"] is True, row
    assert not found, f"the passed value is readable in a command line: {found[0][:300]!r}"
