"""The demo as one library call: copy and freeze the bundled suite, run both simulated agents
through the harness, score both runs, compare them, and write the reports (the HTML report of
both runs and their comparison among them)."""

from __future__ import annotations

import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from trialbook.demo.agent import PROFILES
from trialbook.errors import ArgumentError

if TYPE_CHECKING:
    from trialbook.analysis import Comparison, ScoreReport
    from trialbook.harness import RunResult, Tally
    from trialbook.suite import Lock

__all__ = ["SUITE_DIR", "DemoProgress", "DemoResult", "run_demo"]

SUITE_DIR = Path(__file__).parent / "suite"
"""The bundled, frozen demo suite: its files are the only copy of the tasks."""

SYSTEMS = tuple(PROFILES)
"""The two simulated systems, in the order they run: baseline, candidate."""


class DemoProgress(Protocol):
    """What :func:`run_demo` reports as it goes (the CLI prints it)."""

    def frozen(self, lock: Lock, lock_path: Path) -> None:
        """The copy of the suite was frozen."""

    def run_started(self, name: str) -> None:
        """System ``name`` starts; ``begin`` and ``attempt`` follow as in a harness run."""

    def begin(self, run_id: str, total: int, done: Tally, notes: Sequence[str]) -> None: ...

    def attempt(self, row: Mapping[str, object]) -> None: ...

    def run_finished(self, name: str, result: RunResult) -> None:
        """System ``name``'s run is over."""


@dataclass(frozen=True)
class DemoResult:
    """What one demo did and wrote."""

    out: Path
    """The folder everything was written to."""
    suite: Path
    """The frozen copy of the bundled suite that ran (``out/suite``)."""
    lock: Lock
    """Its lock (dataset_id, quarantined tasks)."""
    lock_path: Path
    ledger: Path
    """``out/ledger.db``: both runs; raw output in ``out/ledger.transcripts/``."""
    runs: Mapping[str, RunResult]
    """System name (baseline, candidate) -> its harness run."""
    scores: Mapping[str, ScoreReport]
    """System name -> the score of its run."""
    comparison: Comparison
    """Candidate against baseline, paired by task."""
    report: Path
    """``out/report.html``: both runs and their comparison on one self-contained page."""
    files: tuple[Path, ...]
    """The reports written: <name>-score.json/md for each system, compare.json/md, report.html."""


def check_out(out: Path) -> None:
    """Refuse an ``out`` that already holds a demo's ledger (an ArgumentError naming it): a second
    demo in the same ledger would be scored as four runs. :func:`run_demo` checks it first; the
    command line asks before it prints anything."""
    ledger = out / "ledger.db"
    if ledger.exists():
        raise ArgumentError(
            f"{ledger} already holds a demo's runs, and a second demo would add two more to it: "
            f"remove {out} first, or give another folder",
            argument="out",
        )


def run_demo(
    out: Path,
    *,
    jobs: int = 2,
    sandbox: str = "auto",
    progress: DemoProgress | None = None,
) -> DemoResult:
    """Run the demo into ``out``: a new folder, or one without a demo's ledger (an ArgumentError
    naming ``out`` otherwise: a second demo in the same ledger would be scored as four runs).

    Both agents are :mod:`trialbook.demo.agent` simulators; the suite, harness, sandbox, ledger,
    scoring and comparison are the real ones.
    """
    from trialbook import report as render
    from trialbook.analysis import build_report, compare_runs, score_file
    from trialbook.harness import RunOptions, run_suite
    from trialbook.ledger import read_ledger
    from trialbook.suite import LOCK_NAME, freeze, load_suite, write_lock

    check_out(out)
    ledger = out / "ledger.db"
    out.mkdir(parents=True, exist_ok=True)
    suite_dir = out / "suite"
    shutil.rmtree(suite_dir, ignore_errors=True)
    shutil.copytree(SUITE_DIR, suite_dir, ignore=shutil.ignore_patterns(LOCK_NAME, "__pycache__"))
    suite = load_suite(suite_dir)
    lock = freeze(suite)
    lock_path = write_lock(suite, lock)
    if progress is not None:
        progress.frozen(lock, lock_path)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    runs: dict[str, RunResult] = {}
    with agent_material(suite_dir) as material:
        for name in SYSTEMS:
            if progress is not None:
                progress.run_started(name)
            runs[name] = run_suite(
                RunOptions(
                    suite=suite_dir,
                    agent=shlex.join(
                        [sys.executable, "-m", "trialbook.demo.agent", name, str(material)]
                    ),
                    ledger=ledger,
                    system=f"simulated-{name}",
                    run_id=f"{name}-{stamp}",
                    jobs=jobs,
                    sandbox=sandbox,
                    model_version="simulator",
                ),
                progress=progress,
            )
            if progress is not None:
                progress.run_finished(name, runs[name])
    scores = {name: score_file(ledger, run=result.run_id) for name, result in runs.items()}
    comparison = compare_runs(
        f"{ledger}:{runs['baseline'].run_id}", f"{ledger}:{runs['candidate'].run_id}"
    )
    texts: dict[str, str] = {}
    for name, report in scores.items():
        texts[f"{name}-score.json"] = render.to_json(render.score_to_dict(report)) + "\n"
        texts[f"{name}-score.md"] = render.score_markdown(report)
    texts["compare.json"] = render.to_json(render.compare_to_dict(comparison)) + "\n"
    texts["compare.md"] = render.compare_text(comparison, markdown=True)
    texts["report.html"] = render.report_html(
        build_report([read_ledger(ledger)]), base=out.resolve()
    )
    for file, text in texts.items():
        (out / file).write_text(text, encoding="utf-8")
    return DemoResult(
        out=out,
        suite=suite_dir,
        lock=lock,
        lock_path=lock_path,
        ledger=ledger,
        runs=runs,
        scores=scores,
        comparison=comparison,
        report=out / "report.html",
        files=tuple(out / file for file in texts),
    )


@contextmanager
def agent_material(suite_dir: Path) -> Iterator[Path]:
    """A temporary folder with each task's ``reference/`` and ``decoys/`` (never its oracle), for
    the agent to read: the agent's command names it, so both sandbox tiers show it (the bwrap tier
    read-only). Removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="trialbook-demo-material-"))
    try:
        for task in sorted((suite_dir / "tasks").iterdir()):
            for part in ("reference", "decoys"):
                if (task / part).is_dir():
                    # expect.json is the grader-check's, never part of a fix
                    ignore = shutil.ignore_patterns("expect.json")
                    shutil.copytree(task / part, folder / task.name / part, ignore=ignore)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
