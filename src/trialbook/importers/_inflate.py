"""How far each member of a zip inflates, measured by inflating it, never by what its directory says.

An Inspect ``.eval`` is a zip. inspect-ai's reader inflates a member's whole compressed data (the
``compressed_size`` bytes the central directory names), whatever ``uncompressed_size`` claims, so a
1.2 MB log may hold a member that inflates to a GiB of spaces, and its JSON parser then takes minutes.
:func:`inflated_past` inflates each member's data the same way, a chunk at a time into nothing, and
stops at the first member that goes past the bound: the cost is bounded by the bound, not by the
member.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["inflated_past"]

_CHUNK = 1 << 20
_LOCAL = struct.Struct("<4s22xHH")  # a local file header: signature ... name and extra lengths
_STORED, _DEFLATED, _ZSTANDARD = 0, 8, 93


def _raw(fh: BinaryIO, member: zipfile.ZipInfo) -> Iterator[bytes]:
    """The member's compressed data, as inspect-ai reads it, in chunks."""
    fh.seek(member.header_offset)
    signature, name, extra = _LOCAL.unpack(fh.read(_LOCAL.size))
    if signature != b"PK\x03\x04":
        raise ValueError(f"member {member.filename!r}: no local header where the directory says")
    fh.seek(name + extra, 1)
    left = member.compress_size
    while left > 0:
        chunk = fh.read(min(_CHUNK, left))
        if not chunk:
            return
        left -= len(chunk)
        yield chunk


def _sizes(fh: BinaryIO, member: zipfile.ZipInfo, limit: int) -> int:
    """Bytes the member inflates to, counted up to just past ``limit``."""
    out = 0
    if member.compress_type == _STORED:
        return sum(len(c) for c in _raw(fh, member))
    if member.compress_type == _DEFLATED:
        inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        for chunk in _raw(fh, member):
            data = chunk
            while data and out <= limit:
                out += len(inflater.decompress(data, _CHUNK))
                data = inflater.unconsumed_tail
            if out > limit:
                break
        return out
    if member.compress_type == _ZSTANDARD:
        import zstandard  # inspect-ai's own dependency, for the logs it writes

        reader = zstandard.ZstdDecompressor().stream_reader(
            _Chunks(_raw(fh, member)),  # type: ignore[arg-type]  # read() is all it calls
            read_across_frames=True,
        )
        while out <= limit and (block := reader.read(_CHUNK)):
            out += len(block)
        return out
    raise ValueError(f"member {member.filename!r}: compression method {member.compress_type}")


class _Chunks:
    """A readable file over an iterator of byte chunks (what zstandard's stream reader reads)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._rest = b""

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._rest) < size:
            chunk = next(self._chunks, b"")
            if not chunk:
                break
            self._rest += chunk
        if size < 0:
            size = len(self._rest)
        out, self._rest = self._rest[:size], self._rest[size:]
        return out


def inflated_past(path: Path, limit: int) -> str | None:
    """The name of the first member of the zip at ``path`` that inflates past ``limit`` bytes,
    or None. Raises ``zipfile.BadZipFile``, ``OSError`` or
    ``ValueError`` (a method it cannot inflate, a header out of place) for a zip it cannot read,
    and zstandard's or zlib's errors for data that does not inflate."""
    with zipfile.ZipFile(path) as archive, path.open("rb") as fh:
        for member in archive.infolist():
            if _sizes(fh, member, limit) > limit:
                return member.filename
    return None
