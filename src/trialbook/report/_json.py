"""JSON output shared by every report: unknown values become null, text via orjson."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["json_safe", "to_json"]


def json_safe(value: Any) -> Any:
    """JSON-safe: NaN and infinity become null (unknown), tuples lists."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def to_json(doc: dict[str, Any]) -> str:
    """Indented JSON text (orjson: NaN would become null, keys keep their order), with every
    character a terminal could act on escaped as ``\\uXXXX`` (the same JSON value)."""
    import orjson

    from trialbook.report._printable import json_printable

    return json_printable(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
