"""Results to table / markdown / JSON. Renderers compute no statistics."""

from trialbook.report._compare import COMPARE_SCHEMA, compare_text, compare_to_dict
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
from trialbook.report._json import to_json
from trialbook.report._passk import PASSK_SCHEMA, passk_json, passk_text, passk_to_dict
from trialbook.report._plan import PLAN_SCHEMA, plan_text, plan_to_dict
from trialbook.report._race import (
    RACE_SCHEMA,
    SEQUENTIAL_SCHEMA,
    race_look_line,
    race_text,
    race_to_dict,
    sequential_text,
    sequential_to_dict,
)
from trialbook.report._runs import RUNS_SCHEMA, runs_text, runs_to_dict
from trialbook.report._score import (
    SCORE_SCHEMA,
    render_plain,
    score_markdown,
    score_table,
    score_to_dict,
)

__all__ = [
    "COMPARE_SCHEMA",
    "GRADER_CHECK_SCHEMA",
    "PASSK_SCHEMA",
    "PLAN_SCHEMA",
    "RACE_SCHEMA",
    "RUNS_SCHEMA",
    "SCORE_SCHEMA",
    "SEQUENTIAL_SCHEMA",
    "SUITE_CHECK_SCHEMA",
    "compare_text",
    "compare_to_dict",
    "grader_check_text",
    "grader_check_to_dict",
    "lock_check_text",
    "lock_check_to_dict",
    "lock_text",
    "passk_json",
    "passk_text",
    "passk_to_dict",
    "plan_text",
    "plan_to_dict",
    "race_look_line",
    "race_text",
    "race_to_dict",
    "render_plain",
    "run_text",
    "runs_text",
    "runs_to_dict",
    "score_markdown",
    "score_table",
    "score_to_dict",
    "sequential_text",
    "sequential_to_dict",
    "to_json",
]
