"""What an import inflates and holds is bounded (docs/importers.md, "Size bounds"): an Inspect `.eval`
whose member inflates past the bound, whatever its zip directory claims, and a JSON source larger
than it are refused in one line before they are parsed; `import --max-source-mib` raises the bound.
The bounds are set small here: no test makes a file of the real size."""

from __future__ import annotations

import re
import shutil
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from tests.importers.conftest import tau_bench, write
from trialbook.cli import main
from trialbook.errors import LedgerError
from trialbook.importers import ImportOptions, read_source
from trialbook.importers._base import MAX_SOURCE_BYTES

MIB = 1024**2


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _one_line_exit_2(out: Result) -> str:
    assert out.exit_code == 2, out.output
    assert isinstance(out.exception, SystemExit), out.exception
    assert "Traceback" not in out.output
    assert out.output.count("\n") == 1, out.output
    return out.output


def _spaces_eval(path: Path, size: int, *, claimed: int | None = None) -> Path:
    """A zip named .eval with one member of ``size`` spaces, deflated (a few KB on disk); with
    ``claimed``, its directory records that size instead (as a hostile writer may)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("header.json", "{}")
        out.writestr("samples/s1_epoch_1.json", b" " * size)
    if claimed is not None:
        data = bytearray(path.read_bytes())
        at = data.rfind(b"PK\x01\x02")  # the central directory entry of the last member
        struct.pack_into("<I", data, at + 24, claimed)  # its uncompressed size
        path.write_bytes(bytes(data))
    assert path.stat().st_size < size // 100
    return path


@pytest.mark.parametrize("claimed", [None, 10])
def test_an_eval_member_inflating_past_the_bound_is_refused_whatever_its_directory_says(
    tmp_path: Path, claimed: int | None
) -> None:
    log = _spaces_eval(tmp_path / "bomb.eval", 3 * MIB, claimed=claimed)
    with pytest.raises(
        LedgerError,
        match=re.escape(
            "member 'samples/s1_epoch_1.json' inflates to more, past the 2 MiB a source may "
            "hold: not read"
        ),
    ):
        read_source([log], "inspect", ImportOptions(max_bytes=2 * MIB))
    db = tmp_path / "l.db"
    text = _one_line_exit_2(
        _cli("import", "inspect", str(log), "--ledger", str(db), "--max-source-mib", "2")
    )
    assert "--max-source-mib raises the bound" in text
    assert not db.exists()


def test_the_inflation_is_measured_for_zstandard_members_too(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai._util.zipfile import zipfile_compress_kwargs  # inspect's zstd writer

    log = tmp_path / "zstd.eval"
    with zipfile.ZipFile(log, "w", **zipfile_compress_kwargs) as out:
        out.writestr("samples/s1_epoch_1.json", b" " * (3 * MIB))
    assert zipfile.ZipFile(log).infolist()[0].compress_type == 93
    with pytest.raises(LedgerError, match="inflates to more, past the 2 MiB"):
        read_source([log], "inspect", ImportOptions(max_bytes=2 * MIB))


def test_a_member_within_the_bound_reaches_inspects_own_reader(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    log = _spaces_eval(tmp_path / "small.eval", MIB)
    with pytest.raises(LedgerError, match="not a readable Inspect log") as caught:
        read_source([log], "inspect", ImportOptions(max_bytes=2 * MIB))
    assert "inflates" not in str(caught.value)


def test_a_json_source_past_the_bound_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = write(tmp_path / "tau.json", tau_bench({t: [1.0, 0.0] for t in range(40_000)}))
    size = path.stat().st_size
    assert MIB < size < 8 * MIB
    db = tmp_path / "l.db"
    text = _one_line_exit_2(
        _cli("import", "tau-bench", str(path), "--ledger", str(db), "--max-source-mib", "1")
    )
    assert f"holds {size:,} bytes, past the 1 MiB a source may hold" in text
    assert not db.exists()
    out = _cli("import", "tau-bench", str(path), "--ledger", str(db), "--max-source-mib", "8")
    assert out.exit_code == 0, out.output
    assert "imported 80000 attempts" in out.output


def test_a_tau2_results_folder_is_bounded_in_all(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    (folder / "simulations").mkdir(parents=True)
    write(folder / "results.json", {"info": {"num_trials": 1}, "simulation_index": []})
    for i in range(3):
        (folder / "simulations" / f"s{i}.json").write_text(" " * (MIB // 2))
    held = sum(f.stat().st_size for f in folder.rglob("*.json"))
    with pytest.raises(LedgerError, match=f"its results.json and simulations/ hold {held:,} bytes"):
        read_source([folder], "tau2-bench", ImportOptions(max_bytes=MIB))


def test_the_cli_default_is_the_libraries(tmp_path: Path) -> None:
    from trialbook.cli.import_ import import_

    (option,) = [p for p in import_.params if p.name == "max_source_mib"]
    assert option.default * MIB == MAX_SOURCE_BYTES == ImportOptions().max_bytes


def test_running_out_of_memory_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a file too large for the machine: numpy's own error, raised by an allocation that cannot be
    # made, stands in for the 359 MB tau-bench file that peaked at 7.8 GB
    import trialbook.importers._taubench as taubench

    def huge(path: Path, limit: int) -> object:
        return np.empty(1 << 50, dtype=np.int64)  # 8 PiB: refused by the allocator

    monkeypatch.setattr(taubench, "load_json", huge)
    path = write(tmp_path / "tau.json", tau_bench({0: [1.0]}))
    text = _one_line_exit_2(_cli("score", str(path), "--source", "tau-bench"))
    assert "out of memory reading the input" in text


def test_a_harbor_trial_result_past_the_bound_is_refused_before_it_is_parsed(
    tmp_path: Path,
) -> None:
    job = tmp_path / "job"
    shutil.copytree(Path(__file__).parent / "data" / "harbor" / "oracle-basic", job)
    result = sorted(job.glob("*/result.json"))[0]
    result.write_text(result.read_text() + " " * MIB)  # valid JSON, padded past 1 MiB
    with pytest.raises(LedgerError, match=re.escape("past the 1 MiB a source may hold")):
        read_source([job], "harbor", ImportOptions(max_bytes=MIB))
    assert read_source([job], "harbor", ImportOptions(max_bytes=2 * MIB)).run_ids
