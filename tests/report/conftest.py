"""Fixtures of the report's tests."""

from __future__ import annotations

import os

import pytest

from tests.report.browser import chromium


@pytest.fixture
def needs_chromium() -> None:
    """Skip where headless Chromium is missing; under CI fail instead (.ci/run installs it)."""
    if chromium() is None:
        if os.environ.get("CI"):
            pytest.fail(
                "chromium is missing, and CI must run the browser test (.ci/run installs it)"
            )
        pytest.skip("chromium is not installed (apt-get install chromium)")
