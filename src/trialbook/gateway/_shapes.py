"""The gateway's own answers, each in the shape the API it stands in for would give.

The clients (the ``openai`` and ``anthropic`` packages, and anything written against the APIs)
then raise their usual errors: an authentication error for a refused token, a rate-limit error
for a spent budget. ``x-should-retry: false`` tells the official clients not to retry a refusal
that no retry can change.
"""

from __future__ import annotations

import orjson
from aiohttp import web

__all__ = ["api_error"]

# (api, kind) -> (OpenAI error type and code, Anthropic error type)
_KINDS = {
    "auth": ("invalid_request_error", "invalid_api_key", "authentication_error"),
    "budget": ("insufficient_quota", "insufficient_quota", "rate_limit_error"),
    "not_found": ("invalid_request_error", "not_found", "not_found_error"),
    "bad_request": ("invalid_request_error", None, "invalid_request_error"),
    "upstream": ("server_error", None, "api_error"),
}


def api_error(api: str, status: int, kind: str, message: str) -> web.Response:
    """An error answer of ``api`` (``openai`` or ``anthropic``)."""
    openai_type, code, anthropic_type = _KINDS[kind]
    if api == "anthropic":
        body = {"type": "error", "error": {"type": anthropic_type, "message": message}}
    else:
        body = {"error": {"message": message, "type": openai_type, "param": None, "code": code}}
    headers = {"Content-Type": "application/json"}
    if kind in ("auth", "budget", "not_found", "bad_request"):
        headers["x-should-retry"] = "false"
    return web.Response(status=status, body=orjson.dumps(body), headers=headers)
