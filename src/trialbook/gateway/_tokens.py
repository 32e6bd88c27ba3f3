"""Per-attempt tokens: issued when an attempt starts, revoked when it ends.

An attempt reaches the gateway at its own path (``/a/<slug>/...``) with its own token; the real
key stays in the gateway. A call is let through only when its path names an open attempt and it
presents that attempt's token; anything else (an unknown or revoked token, another attempt's token,
a path of an attempt that has ended) is refused, and the refusal is counted on the attempt whose
path was called, or on the gateway when that attempt is not open.
"""

from __future__ import annotations

import hmac
import re
import secrets
import threading
from dataclasses import dataclass
from enum import Enum

__all__ = ["TOKEN_PATTERN", "TOKEN_PREFIX", "Check", "TokenRegistry", "new_token"]

TOKEN_PREFIX = "tb-gw-"
TOKEN_PATTERN = re.compile(re.escape(TOKEN_PREFIX) + r"[A-Za-z0-9_-]{43}")
"""Every token the gateway issues has this shape (the call log redacts anything that matches)."""


def new_token() -> str:
    """A fresh token: 256 random bits."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class Check(Enum):
    """The verdict on one call's credentials."""

    OK = "ok"
    NO_ATTEMPT = "no open attempt at this address"
    BAD_TOKEN = "not this attempt's token"


@dataclass(frozen=True)
class Issued:
    """The credentials of one attempt."""

    slug: str
    """The attempt's path segment (random; reveals nothing of the attempt's key)."""
    token: str


class TokenRegistry:
    """Which slugs and tokens are open. Thread-safe: the harness opens, the server checks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, str] = {}  # slug -> token
        self.refused_unattributed = 0
        """Refused calls at the address of no open attempt (unknown or ended)."""

    def issue(self) -> Issued:
        with self._lock:
            slug = secrets.token_hex(8)
            while slug in self._open:  # pragma: no cover - 64 random bits
                slug = secrets.token_hex(8)
            issued = Issued(slug, new_token())
            self._open[slug] = issued.token
            return issued

    def revoke(self, slug: str) -> None:
        with self._lock:
            self._open.pop(slug, None)

    def check(self, slug: str, presented: str | None) -> Check:
        with self._lock:
            token = self._open.get(slug)
            if token is None:
                self.refused_unattributed += 1
                return Check.NO_ATTEMPT
        if presented is None or not hmac.compare_digest(presented.encode(), token.encode()):
            return Check.BAD_TOKEN
        return Check.OK
