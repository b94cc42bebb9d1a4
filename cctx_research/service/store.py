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

The arrays are built by :class:`~cctx_research.service.index.LedgerIndex`;
this module finds the rows that answer each operation, and
:mod:`~cctx_research.service.records` writes them as the interface's records.

The store has a clock (see :mod:`cctx_research.service`): a pinned
``pandas.Timestamp`` or ``None`` for "now", read again on every call. It
shows only burns with burn time <= clock and mints with mint time <= clock.

Windows are Unix seconds with **inclusive** bounds: an event at ``t`` (whole
seconds, floored) is in ``[start, end]`` when ``start <= t <= end``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import arguments, chains, schema
from ..addressing import normalize_hash
from ..errors import NotFoundError
from ..times import TimeLike, to_timestamp
from . import records
from .dataset import LedgerDataset
from .index import SPLIT, LedgerIndex, TimeSums, domain_mask, time_sums, wire

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

_NS = 1_000_000_000
_I64_MAX = np.iinfo(np.int64).max
_SCAN_CHUNK = 65_536


# --------------------------------------------------------------------------
# the store


class Store:
    """An indexed, in-memory store of transfers; answers the interface's operations.

    Parameters
    ----------
    ledger : pandas.DataFrame or LedgerDataset
        Kind ``"ledger"`` (see :func:`cctx_research.schema.validate`); any row
        order. A :class:`~cctx_research.service.dataset.LedgerDataset` (a ledger
        dataset on disk) is indexed a column at a time, with no frame of it.
        ``mint_timestamp`` NaT means never minted; ``burn_timestamp`` NaT
        (with a mint time) is a mint whose burn is not in the data; a missing
        tx hash means that transaction cannot be looked up by hash.
    clock : date-like, optional
        Pin the service's clock; ``None`` (default) means "now", read again
        on every call.
    trusted : bool, default False
        The frame was made by the toolkit's own sample generator, whose
        values are valid by construction: its index is built when the first
        operation needs it (in a thread-safe way), so a store is ready at
        once. Otherwise the index is built, and every value checked, here.

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

    def __init__(
        self,
        ledger: pd.DataFrame | LedgerDataset,
        *,
        clock: TimeLike | None = None,
        trusted: bool = False,
    ) -> None:
        if not isinstance(ledger, LedgerDataset):  # a dataset checks its columns when opened
            schema.validate(ledger, "ledger")
        self.clock: pd.Timestamp | None = None if clock is None else to_timestamp(clock)
        self._n = len(ledger)
        self._lock = threading.Lock()
        self._ledger: pd.DataFrame | LedgerDataset | None = ledger
        self._index: LedgerIndex | None = None
        self._sums: TimeSums | None = None  # the volume's arrays, before the index is needed
        if not trusted:
            self._ix  # noqa: B018 (built and checked now: a bad value is said at once)

    @property
    def _ix(self) -> LedgerIndex:
        """The index, built on first use (a trusted ledger) or in ``__init__``."""
        index = self._index
        if index is None:
            with self._lock:
                if self._index is None:
                    assert self._ledger is not None
                    self._index = LedgerIndex(self._ledger)
                    self._ledger = None  # the index holds what it needs
                index = self._index
        return index

    @classmethod
    def from_file(
        cls, path: str | Path, *, clock: TimeLike | None = None, fractions: str = "refuse"
    ) -> Store:
        """A store over files :func:`cctx_research.load` reads (ledgers, transfers, exports, logs).

        See :func:`cctx_research.service.loading.load_ledger` (a ``"transfers"``
        file has no hashes: hash look-ups of it find nothing; ``fractions``
        says what to do with times finer than a second). A ledger dataset, or a
        sync directory's, is indexed as it lies on disk (:class:`LedgerDataset`).

        Raises
        ------
        DataError
            If the file is missing or does not fit either kind.
        """
        from .dataset import ledger_dataset
        from .loading import load_ledger

        found = ledger_dataset(path)
        if found is not None:
            return cls(LedgerDataset(found, fractions=fractions), clock=clock)
        return cls(load_ledger(path, fractions=fractions), clock=clock)

    # ------------------------------------------------------------------
    # clock and windows

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        clock = "now" if self.clock is None else self.clock.isoformat()
        return f"<Store {self._n} transfers, clock={clock}>"

    def domains(self) -> tuple[int, ...]:
        """The CCTP domains its transfers leave or reach, sorted (builds the index if needed)."""
        return tuple(int(d) for d in np.union1d(self._ix.src, self._ix.dst))

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

    def _time_sums(self) -> TimeSums:
        """What the volume operation reads: the index's, or made apart when it is not built
        (a warm client asks the service for its clock, a volume, before anything else)."""
        if self._index is not None:
            return self._index.time_sums()
        with self._lock:
            if self._index is not None:
                return self._index.time_sums()
            if self._sums is None:
                assert self._ledger is not None
                self._sums = time_sums(self._ledger)
            return self._sums

    def _burn_range(self, lo: int, hi: int) -> tuple[int, int]:
        a = int(np.searchsorted(self._ix.burn_ns, lo, side="left"))
        b = int(np.searchsorted(self._ix.burn_ns, hi, side="right")) if hi >= lo else a
        return a, max(a, b)

    def _mint_range(self, lo: int, hi: int) -> tuple[int, int]:
        a = int(np.searchsorted(self._ix.mint_ns_sorted, lo, side="left"))
        b = int(np.searchsorted(self._ix.mint_ns_sorted, hi, side="right")) if hi >= lo else a
        return a, max(a, b)

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
        src_ok = domain_mask(
            chains.DEFAULT_DOMAINS if sources is None else sources, self._ix.n_domains
        )
        dst_ok = domain_mask(
            chains.DEFAULT_DOMAINS if destinations is None else destinations, self._ix.n_domains
        )
        lo, hi, clock = self._bounds(start, end)
        a, b = self._mint_range(lo, hi)
        skip = (page - 1) * limit
        if src_ok[self._ix.present_src].all() and dst_ok[self._ix.present_dst].all():
            # the filter keeps every minted row: the page is a plain slice
            positions = np.arange(min(a + skip, b), min(a + skip + limit, b))
        else:
            positions = self._scan_mints(a, b, src_ok, dst_ok, skip, limit)
        return records.mint_groups(self._ix, self._ix.mint_rows[positions], clock)

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
                src_ok[self._ix.mint_src[pos:stop]] & dst_ok[self._ix.mint_dst[pos:stop]]
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
        for row, is_mint in self._ix.find_hash(text):
            when = self._ix.mint_ns[row] if is_mint else self._ix.burn_ns[row]
            if when <= clock:
                shown = text if text.startswith("0x") else self._ix.hash_text(row, is_mint)
                return records.detail(self._ix, row, is_mint, shown, clock)
        raise NotFoundError(
            "no transaction with that hash", operation="transactions-txHash", status=404
        )

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
        canon = wire(address)
        start, end = self.window(start, end)
        page = arguments.integer(page, "page", low=1, high=MAX_PAGE)
        limit = arguments.integer(limit, "limit", low=1, high=MAX_LIMIT)
        lo, hi, clock = self._bounds(start, end)
        table = self._ix.uniques["mint_recipient"]
        code = int(np.searchsorted(table, canon))
        empty = {"address": canon, "totalTransactions": 0, "transactions": []}
        if code >= len(table) or table[code] != canon:
            return empty
        rows = self._ix.rcpt_rows[self._ix.rcpt_off[code] : self._ix.rcpt_off[code + 1]]
        done = self._ix.minted[rows] & (self._ix.mint_ns[rows] <= clock)
        ts = np.where(done, self._ix.mint_ns[rows], self._ix.burn_ns[rows])
        keep = (ts >= lo) & (ts <= hi)
        rows, ts, done = rows[keep], ts[keep], done[keep]
        order = np.lexsort((self._ix.id_rank[rows], ts))
        skip = (page - 1) * limit
        sel = order[skip : skip + limit]
        rows, ts, done = rows[sel], ts[sel], done[sel]
        items = records.received_items(self._ix, rows, ts, done)
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
        sums = self._time_sums()
        ba, bb = _between(sums.burn_ns, lo, hi)
        ma, mb = _between(sums.mint_ns, lo, hi)
        burn_volume = int(sums.burn_cum[bb] - sums.burn_cum[ba])
        mint_volume = int(sums.mint_cum[mb] - sums.mint_cum[ma])
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
        codes = self._ix.codes["message_sender"][a:b]
        size = len(self._ix.uniques["message_sender"])
        counts = np.bincount(codes, minlength=size)
        hi_sum = np.bincount(codes, weights=self._ix.amt_hi[a:b], minlength=size)
        lo_sum = np.bincount(codes, weights=self._ix.amt_lo[a:b], minlength=size)
        volume = (hi_sum.astype(np.int64) << SPLIT) + lo_sum.astype(np.int64)
        active = np.flatnonzero(counts)
        if len(active) > limit:
            kth = np.partition(volume[active], len(active) - limit)[len(active) - limit]
            active = active[volume[active] >= kth]
        ranked = active[np.lexsort((active, -volume[active]))][:limit]
        table = self._ix.out["message_sender"]
        body["topRecipients"] = [
            {"address": table[k], "totalVolume": v, "transactionCount": c}
            for k, v, c in zip(
                ranked.tolist(), volume[ranked].tolist(), counts[ranked].tolist(), strict=True
            )
        ]
        return body


def _between(times: np.ndarray, lo: int, hi: int) -> tuple[int, int]:
    """The positions ``[a, b)`` of the sorted ``times`` with ``lo <= t <= hi``."""
    a = int(np.searchsorted(times, lo, side="left"))
    b = int(np.searchsorted(times, hi, side="right")) if hi >= lo else a
    return a, max(a, b)
