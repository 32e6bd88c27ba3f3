"""The SQLite ledger store: schema and migrations, runs and their events, attempts, imports."""

from trialbook.ledger.store._files import import_files, read_store
from trialbook.ledger.store._races import RACE_EVENTS, RaceRecord, RaceStatus
from trialbook.ledger.store._records import RUN_EVENTS, RunRecord, RunStatus, now
from trialbook.ledger.store._scan import StoreTallies
from trialbook.ledger.store._schema import MIGRATIONS, SCHEMA_VERSION
from trialbook.ledger.store._store import LedgerStore
from trialbook.ledger.store._writer import Prepared, insert_params, prepare

__all__ = [
    "MIGRATIONS",
    "RACE_EVENTS",
    "RUN_EVENTS",
    "SCHEMA_VERSION",
    "LedgerStore",
    "Prepared",
    "RaceRecord",
    "RaceStatus",
    "RunRecord",
    "RunStatus",
    "StoreTallies",
    "import_files",
    "insert_params",
    "now",
    "prepare",
    "read_store",
]
