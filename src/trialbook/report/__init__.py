"""Results to table / markdown / JSON / HTML with SVG plots. Renderers compute no statistics."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trialbook.report._board import BOARD_SCHEMA, board_markdown, board_table, board_to_dict
    from trialbook.report._board_html import board_html
    from trialbook.report._budget import (
        BUDGET_SCHEMA,
        budget_markdown,
        budget_table,
        budget_to_dict,
    )
    from trialbook.report._compare import (
        COMPARE_SCHEMA,
        compare_markdown,
        compare_table,
        compare_text,
        compare_to_dict,
    )
    from trialbook.report._harness import (
        GRADER_CHECK_SCHEMA,
        SUITE_CHECK_SCHEMA,
        grader_check_text,
        grader_check_to_dict,
        lock_check_text,
        lock_check_to_dict,
        lock_text,
        run_text,
    )
    from trialbook.report._html import compare_html, report_html, score_html
    from trialbook.report._json import to_json
    from trialbook.report._passk import PASSK_SCHEMA, passk_json, passk_text, passk_to_dict
    from trialbook.report._plan import PLAN_SCHEMA, plan_text, plan_to_dict
    from trialbook.report._printable import json_printable, printable
    from trialbook.report._race import (
        RACE_SCHEMA,
        SEQUENTIAL_SCHEMA,
        race_look_line,
        race_text,
        race_to_dict,
        sequential_text,
        sequential_to_dict,
    )
    from trialbook.report._rich import printable_renderable
    from trialbook.report._runs import RUNS_SCHEMA, runs_text, runs_to_dict
    from trialbook.report._score import SCORE_SCHEMA, score_to_dict
    from trialbook.report._score_markdown import score_markdown
    from trialbook.report._score_terminal import score_table
    from trialbook.report._views import headline, render_plain
    from trialbook.report._wrap import wrap

__all__ = [
    "BOARD_SCHEMA",
    "BUDGET_SCHEMA",
    "COMPARE_SCHEMA",
    "GRADER_CHECK_SCHEMA",
    "PASSK_SCHEMA",
    "PLAN_SCHEMA",
    "RACE_SCHEMA",
    "RUNS_SCHEMA",
    "SCORE_SCHEMA",
    "SEQUENTIAL_SCHEMA",
    "SUITE_CHECK_SCHEMA",
    "board_html",
    "board_markdown",
    "board_table",
    "board_to_dict",
    "budget_markdown",
    "budget_table",
    "budget_to_dict",
    "compare_html",
    "compare_markdown",
    "compare_table",
    "compare_text",
    "compare_to_dict",
    "grader_check_text",
    "grader_check_to_dict",
    "headline",
    "json_printable",
    "lock_check_text",
    "lock_check_to_dict",
    "lock_text",
    "passk_json",
    "passk_text",
    "passk_to_dict",
    "plan_text",
    "plan_to_dict",
    "printable",
    "printable_renderable",
    "race_look_line",
    "race_text",
    "race_to_dict",
    "render_plain",
    "report_html",
    "run_text",
    "runs_text",
    "runs_to_dict",
    "score_html",
    "score_markdown",
    "score_table",
    "score_to_dict",
    "sequential_text",
    "sequential_to_dict",
    "to_json",
    "wrap",
]

# each renderer's module is imported when first asked for: `score --format json` needs neither
# rich nor the HTML and plot modules
_LAZY: dict[str, str] = {
    **dict.fromkeys(("BOARD_SCHEMA", "board_markdown", "board_table", "board_to_dict"), "_board"),
    "board_html": "_board_html",
    **dict.fromkeys(
        ("BUDGET_SCHEMA", "budget_markdown", "budget_table", "budget_to_dict"), "_budget"
    ),
    **dict.fromkeys(
        ("COMPARE_SCHEMA", "compare_markdown", "compare_table", "compare_text", "compare_to_dict"),
        "_compare",
    ),
    **dict.fromkeys(
        (
            "GRADER_CHECK_SCHEMA",
            "SUITE_CHECK_SCHEMA",
            "grader_check_text",
            "grader_check_to_dict",
            "lock_check_text",
            "lock_check_to_dict",
            "lock_text",
            "run_text",
        ),
        "_harness",
    ),
    **dict.fromkeys(("compare_html", "report_html", "score_html"), "_html"),
    **dict.fromkeys(("to_json",), "_json"),
    **dict.fromkeys(("PASSK_SCHEMA", "passk_json", "passk_text", "passk_to_dict"), "_passk"),
    **dict.fromkeys(("PLAN_SCHEMA", "plan_text", "plan_to_dict"), "_plan"),
    **dict.fromkeys(("json_printable", "printable"), "_printable"),
    **dict.fromkeys(("printable_renderable",), "_rich"),
    **dict.fromkeys(
        (
            "RACE_SCHEMA",
            "SEQUENTIAL_SCHEMA",
            "race_look_line",
            "race_text",
            "race_to_dict",
            "sequential_text",
            "sequential_to_dict",
        ),
        "_race",
    ),
    **dict.fromkeys(("RUNS_SCHEMA", "runs_text", "runs_to_dict"), "_runs"),
    **dict.fromkeys(("SCORE_SCHEMA", "score_to_dict"), "_score"),
    **dict.fromkeys(("score_markdown",), "_score_markdown"),
    **dict.fromkeys(("score_table",), "_score_terminal"),
    **dict.fromkeys(("headline", "render_plain"), "_views"),
    **dict.fromkeys(("wrap",), "_wrap"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trialbook.report' has no attribute {name!r}")
    value = getattr(import_module(f"trialbook.report.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
