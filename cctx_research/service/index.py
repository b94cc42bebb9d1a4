"""The store's index of a ledger: numpy arrays in burn order, built once.

Row ``i`` is the ``i``-th transfer in ``(burn time, transfer id)`` order; see
:mod:`cctx_research.service.store` for the layout and what it answers. This
module turns a ledger's columns into those arrays (times as nanoseconds,
addresses dictionary-encoded, transaction hashes as bytes behind a sorted
prefix index) and finds a transaction by its hash.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..addressing import canonical_addresses, from_bytes32, normalize_hash, to_bytes32
from ..addressing.codecs import base58_decode_rows
from ..errors import DataError
from .columns import NAT, Column, Columns, arrow_strings, integers, missing, nanos

__all__ = ["Columns", "LedgerIndex", "TimeSums", "bytes32", "domain_mask", "time_sums", "wire"]

logger = logging.getLogger(__name__)

_HASH_SLICE = 1 << 18
SPLIT = 26  # amounts are summed by bincount as (hi << 26) + lo, each part exact in float64
_PAD = "0" * 24
_ADDRESS_COLUMNS = (
    "message_sender",
    "mint_recipient",
    "burn_token",
    "destination_caller",
    "destination_token_messenger",
)
_PADDED = frozenset({"mint_recipient", "destination_caller", "destination_token_messenger"})
"""Address columns the interface writes as bytes32 (see :func:`bytes32`)."""


# --------------------------------------------------------------------------
# normalisation of values a caller passes


def bytes32(address: str) -> str:
    """The bytes32 form of a canonical address (the interface's padded fields)."""
    return "0x" + _PAD + address[2:] if len(address) == 42 else address


def _bytes32_all(addresses: np.ndarray) -> list[str]:
    """:func:`bytes32` of each canonical address, in one pass."""
    text = pa.array(addresses, type=pa.large_string())
    prefix, empty = pa.scalar("0x" + _PAD, pa.large_string()), pa.scalar("", pa.large_string())
    padded = pc.binary_join_element_wise(prefix, pc.utf8_slice_codeunits(text, 2), empty)
    return pc.if_else(pc.equal(pc.utf8_length(text), 42), padded, text).to_pylist()


def wire(address: str) -> str:
    """The interface's canonical spelling of an address in any chain's format.

    EVM (and Noble) addresses padded into a bytes32 become 20 bytes of hex,
    the others 32 (the interface's ``messageSender`` is unpadded, its
    ``mintRecipient`` padded: see :func:`bytes32`).
    """
    return from_bytes32(to_bytes32(address), None)


# --------------------------------------------------------------------------
# building blocks of the index


def _normal_hashes(values: list[Any], column: str) -> list[str]:
    """Hashes not written as ``0x`` hex (Solana signatures, Noble hashes, ...), checked.

    Base58 signatures and digests (64 or 32 bytes: :func:`normalize_hash` keeps
    their text) are checked all at once; the others one by one.
    """
    out: list[Any] = list(values)
    text = np.array([v if isinstance(v, str) else "" for v in values], dtype=object)
    hex64 = pd.Series(text, dtype=object).str.fullmatch(r"(?:0[xX])?[0-9a-fA-F]{64}")
    _, sizes = base58_decode_rows(text.tolist(), 64)
    sure = ((sizes == 32) | (sizes == 64)) & ~hex64.to_numpy(dtype=bool)
    for i in np.flatnonzero(~sure).tolist():
        value = values[i]
        try:
            out[i] = normalize_hash(value)
        except (TypeError, ValueError):
            raise DataError(
                f"column {column!r} holds a value that is not a transaction hash: "
                f"{str(value)[:100]!r}",
                hint="transaction hashes are '0x' followed by 64 hex digits (EVM), base58 "
                "(Solana, Sui) or 64 bare hex digits (Noble)",
            ) from None
    return out


def _hash_bytes(series: Column, column: str) -> tuple[np.ndarray, np.ndarray, dict[int, Any]]:
    """(n, 32) uint8 bytes of the ``0x`` hashes, their mask, and the other hashes by row.

    Parsed a slice of rows at a time: the text's copies (lower case, fixed width,
    nibbles) then take a slice's memory, not the whole column's ten times over.
    """
    n = len(series)
    if n <= _HASH_SLICE:
        return _slice_hash_bytes(series, column)
    out = np.zeros((n, 32), dtype=np.uint8)
    present = np.zeros(n, dtype=bool)
    other: dict[int, Any] = {}
    for a in range(0, n, _HASH_SLICE):
        b = min(a + _HASH_SLICE, n)
        part = series.iloc[a:b] if isinstance(series, pd.Series) else series.slice(a, b - a)
        out[a:b], present[a:b], found = _slice_hash_bytes(part, column)
        other.update({a + row: value for row, value in found.items()})
    return out, present, other


def _hand_back() -> None:
    """Give the memory of a column just encoded back to the system.

    Arrow keeps what a column read from a dataset took in its pool for the next
    allocation; the index goes on in numpy, so at 12 M transfers 1-2 GiB stayed
    resident under the build's last steps (the build's peak: 6.31 GiB, 5.58 without)."""
    pa.default_memory_pool().release_unused()


def _hashes_in_order(
    ledger: Columns, column: str, order: np.ndarray
) -> tuple[np.ndarray, np.ndarray, dict[int, Any]]:
    """:func:`_hash_bytes` of a column, its rows put in ``order``: the 32 bytes a row are
    reordered, not the text (66 characters a row, and a copy of it)."""
    raw, present, other = _hash_bytes(ledger[column], column)
    _hand_back()
    if other:  # the few hashes not written as 0x hex, by their row in the new order
        where = np.empty(len(order), dtype=order.dtype)
        where[order] = np.arange(len(order), dtype=order.dtype)
        other = {int(where[row]): value for row, value in other.items()}
    return raw[order], present[order], other


def _slice_hash_bytes(series: Column, column: str) -> tuple[np.ndarray, np.ndarray, dict]:
    n = len(series)
    present = ~missing(series)
    out = np.zeros((n, 32), dtype=np.uint8)
    if not present.any():
        return out, present, {}
    given = arrow_strings(series)
    text = pc.utf8_lower(given)
    ok = pc.fill_null(pc.match_substring_regex(text, r"^0x[0-9a-f]{64}$"), False)
    ok_np = np.asarray(ok, dtype=bool)
    other: dict[int, tuple[str, str]] = {}
    if not ok_np[present].all():
        rest = present & ~ok_np
        values = given.filter(pa.array(rest)).to_pylist()
        pairs = zip(values, _normal_hashes(values, column), strict=True)
        other = dict(zip(np.flatnonzero(rest).tolist(), pairs, strict=True))
        present = present & ok_np
    text = text.filter(pa.array(present))
    fixed = text.cast(pa.binary()).cast(pa.binary(66))
    raw = np.frombuffer(fixed.buffers()[1], dtype=np.uint8)
    raw = raw[fixed.offset * 66 : (fixed.offset + len(fixed)) * 66].reshape(-1, 66)[:, 2:]
    lut = np.zeros(256, dtype=np.uint8)
    lut[np.frombuffer(b"0123456789", np.uint8)] = np.arange(10, dtype=np.uint8)
    lut[np.frombuffer(b"abcdef", np.uint8)] = np.arange(10, 16, dtype=np.uint8)
    nibbles = lut[raw]
    out[present] = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]
    return out, present, other


def _prefix(hash_rows: np.ndarray) -> np.ndarray:
    """The first 8 bytes of (n, 32) hash bytes as native uint64."""
    return np.ascontiguousarray(hash_rows[:, :8]).view(">u8").ravel().astype(np.uint64)


def encode_addresses(series: Column, column: str) -> tuple[np.ndarray, np.ndarray]:
    """Dictionary-encode an address column: (int32 codes, sorted unique canonical forms)."""
    if missing(series).any():
        raise DataError(
            f"column {column!r} has missing values",
            hint="every transfer needs an address there (use 0x00..00 for 'none')",
        )
    if isinstance(series, pd.Series):
        codes, uniques = pd.factorize(series, sort=False)
    else:  # Arrow: the codes and the (fewer) distinct values, never a Python string a row
        encoded = pc.dictionary_encode(arrow_strings(series))
        codes = np.asarray(encoded.indices.to_numpy(), dtype=np.int64)
        uniques = encoded.dictionary.to_numpy(zero_copy_only=False)
    uniques = np.asarray(uniques, dtype=object)
    # Hex values (nearly all) in one vectorised pass, then Solana's base58 in
    # another; other formats one by one.
    spelled = pa.array(canonical_addresses(uniques).array)
    is_hex = pc.match_substring_regex(spelled, r"^0x(?:[0-9a-f]{40}|[0-9a-f]{64})$")
    canon = spelled.to_numpy(zero_copy_only=False)
    rest = np.flatnonzero(~np.asarray(pc.fill_null(is_hex, False), dtype=bool))
    rest = rest[~_solana_wire(uniques, rest, canon)]
    for i in rest:
        value = uniques[i]
        try:
            canon[i] = wire(value)
        except (TypeError, ValueError):
            raise DataError(
                f"column {column!r} holds a value that is not an address: {str(value)[:80]!r}",
                hint="addresses are '0x' hex of 20 bytes (EVM) or 32 (bytes32), or a non-EVM "
                "chain's own format (Solana base58, Noble bech32, ...)",
            ) from None
    # a hash factorisation, then its (fewer) uniques sorted as fixed-width text: sorting
    # Python strings (np.unique, factorize(sort=True)) costs several times more
    remap, spellings = pd.factorize(canon, sort=False)
    spellings = np.asarray(spellings, dtype=str)
    order = np.argsort(spellings, kind="stable")
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return rank[remap][codes], spellings[order]


def _solana_wire(uniques: Any, rows: np.ndarray, canon: np.ndarray) -> np.ndarray:
    """Write :func:`wire` of the Solana addresses among ``uniques[rows]`` into ``canon``.

    A value is Solana's when it is base58 of 32 bytes and no earlier format
    claims it (:func:`~cctx_research.addressing.to_bytes32` tries hex, Noble's
    ``noble1`` bech32 and Stellar's 56-character strkeys first). Returns the
    mask of ``rows`` done; the others are left to :func:`wire`.
    """
    if not len(rows):
        return np.zeros(0, dtype=bool)
    text = [v if isinstance(v, str) else "" for v in uniques[rows]]
    raw, sizes = base58_decode_rows(text, 32)
    done = sizes == 32
    for k in np.flatnonzero(done).tolist():
        value = text[k]
        if value.lower().startswith("noble1") or (len(value) == 56 and value[:1] in "CG"):
            done[k] = False
    if done.any():
        raw = raw[done]
        padded = ~raw[:, :12].any(axis=1)  # 20 bytes then, as from_bytes32 spells it
        canon[rows[done]] = [
            "0x" + (r[12:] if p else r).tobytes().hex() for r, p in zip(raw, padded, strict=True)
        ]
    return done


def _times_and_amounts(ledger: Columns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Burn and mint times (ns) and amounts in the ledger's row order, checked."""
    burn_ns = nanos(ledger["burn_timestamp"])
    mint_ns = nanos(ledger["mint_timestamp"])
    # a mint whose burn is not in the data has no burn time: it is in no burn window
    if ((burn_ns == NAT) & (mint_ns == NAT)).any():
        raise DataError(
            "column 'burn_timestamp' has missing values where 'mint_timestamp' has none "
            "too (every transfer needs a burn or a mint time)"
        )
    amount = integers(ledger["amount_raw"])
    if len(amount) and amount.min() < 0:
        raise DataError("column 'amount_raw' has negative amounts")
    if len(amount) and float(amount.astype(np.float64).sum()) >= 2.0**62:
        raise DataError("the amounts of 'amount_raw' sum beyond int64; split the ledger")
    return burn_ns, mint_ns, amount


@dataclass(frozen=True)
class TimeSums:
    """Burn and mint times (ns), sorted, with prefix sums of their amounts: the volume operation.

    ``burn_cum[i]`` is the amount of the ``i`` earliest burns (``mint_cum`` of mints);
    transfers of one time are all in a window or all out, so their order among
    themselves does not change a sum.
    """

    burn_ns: np.ndarray
    burn_cum: np.ndarray
    mint_ns: np.ndarray
    mint_cum: np.ndarray


def time_sums(ledger: Columns) -> TimeSums:
    """The :class:`TimeSums` of a ledger, without the rest of :class:`LedgerIndex` (its
    addresses and hashes take most of its time)."""
    burn_ns, mint_ns, amount = _times_and_amounts(ledger)
    by_burn = np.argsort(burn_ns, kind="stable")
    minted = np.flatnonzero(mint_ns != NAT)
    by_mint = minted[np.argsort(mint_ns[minted], kind="stable")]
    return TimeSums(
        burn_ns[by_burn],
        np.concatenate([[0], np.cumsum(amount[by_burn])]),
        mint_ns[by_mint],
        np.concatenate([[0], np.cumsum(amount[by_mint])]),
    )


def _positions(n: int) -> type[np.integer]:
    """The integer type of row positions (and of twice as many slots) among ``n`` rows:
    32 bits below a billion rows, where they are 8 of the index's 400 bytes a row."""
    return np.int32 if 2 * n < 2**31 else np.int64


def _narrow(values: np.ndarray) -> np.ndarray:
    """Non-negative integers (domain ids) in the narrowest signed type that holds them."""
    top = int(values.max(initial=0))
    for dtype in (np.int8, np.int16, np.int32):
        if top <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values


def _id_ranks(ledger: Columns) -> tuple[pa.Array, np.ndarray]:
    """The transfer ids (ledger's row order) and each row's rank among them."""
    ids = arrow_strings(ledger["transfer_id"])
    if ids.null_count:
        raise DataError("column 'transfer_id' has missing values")
    n = len(ids)
    id_sort = np.asarray(pc.array_sort_indices(ids), dtype=np.int64)
    id_rank = np.empty(n, dtype=_positions(n))
    id_rank[id_sort] = np.arange(n, dtype=id_rank.dtype)
    return ids, id_rank


def domain_mask(wanted: Iterable[int], size: int) -> np.ndarray:
    mask = np.zeros(size, dtype=bool)
    for d in wanted:
        if 0 <= d < size:
            mask[d] = True
    return mask


# --------------------------------------------------------------------------
# the index


class LedgerIndex:
    """The arrays of a ledger (already validated) that the store's operations search.

    Parameters
    ----------
    ledger : pandas.DataFrame or LedgerDataset
        Kind ``"ledger"`` (a frame, or a dataset read a column at a time), any row order.

    Raises
    ------
    DataError
        If the ledger holds values that are not hashes/addresses, missing burn
        times, or negative amounts.
    """

    def __init__(self, ledger: Columns) -> None:
        n = len(ledger)
        self.n = n
        burn_ns, mint_ns, amount = _times_and_amounts(ledger)
        # order: (burn time, transfer id); id ranks break ties in every listing
        ids, id_rank = _id_ranks(ledger)
        order = np.lexsort((id_rank, burn_ns)).astype(_positions(n))

        self.ids = ids.take(pa.array(order))
        self.id_rank = id_rank[order]
        self.burn_ns = burn_ns[order]
        self.mint_ns = mint_ns[order]
        self.minted = self.mint_ns != NAT
        self.amount = amount[order]
        # the ledger's order of each is not kept through the rest of the build (the ids
        # alone: 70 bytes a row)
        del ids, id_rank, burn_ns, mint_ns, amount
        self._index_routes(ledger, order)
        # burn side: prefix sums over burn order
        self.burn_cum = np.concatenate([[0], np.cumsum(self.amount)])
        self._index_mints()
        self._index_addresses(ledger, order)
        # senders: amounts split for exact float64 bincount sums
        self.amt_hi = (self.amount >> SPLIT).astype(np.float64)
        self.amt_lo = (self.amount & ((1 << SPLIT) - 1)).astype(np.float64)
        self._index_hashes(ledger, order)
        logger.debug("store built: %d transfers, %d indexed hashes", n, len(self._hash_slot))

    def time_sums(self) -> TimeSums:
        """Its burn and mint times with their prefix sums (:func:`time_sums` of its ledger)."""
        return TimeSums(self.burn_ns, self.burn_cum, self.mint_ns_sorted, self.mint_cum)

    def _index_routes(self, ledger: Columns, order: np.ndarray) -> None:
        """Domains and blocks in burn order, and how many domain ids a mask needs."""
        n = self.n
        self.src = integers(ledger["source_domain"])[order]
        self.dst = integers(ledger["destination_domain"])[order]
        if n and min(self.src.min(), self.dst.min()) < 0:
            raise DataError("domain ids must be non-negative integers")
        self.burn_block = integers(ledger["burn_block"])[order]
        self.mint_block = integers(ledger["mint_block"])[order]
        self.n_domains = int(max(self.src.max(), self.dst.max())) + 1 if n else 1
        self.src, self.dst = _narrow(self.src), _narrow(self.dst)  # a byte a row, not eight

    def _index_mints(self) -> None:
        """The mint order: minted rows by (mint time, id), with their domains and prefix sums."""
        minted_rows = np.flatnonzero(self.minted).astype(_positions(self.n))
        by_mint = np.lexsort((self.id_rank[minted_rows], self.mint_ns[minted_rows]))
        self.mint_rows = minted_rows[by_mint]
        self.mint_ns_sorted = self.mint_ns[self.mint_rows]
        self.mint_src = self.src[self.mint_rows]
        self.mint_dst = self.dst[self.mint_rows]
        self.mint_cum = np.concatenate([[0], np.cumsum(self.amount[self.mint_rows])])
        self.present_src = np.unique(self.mint_src)
        self.present_dst = np.unique(self.mint_dst)

    def _index_addresses(self, ledger: Columns, order: np.ndarray) -> None:
        """Addresses dictionary-encoded, their output forms, and the recipients' CSR index."""
        self.codes: dict[str, np.ndarray] = {}
        self.uniques: dict[str, np.ndarray] = {}
        self.out: dict[str, list[str]] = {}
        for column in _ADDRESS_COLUMNS:
            codes, table = encode_addresses(ledger[column], column)
            _hand_back()
            self.codes[column] = codes[order]
            self.uniques[column] = table
            # output forms precomputed per unique value
            self.out[column] = _bytes32_all(table) if column in _PADDED else table.tolist()
        # recipients: CSR of rows (burn order) by recipient code
        rcpt = self.codes["mint_recipient"]
        self.rcpt_rows = np.argsort(rcpt, kind="stable").astype(_positions(self.n))
        self.rcpt_off = np.concatenate(
            [[0], np.cumsum(np.bincount(rcpt, minlength=len(self.uniques["mint_recipient"])))]
        )

    def _index_hashes(self, ledger: Columns, order: np.ndarray) -> None:
        """Tx hashes: raw bytes + a sorted uint64 prefix index over burn and mint hashes."""
        self._burn_hash, self._has_burn_hash, burn_other = _hashes_in_order(
            ledger, "burn_tx_hash", order
        )
        self._mint_hash, self._has_mint_hash, mint_other = _hashes_in_order(
            ledger, "mint_tx_hash", order
        )
        self._has_mint_hash &= self.minted
        # Hashes not written as 0x hex (Solana signatures, Noble hashes) are few:
        # a dict by their normalised text, and their text by (row, is_mint).
        other = {(r, False): v for r, v in burn_other.items()}
        other.update({(r, True): v for r, v in mint_other.items() if self.minted[r]})
        self._other_text = {k: given for k, (given, _) in other.items()}
        self._other_slot = {normal: k for k, (_, normal) in other.items()}
        slot = _positions(self.n)
        burn_slots = np.flatnonzero(self._has_burn_hash).astype(slot) * 2
        mint_slots = np.flatnonzero(self._has_mint_hash).astype(slot) * 2 + 1
        slots = np.concatenate([burn_slots, mint_slots])
        prefixes = np.concatenate(
            [_prefix(self._burn_hash[burn_slots // 2]), _prefix(self._mint_hash[mint_slots // 2])]
        )
        by_prefix = np.lexsort((slots, prefixes))
        self._hash_prefix = prefixes[by_prefix]
        self._hash_slot = slots[by_prefix]

    def find_hash(self, text: str) -> Iterator[tuple[int, bool]]:
        """(row, is_mint) of each transaction whose hash is ``text`` (spelled as normalize_hash)."""
        if not text.startswith("0x"):
            slot = self._other_slot.get(text)
            if slot is not None:
                yield slot
            return
        wanted = np.frombuffer(bytes.fromhex(text[2:]), dtype=np.uint8)
        key = _prefix(wanted.reshape(1, 32))[0]
        a = int(np.searchsorted(self._hash_prefix, key, side="left"))
        b = int(np.searchsorted(self._hash_prefix, key, side="right"))
        for slot in self._hash_slot[a:b].tolist():
            row, is_mint = divmod(slot, 2)
            stored = self._mint_hash[row] if is_mint else self._burn_hash[row]
            if np.array_equal(stored, wanted):
                yield row, bool(is_mint)

    def hash_text(self, row: int, is_mint: bool) -> str:
        """The hash of a row's mint or burn as the interface shows it; ``""`` if it has none."""
        if self._has_mint_hash[row] if is_mint else self._has_burn_hash[row]:
            raw = self._mint_hash[row] if is_mint else self._burn_hash[row]
            return "0x" + raw.tobytes().hex()
        return self._other_text.get((row, is_mint), "")
