"""Column headers for reading: the toolkit's column names as a person reads them, with units.

Frames keep their snake_case names (:mod:`cctx_research.schema`); a table
shown to a person says ``volume (USDC)``, ``fee rate (bps)``, ``from`` and
``to``. :data:`HEADERS` holds the header of every column a result of
:mod:`cctx_research.analysis` may show; :func:`header` falls back on the
name with spaces for one it does not know, and labels an exact integer
twin ``*_raw`` in base units. :func:`displayed` drops such a twin when its
amount in USDC is beside it: a table is for reading, the frame keeps it.
:func:`~cctx_research.views.markup.html_table` applies both.

Examples
--------
>>> header("volume"), header("fee_bps"), header("source_chain")
('volume (USDC)', 'fee rate (bps)', 'from')
>>> header("amount_raw"), header("some_new_column"), header("link rate")
('amount (base units)', 'some new column', 'link rate')
>>> displayed(["address", "volume", "volume_raw", "fee_raw"])
['address', 'volume', 'fee_raw']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["HEADERS", "displayed", "header"]

USDC = "USDC"

HEADERS: Mapping[str, str] = {
    # who and where
    "source_chain": "from",
    "destination_chain": "to",
    "source_domain": "from (domain)",
    "destination_domain": "to (domain)",
    "message_sender": "sender",
    "mint_recipient": "recipient",
    "transfer_id": "transfer",
    "tx_hash": "transaction",
    "burn_tx_hash": "burn transaction",
    "mint_tx_hash": "mint transaction",
    "cctp_version": "CCTP version",
    "size_class": "size class",
    # when
    "timestamp": "time",
    "burn_timestamp": "burned at",
    "mint_timestamp": "minted at",
    "oldest": "oldest burn",
    # how many
    "count": "transfers",
    "transaction_count": "transfers",
    "end_users": "end users",
    "count_in": "transfers in",
    "count_out": "transfers out",
    "count_share": "share of transfers",
    "fast_count": "fast transfers",
    "fast_count_share": "fast share of transfers",
    "hook_count": "with hook data",
    "hook_share": "share with hook data",
    "at_cap_count": "fee at the cap",
    "at_cap_share": "share with the fee at the cap",
    "ambiguous": "ambiguous links",
    "cache_hits": "cache hits",
    # how much
    "volume": f"volume ({USDC})",
    "amount": f"amount ({USDC})",
    "mean": f"mean ({USDC})",
    "median": f"median ({USDC})",
    "inflow": f"inflow ({USDC})",
    "outflow": f"outflow ({USDC})",
    "net": f"net ({USDC})",
    "lower": f"from ({USDC})",
    "upper": f"below ({USDC})",
    "volume_share": "share of volume",
    "fast_volume": f"fast volume ({USDC})",
    "fast_volume_share": "fast share of volume",
    "hook_volume": f"volume with hook data ({USDC})",
    "hook_volume_share": "share of volume with hook data",
    "fee": f"fees ({USDC})",
    "fee_bps": "fee rate (bps)",
    "median_fee_bps": "median fee rate (bps)",
    "median_fee_ratio": "median fee / max fee",
    "p90_fee_ratio": "90th percentile fee / max fee",
    "median_max_fee_bps": "median max fee (bps)",
    # how long (seconds, or durations written out)
    "median_s": "median latency",
    "p10_s": "10th percentile",
    "p90_s": "90th percentile",
    "latency_s": "latency",
    "age_s": "age",
    "max_age_s": "longest wait",
    "reference_s": "typical latency",
    "reference": "typical of",
    "fast_median_s": "median burn to mint, fast",
    "standard_median_s": "median burn to mint, standard",
    # who moves the money (the label first, then the address it names)
    "relayer_label": "relayer",
    "relayer": "address",
    "integrator_label": "integrator",
    "integrator": "depositor",
    "mint_share": "share of mints",
    "median_relay_s": "median burn to mint",
    "v2_share": "share on V2",
    "rebalancing_volume": f"rebalancing ({USDC})",
}
"""The header of each column name the toolkit's results use, with its unit."""

_RAW = "_raw"


def header(column: Any) -> str:
    """The header a person reads for ``column``.

    A name of :data:`HEADERS`; an exact ``*_raw`` twin as its amount in
    base units (``"volume (base units)"``); any other name with spaces for
    underscores. A name already written for reading passes unchanged.
    """
    name = str(column)
    if name in HEADERS:
        return HEADERS[name]
    if name.endswith(_RAW) and len(name) > len(_RAW):
        base = name[: -len(_RAW)]
        shown = HEADERS.get(base, base.replace("_", " "))
        return f"{shown.removesuffix(f' ({USDC})')} (base units)"
    return name.replace("_", " ")


def displayed(columns: Iterable[Any]) -> list[Any]:
    """``columns`` without each ``*_raw`` whose amount (the name without ``_raw``) is among them."""
    names = list(columns)
    present = {str(c) for c in names}
    return [c for c in names if not (str(c).endswith(_RAW) and str(c)[: -len(_RAW)] in present)]
