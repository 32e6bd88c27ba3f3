"""The demo: a bundled suite of small real tasks and two SIMULATED agents that edit the workspace."""

from pathlib import Path

from trialbook.demo._tasks import DEMO_TASKS, DemoTask, build_suite

__all__ = ["DEMO_TASKS", "SUITE_DIR", "DemoTask", "build_suite"]

SUITE_DIR = Path(__file__).parent / "suite"
"""The bundled, frozen demo suite."""
