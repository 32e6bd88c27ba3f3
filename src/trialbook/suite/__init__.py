"""Suites on disk: loading and checking ``suite.toml`` and tasks, freezing (dataset_id, oracle leaks)."""

from trialbook.errors import SuiteError
from trialbook.suite._container_keys import VERDICTS, ContainerSettings
from trialbook.suite._freeze import (
    LOCK_SCHEMA,
    Lock,
    LockCheck,
    check_lock,
    feedback_warnings,
    find_leaks,
    fixture_hash,
    freeze,
    oracle_hash,
    read_lock,
    suite_files,
    tree_hash,
    write_lock,
)
from trialbook.suite._harbor import HarborImport, import_harbor
from trialbook.suite._load import FEEDBACK, LOCK_NAME, PROTOCOLS, Suite, Task, load_suite
from trialbook.suite._model_table import ModelTable, read_model_table, suite_model

__all__ = [
    "FEEDBACK",
    "LOCK_NAME",
    "LOCK_SCHEMA",
    "PROTOCOLS",
    "VERDICTS",
    "ContainerSettings",
    "HarborImport",
    "Lock",
    "LockCheck",
    "ModelTable",
    "Suite",
    "SuiteError",
    "Task",
    "check_lock",
    "feedback_warnings",
    "find_leaks",
    "fixture_hash",
    "freeze",
    "import_harbor",
    "load_suite",
    "oracle_hash",
    "read_lock",
    "read_model_table",
    "suite_files",
    "suite_model",
    "tree_hash",
    "write_lock",
]
