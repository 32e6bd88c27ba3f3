"""The importer registry: lookup by name, detection, and the refusals a user meets."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from trialbook import importers
from trialbook.errors import ArgumentError
from trialbook.importers import ImportedRun, ImportOptions


class _Fake:
    def __init__(self, name: str, suffix: str) -> None:
        self.name = name
        self.suffix = suffix

    def detect(self, path: Path) -> bool:
        return path.name.endswith(self.suffix)

    def read(self, paths: Sequence[Path], options: ImportOptions) -> Iterator[ImportedRun]:
        for p in paths:
            yield ImportedRun(
                run_id=options.run_id or p.stem,
                source=self.name,
                source_version=None,
                files=(),
                rows=[],
            )


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importers._registry, "_IMPORTERS", {})


@pytest.mark.usefixtures("registry")
def test_register_get_and_detect() -> None:
    a = importers.register(_Fake("alpha", ".a.json"))
    importers.register(_Fake("beta", ".b.json"))
    assert importers.importer_names() == ("alpha", "beta")
    assert importers.get_importer("alpha") is a
    assert importers.detect_source(Path("x.a.json")) is a
    assert importers.detect_source(Path("x.csv")) is None
    (run,) = a.read([Path("r.a.json")], ImportOptions())
    assert run.run_id == "r.a"  # Path.stem drops only the last suffix


@pytest.mark.usefixtures("registry")
def test_refusals_name_the_source() -> None:
    importers.register(_Fake("alpha", ".json"))
    importers.register(_Fake("beta", ".json"))
    with pytest.raises(
        ArgumentError, match=r"'gamma' is not a known importer \(known: alpha, beta\)"
    ) as info:
        importers.get_importer("gamma")
    assert info.value.argument == "source"
    with pytest.raises(ArgumentError, match="several importers \\(alpha, beta\\)"):
        importers.detect_source(Path("x.json"))
    with pytest.raises(ValueError, match="already registered"):
        importers.register(_Fake("alpha", ".x"))
    with pytest.raises(TypeError, match="Importer protocol"):
        importers.register(object())  # type: ignore[arg-type]
