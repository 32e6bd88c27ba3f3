"""The environment every sandboxed command starts from."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["base_env"]


def base_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The fresh environment every sandboxed command starts from (nothing of the harness's own).

    PATH starts with the folder of the Python running trialbook, so ``python`` is that interpreter.
    """
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.update(extra or {})
    return env
