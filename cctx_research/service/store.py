"""The service's indexed, in-memory columnar store of transfers.

A :class:`Store` is built once from a *ledger* frame (``schema`` kind
``"ledger"``) and answers the five operations of the interface with plain
Python dicts and lists, ready for :func:`json.dumps`. It does no HTTP: the
WSGI edge (:mod:`cctx_research.service.app`) validates requests and wraps the
answers in the envelope.

Layout (every array is a numpy array; row ``i`` is the ``i``-th transfer in
``(burn time, transfer id)`` order):

* burn times, amounts, domains, blocks, and a prefix sum of amounts in burn
  order, so the burn side of any window is two binary searches;
* a *mint order*: the minted rows sorted by ``(mint time, transfer id)``,
  with the mint times, domains and a prefix sum of amounts in that order;
* a tx-hash index: the first 8 bytes of every burn and mint hash as a sorted
  ``uint64`` array, searched with :func:`numpy.searchsorted`, each candidate
  then verified against the full 32 bytes (compact at millions of hashes: no
  dict of strings);
* addresses dictionary-encoded (sorted uniques + ``int32`` codes); the
  recipients as a CSR index (code -> row positions), the senders' codes fed
  to :func:`numpy.bincount` for the top-senders report.

The store has a clock (see :mod:`cctx_research.service`): a pinned
``pandas.Timestamp`` or ``None`` for "now", read again on every call. It
shows only burns with burn time <= clock and mints with mint time <= clock.

Windows are Unix seconds with **inclusive** bounds: an event at ``t`` (whole
seconds, floored) is in ``[start, end]`` when ``start <= t <= end``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import arguments, chains, schema
from ..addressing import canonical_addresses, from_bytes32, normalize_hash, to_bytes32
from ..errors import DataError, NotFoundError
from ..times import TimeLike, to_timestamp

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_WINDOW",
    "MAX_LIMIT",
    "MAX_PAGE",
    "Store",
]

logger = logging.getLogger(__name__)

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
MAX_PAGE = 1_000_000_000
DEFAULT_WINDOW = 86_400
"""Default window length in seconds (the interface's "1 day before now")."""

INSTANCE_ID = "cctx-research-local"
"""``instanceId`` of every record: this service is one indexer instance."""

_NS = 1_000_000_000
_NAT = np.iinfo(np.int64).min
_I64_MAX = np.iinfo(np.int64).max
_PAD = "0" * 24
_SCAN_CHUNK = 65_536
_SPLIT = 26  # amounts are summed by bincount as (hi << 26) + lo, each part exact in float64
_ADDRESS_COLUMNS = (
    "message_sender",
    "mint_recipient",
    "burn_token",
    "destination_caller",
    "destination_token_messenger",
)


# --------------------------------------------------------------------------
# normalisation of values a caller passes


def _bytes32(address: str) -> str:
    """The bytes32 form of a canonical address (the interface's padded fields)."""
    return "0x" + _PAD + address[2:] if len(address) == 42 else address


def _wire(address: str) -> str:
    """The interface's canonical spelling of an address in any chain's format.

    EVM (and Noble) addresses padded into a bytes32 become 20 bytes of hex,
    the others 32 (the interface's ``messageSender`` is unpadded, its
    ``mintRecipient`` padded: see :func:`_bytes32`).
    """
    return from_bytes32(to_bytes32(address), None)


# --------------------------------------------------------------------------
# building blocks of the index


def _nanos(series: pd.Series) -> np.ndarray:
    """Nanoseconds since the epoch of a tz-aware column (NaT -> int64 min)."""
    values = series.dt.tz_convert("UTC").dt.as_unit("ns").array
    return np.asarray(values.asi8, dtype=np.int64).copy()


def _arrow(series: pd.Series) -> pa.Array:
    array = pa.array(series.array, type=pa.large_string(), from_pandas=True)
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _normal_hashes(values: list[Any], column: str) -> list[str]:
    """Hashes not written as ``0x`` hex (Solana signatures, Noble hashes, ...), checked."""
    out = []
    for value in values:
        try:
            out.append(normalize_hash(value))
        except (TypeError, ValueError):
            raise DataError(
                f"column {column!r} holds a value that is not a transaction hash: "
                f"{str(value)[:100]!r}",
                hint="transaction hashes are '0x' followed by 64 hex digits (EVM), base58 "
                "(Solana, Sui) or 64 bare hex digits (Noble)",
            ) from None
    return out


def _hash_bytes(series: pd.Series, column: str) -> tuple[np.ndarray, np.ndarray, dict[int, str]]:
    """(n, 32) uint8 bytes of the ``0x`` hashes, their mask, and the other hashes by row."""
    n = len(series)
    present = np.array(series.notna(), dtype=bool)
    out = np.zeros((n, 32), dtype=np.uint8)
    if not present.any():
        return out, present, {}
    text = pc.utf8_lower(_arrow(series))
    ok = pc.fill_null(pc.match_substring_regex(text, r"^0x[0-9a-f]{64}$"), False)
    ok_np = np.asarray(ok, dtype=bool)
    other: dict[int, tuple[str, str]] = {}
    if not ok_np[present].all():
        rest = present & ~ok_np
        values = series[rest].tolist()
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


def _encode_addresses(series: pd.Series, column: str) -> tuple[np.ndarray, np.ndarray]:
    """Dictionary-encode an address column: (int32 codes, sorted unique canonical forms)."""
    if series.isna().any():
        raise DataError(
            f"column {column!r} has missing values",
            hint="every transfer needs an address there (use 0x00..00 for 'none')",
        )
    codes, uniques = pd.factorize(series, sort=False)
    # Hex values (nearly all) in one vectorised pass; other formats one by one.
    canon = canonical_addresses(list(uniques)).to_numpy(dtype=object, na_value=None)
    is_hex = pd.Series(canon, dtype=object).str.fullmatch(r"0x(?:[0-9a-f]{40}|[0-9a-f]{64})")
    for i in np.flatnonzero(~is_hex.fillna(False).to_numpy(dtype=bool)):
        value = uniques[i]
        try:
            canon[i] = _wire(value)
        except (TypeError, ValueError):
            raise DataError(
                f"column {column!r} holds a value that is not an address: {str(value)[:80]!r}",
                hint="addresses are '0x' hex of 20 bytes (EVM) or 32 (bytes32), or a non-EVM "
                "chain's own format (Solana base58, Noble bech32, ...)",
            ) from None
    table, remap = np.unique(np.array(canon, dtype=str), return_inverse=True)
    return remap.astype(np.int32)[codes], table


def _domain_mask(wanted: Iterable[int], size: int) -> np.ndarray:
    mask = np.zeros(size, dtype=bool)
    for d in wanted:
        if 0 <= d < size:
            mask[d] = True
    return mask


# --------------------------------------------------------------------------
# the store


class Store:
    """An indexed, in-memory store of transfers; answers the interface's operations.

    Parameters
    ----------
    ledger : pandas.DataFrame
        Kind ``"ledger"`` (see :func:`cctx_research.schema.validate`); any row
        order. ``mint_timestamp`` NaT means never minted; a missing tx hash
        means that transaction cannot be looked up by hash.
    clock : date-like, optional
        Pin the service's clock; ``None`` (default) means "now", read again
        on every call.

    Raises
    ------
    DataError
        If the frame does not follow the ledger schema or holds values that
        are not hashes/addresses, missing burn times, or negative amounts.

    Examples
    --------
    >>> from cctx_research.service.sample import generate
    >>> store = Store(generate("2024-07-01", days=2), clock="2024-07-01")
    >>> sorted(store.volume())[:3]
    ['burnCount', 'burnVolume', 'endDate']
    """

    def __init__(self, ledger: pd.DataFrame, *, clock: TimeLike | None = None) -> None:
        schema.validate(ledger, "ledger")
        self.clock: pd.Timestamp | None = None if clock is None else to_timestamp(clock)
        n = len(ledger)
        self._n = n

        burn_ns = _nanos(ledger["burn_timestamp"])
        if (burn_ns == _NAT).any():
            raise DataError("column 'burn_timestamp' has missing values (every transfer burns)")
        mint_ns = _nanos(ledger["mint_timestamp"])
        amount = ledger["amount_raw"].to_numpy(dtype=np.int64)
        if n and amount.min() < 0:
            raise DataError("column 'amount_raw' has negative amounts")
        if n and float(amount.astype(np.float64).sum()) >= 2.0**62:
            raise DataError("the amounts of 'amount_raw' sum beyond int64; split the ledger")

        # order: (burn time, transfer id); id ranks break ties in every listing
        ids = _arrow(ledger["transfer_id"])
        if ids.null_count:
            raise DataError("column 'transfer_id' has missing values")
        id_sort = np.asarray(pc.array_sort_indices(ids), dtype=np.int64)
        id_rank = np.empty(n, dtype=np.int64)
        id_rank[id_sort] = np.arange(n, dtype=np.int64)
        order = np.lexsort((id_rank, burn_ns))

        self._ids = ids.take(pa.array(order))
        self._id_rank = id_rank[order]
        self._burn_ns = burn_ns[order]
        self._mint_ns = mint_ns[order]
        self._minted = self._mint_ns != _NAT
        self._amount = amount[order]
        self._src = ledger["source_domain"].to_numpy(dtype=np.int64)[order]
        self._dst = ledger["destination_domain"].to_numpy(dtype=np.int64)[order]
        if n and min(self._src.min(), self._dst.min()) < 0:
            raise DataError("domain ids must be non-negative integers")
        self._burn_block = ledger["burn_block"].to_numpy(dtype=np.int64)[order]
        self._mint_block = ledger["mint_block"].to_numpy(dtype=np.int64)[order]
        self._n_domains = int(max(self._src.max(), self._dst.max())) + 1 if n else 1

        # burn side: prefix sums over burn order
        self._burn_cum = np.concatenate([[0], np.cumsum(self._amount)])

        # mint side: minted rows by (mint time, id)
        minted_rows = np.flatnonzero(self._minted)
        by_mint = np.lexsort((self._id_rank[minted_rows], self._mint_ns[minted_rows]))
        self._mint_rows = minted_rows[by_mint]
        self._mint_ns_sorted = self._mint_ns[self._mint_rows]
        self._mint_src = self._src[self._mint_rows]
        self._mint_dst = self._dst[self._mint_rows]
        self._mint_cum = np.concatenate([[0], np.cumsum(self._amount[self._mint_rows])])
        self._present_src = np.unique(self._mint_src)
        self._present_dst = np.unique(self._mint_dst)

        # addresses, dictionary-encoded; output forms precomputed per unique value
        self._codes: dict[str, np.ndarray] = {}
        self._uniques: dict[str, np.ndarray] = {}
        self._out: dict[str, list[str]] = {}
        for column in _ADDRESS_COLUMNS:
            codes, table = _encode_addresses(ledger[column], column)
            self._codes[column] = codes[order]
            self._uniques[column] = table
            padded = column in (
                "mint_recipient",
                "destination_caller",
                "destination_token_messenger",
            )
            self._out[column] = [_bytes32(a) for a in table] if padded else table.tolist()

        # recipients: CSR of rows (burn order) by recipient code
        rcpt = self._codes["mint_recipient"]
        self._rcpt_rows = np.argsort(rcpt, kind="stable")
        self._rcpt_off = np.concatenate(
            [[0], np.cumsum(np.bincount(rcpt, minlength=len(self._uniques["mint_recipient"])))]
        )

        # senders: amounts split for exact float64 bincount sums
        self._amt_hi = (self._amount >> _SPLIT).astype(np.float64)
        self._amt_lo = (self._amount & ((1 << _SPLIT) - 1)).astype(np.float64)

        # tx hashes: raw bytes + sorted uint64 prefix index over burn and mint hashes
        self._burn_hash, self._has_burn_hash, burn_other = _hash_bytes(
            ledger["burn_tx_hash"].iloc[order], "burn_tx_hash"
        )
        self._mint_hash, self._has_mint_hash, mint_other = _hash_bytes(
            ledger["mint_tx_hash"].iloc[order], "mint_tx_hash"
        )
        self._has_mint_hash &= self._minted
        # Hashes not written as 0x hex (Solana signatures, Noble hashes) are few:
        # a dict by their normalised text, and their text by (row, is_mint).
        other = {(r, False): v for r, v in burn_other.items()}
        other.update({(r, True): v for r, v in mint_other.items() if self._minted[r]})
        self._other_text = {k: given for k, (given, _) in other.items()}
        self._other_slot = {normal: k for k, (_, normal) in other.items()}
        burn_slots = np.flatnonzero(self._has_burn_hash) * 2
        mint_slots = np.flatnonzero(self._has_mint_hash) * 2 + 1
        slots = np.concatenate([burn_slots, mint_slots])
        prefixes = np.concatenate(
            [_prefix(self._burn_hash[burn_slots // 2]), _prefix(self._mint_hash[mint_slots // 2])]
        )
        by_prefix = np.lexsort((slots, prefixes))
        self._hash_prefix = prefixes[by_prefix]
        self._hash_slot = slots[by_prefix]
        logger.debug("store built: %d transfers, %d indexed hashes", n, len(slots))

    @classmethod
    def from_file(cls, path: str | Path, *, clock: TimeLike | None = None) -> Store:
        """A store over a Parquet or CSV file of kind ``"ledger"`` or ``"transfers"``.

        See :func:`cctx_research.service.loading.load_ledger` (a ``"transfers"``
        file has no hashes: hash look-ups of it find nothing).

        Raises
        ------
        DataError
            If the file is missing or does not fit either kind.
        """
        from .loading import load_ledger

        return cls(load_ledger(path), clock=clock)

    # ------------------------------------------------------------------
    # clock and windows

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        clock = "now" if self.clock is None else self.clock.isoformat()
        return f"<Store {self._n} transfers, clock={clock}>"

    def now(self) -> pd.Timestamp:
        """The current clock: the pinned one, or the wall clock (UTC)."""
        return pd.Timestamp.now(tz="UTC") if self.clock is None else self.clock

    def window(self, start: int | None = None, end: int | None = None) -> tuple[int, int]:
        """Resolve a window of Unix seconds with the interface's defaults.

        ``end`` defaults to the clock (floored to a second), ``start`` to
        ``end - 86400``. Both bounds are inclusive.

        Raises
        ------
        TypeError
            If a bound is not an int.
        ValueError
            If ``start > end``.
        """
        if end is None:
            end = self.now().value // _NS
        end = arguments.integer(end, "end", low=-(2**62), high=2**62)
        if start is None:
            start = end - DEFAULT_WINDOW
        else:
            start = arguments.integer(start, "start", low=-(2**62), high=2**62)
        if start > end:
            raise ValueError(f"start ({start}) must not be after end ({end}); bounds are inclusive")
        return start, end

    def _bounds(self, start: int, end: int) -> tuple[int, int, int]:
        """(lo, hi, clock) in ns: events with lo <= t <= min(hi, clock) are in the window."""
        clock = self.now().value
        lo = max(start * _NS, -_I64_MAX)
        hi = min((end + 1) * _NS - 1, clock, _I64_MAX)
        return lo, hi, clock

    def _burn_range(self, lo: int, hi: int) -> tuple[int, int]:
        a = int(np.searchsorted(self._burn_ns, lo, side="left"))
        b = int(np.searchsorted(self._burn_ns, hi, side="right")) if hi >= lo else a
        return a, max(a, b)

    def _mint_range(self, lo: int, hi: int) -> tuple[int, int]:
        a = int(np.searchsorted(self._mint_ns_sorted, lo, side="left"))
        b = int(np.searchsorted(self._mint_ns_sorted, hi, side="right")) if hi >= lo else a
        return a, max(a, b)

    # ------------------------------------------------------------------
    # records

    def _summaries(self, rows: np.ndarray, ts_ns: np.ndarray, clock: int) -> list[dict[str, Any]]:
        """Transaction summaries (interface 2.1) of ``rows`` with the given times."""
        ids = self._ids.take(pa.array(rows, type=pa.int64())).to_pylist()
        completed = (self._minted[rows] & (self._mint_ns[rows] <= clock)).tolist()
        c = self._codes
        o = self._out
        recipients = [o["mint_recipient"][k] for k in c["mint_recipient"][rows].tolist()]
        senders = [o["message_sender"][k] for k in c["message_sender"][rows].tolist()]
        tokens = [o["burn_token"][k] for k in c["burn_token"][rows].tolist()]
        callers = [o["destination_caller"][k] for k in c["destination_caller"][rows].tolist()]
        messengers = [
            o["destination_token_messenger"][k]
            for k in c["destination_token_messenger"][rows].tolist()
        ]
        return [
            {
                "id": ids[i],
                "amount": amount,
                "timestamp": ts,
                "isCompleted": done,
                "sourceDomain": str(src),
                "destinationDomain": str(dst),
                "mintRecipient": recipients[i],
                "messageSender": senders[i],
                "burnToken": tokens[i],
                "destinationCaller": callers[i],
                "detinationTokenMessenger": messengers[i],
            }
            for i, (amount, ts, done, src, dst) in enumerate(
                zip(
                    self._amount[rows].tolist(),
                    (ts_ns // _NS).tolist(),
                    completed,
                    self._src[rows].tolist(),
                    self._dst[rows].tolist(),
                    strict=True,
                )
            )
        ]

    @staticmethod
    def _hex(hash_bytes: np.ndarray) -> str:
        return "0x" + hash_bytes.tobytes().hex()

    # ------------------------------------------------------------------
    # operations

    def mints(
        self,
        start: int | None = None,
        end: int | None = None,
        sources: Iterable[int] | None = None,
        destinations: Iterable[int] | None = None,
        page: int = 1,
        limit: int = DEFAULT_LIMIT,
    ) -> list[dict[str, Any]]:
        """The mint listing (``transactions-mint``): one page of mints, grouped by chain pair.

        Parameters
        ----------
        start, end : int, optional
            Unix seconds, inclusive; defaults as :meth:`window`.
        sources, destinations : iterable of int, optional
            Domain ids; default :data:`cctx_research.chains.DEFAULT_DOMAINS`.
        page : int, default 1
            1 .. :data:`MAX_PAGE`.
        limit : int, default 100
            1 .. :data:`MAX_LIMIT`; mints per page, cut from the flat list
            ordered by ``(mint time, id)`` before grouping.

        Returns
        -------
        list of dict
            Mint groups (interface 2.2) ordered by (source, destination domain).
        """
        start, end = self.window(start, end)
        page = arguments.integer(page, "page", low=1, high=MAX_PAGE)
        limit = arguments.integer(limit, "limit", low=1, high=MAX_LIMIT)
        src_ok = _domain_mask(
            chains.DEFAULT_DOMAINS if sources is None else sources, self._n_domains
        )
        dst_ok = _domain_mask(
            chains.DEFAULT_DOMAINS if destinations is None else destinations, self._n_domains
        )
        lo, hi, clock = self._bounds(start, end)
        a, b = self._mint_range(lo, hi)
        skip = (page - 1) * limit
        if src_ok[self._present_src].all() and dst_ok[self._present_dst].all():
            # the filter keeps every minted row: the page is a plain slice
            positions = np.arange(min(a + skip, b), min(a + skip + limit, b))
        else:
            positions = self._scan_mints(a, b, src_ok, dst_ok, skip, limit)
        rows = self._mint_rows[positions]
        records = self._summaries(rows, self._mint_ns[rows], clock)
        groups: dict[tuple[int, int], list[dict[str, Any]]] = {}
        for src, dst, record in zip(
            self._src[rows].tolist(), self._dst[rows].tolist(), records, strict=True
        ):
            groups.setdefault((src, dst), []).append(record)
        return [
            {
                "sourceChain": chains.chain_id(src),
                "destinationChain": chains.chain_id(dst),
                "totalAmount": sum(r["amount"] for r in txs),
                "chain": chains.chain_id(dst),
                "transactions": txs,
            }
            for (src, dst), txs in sorted(groups.items())
        ]

    def _scan_mints(
        self, a: int, b: int, src_ok: np.ndarray, dst_ok: np.ndarray, skip: int, limit: int
    ) -> np.ndarray:
        """Positions (mint order) of matches skip .. skip+limit in [a, b), scanned in chunks."""
        seen = 0
        found: list[np.ndarray] = []
        want = limit
        pos = a
        while pos < b and want > 0:
            stop = min(pos + _SCAN_CHUNK, b)
            hits = np.flatnonzero(
                src_ok[self._mint_src[pos:stop]] & dst_ok[self._mint_dst[pos:stop]]
            )
            if seen + len(hits) > skip:
                take = hits[max(0, skip - seen) :][:want] + pos
                found.append(take)
                want -= len(take)
            seen += len(hits)
            pos = stop
        return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)

    def transaction(self, tx_hash: str) -> dict[str, Any]:
        """The hash lookup (``transactions-txHash``) of a burn or mint transaction.

        Parameters
        ----------
        tx_hash : str
            ``0x`` + 64 hex digits, any case; or a Solana signature (base58),
            a Noble hash (64 hex digits).

        Returns
        -------
        dict
            ``{"transactionType": "burn" | "mint", "transaction": detail}``
            (interface 2.3).

        Raises
        ------
        ValueError
            If ``tx_hash`` is not a transaction hash.
        NotFoundError
            If no transaction visible at the clock has that hash.
        """
        text = normalize_hash(tx_hash)
        clock = self.now().value
        if not text.startswith("0x"):
            slot = self._other_slot.get(text)
            if slot is not None:
                row, is_mint = slot
                when = self._mint_ns[row] if is_mint else self._burn_ns[row]
                if when <= clock:
                    return self._detail(row, is_mint, self._other_text[slot], clock)
            raise NotFoundError(
                "no transaction with that hash", operation="transactions-txHash", status=404
            )
        wanted = np.frombuffer(bytes.fromhex(text[2:]), dtype=np.uint8)
        key = _prefix(wanted.reshape(1, 32))[0]
        a = int(np.searchsorted(self._hash_prefix, key, side="left"))
        b = int(np.searchsorted(self._hash_prefix, key, side="right"))
        for slot in self._hash_slot[a:b].tolist():
            row, is_mint = divmod(slot, 2)
            stored = self._mint_hash[row] if is_mint else self._burn_hash[row]
            when = self._mint_ns[row] if is_mint else self._burn_ns[row]
            if when <= clock and np.array_equal(stored, wanted):
                return self._detail(row, bool(is_mint), text, clock)
        raise NotFoundError(
            "no transaction with that hash", operation="transactions-txHash", status=404
        )

    def _detail(self, row: int, is_mint: bool, tx_hash: str, clock: int) -> dict[str, Any]:
        ts_ns = self._mint_ns[row] if is_mint else self._burn_ns[row]
        rows = np.array([row])
        record = self._summaries(rows, np.array([ts_ns]), clock)[0]
        src, dst = int(self._src[row]), int(self._dst[row])
        seconds = int(ts_ns // _NS)
        record.update(
            {
                "_id": f"{seconds & 0xFFFFFFFF:08x}{int(is_mint):02x}{row:014x}",
                "transactionHash": tx_hash,
                "entityId": "mintTransactionsTable" if is_mint else "burnTransactionsTable",
                "blockNumber": int(self._mint_block[row] if is_mint else self._burn_block[row]),
                "chainId": chains.chain_id(dst if is_mint else src),
                "instanceId": INSTANCE_ID,
                "sourceChain": chains.chain_id(src),
                "destinationChain": chains.chain_id(dst),
            }
        )
        return {"transactionType": "mint" if is_mint else "burn", "transaction": record}

    def received(
        self,
        address: str,
        start: int | None = None,
        end: int | None = None,
        page: int = 1,
        limit: int = DEFAULT_LIMIT,
    ) -> dict[str, Any]:
        """The recipient listing (``transactions-address-recipient``).

        Completed transfers to ``address`` appear as ``"mint"`` (mint hash and
        time), pending ones as ``"burn"`` (burn hash and time); they are
        filtered and ordered by that time, then by id. Transfers loaded from
        a frame without hashes carry ``transactionHash`` ``""``.

        Returns
        -------
        dict
            ``{"address", "totalTransactions", "transactions"}``;
            ``address`` is the interface's form (20 bytes of hex for EVM,
            else the 32 bytes) and
            ``totalTransactions`` counts every match, not just the page.

        Raises
        ------
        ValueError
            If ``address`` is in no chain's address format, or the window,
            page or limit is invalid.
        """
        canon = _wire(address)
        start, end = self.window(start, end)
        page = arguments.integer(page, "page", low=1, high=MAX_PAGE)
        limit = arguments.integer(limit, "limit", low=1, high=MAX_LIMIT)
        lo, hi, clock = self._bounds(start, end)
        table = self._uniques["mint_recipient"]
        code = int(np.searchsorted(table, canon))
        empty = {"address": canon, "totalTransactions": 0, "transactions": []}
        if code >= len(table) or table[code] != canon:
            return empty
        rows = self._rcpt_rows[self._rcpt_off[code] : self._rcpt_off[code + 1]]
        done = self._minted[rows] & (self._mint_ns[rows] <= clock)
        ts = np.where(done, self._mint_ns[rows], self._burn_ns[rows])
        keep = (ts >= lo) & (ts <= hi)
        rows, ts, done = rows[keep], ts[keep], done[keep]
        order = np.lexsort((self._id_rank[rows], ts))
        skip = (page - 1) * limit
        sel = order[skip : skip + limit]
        rows, ts, done = rows[sel], ts[sel], done[sel]
        ids = self._ids.take(pa.array(rows, type=pa.int64())).to_pylist()
        items = []
        for i, (row, t, is_mint) in enumerate(
            zip(rows.tolist(), ts.tolist(), done.tolist(), strict=True)
        ):
            has = self._has_mint_hash[row] if is_mint else self._has_burn_hash[row]
            raw = self._mint_hash[row] if is_mint else self._burn_hash[row]
            items.append(
                {
                    "id": ids[i],
                    "amount": int(self._amount[row]),
                    "timestamp": t // _NS,
                    "sourceChain": chains.chain_id(int(self._src[row])),
                    "destinationChain": chains.chain_id(int(self._dst[row])),
                    "transactionType": "mint" if is_mint else "burn",
                    "transactionHash": self._hex(raw)
                    if has
                    else self._other_text.get((row, is_mint), ""),
                }
            )
        return {"address": canon, "totalTransactions": int(keep.sum()), "transactions": items}

    def volume(self, start: int | None = None, end: int | None = None) -> dict[str, Any]:
        """The volume report (``transactions-volume``) of a window.

        Mints count by mint time, burns by burn time, both within the window
        and up to the clock; amounts are raw integer base units.

        Returns
        -------
        dict
            Interface 2.5; ``startDate``/``endDate`` echo the resolved window.
        """
        start, end = self.window(start, end)
        lo, hi, _ = self._bounds(start, end)
        ba, bb = self._burn_range(lo, hi)
        ma, mb = self._mint_range(lo, hi)
        burn_volume = int(self._burn_cum[bb] - self._burn_cum[ba])
        mint_volume = int(self._mint_cum[mb] - self._mint_cum[ma])
        return {
            "startDate": start,
            "endDate": end,
            "mintVolume": mint_volume,
            "burnVolume": burn_volume,
            "totalVolume": mint_volume + burn_volume,
            "mintCount": mb - ma,
            "burnCount": bb - ba,
            "totalCount": (mb - ma) + (bb - ba),
        }

    def top_senders(
        self, start: int | None = None, end: int | None = None, limit: int = DEFAULT_LIMIT
    ) -> dict[str, Any]:
        """The top-senders report (``stats-senders``).

        Message senders of the burns in the window by total burn volume,
        descending, ties by address; listed under ``topRecipients`` as the
        interface names it.

        Returns
        -------
        dict
            ``{"startDate", "endDate", "topRecipients": [{"address",
            "totalVolume", "transactionCount"}]}``.
        """
        start, end = self.window(start, end)
        limit = arguments.integer(limit, "limit", low=1, high=MAX_LIMIT)
        lo, hi, _ = self._bounds(start, end)
        a, b = self._burn_range(lo, hi)
        body: dict[str, Any] = {"startDate": start, "endDate": end, "topRecipients": []}
        if a == b:
            return body
        codes = self._codes["message_sender"][a:b]
        size = len(self._uniques["message_sender"])
        counts = np.bincount(codes, minlength=size)
        hi_sum = np.bincount(codes, weights=self._amt_hi[a:b], minlength=size)
        lo_sum = np.bincount(codes, weights=self._amt_lo[a:b], minlength=size)
        volume = (hi_sum.astype(np.int64) << _SPLIT) + lo_sum.astype(np.int64)
        active = np.flatnonzero(counts)
        if len(active) > limit:
            kth = np.partition(volume[active], len(active) - limit)[len(active) - limit]
            active = active[volume[active] >= kth]
        ranked = active[np.lexsort((active, -volume[active]))][:limit]
        table = self._out["message_sender"]
        body["topRecipients"] = [
            {"address": table[k], "totalVolume": v, "transactionCount": c}
            for k, v, c in zip(
                ranked.tolist(), volume[ranked].tolist(), counts[ranked].tolist(), strict=True
            )
        ]
        return body
