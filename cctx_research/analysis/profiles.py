"""What one address received over CCTP: :func:`profile` and its :class:`AddressProfile`.

Part of the address family (:mod:`cctx_research.analysis.addresses`, which
re-exports both): totals, chains, corridors, counterparties and activity of
one recipient.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd

from .. import addressing, chains, schema, times
from . import _common, _coverage, engines, results

__all__ = ["AddressProfile", "profile"]


@dataclass(frozen=True, repr=False)
class AddressProfile:
    """What one address received over CCTP (see :func:`profile`).

    Attributes
    ----------
    address : str
        Normalised lowercase address.
    transfers : int
        Number of transfers received.
    volume : float
        USDC received.
    volume_raw : int
        Base units received.
    median_amount : float
        The typical ticket (median amount, USDC); NaN when no transfers.
    first_seen, last_seen : pandas.Timestamp or None
    source_chains : pandas.DataFrame
        ``chain``, ``volume``, ``count`` per source chain, largest first.
    destination_chains : pandas.DataFrame
        The same per destination chain.
    corridors : pandas.DataFrame
        ``corridor``, ``source_chain``, ``destination_chain``, ``volume``,
        ``count``, largest first.
    counterparties : pandas.DataFrame
        ``message_sender``, ``volume``, ``count``, largest first; empty when
        the profile was built from ``client.received`` (which has no sender).
    activity : pandas.DataFrame
        ``timestamp`` (bucket start), ``volume``, ``count`` per bucket from
        first to last seen, zeros included. Its
        :func:`~cctx_research.analysis.results.result_info` holds ``freq``
        and ``covered`` (the span the data is known to cover, within the
        window), so that a bucket partly outside it can be marked.
    start, end : pandas.Timestamp or None
        The window asked for, if any.
    source : str
        ``"transfers"`` or ``"client"``: where the data came from.
    """

    address: str
    transfers: int
    volume: float
    volume_raw: int
    median_amount: float
    first_seen: pd.Timestamp | None
    last_seen: pd.Timestamp | None
    source_chains: pd.DataFrame = field(compare=False)
    destination_chains: pd.DataFrame = field(compare=False)
    corridors: pd.DataFrame = field(compare=False)
    counterparties: pd.DataFrame = field(compare=False)
    activity: pd.DataFrame = field(compare=False)
    start: pd.Timestamp | None = None
    end: pd.Timestamp | None = None
    source: str = "transfers"

    @property
    def span(self) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
        """``(first_seen, last_seen)``: the span of the data seen."""
        return self.first_seen, self.last_seen

    def _summary(self) -> list[tuple[str, str]]:
        def when(ts: pd.Timestamp | None) -> str:
            return "-" if ts is None else ts.strftime("%Y-%m-%d %H:%M:%S UTC")

        def chain_list(frame: pd.DataFrame) -> str:
            return ", ".join(map(str, frame["chain"])) or "-"

        median = "-" if np.isnan(self.median_amount) else f"{self.median_amount:,.2f} USDC"
        return [
            ("transfers", f"{self.transfers:,}"),
            ("volume", f"{self.volume:,.2f} USDC"),
            ("typical ticket (median)", median),
            ("first seen", when(self.first_seen)),
            ("last seen", when(self.last_seen)),
            ("source chains", chain_list(self.source_chains)),
            ("destination chains", chain_list(self.destination_chains)),
            ("corridors", f"{len(self.corridors):,}"),
            (
                "counterparties",
                f"{len(self.counterparties):,}"
                if self.source == "transfers"
                else "unknown (client.received has no sender)",
            ),
        ]

    def __repr__(self) -> str:
        lines = [f"AddressProfile({self.address})"]
        width = max(len(k) for k, _ in self._summary())
        lines += [f"  {k:<{width}}  {v}" for k, v in self._summary()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
            f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
            for k, v in self._summary()
        )
        parts = [
            f"<div><b>Address profile</b> <code>{html.escape(self.address)}</code>",
            f"<table>{rows}</table>",
        ]
        # amounts as a reader writes them (6,561,854.25), never pandas' 6.561854e+06
        amounts = "{:,.2f}".format
        if len(self.corridors):
            parts.append(
                "<p><b>Corridors</b></p>"
                + self.corridors.head(10).to_html(index=False, float_format=amounts)
            )
        if len(self.counterparties):
            parts.append(
                "<p><b>Top counterparties</b></p>"
                + self.counterparties.head(10).to_html(index=False, float_format=amounts)
            )
        parts.append("</div>")
        return "".join(parts)


def _per_chain(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    agg = frame.groupby(column, observed=True)["amount"].agg(["sum", "count"]).reset_index()
    agg.columns = ["chain", "volume", "count"]
    order = chains.in_order(agg["chain"].astype(str))
    agg["chain"] = _common.chain_column(agg["chain"].astype(str), order)
    agg["volume"] = agg["volume"].astype("float64")
    agg["count"] = agg["count"].astype("int64")
    return agg.sort_values(["volume", "count"], ascending=False, kind="stable").reset_index(
        drop=True
    )


def _profile_corridors(frame: pd.DataFrame) -> pd.DataFrame:
    agg = (
        frame.groupby(["source_chain", "destination_chain"], observed=True)["amount"]
        .agg(["sum", "count"])
        .reset_index()
    )
    out = pd.DataFrame(
        {
            **_common.corridor_columns(agg["source_chain"], agg["destination_chain"]),
            "volume": agg["sum"].astype("float64"),
            "count": agg["count"].astype("int64"),
        }
    )
    return out.sort_values(["volume", "count"], ascending=False, kind="stable").reset_index(
        drop=True
    )


def _activity(frame: pd.DataFrame, freq: str, covered: Any) -> pd.DataFrame:
    agg = frame.groupby(_common.time_grouper(freq))["amount"].agg(["sum", "count"])
    if len(agg):
        buckets = pd.date_range(agg.index.min(), agg.index.max(), freq=freq, name="timestamp")
    else:
        buckets = pd.DatetimeIndex([], tz="UTC", name="timestamp")
    agg = agg.reindex(buckets, fill_value=0).reset_index()
    agg.columns = ["timestamp", "volume", "count"]
    out = agg.astype({"timestamp": schema.TIMESTAMP, "volume": "float64", "count": "int64"})
    # the span the data covers, as volumes.timeseries records it: a bucket reaching
    # outside it (today, while it lasts) can then be told from a quiet one
    return results.describe(out, span=results.span_of(frame["timestamp"]), freq=freq,
                            covered=covered)  # fmt: skip


def _covered(frame: Any, start: Any, end: Any) -> tuple[Any, Any] | None:
    """The span the data is known to cover: its provenance's, within ``[start, end)``."""
    span = _coverage.recorded(frame)
    if span is None:
        return None if start is None or end is None else (start, end)
    lo, hi = span
    return (lo if start is None else max(lo, start), hi if end is None else min(hi, end))


def profile(
    address: str,
    transfers: pd.DataFrame | None = None,
    *,
    client: Any = None,
    start: times.TimeLike | None = None,
    end: times.TimeLike | None = None,
    freq: str = "1D",
) -> AddressProfile:
    """Profile what an address received: totals, chains, corridors, counterparties.

    Give either a ``transfers`` frame (the address is matched against
    ``mint_recipient``, and against ``mint_recipient_owner`` where the frame
    has it: a Solana owner receives what lands in its token accounts) or a ``client``, in which case
    ``client.received(address, start=start, end=end)`` is called. The client's
    ``"received"`` frame has no ``message_sender``, so ``counterparties`` is
    empty then.

    Parameters
    ----------
    address : str
        In its chain's own format (EVM ``0x`` + 40 hex digits, Solana
        base58, Noble ``noble1...``, Sui/Aptos ``0x`` + 64 hex) or the
        interface's bytes32 form; hex in any case.
    transfers : pandas.DataFrame, optional
        A canonical ``"transfers"`` frame.
    client : cctx_research Client, optional
        Anything with ``received(address, start=..., end=...)`` returning a
        ``"received"`` frame.
    start, end : time, optional
        Keep transfers with ``start <= timestamp < end`` (naive means UTC).
    freq : str, default "1D"
        Bucket of ``activity``.

    Returns
    -------
    AddressProfile

    Raises
    ------
    ValueError
        For a malformed address, ``start >= end``, or neither/both of
        ``transfers`` and ``client``.
    TypeError
        For an address or time of the wrong type.
    DataError
        If the frame does not follow its schema.

    Examples
    --------
    >>> p = profile("0x" + "ab" * 20, transfers)  # doctest: +SKIP
    >>> p.volume, p.first_seen  # doctest: +SKIP
    """
    addr = addressing.normalize_address(address)
    _common.frequency(freq)
    if (transfers is None) == (client is None):
        raise ValueError(
            "pass exactly one data source: a transfers frame (profile(address, transfers)) "
            "or client=Client(...)"
        )
    start_ts = None if start is None else times.to_timestamp(start, name="start")
    end_ts = None if end is None else times.to_timestamp(end, name="end")
    if start_ts is not None and end_ts is not None and start_ts >= end_ts:
        raise ValueError(
            f"start ({start_ts.isoformat()}) must be before end ({end_ts.isoformat()}); "
            "windows are half-open [start, end)"
        )
    if client is not None:
        frame, source = _from_client(client, addr, start, end), "client"
    else:
        frame, source = _from_transfers(transfers, addr), "transfers"
    mask = pd.Series(True, index=frame.index)
    if start_ts is not None:
        mask &= frame["timestamp"] >= start_ts
    if end_ts is not None:
        mask &= frame["timestamp"] < end_ts
    covered = _covered(frame, start_ts, end_ts)
    frame = frame[mask]
    first, last = results.span_of(frame["timestamp"])
    return AddressProfile(
        address=addr,
        transfers=len(frame),
        volume=float(frame["amount"].sum()),
        volume_raw=int(frame["amount_raw"].sum()),
        median_amount=float(frame["amount"].median()) if len(frame) else float("nan"),
        first_seen=first,
        last_seen=last,
        source_chains=_per_chain(frame, "source_chain"),
        destination_chains=_per_chain(frame, "destination_chain"),
        corridors=_profile_corridors(frame),
        counterparties=_counterparties(frame if source == "transfers" else None),
        activity=_activity(frame, freq, covered),
        start=start_ts,
        end=end_ts,
        source=source,
    )


def _from_client(
    client: Any, addr: str, start: times.TimeLike | None, end: times.TimeLike | None
) -> pd.DataFrame:
    """What ``client.received`` lists for the address (a ``"received"`` frame)."""
    if not callable(getattr(client, "received", None)):
        raise TypeError("client must have a received(address, start=..., end=...) method")
    # received lists each transfer once: by its mint when completed, by
    # its burn while pending; both are USDC on its way to this address
    return schema.validate(client.received(addr, start=start, end=end), "received")


def _from_transfers(transfers: Any, addr: str) -> pd.DataFrame:
    """The rows of a transfers frame (any engine) received by the address or its owner."""
    if engines.is_pandas(transfers) or not engines.recognised(transfers):
        frame = _common.transfers_frame(transfers)
    else:
        # only this address's rows leave the engine
        lf = engines.lazy(transfers, "transfers")
        hit = _spelled(nw.col("mint_recipient"), addr)
        if _common.OWNER in lf.collect_schema().names():
            hit = hit | _spelled(nw.col(_common.OWNER), addr).fill_null(False)
        frame = _common.typed(engines.collect(lf.filter(hit)), "transfers")
    # a token account's owner receives what lands in any of its accounts
    hit = _common.canonical_addresses(frame["mint_recipient"]) == addr
    if _common.OWNER in frame.columns:
        owner = frame[_common.OWNER].astype(schema.STRING)
        hit |= _common.canonical_addresses(owner) == addr
    return frame[hit]


def _spelled(column: Any, addr: str) -> Any:
    """Rows whose column spells ``addr`` in any form a frame may hold: hex in any case (and
    padded to bytes32), a non-EVM address as its chain writes it (case kept) or as bytes32."""
    if len(addr) == 42:
        return column.str.to_lowercase().is_in([addr, "0x" + "00" * 12 + addr[2:]])
    if addr.startswith("0x"):
        return column.str.to_lowercase().is_in([addr])
    return column.is_in([addr]) | column.str.to_lowercase().is_in([addressing.to_bytes32(addr)])


def _counterparties(frame: pd.DataFrame | None) -> pd.DataFrame:
    """Volume and count per ``message_sender``, largest first; empty without senders (None)."""
    if frame is not None and len(frame):
        cp = frame.groupby("message_sender")["amount"].agg(["sum", "count"]).reset_index()
        cp.columns = ["message_sender", "volume", "count"]
        cp = cp.sort_values(
            ["volume", "count", "message_sender"], ascending=[False, False, True], kind="stable"
        ).reset_index(drop=True)
    else:
        cp = pd.DataFrame(
            {
                "message_sender": pd.Series([], dtype=schema.STRING),
                "volume": pd.Series([], dtype="float64"),
                "count": pd.Series([], dtype="int64"),
            }
        )
    return cp.astype({"message_sender": schema.STRING, "volume": "float64", "count": "int64"})
