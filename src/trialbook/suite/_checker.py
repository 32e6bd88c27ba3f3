"""The problem collector of a suite's loading: every problem of every file as ``file: key: message``,
refused together (docs/suites.md)."""

from __future__ import annotations

import difflib
import math
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["Checker"]


class Checker:
    """Collects problems as ``file: key: message`` lines."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def toml(self, path: Path) -> dict[str, Any] | None:
        """The TOML file at ``path``, or None with the problem noted (missing, not TOML, not
        UTF-8)."""
        if not path.is_file():
            self.add(path, None, "missing file")
            return None
        try:
            return tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            self.add(path, None, f"not valid TOML: {exc}")
        except UnicodeDecodeError as exc:
            self.add(path, None, f"not UTF-8 text: {exc.reason}")
        return None

    def add(self, where: Path | str, key: str | None, message: str) -> None:
        self.problems.append(f"{where}: {key}: {message}" if key else f"{where}: {message}")

    def unknown(self, where: Path, data: Mapping[str, Any], allowed: Mapping[str, str]) -> None:
        for key in data:
            if key not in allowed:
                hint = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.7)
                extra = f" (did you mean {hint[0]!r}?)" if hint else ""
                self.add(where, key, f"unknown key{extra}; allowed: {', '.join(sorted(allowed))}")

    def number(
        self, where: Path, data: Mapping[str, Any], key: str, *, low: float, open_low: bool
    ) -> float | None:
        if key not in data:
            return None
        value = data[key]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            self.add(where, key, f"expected a number, got {value!r}")
            return None
        if value < low or (open_low and value == low):
            self.add(where, key, f"must be {'>' if open_low else '>='} {low:g}, got {value!r}")
            return None
        return float(value)

    def count(self, where: Path, data: Mapping[str, Any], key: str) -> int | None:
        """A whole number > 0 (a size or a count), None when absent or refused."""
        if key not in data:
            return None
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.add(where, key, f"expected a whole number > 0, got {value!r}")
            return None
        return value

    def text(self, where: Path, data: Mapping[str, Any], key: str) -> str | None:
        if key not in data:
            return None
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            self.add(where, key, f"expected a non-empty string, got {value!r}")
            return None
        return value
