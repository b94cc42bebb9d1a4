"""Fixed-width ABI values read from byte matrices, vectorised, with their checks.

Every helper takes an ``(m, k)`` ``uint8`` matrix (one row per log) and
returns numpy arrays, plus a mask of the rows whose bytes are not a valid
value of the type (an ``address`` word with non-zero padding, a ``uint32``
word with high bytes set, a ``uint256`` above int64). Nothing here raises
for bad data: the caller names the rows.

Examples
--------
>>> import numpy as np
>>> word = np.zeros((2, 32), dtype=np.uint8); word[0, 31] = 7; word[1, 0] = 1
>>> values, fits = uint_word(word, 64)
>>> values[0], fits.tolist()
(np.uint64(7), [True, False])
>>> uint256_text(word[1])[:10]
'4523128485'
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from cctx_research._textarrays import interleave
from cctx_research.ingest.hexcodec import bytes_to_hex

__all__ = ["address_word", "be_uint", "bytes32_address", "hex_words", "uint256_text", "uint_word"]

_INT64_MAX = np.iinfo(np.int64).max


def be_uint(matrix: np.ndarray) -> np.ndarray:
    """Big-endian unsigned integers of up to 8 bytes per row, as ``uint64``."""
    m, k = matrix.shape
    if k > 8:
        raise ValueError(f"be_uint reads at most 8 bytes, got {k}")
    padded = np.zeros((m, 8), dtype=np.uint8)
    padded[:, 8 - k :] = matrix
    return padded.view(">u8").ravel().astype(np.uint64)


def uint_word(words: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """A ``uint<bits>`` ABI word per row as ``uint64``, and whether it is valid and fits.

    For ``bits`` up to 64 the high bytes must be zero (ABI validity); for
    larger types (``uint256``) the value must also fit a signed int64, the
    ledger's integer: the caller reports the rows that do not, never wraps.
    """
    keep = min(8, -(-bits // 8))
    values = be_uint(words[:, 32 - keep :])
    fits = ~words[:, : 32 - keep].any(axis=1)
    if bits > 64:
        fits &= values <= np.uint64(_INT64_MAX)
    return values, fits


def address_word(words: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """An ``address`` ABI word per row (``0x`` + 40 hex), and whether its padding is zero."""
    return bytes_to_hex(np.ascontiguousarray(words[:, 12:])), ~words[:, :12].any(axis=1)


def hex_words(words: np.ndarray) -> pa.Array:
    """Each row as ``0x`` + lowercase hex (``bytes32`` values: 64 digits)."""
    return bytes_to_hex(np.ascontiguousarray(words))


def bytes32_address(words: np.ndarray) -> pa.Array:
    """Bytes32 address words spelled canonically: EVM-padded rows as 20 bytes, others all 32.

    The spelling of :func:`cctx_research.addressing.canonical_addresses` with
    no chain (``0x`` + lowercase hex), decided on the bytes, so no text is
    made only to be cut.

    >>> w = np.zeros((2, 32), dtype=np.uint8); w[:, 31] = 1; w[1, 0] = 2
    >>> [len(s) for s in bytes32_address(w).to_pylist()]
    [42, 66]
    """
    padded = ~words[:, :12].any(axis=1)
    short = bytes_to_hex(np.ascontiguousarray(words[padded, 12:]))
    return interleave(padded, short, bytes_to_hex(np.ascontiguousarray(words[~padded])))


def uint256_text(word: np.ndarray) -> str:
    """The exact decimal value of one 32-byte big-endian word (for error messages)."""
    return str(int.from_bytes(bytes(word), "big"))
