"""The only code that touches ledgers: the fields and rules, the in-memory :class:`Ledger` and its
query API, row <-> Ledger conversion, the file formats (a registry by suffix) and the SQLite store.

Layout: ``_fields`` (the contract), ``_table`` (Ledger, TaskTable), ``_rules`` (check_rules),
``_rows`` (row dicts <-> Ledger), ``formats/`` (one module per format, the registry), ``store/``
(schema and migrations, runs, attempts, imports). The store and the formats depend on the rows and
the table, never the reverse.
"""

from trialbook.ledger._checks import CheckVerdict, checks_from_grader, checks_text, read_checks
from trialbook.ledger._fields import FIELDS, NOT_RECORDABLE, PROTOCOLS, REQUIRED, STATUSES, Field
from trialbook.ledger._provenance import Completion, Provenance, SourceFile
from trialbook.ledger._rows import ledger_from_rows, ledger_rows, ledger_tuples
from trialbook.ledger._table import Ledger, TaskGroups, TaskTable, per_task
from trialbook.ledger._tally import Known, RunTally, Tallies, TallyOfLedger, tally_ledger
from trialbook.ledger.formats import (
    EXPORT_FORMATS,
    FORMATS,
    ExportFormat,
    Format,
    open_tallies,
    read_ledger,
    write_ledger,
    write_ledger_file,
)
from trialbook.ledger.store import (
    LedgerStore,
    Prepared,
    RunRecord,
    RunStatus,
    import_files,
    now,
    prepare,
)

__all__ = [
    "EXPORT_FORMATS",
    "FIELDS",
    "FORMATS",
    "NOT_RECORDABLE",
    "PROTOCOLS",
    "REQUIRED",
    "STATUSES",
    "CheckVerdict",
    "Completion",
    "ExportFormat",
    "Field",
    "Format",
    "Known",
    "Ledger",
    "LedgerStore",
    "Prepared",
    "Provenance",
    "RunRecord",
    "RunStatus",
    "RunTally",
    "SourceFile",
    "Tallies",
    "TallyOfLedger",
    "TaskGroups",
    "TaskTable",
    "checks_from_grader",
    "checks_text",
    "import_files",
    "ledger_from_rows",
    "ledger_rows",
    "ledger_tuples",
    "now",
    "open_tallies",
    "per_task",
    "prepare",
    "read_checks",
    "read_ledger",
    "tally_ledger",
    "write_ledger",
    "write_ledger_file",
]
