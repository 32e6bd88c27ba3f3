"""The gateway as the harness uses it: start it for a run, open and close one attempt at a time."""

from __future__ import annotations

import threading
from pathlib import Path
from types import TracebackType

from trialbook.errors import ArgumentError
from trialbook.gateway._budget import Budgets
from trialbook.gateway._log import CallLog
from trialbook.gateway._meter import AttemptUsage, Meter
from trialbook.gateway._prices import Prices
from trialbook.gateway._proxy import Attempt, Proxy, Upstreams
from trialbook.gateway._server import ServerThread, low_level_server
from trialbook.gateway._tokens import TokenRegistry

__all__ = ["ENV_NAMES", "Gateway"]

ENV_NAMES = (
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_KEY",
    "TRIALBOOK_MODEL_URL",
)
"""The environment variables :meth:`Gateway.open_attempt` gives an attempt."""


class Gateway:
    """A reverse proxy for the OpenAI and Anthropic APIs, one address and token per attempt.

    ``upstream_openai`` and ``upstream_anthropic`` are base URLs as a client would set them
    (``https://api.openai.com/v1``, ``https://api.anthropic.com``); either may be None (that API is
    then answered 404). ``key`` is the real key: it is sent to the upstream and nowhere else.
    ``unix_socket``: also listen on this path (for sandboxes that reach the host by a socket).
    ``host``: the address to listen on (127.0.0.1; a cluster's driver gives its node's address, so
    that attempts on other nodes reach it: the per-attempt tokens are then all that guards it).

    Use as a context manager, or call :meth:`start` and :meth:`stop`.
    """

    def __init__(
        self,
        upstream_openai: str | None,
        upstream_anthropic: str | None,
        key: str,
        prices: Prices | None = None,
        budgets: Budgets | None = None,
        *,
        unix_socket: Path | None = None,
        host: str = "127.0.0.1",
        read_timeout_s: float = 600.0,
        close_wait_s: float = 5.0,
        log_body_limit: int = 65_536,
        log_file_limit: int = 16 << 20,
    ) -> None:
        for name, url in (
            ("upstream_openai", upstream_openai),
            ("upstream_anthropic", upstream_anthropic),
        ):
            if url is not None and not url.startswith(("http://", "https://")):
                raise ArgumentError(
                    f"{name}: must be an http:// or https:// URL, got {url!r}", argument=name
                )
        if upstream_openai is None and upstream_anthropic is None:
            raise ArgumentError(
                "upstream_openai, upstream_anthropic: give at least one", argument="upstream_openai"
            )
        if not key:
            raise ArgumentError("key: the upstream's API key is empty", argument="key")
        if any(c <= " " or c == "\x7f" for c in key):
            # sent as a header value: a line break in it would end the header (a key read
            # from a file keeps the file's last newline)
            raise ArgumentError(
                "key: the upstream's API key holds a space, a line break or another control "
                "character (a trailing newline from the file it was read from?)",
                argument="key",
            )
        if not read_timeout_s > 0:
            raise ArgumentError(
                f"read_timeout_s: must be > 0, got {read_timeout_s!r}", argument="read_timeout_s"
            )
        self.prices = prices if prices is not None else Prices()
        self.budgets = budgets if budgets is not None else Budgets()
        self._key = key
        self._close_wait_s = close_wait_s
        self._log_limits = (log_body_limit, log_file_limit)
        self._registry = TokenRegistry()
        self._lock = threading.Lock()
        self._open: dict[str, Attempt] = {}  # slug -> attempt
        self._slugs: dict[str, str] = {}  # the harness's attempt key -> slug
        self._proxy = Proxy(
            Upstreams(upstream_openai, upstream_anthropic, key, read_timeout_s),
            self._registry,
            self._lookup,
            self.budgets,
        )
        self._server = ServerThread(
            lambda: low_level_server(self._proxy.handle, client_max_size=64 << 20),
            on_start=self._proxy.open,
            on_stop=self._proxy.close,
            host=host,
            unix_socket=unix_socket,
        )

    def _lookup(self, slug: str) -> Attempt | None:
        with self._lock:
            return self._open.get(slug)

    # -- life cycle -----------------------------------------------------------------------------

    def start(self) -> Gateway:
        """Listen (``host``, an ephemeral port; and the unix socket, if given). Returns self."""
        self._server.start()
        return self

    def stop(self) -> None:
        """Close every open attempt's log and stop listening."""
        with self._lock:
            attempts = list(self._open.values())
            self._open.clear()
            self._slugs.clear()
        for attempt in attempts:
            if attempt.log is not None:
                attempt.log.close()
        self._server.stop()

    def __enter__(self) -> Gateway:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` once started."""
        return self._server.url

    @property
    def unix_socket(self) -> Path | None:
        return self._server.unix_socket

    @property
    def refused_unattributed(self) -> int:
        """Refused calls at the address of no open attempt (unknown, or an attempt that ended)."""
        return self._registry.refused_unattributed

    # -- attempts -------------------------------------------------------------------------------

    def open_attempt(self, key: str, *, log: Path | None = None) -> dict[str, str]:
        """Issue an address and token for attempt ``key``; the environment its agent gets.

        ``log``: keep every call of the attempt in this JSONL file (docs/gateway.md, "Call log").
        """
        if self._server.port == 0:
            raise RuntimeError("the gateway is not started")
        with self._lock:
            if key in self._slugs:
                raise ArgumentError(f"key: attempt {key!r} is already open", argument="key")
        issued = self._registry.issue()
        call_log = (
            CallLog(
                log,
                secret=self._key,
                body_limit=self._log_limits[0],
                file_limit=self._log_limits[1],
            )
            if log is not None
            else None
        )
        attempt = Attempt(Meter(self.prices, log=str(log) if log is not None else None), call_log)
        with self._lock:
            self._open[issued.slug] = attempt
            self._slugs[key] = issued.slug
        root = f"{self.url}/a/{issued.slug}"
        return {
            "OPENAI_BASE_URL": f"{root}/openai/v1",
            "OPENAI_API_KEY": issued.token,
            "ANTHROPIC_BASE_URL": f"{root}/anthropic",
            "ANTHROPIC_API_KEY": issued.token,
            "TRIALBOOK_MODEL_URL": root,
        }

    def close_attempt(self, key: str) -> AttemptUsage:
        """Revoke attempt ``key``'s token and return what it used.

        Calls still in flight are waited for (up to ``close_wait_s``), so that their usage counts.
        The call log is closed (its buffer written out): a write that failed is in ``log_error``.
        """
        with self._lock:
            slug = self._slugs.pop(key, None)
            attempt = self._open.get(slug) if slug is not None else None
        if slug is None or attempt is None:
            raise ArgumentError(f"key: no open attempt {key!r}", argument="key")
        self._registry.revoke(slug)
        attempt.meter.wait_idle(self._close_wait_s)
        with self._lock:
            self._open.pop(slug, None)
        if attempt.log is None:
            return attempt.meter.usage()
        attempt.log.close()
        return attempt.meter.usage(log_error=attempt.log.error)
