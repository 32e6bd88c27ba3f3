"""The only code that touches ledger files: reading, validating and (later) storing attempts."""

from trialbook.ledger._fields import FIELDS, REQUIRED, STATUSES, Field
from trialbook.ledger._read import read_ledger
from trialbook.ledger._table import Ledger, TaskGroups, per_task

__all__ = [
    "FIELDS",
    "REQUIRED",
    "STATUSES",
    "Field",
    "Ledger",
    "TaskGroups",
    "per_task",
    "read_ledger",
]
