"""Every call of an attempt kept as one JSON line: what was asked, what came back, what it used.

Credentials never reach the file: the Authorization, x-api-key and cookie headers are written as
``[redacted]``, and every string that is the real key or looks like a gateway token is replaced
in the whole line (bodies included, where an agent may have pasted one). Bodies are bounded
(``body_limit`` characters each, the cut said in ``*_cut``) and so is the file (``file_limit``
bytes: past it, one last line says so and later calls are counted but not kept).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from trialbook.gateway._tokens import TOKEN_PATTERN, TOKEN_PREFIX

__all__ = ["REDACTED", "CallLog", "bounded_text", "redacted_headers"]

REDACTED = "[redacted]"
_REDACTED_BYTES = REDACTED.encode()
_BLOCK = 64 << 10
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "cookie", "proxy-authorization"})
_TOKEN_BYTES = re.compile(TOKEN_PATTERN.pattern.encode())
_TOKEN_PREFIX = TOKEN_PREFIX.encode()


def bounded_text(body: bytes, limit: int, secrets: tuple[bytes, ...]) -> tuple[str, str | None]:
    """A body as redacted text of at most ``limit`` characters, and what the cut left out.
    ``secrets``: the forms of the real key (:func:`_forms`)."""
    # redact a little past the limit, so that a secret straddling the cut is still whole
    cap = limit * 4 + max(map(len, secrets), default=0) + 64
    text = _redact(body[:cap], secrets).decode("utf-8", "replace")
    if len(body) <= cap and len(text) <= limit:
        return text, None
    return text[:limit], f"kept the first {limit} characters of {len(body)} bytes"


def _forms(secret: str) -> tuple[bytes, ...]:
    """The secret as it may stand in bytes: raw, and escaped inside a JSON string."""
    if not secret:
        return ()
    raw = secret.encode()
    escaped = orjson.dumps(secret)[1:-1]
    return (raw,) if escaped == raw else (raw, escaped)


def _redact(data: bytes, secrets: tuple[bytes, ...]) -> bytes:
    """``data`` with every form of the secret and everything shaped like a gateway token
    blanked. Done on bytes: the patterns are ASCII, so they match the same text before and after
    decoding (a byte that is not UTF-8 never takes an ASCII byte with it)."""
    for secret in secrets:
        if secret in data:
            data = data.replace(secret, _REDACTED_BYTES)
    if _TOKEN_PREFIX in data:
        data = _TOKEN_BYTES.sub(_REDACTED_BYTES, data)
    return data


def redacted_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {str(k): REDACTED if k.lower() in _SECRET_HEADERS else v for k, v in headers.items()}


class CallLog:
    """The JSONL file of one attempt's calls (appended from the gateway's thread)."""

    def __init__(
        self, path: Path, *, secret: str, body_limit: int = 65_536, file_limit: int = 16 << 20
    ) -> None:
        self.path = path
        self.secret = secret
        self._secrets = _forms(secret)
        self.body_limit = body_limit
        self.file_limit = file_limit
        self._written = 0
        self._full = False
        self.error: str | None = None
        """Why the log stopped early (a write failed), or None."""
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        # written in blocks, not a line at a time (a write per call was a tenth of the gateway's
        # CPU per streamed call); the attempt's close writes out the rest
        self._file: BinaryIO | None = path.open("ab", buffering=_BLOCK)

    def body(self, data: bytes) -> tuple[str, str | None]:
        return bounded_text(data, self.body_limit, self._secrets)

    def write(self, record: Mapping[str, Any]) -> None:
        line = _redact(orjson.dumps(record), self._secrets) + b"\n"
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
            except OSError as exc:  # a full disk stops the log, never the call
                self._stop(exc)
            self._written += len(line)

    def _stop(self, exc: OSError) -> None:
        self.error = f"the call log stopped: {exc.strerror or exc}"
        self._full = True

    def close(self) -> None:
        """Write out what is buffered and close the file (a failure is kept in ``error``)."""
        with self._lock:
            if self._file is not None:
                file, self._file = self._file, None
                try:
                    file.close()
                except OSError as exc:
                    self._stop(exc)
