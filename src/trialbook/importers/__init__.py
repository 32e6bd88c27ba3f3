"""Importers: other harnesses' result files -> ledger rows and a run record.

One private module per source, each an :class:`Importer` registered here by name: ``inspect``
(Inspect AI logs, through inspect-ai's reader: the ``trialbook[inspect]`` extra), ``tau-bench``,
``tau2-bench``, ``terminal-bench``, ``swe-bench`` and ``harbor`` (job folders). Each reads the structure its producer
documents, invents nothing (a required field the source never recorded is stored as not recorded)
and says in the run's notes what the source dropped and how its publisher's figure differs.
:func:`read_source` turns files into one validated :class:`~trialbook.ledger.Ledger`; ``jsonl`` and
``csv`` are our own interchange formats, read by :mod:`trialbook.ledger`. See docs/importers.md.
"""

from trialbook.importers._api import LEDGER_SOURCES, imported_ledger, read_runs, read_source
from trialbook.importers._base import ImportedRun, Importer, ImportOptions, SourceFile
from trialbook.importers._harbor import HARBOR
from trialbook.importers._inspect import INSPECT
from trialbook.importers._registry import detect_source, get_importer, importer_names, register
from trialbook.importers._swebench import SWE_BENCH
from trialbook.importers._tau2bench import TAU2_BENCH
from trialbook.importers._taubench import TAU_BENCH
from trialbook.importers._terminalbench import TERMINAL_BENCH

for _importer in (INSPECT, TAU_BENCH, TAU2_BENCH, TERMINAL_BENCH, SWE_BENCH, HARBOR):
    register(_importer)

__all__ = [
    "LEDGER_SOURCES",
    "ImportOptions",
    "ImportedRun",
    "Importer",
    "SourceFile",
    "detect_source",
    "get_importer",
    "imported_ledger",
    "importer_names",
    "read_runs",
    "read_source",
    "register",
]
