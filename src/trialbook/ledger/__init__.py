"""The only code that touches ledgers: reading, validating, storing (SQLite) and writing attempts."""

from trialbook.ledger._fields import FIELDS, REQUIRED, STATUSES, Field
from trialbook.ledger._read import ledger_from_rows, ledger_rows, read_ledger
from trialbook.ledger._store import (
    LedgerStore,
    Prepared,
    RunRecord,
    RunStatus,
    import_files,
    now,
    prepare,
)
from trialbook.ledger._table import Ledger, TaskGroups, per_task
from trialbook.ledger._write import ExportFormat, write_ledger

__all__ = [
    "FIELDS",
    "REQUIRED",
    "STATUSES",
    "ExportFormat",
    "Field",
    "Ledger",
    "LedgerStore",
    "Prepared",
    "RunRecord",
    "RunStatus",
    "TaskGroups",
    "import_files",
    "ledger_from_rows",
    "ledger_rows",
    "now",
    "per_task",
    "prepare",
    "read_ledger",
    "write_ledger",
]
