"""The only code that touches ledgers: reading, validating, storing (SQLite) and writing attempts."""

from trialbook.ledger._fields import FIELDS, REQUIRED, STATUSES, Field
from trialbook.ledger._read import ledger_from_rows, ledger_rows, read_ledger
from trialbook.ledger._table import Ledger, TaskGroups, per_task

__all__ = [
    "FIELDS",
    "REQUIRED",
    "STATUSES",
    "Field",
    "Ledger",
    "TaskGroups",
    "ledger_from_rows",
    "ledger_rows",
    "per_task",
    "read_ledger",
]
