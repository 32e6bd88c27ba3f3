"""Importers: other harnesses' result files -> ledger rows and a run record.

A room waiting for its tenants (Inspect AI, tau-bench, tau2-bench, Terminal-Bench, SWE-bench,
Harbor): each will be one private module that implements :class:`Importer` and registers itself
here. The registry is empty until then; ``trialbook import jsonl|csv`` reads our own interchange
formats through :mod:`trialbook.ledger`. See docs/architecture.md.
"""

from trialbook.importers._base import ImportedRun, Importer, ImportOptions, SourceFile
from trialbook.importers._registry import detect_source, get_importer, importer_names, register

__all__ = [
    "ImportOptions",
    "ImportedRun",
    "Importer",
    "SourceFile",
    "detect_source",
    "get_importer",
    "importer_names",
    "register",
]
