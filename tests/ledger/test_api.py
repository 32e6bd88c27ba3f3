"""The ledger packages export exactly their intended names (the callers outside rely on them)."""

from __future__ import annotations

from trialbook import ledger
from trialbook.ledger import formats, store


def test_the_ledger_package_exports_exactly_its_names() -> None:
    assert set(ledger.__all__) == {
        "EXPORT_FORMATS",
        "FIELDS",
        "FORMATS",
        "REQUIRED",
        "STATUSES",
        "ExportFormat",
        "Field",
        "Format",
        "Ledger",
        "LedgerStore",
        "Prepared",
        "RunRecord",
        "RunStatus",
        "TaskGroups",
        "TaskTable",
        "import_files",
        "ledger_from_rows",
        "ledger_rows",
        "ledger_tuples",
        "now",
        "per_task",
        "prepare",
        "read_ledger",
        "write_ledger",
    }


def test_the_formats_and_store_packages_export_exactly_their_names() -> None:
    assert set(formats.__all__) == {
        "EXPORT_FORMATS",
        "FORMATS",
        "NATIVE_JSONL",
        "ExportFormat",
        "Format",
        "format_named",
        "format_of",
        "read_ledger",
        "write_ledger",
    }
    assert set(store.__all__) == {
        "MIGRATIONS",
        "RUN_EVENTS",
        "SCHEMA_VERSION",
        "LedgerStore",
        "Prepared",
        "RunRecord",
        "RunStatus",
        "import_files",
        "insert_params",
        "now",
        "prepare",
        "read_store",
    }
    for module in (ledger, formats, store):
        for name in module.__all__:
            assert getattr(module, name) is not None, f"{module.__name__}.{name}"
