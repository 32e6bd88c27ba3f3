"""Results to table / markdown / JSON. Renderers compute no statistics."""

from trialbook.report._score import (
    SCORE_SCHEMA,
    render_plain,
    score_markdown,
    score_table,
    score_to_dict,
    to_json,
)

__all__ = [
    "SCORE_SCHEMA",
    "render_plain",
    "score_markdown",
    "score_table",
    "score_to_dict",
    "to_json",
]
