"""Open an HTML page in headless Chromium, kept off the network, and report what happened.

The DevTools protocol runs over ``--remote-debugging-pipe`` (file descriptors 3 and 4, messages
ended by a NUL byte), so no port is opened and no websocket client is needed. What is watched:
every request the page makes (``Network.requestWillBeSent``), every console message and log entry
with its level (``Runtime.consoleAPICalled``, ``Log.entryAdded``), uncaught exceptions
(``Runtime.exceptionThrown``); and a PNG screenshot is taken once the page has loaded.

Also the command that makes the README's screenshot (``make screenshot``)::

    python -m tests.report.browser PAGE.html OUT.png [--width 1280] [--height 1500]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# what keeps Chromium off the network and out of the user's profile; as root it needs --no-sandbox
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


def chromium() -> str | None:
    """The Chromium executable (Debian's ``chromium``), or None."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageVisit:
    """What opening one page did."""

    requests: list[str] = field(default_factory=list)
    """Every URL the page requested (the page itself included)."""
    console: list[tuple[str, str]] = field(default_factory=list)
    """(level, text) of every console message, log entry and uncaught exception."""
    png: bytes = b""
    """The screenshot."""
    value: Any = None
    """What ``evaluate`` returned (JSON-shaped), when it was given."""

    @property
    def errors(self) -> list[str]:
        """Console messages at level error (and uncaught exceptions)."""
        return [text for level, text in self.console if level in ("error", "exception")]

    @property
    def remote_requests(self) -> list[str]:
        """Requests that would leave the machine: anything but the page's own file: and data: URLs."""
        return [u for u in self.requests if not u.startswith(("file:", "data:", "about:"))]


class _Pipe:
    """The DevTools protocol over Chromium's debugging pipe: commands out, responses and events in."""

    def __init__(self, to_browser: int, from_browser: int) -> None:
        self.out, self.inp = to_browser, from_browser
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self.inp], [], [], left)
            if ready:
                chunk = os.read(self.inp, 1 << 20)
                if not chunk:
                    raise ConnectionError("Chromium closed its debugging pipe")
                self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def call(
        self, method: str, session: str | None = None, timeout: float = 30, **params: Any
    ) -> Any:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read(deadline))

    def drain(self, seconds: float) -> None:
        """Collect the events that arrive within ``seconds`` (late requests, console messages)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._read(deadline))
        except TimeoutError:
            pass


def visit(
    page: Path,
    *,
    width: int = 1280,
    height: int = 900,
    full_page: bool = False,
    evaluate: str | None = None,
) -> PageVisit:
    """Open ``page`` (a local file) in headless Chromium and record what happened; with
    ``evaluate``, run that JavaScript expression in the loaded page and keep its value."""
    exe = chromium()
    if exe is None:
        raise FileNotFoundError("chromium is not installed (.ci/run installs it)")
    profile = Path(tempfile.mkdtemp(prefix="trialbook-chromium-"))
    to_r, to_w = os.pipe()  # we write commands, Chromium reads them on fd 3
    from_r, from_w = os.pipe()  # Chromium writes on fd 4, we read

    def fds() -> None:  # in the child, before exec: the two pipe ends at 3 and 4
        os.dup2(to_r, 3)
        os.dup2(from_w, 4)

    proc = subprocess.Popen(
        [exe, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"],
        preexec_fn=fds,
        pass_fds=(3, 4),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(to_r)
    os.close(from_w)
    pipe = _Pipe(to_w, from_r)
    result = PageVisit()
    try:
        target = pipe.call("Target.createTarget", url="about:blank")["targetId"]
        session = pipe.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            pipe.call(f"{domain}.enable", session)
        pipe.call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        pipe.call("Page.navigate", session, url=page.resolve().as_uri())
        pipe.wait_for("Page.loadEventFired")
        pipe.drain(0.5)
        shot = pipe.call(
            "Page.captureScreenshot", session, format="png", captureBeyondViewport=full_page
        )
        result.png = base64.b64decode(shot["data"])
        if evaluate is not None:
            done = pipe.call("Runtime.evaluate", session, expression=evaluate, returnByValue=True)
            result.value = done.get("result", {}).get("value")
        pipe.drain(0.2)
    finally:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError, ConnectionError):
            pipe.call("Browser.close", timeout=5)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(to_w)
        os.close(from_r)
        shutil.rmtree(profile, ignore_errors=True)
    for event in pipe.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Network.requestWillBeSent":
            result.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(
                str(a.get("value", a.get("description", ""))) for a in params.get("args", [])
            )
            result.console.append((params.get("type", ""), text))
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            result.console.append((entry.get("level", ""), entry.get("text", "")))
        elif method == "Runtime.exceptionThrown":
            result.console.append(
                ("exception", str(params.get("exceptionDetails", {}).get("text")))
            )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Screenshot a local HTML page in headless Chromium."
    )
    parser.add_argument("page", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1500)
    args = parser.parse_args()
    seen = visit(args.page, width=args.width, height=args.height)
    if seen.errors or seen.remote_requests:
        raise SystemExit(f"console errors {seen.errors}, remote requests {seen.remote_requests}")
    args.png.write_bytes(seen.png)
    print(f"wrote {args.png} ({len(seen.png):,} bytes)")


if __name__ == "__main__":
    main()
