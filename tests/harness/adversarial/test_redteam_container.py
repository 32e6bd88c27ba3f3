"""The red team against the container tier, through the real harness: what the bwrap tier's
hostile suite tries, tried from inside a container of the task's image.

tests/harness/test_container_tier.py already has an agent grep the whole file system for the
oracle, read its capabilities and network, write to its image, kill its container's init, fork
past its process limit and fake the engine's errors. Here, in one run of one suite (k = 2, one
attempt at a time, so that the second attempt of a task finds what the first left), the rest:

- ``persist``: leave files in every writable place (workspace, io folder, /tmp, /var/tmp, /run,
  /dev/shm, the image) for the next attempt, which must find none of them;
- ``outlive``: leave a detached process behind; none may outlive the attempt, in the container
  or on the host;
- ``mount``: mount a file system, remount the image writable, make a namespace, change root;
- ``ledger``: find and write the run's ledger, its transcripts and the suite, named by their host
  paths;
- ``memory``: allocate past the task's ``memory_mb``: its own failure, never a dead run;
- ``fool``: a Harbor-verdict task whose agent leaves a reward file where the verifier writes
  one, and a ``bash`` of its own in the workspace: the verifier's fresh folder decides.

Each agent reports what happened to it in a file the grader prints (kept in the transcript); the
test reads those reports and checks from outside: the rows, the engine's containers, the host's
processes. Needs the engine and the base image (tests/harness/_containers.py); as root (CI).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from tests.conftest import make_suite
from tests.harness._containers import BASE, container_engine
from trialbook.harness import RunOptions, run_suite
from trialbook.harness.sandbox import _container as ct
from trialbook.ledger import ledger_rows, read_ledger

MARK = f"tbred-{uuid.uuid4().hex[:12]}"

PERSIST = f"""
for p in "$PWD" "$HOME" /tmp /var/tmp /run /dev/shm /etc /usr/local /; do
  if ls -a "$p" 2>/dev/null | grep -q {MARK}; then echo "found-in $p"; fi
  echo x > "$p/{MARK}" 2>/dev/null && echo "wrote $p"
done
echo done
"""

OUTLIVE = f"""
setsid bash -c 'exec -a {MARK}-left sleep 300' </dev/null >/dev/null 2>&1 &
nohup bash -c 'trap "" HUP TERM; exec -a {MARK}-nohup sleep 300' </dev/null >/dev/null 2>&1 &
echo started
"""

MOUNT = """
mount -t tmpfs none /mnt 2>/dev/null && echo mounted-tmpfs
mount -o remount,rw / 2>/dev/null && echo remounted-root
unshare -m true 2>/dev/null && echo unshared
unshare -U true 2>/dev/null && echo unshared-user
chroot / true 2>/dev/null && echo chrooted
mknod /tmp/disk b 8 0 2>/dev/null && echo made-a-device
echo done
"""


def _ledger_probe(paths: dict[str, Path]) -> str:
    lines = [
        f'{{ ls "{path}" >/dev/null 2>&1 && echo "sees-{name}"; }}; '
        f'{{ (echo x >> "{path}") 2>/dev/null && echo "wrote-{name}"; }}'
        for name, path in paths.items()
    ]
    return "\n".join([*lines, "echo done"])


MEMORY = "head -c 1073741824 /dev/zero | tail > /dev/null && touch ok; echo done"

FOOL = f"""
mkdir -p /logs/verifier 2>/dev/null && echo 1 > /logs/verifier/reward.txt 2>/dev/null \\
  && echo wrote-logs
mkdir -p logs/verifier && echo 1 > logs/verifier/reward.txt && echo 1 > reward.txt
printf '#!/bin/sh\\nmkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt\\n' > bash
chmod +x bash
echo {MARK} > planted
echo done
"""
FOOL_VERIFIER = (
    "[ -f /srv/real ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"
)


@pytest.fixture(scope="module")
def engine() -> ct.Engine:
    if os.geteuid() != 0:
        pytest.skip("the container tier's red team runs as root (as CI does)")
    return container_engine()


def _agents(folder: Path, bodies: dict[str, str]) -> str:
    """One agent script that runs the task's own attack and reports into report.txt."""
    for task, body in bodies.items():
        (folder / f"{task}.sh").write_text(body)
    script = folder / "redteam.sh"
    script.write_text(f'#!/bin/sh\nsh "{folder}/$TRIALBOOK_TASK_ID.sh" > report.txt 2>&1\n')
    script.chmod(0o755)
    return str(script)


def _host_processes(mark: str) -> list[str]:
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if mark in cmdline and "pytest" not in cmdline:
            out.append(f"{entry.name}: {cmdline}")
    return out


def test_the_container_tier_holds_against_the_red_team(engine: ct.Engine, tmp_path: Path) -> None:
    work = tmp_path / "work"
    ledger = work / "runs.db"
    suite_root = tmp_path / "suite"
    report = "cat report.txt; "
    image = [f'image = "{BASE}"']
    suite = make_suite(
        suite_root,
        {
            "persist": {"grader": report + "! grep -q found-in report.txt", "toml": image},
            "outlive": {"grader": report + "grep -q started report.txt", "toml": image},
            "mount": {"grader": report + "true", "toml": image},
            "ledger": {"grader": report + "true", "toml": image},
            "memory": {"grader": report + "test -f ok", "toml": [*image, "memory_mb = 128"]},
            "fool": {
                "grader": "bash /tests/test.sh",
                "oracle": {"test.sh": FOOL_VERIFIER},
                "toml": [
                    *image,
                    'workdir = "/srv"',
                    'oracle_dir = "/tests"',
                    'verdict = "harbor-reward"',
                ],
            },
        },
        k=2,
        timeout_s=60,
    )
    targets = {
        "ledger": ledger,
        "transcripts": work / "runs.transcripts",
        "suite": suite_root / "suite.toml",
        "oracle": suite_root / "tasks" / "fool" / "oracle" / "test.sh",
    }
    work.mkdir()
    agents = tmp_path / "agents"
    agents.mkdir()
    agent = _agents(
        agents,
        {
            "persist": PERSIST,
            "outlive": OUTLIVE,
            "mount": MOUNT,
            "ledger": _ledger_probe(targets),
            "memory": MEMORY,
            "fool": FOOL,
        },
    )
    result = run_suite(
        RunOptions(suite=suite, agent=agent, ledger=ledger, sandbox="container", jobs=1)
    )
    rows = list(ledger_rows(read_ledger(ledger)))  # the ledger is whole: every row reads back
    assert len(rows) == 6 * 2
    by_task: dict[str, list[dict[str, object]]] = {}
    for row in sorted(rows, key=lambda r: (str(r["task_id"]), int(r["attempt_index"]))):
        by_task.setdefault(str(row["task_id"]), []).append(row)
    assert {r["sandbox"] for r in rows} == {"container"}
    assert not [(r["task_id"], r["error"]) for r in rows if r["status"] == "infra_error"]

    def said(task: str, index: int) -> list[str]:
        transcript = work / str(by_task[task][index]["transcript"])
        return (transcript / "grader.stdout").read_text().split("\n")

    # persist: what the first attempt wrote, the second never found (its grader passes only then)
    assert [r["status"] for r in by_task["persist"]] == ["passed", "passed"]
    first = said("persist", 0)
    assert "done" in first
    assert not [line for line in first if line.startswith("found-in")]
    wrote = {line.split(" ", 1)[1] for line in first if line.startswith("wrote ")}
    # its own workspace and io folder, and the container's own fresh /tmp, /var/tmp, /run and
    # /dev/shm; never the image
    assert {"/tmp", "/var/tmp"} <= wrote, wrote
    own = {p for p in wrote if "/agent/" in p}
    assert len(own) == 2, wrote
    assert wrote - own <= {"/tmp", "/var/tmp", "/run", "/dev/shm"}, wrote
    # outlive: nothing of it is left, in a container or on the host
    assert [r["status"] for r in by_task["outlive"]] == ["passed", "passed"]
    assert _host_processes(MARK) == []
    assert ct._listed(engine, f"label={ct.LABEL_RUN}={result.run_id}") == []
    # mount: every attempt refused
    for index in (0, 1):
        assert said("mount", index)[:2] == ["done", ""], said("mount", index)
    # ledger: the host paths it was told of are not there in the container
    for index in (0, 1):
        assert said("ledger", index)[:2] == ["done", ""], said("ledger", index)
    # memory: past its memory the agent fails as itself, and the run goes on
    assert [r["status"] for r in by_task["memory"]] == ["failed", "failed"]
    # fool: the verifier's own fresh folder decides; the agent's reward files and bash are ignored
    assert [r["status"] for r in by_task["fool"]] == ["failed", "failed"]
    assert {r["score"] for r in by_task["fool"]} == {0.0}
