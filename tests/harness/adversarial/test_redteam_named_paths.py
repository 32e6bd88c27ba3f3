"""Red team: a command that names a path under ``/proc`` or ``/dev`` gets the HOST's ``/proc`` or
``/dev`` in the bwrap tier, in place of the sandbox's own.

``_sandbox._named_paths`` shows "what the command names by absolute path, with the folder it lives
in", and ``wrap`` adds those ``--ro-bind`` mounts AFTER ``--proc /proc`` and ``--dev /dev``. So an
agent command such as ``nproc=$(grep -c ^processor /proc/cpuinfo) ...`` or ``agent --log /dev/null``
(a caller's everyday command, or a suite's grader command naming ``/dev/null``) binds the host's
``/proc`` (or ``/dev``) over the fresh one:

- ``/proc``: the agent lists every process of the machine with its command line (the harness's, with
  the suite and ledger paths; other attempts' and other users' commands), although the table
  promises "own pid namespace: the harness, its environment and other attempts are invisible";
- ``/dev``: the host's device nodes are all there (``/dev/vda``, ...), read-only and, in a user
  namespace, unusable: ``/dev/null`` and ``/dev/zero`` fail with "Permission denied", so an honest
  agent doing ``echo x > /dev/null`` fails — a failure the harness causes, recorded as the agent's.

Expected: the sandbox's own ``/proc`` (only its own few processes) and a working ``/dev/null``,
whatever the command names. Observed: the host's ``/proc`` (hundreds of processes) and a ``/dev/null``
that cannot be opened.

The same holds for ``/tmp``: a program named directly in ``/tmp`` shows the host's whole ``/tmp``,
with every concurrent run's scratch folder and oracle copies (third test).

Suggested fix: never bind a named path under the sandbox's own mounts (``/proc``, ``/dev``,
``/tmp``, ``/var/tmp``, ``/run``, ``/dev/shm``) — skip them in ``_named_paths`` (the host's ``/tmp``
has the same problem: other runs' scratch folders, oracle copies included).
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run)
from pathlib import Path

import pytest

from tests.harness.test_run import CHECK, TIERS, outside_tmp, run, transcript  # noqa: F401

BWRAP = [t for t in TIERS if (getattr(t, "values", None) or (t,))[0] == "bwrap"]

# counts the processes it sees without naming /proc itself (a word starting with "/")
COUNT = "python -c \"import os; print(sum(d.isdigit() for d in os.listdir('/' + 'proc')))\""


@pytest.mark.parametrize("tier", BWRAP)
def test_the_sandbox_keeps_its_own_proc_when_the_command_names_one(
    outside_tmp: Path,
    tier: str,
) -> None:
    # the same listing, once without naming /proc, once naming /proc/cpuinfo
    plain = f"{COUNT}; touch done.txt"
    (row,) = run(outside_tmp / "a", {"t": CHECK}, plain, tier)
    own = int(transcript(outside_tmp / "a", row).split()[0])
    assert own < 10, "without naming /proc the sandbox sees only its own processes"
    naming = f"grep -c ^processor /proc/cpuinfo >/dev/stderr; {COUNT}; touch done.txt"
    (row,) = run(outside_tmp / "b", {"t": CHECK}, naming, tier)
    seen = int(transcript(outside_tmp / "b", row).split()[0])
    assert seen < 10, f"naming /proc/cpuinfo showed the host's /proc: {seen} processes"


@pytest.mark.parametrize("tier", BWRAP)
def test_dev_null_works_when_the_command_names_it(outside_tmp: Path, tier: str) -> None:
    agent = 'python -c \'open("/dev/null", "w").write("x")\' --log /dev/null && touch done.txt'
    (row,) = run(outside_tmp, {"t": CHECK}, agent, tier)
    assert row["status"] == "passed", transcript(outside_tmp, row, "agent.stderr")


STEAL = """import glob, time
for _ in range(40):
    hits = glob.glob('/tmp/trialbook-run-*/*/oracle.*/oracle/answer.txt')
    if hits:
        print('STOLE', open(hits[0]).read().strip())
        break
    time.sleep(0.1)
"""


@pytest.mark.parametrize("tier", BWRAP)
def test_a_program_in_tmp_does_not_show_other_runs_oracle_copies(
    outside_tmp: Path, tier: str
) -> None:
    """A program the command names directly in ``/tmp`` (``python /tmp/agent.py``) makes
    ``_named_paths`` show its folder, the HOST's whole ``/tmp``: every other run's scratch folder is
    there, with the oracle copy of each attempt being graded (``attempt/oracle.X/oracle``). The
    table promises a fresh ``/tmp`` where only "a program the command names" is mounted back.
    Expected: the program alone is shown. Observed: the agent reads a concurrent run's oracle."""
    import threading
    import uuid

    program = Path("/tmp") / f"redteam-{uuid.uuid4().hex}.py"
    program.write_text(STEAL)
    grading = {"t": {"grader": "sleep 3; true", "oracle": {"answer.txt": "the-answer-42\n"}}}
    other = threading.Thread(target=run, args=(outside_tmp / "a", grading, "true", tier))
    try:
        other.start()
        (row,) = run(outside_tmp / "b", {"t": {"grader": "true"}}, f"python {program}", tier)
    finally:
        other.join()
        program.unlink()
    assert "the-answer-42" not in transcript(outside_tmp / "b", row)
