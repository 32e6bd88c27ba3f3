"""The demo: the bundled suite of small real tasks (its files are the only copy) and two SIMULATED
agents that edit the workspace; :func:`run_demo` runs, scores and compares them."""

from trialbook.demo._run import (
    SUITE_DIR,
    DemoProgress,
    DemoResult,
    agent_material,
    check_out,
    run_demo,
)

__all__ = ["SUITE_DIR", "DemoProgress", "DemoResult", "agent_material", "check_out", "run_demo"]
