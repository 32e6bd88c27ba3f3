"""Every call of an attempt kept as one JSON line: what was asked, what came back, what it used.

Credentials never reach the file: the Authorization, x-api-key and cookie headers are written as
``[redacted]``, and every string that is the real key or looks like a gateway token is replaced
in the whole line (bodies included, where an agent may have pasted one). Bodies are bounded
(``body_limit`` characters each, the cut said in ``*_cut``) and so is the file (``file_limit``
bytes: past it, one last line says so and later calls are counted but not kept).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from trialbook.gateway._tokens import TOKEN_PATTERN

__all__ = ["REDACTED", "CallLog", "bounded_text", "redacted_headers"]

REDACTED = "[redacted]"
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "cookie", "proxy-authorization"})


def bounded_text(body: bytes, limit: int, secret: str) -> tuple[str, str | None]:
    """A body as redacted text of at most ``limit`` characters, and what the cut left out."""
    # decode a little past the limit, so that a secret straddling the cut is still whole
    cap = limit * 4 + len(secret) + 64
    text = _redact(body[:cap].decode("utf-8", "replace"), secret)
    if len(body) <= cap and len(text) <= limit:
        return text, None
    return text[:limit], f"kept the first {limit} characters of {len(body)} bytes"


def _redact(text: str, secret: str) -> str:
    if secret:
        text = text.replace(secret, REDACTED)
    return TOKEN_PATTERN.sub(REDACTED, text)


def redacted_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {str(k): REDACTED if k.lower() in _SECRET_HEADERS else v for k, v in headers.items()}


class CallLog:
    """The JSONL file of one attempt's calls (appended from the gateway's thread)."""

    def __init__(
        self, path: Path, *, secret: str, body_limit: int = 65_536, file_limit: int = 16 << 20
    ) -> None:
        self.path = path
        self.secret = secret
        self.body_limit = body_limit
        self.file_limit = file_limit
        self._written = 0
        self._full = False
        self.error: str | None = None
        """Why the log stopped early (a write failed), or None."""
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: BinaryIO | None = path.open("ab")

    def body(self, data: bytes) -> tuple[str, str | None]:
        return bounded_text(data, self.body_limit, self.secret)

    def write(self, record: Mapping[str, Any]) -> None:
        line = _redact(orjson.dumps(record).decode(), self.secret).encode() + b"\n"
        with self._lock:
            if self._file is None or self._full:
                return
            if self._written + len(line) > self.file_limit:
                self._full = True
                line = (
                    orjson.dumps(
                        {
                            "cut": f"the log reached its limit of {self.file_limit} bytes; "
                            "later calls of this attempt are counted but not kept"
                        }
                    )
                    + b"\n"
                )
            try:
                self._file.write(line)
                self._file.flush()
            except OSError as exc:  # a full disk stops the log, never the call
                self.error = f"the call log stopped: {exc.strerror}"
                self._full = True
            self._written += len(line)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
