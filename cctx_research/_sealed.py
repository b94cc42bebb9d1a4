"""Sealed Arrow IPC files: an uncompressed Arrow file followed by a checksum trailer.

Arrow checks the framing of a file but not its data: a byte flipped inside a
column reads back as a wrong value. The trailer (a magic, the CRC-32 of the
Arrow bytes and their length) catches that, and a file cut short. The
client's chunk cache (:mod:`cctx_research.client.chunks`) and the cached
synthetic sample (:mod:`cctx_research.service.sample_cache`) both write them;
reading is a plain copy (or a memory map), which is why they are IPC and not
Parquet.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import pyarrow as pa

__all__ = ["seal", "unseal"]

_SEAL = b"CCTXCRC1"
_TRAILER = len(_SEAL) + 12  # magic, CRC-32 (4 bytes), length of the Arrow file (8 bytes)


def seal(table: pa.Table) -> bytes:
    """``table`` as an uncompressed Arrow IPC file followed by its trailer."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    body = sink.getvalue().to_pybytes()
    return body + _SEAL + struct.pack(">IQ", zlib.crc32(body), len(body))


def unseal(data: Any) -> pa.Table:
    """The table of a sealed file's bytes (``bytes`` or a buffer, e.g. a memory map).

    The table's columns point into ``data`` (no copy) when it is a buffer.

    Raises
    ------
    ValueError
        The file is truncated, damaged, or not a sealed file.
    """
    view = memoryview(data)
    if len(view) < _TRAILER or bytes(view[-_TRAILER:-12]) != _SEAL:
        raise ValueError("no checksum trailer (truncated, or not written by this version)")
    crc, length = struct.unpack(">IQ", bytes(view[-12:]))
    body = view[: len(view) - _TRAILER]
    if length != len(body):
        raise ValueError(f"expected {length} bytes of Arrow data, found {len(body)}")
    if zlib.crc32(body) != crc:
        raise ValueError("checksum mismatch: the file is damaged")
    return pa.ipc.open_file(pa.py_buffer(body)).read_all()
