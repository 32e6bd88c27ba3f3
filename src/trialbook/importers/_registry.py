"""The importers by name, and which one a path belongs to."""

from __future__ import annotations

from pathlib import Path

from trialbook.errors import ArgumentError
from trialbook.importers._base import Importer

__all__ = ["detect_source", "get_importer", "importer_names", "register"]

_IMPORTERS: dict[str, Importer] = {}


def register(importer: Importer) -> Importer:
    """Add an importer under its name; a second importer of the same name is a programming error."""
    if not isinstance(importer, Importer):
        raise TypeError(f"{importer!r} does not implement the Importer protocol")
    if importer.name in _IMPORTERS:
        raise ValueError(f"an importer named {importer.name!r} is already registered")
    _IMPORTERS[importer.name] = importer
    return importer


def importer_names() -> tuple[str, ...]:
    """Registered names, sorted."""
    return tuple(sorted(_IMPORTERS))


def get_importer(name: str) -> Importer:
    """The importer called ``name``; ArgumentError (argument ``source``) listing the known ones."""
    try:
        return _IMPORTERS[name]
    except KeyError:
        known = ", ".join(importer_names()) or "none yet"
        raise ArgumentError(
            f"source {name!r} is not a known importer (known: {known})", argument="source"
        ) from None


def detect_source(path: Path) -> Importer | None:
    """The one importer that recognises ``path``, or None; two that both claim it is ambiguous."""
    claims = [imp for imp in _IMPORTERS.values() if imp.detect(path)]
    if len(claims) > 1:
        names = ", ".join(sorted(imp.name for imp in claims))
        raise ArgumentError(
            f"{path}: could be read by several importers ({names}); name the source",
            argument="source",
        )
    return claims[0] if claims else None
