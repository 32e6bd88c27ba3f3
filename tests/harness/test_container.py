"""The container tier's engine (harness/sandbox/_container.py) against the real engine of this
machine: what the container can and cannot do, the image built once per context, and what a killed
harness left found and removed by label.

Needs podman (or docker) and the local base image (tests/harness/_containers.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.harness._containers import BASE, PYTHON, container_engine
from trialbook.errors import ArgumentError
from trialbook.harness.sandbox import _container as ct
from trialbook.harness.sandbox._seccomp import no_userns_profile


@pytest.fixture(scope="module")
def engine() -> ct.Engine:
    return container_engine()


def _run(
    engine: ct.Engine, spec: ct.ContainerSpec, script: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    argv = ct.run_argv(engine, spec, ["/bin/sh", "-c", script])
    return subprocess.run(
        argv, env=env or dict(os.environ), capture_output=True, text=True, timeout=120, check=False
    )


def _spec(workspace: Path, **kw: object) -> ct.ContainerSpec:
    return ct.ContainerSpec(
        name=f"tb-test-{uuid.uuid4().hex[:12]}",
        image=kw.pop("image", BASE),  # type: ignore[arg-type]
        workspace=workspace,
        **kw,  # type: ignore[arg-type]
    )


def test_an_unknown_or_missing_engine_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ArgumentError) as info:
        ct.find_engine("lxc")
    assert info.value.argument == "container_engine"
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(ArgumentError, match="needs podman or docker installed"):
        ct.find_engine()


def test_the_container_has_no_capability_no_network_and_a_read_only_image(
    engine: ct.Engine, tmp_path: Path
) -> None:
    secret = f"value-{uuid.uuid4().hex}"
    spec = _spec(tmp_path, env_names=("TB_SECRET",))
    argv = ct.run_argv(engine, spec, ["true"])
    assert secret not in " ".join(argv)  # the value is never in an argv (world-readable)
    done = _run(
        engine,
        spec,
        "grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; "
        'echo "secret=$TB_SECRET"; '
        "touch /etc/written 2>/dev/null && echo image-writable || echo image-read-only; "
        "touch /tmp/t && echo tmp-writable; "
        "echo from-inside > made.txt; "
        "ls /sys/class/net",
        env={**os.environ, "TB_SECRET": secret},
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "CapEff:\t0000000000000000" in out
    assert "CapBnd:\t0000000000000000" in out
    assert "NoNewPrivs:\t1" in out
    assert f"secret={secret}" in out
    assert "image-read-only" in out
    assert "tmp-writable" in out
    assert out.split()[-1] == "lo"  # the only interface: no network
    assert (tmp_path / "made.txt").read_text() == "from-inside\n"


def test_no_user_namespace_can_be_made_and_threads_and_processes_still_work(
    tmp_path: Path,
) -> None:
    # as the bwrap tier's --disable-userns: a nested user namespace would give the agent every
    # capability inside it, and the kernel's namespace code to attack; threads (clone3 answered
    # ENOSYS, then clone without CLONE_NEWUSER) and child processes are untouched
    engine = container_engine(PYTHON)
    done = _run(
        engine,
        _spec(tmp_path, image=PYTHON),
        "unshare -U true 2>/dev/null && echo made-a-user-namespace; "
        "unshare -Un true 2>/dev/null && echo made-a-network-namespace; "
        'python3 -c \'import threading; t = threading.Thread(target=print, args=("thread",)); '
        "t.start(); t.join()'; "
        "sh -c 'echo child' & wait",
    )
    assert done.stdout.split() == ["thread", "child"], (done.stdout, done.stderr)


def test_the_profile_refuses_only_new_user_namespaces() -> None:
    default = {
        "defaultAction": "SCMP_ACT_ERRNO",
        "syscalls": [
            {"names": ["read", "clone", "clone3", "unshare"], "action": "SCMP_ACT_ALLOW"},
            {"names": ["setns"], "action": "SCMP_ACT_ERRNO"},
        ],
    }
    profile = no_userns_profile(default)
    rules = profile["syscalls"]
    assert isinstance(rules, list)
    assert rules[0] == {"names": ["read"], "action": "SCMP_ACT_ALLOW"}
    assert rules[1] == default["syscalls"][1]  # type: ignore[index]
    clone_newuser = 0x10000000  # <linux/sched.h>
    assert rules[2] == {
        "names": ["clone", "unshare"],
        "action": "SCMP_ACT_ALLOW",
        "args": [{"index": 0, "value": clone_newuser, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}],
    }
    assert rules[3] == {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}  # ENOSYS
    assert default["syscalls"][0]["names"] == ["read", "clone", "clone3", "unshare"]  # type: ignore[index]


def test_a_read_only_mount_cannot_be_written(engine: ct.Engine, tmp_path: Path) -> None:
    oracle = tmp_path / "oracle"
    oracle.mkdir()
    (oracle / "expected.txt").write_text("42\n")
    work = tmp_path / "work"
    work.mkdir()
    done = _run(
        engine,
        _spec(work, readonly={"/oracle": oracle}),
        "cat /oracle/expected.txt; echo no > /oracle/expected.txt || echo refused",
    )
    assert done.stdout.split() == ["42", "refused"]
    assert (oracle / "expected.txt").read_text() == "42\n"


def test_processes_and_memory_are_limited(engine: ct.Engine, tmp_path: Path) -> None:
    # 40 sleeping children against a limit of 20 processes: the shell prints each one it
    # started, and cannot fork long before the 40th (the engine then removes the container)
    done = _run(engine, _spec(tmp_path, pids=20), "for i in $(seq 40); do sleep 30 & echo $i; done")
    started = [int(line) for line in done.stdout.split()]
    assert started, done
    assert max(started) < 20
    assert "fork" in done.stderr.lower(), done.stderr
    # 64 MiB allowed, a 150 MB string held by the shell: the kernel's OOM killer ends it
    # (the engine exits 128 + SIGKILL)
    done = _run(
        engine,
        _spec(tmp_path, memory_mb=64),
        'x=$(head -c 150000000 /dev/zero | tr "\\0" a); echo "survived ${#x}"',
    )
    assert "survived" not in done.stdout
    assert done.returncode == 128 + signal.SIGKILL


def test_what_a_killed_harness_left_is_found_by_label_and_removed(
    engine: ct.Engine, tmp_path: Path
) -> None:
    dead, alive = f"ns0-{uuid.uuid4().int % 10**6}-1", f"ns0-{uuid.uuid4().int % 10**6}-2"
    specs = [
        _spec(tmp_path, labels={ct.LABEL_HARNESS: stamp, ct.LABEL_RUN: "r"})
        for stamp in (dead, alive)
    ]
    clients = [
        subprocess.Popen(
            ct.run_argv(engine, spec, ["sleep", "300"]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for spec in specs
    ]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            listed = ct.stale_containers(engine, lambda s: s in (dead, alive))
            if len(listed) == 2:
                break
            time.sleep(0.2)
        for client in clients:  # the harness dies: the containers live on under the engine
            client.send_signal(signal.SIGKILL)
            client.wait()
        assert ct.stale_containers(engine, lambda s: s == dead) == [specs[0].name]
        ct.remove_containers(engine, ct.stale_containers(engine, lambda s: s == dead))
        assert ct.stale_containers(engine, lambda s: s in (dead, alive)) == [specs[1].name]
    finally:
        ct.remove_containers(engine, [s.name for s in specs])
    assert ct.stale_containers(engine, lambda s: s in (dead, alive)) == []


def test_an_image_is_built_once_per_context_and_a_failed_build_says_why(
    engine: ct.Engine, tmp_path: Path
) -> None:
    context = tmp_path / "environment"
    context.mkdir()
    marker = uuid.uuid4().hex
    (context / "Dockerfile").write_text(f"FROM {BASE}\nRUN echo {marker} > /marker\n")
    tag = ct.build_image(engine, context / "Dockerfile", context)
    assert (
        tag == f"localhost/trialbook-env:{ct.context_digest(context, context / 'Dockerfile')[:32]}"
    )
    try:
        done = _run(engine, _spec(tmp_path, image=tag), "cat /marker")
        assert done.stdout.strip() == marker
        created = subprocess.run(
            engine.command("image", "inspect", "--format", "{{.Id}}", tag),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert ct.build_image(engine, context / "Dockerfile", context) == tag  # not rebuilt
        again = subprocess.run(
            engine.command("image", "inspect", "--format", "{{.Id}}", tag),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert again == created
        (context / "extra.txt").write_text("changes the context")
        assert ct.context_digest(context, context / "Dockerfile")[:32] not in tag
    finally:
        subprocess.run(engine.command("rmi", "--force", tag), capture_output=True, check=False)
    (context / "Dockerfile").write_text(f"FROM {BASE}\nRUN exit 3\n")
    with pytest.raises(ct.ContainerError, match="could not build"):
        ct.build_image(engine, context / "Dockerfile", context)


def test_the_context_digest_follows_content_mode_and_names(tmp_path: Path) -> None:
    context = tmp_path / "env"
    context.mkdir()
    (context / "Dockerfile").write_text("FROM scratch\n")
    (context / "run.sh").write_text("echo hi\n")
    first = ct.context_digest(context, context / "Dockerfile")
    assert ct.context_digest(context, context / "Dockerfile") == first
    (context / "run.sh").chmod(0o755)
    moded = ct.context_digest(context, context / "Dockerfile")
    assert moded != first
    (context / "run.sh").rename(context / "go.sh")
    assert ct.context_digest(context, context / "Dockerfile") not in (first, moded)


def test_the_images_files_are_copied_out_once_per_image_and_then_per_attempt_from_the_scratch(
    engine: ct.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = ct.ContainerTarget(engine, BASE, workdir="/etc")
    calls: list[Path] = []
    copy_out = ct._copy_out

    def counted(t: ct.ContainerTarget, folder: Path) -> None:
        calls.append(folder)
        copy_out(t, folder)

    monkeypatch.setattr(ct, "_copy_out", counted)
    cache = tmp_path / "scratch"
    workspaces = [tmp_path / f"w{i}" for i in range(4)]
    for w in workspaces:
        w.mkdir()
    import threading

    threads = [
        threading.Thread(target=ct.seed_workspace, args=(target, w, cache)) for w in workspaces
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1  # four attempts starting at once: one copy out of the image

    # each workspace as the engine itself copies it out: names, modes, owners and links
    direct = tmp_path / "direct"
    direct.mkdir()
    copy_out(target, direct)

    def listing(root: Path) -> list[tuple[str, int, int, str | None]]:
        out = []
        for p in sorted(root.rglob("*")):
            st = p.lstat()
            link = os.readlink(p) if p.is_symlink() else None
            out.append((str(p.relative_to(root)), st.st_mode, st.st_uid, link))
        return out

    expected = listing(direct)
    assert len(expected) > 50  # /etc of a Debian system
    assert any(link is not None for *_, link in expected)
    for w in workspaces:
        assert listing(w) == expected
    # an attempt changes its own copy only: the next starts from the image's files again
    (workspaces[0] / "hostname").write_text("changed\n")
    again = tmp_path / "again"
    again.mkdir()
    ct.seed_workspace(target, again, cache)
    assert len(calls) == 1
    assert listing(again) == expected
