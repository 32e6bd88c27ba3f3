"""The harness: runs an agent on a frozen suite, k sandboxed attempts per task, one row per attempt."""

from trialbook.harness._run import RunOptions, RunProgress, RunResult, run_suite

__all__ = ["RunOptions", "RunProgress", "RunResult", "run_suite"]
