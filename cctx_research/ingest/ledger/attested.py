"""V2 burns given the nonce Circle attested, from its attestation API (Iris).

A V2 burn carries no nonce: Circle assigns it at attestation. Where
identical transfers share every field a burn and its mint both carry, the
content alone cannot say which mint is whose (``pairing="content_ambiguous"``).
Iris can: ``/v2/messages/{domain}?transactionHash=`` gives each message of a
burn transaction with its ``eventNonce``. This module gives the burns those
nonces, so :func:`~cctx_research.ingest.ledger.linking.link` joins them on
``(source_domain, nonce)`` (``pairing="attested"``).

*messages* is the frame of :meth:`cctx_research.iris.IrisClient.messages`
(:data:`cctx_research.iris.MESSAGE_COLUMNS`; several calls concatenated, or
the ``iris/messages.parquet`` that ``sync --iris`` keeps). A burn takes the
nonce of the message of its transaction with its destination and amount; two
such messages in one transaction go to its burns in log order. Messages
still pending (no nonce yet) change nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...errors import DataError

__all__ = ["NEEDED", "attach", "read"]

NEEDED: tuple[str, ...] = (
    "source_domain", "tx_hash", "message_index", "event_nonce", "nonce", "cctp_version",
    "destination_domain", "amount_raw", "status",
)  # fmt: skip
"""Columns of an Iris messages frame that attaching nonces reads."""

_ZERO = "0x" + "0" * 64


def read(source: Any) -> pd.DataFrame:
    """An Iris messages frame from a frame or a Parquet file, checked.

    Raises
    ------
    TypeError
        Neither a DataFrame nor a path.
    DataError
        A file that is missing or lacks the columns of Iris's messages.
    """
    if isinstance(source, pd.DataFrame):
        frame = source
        where = "the attested frame"
    elif isinstance(source, (str, Path)):
        path = Path(source).expanduser()
        if not path.is_file():
            raise DataError(
                f"attested={str(path)!r}: no such file",
                hint="pass the messages of cctx.iris.IrisClient().messages(...) as a frame, "
                "or a sync directory's iris/messages.parquet",
            )
        frame = pd.read_parquet(path)
        where = str(path)
    else:
        raise TypeError(
            "attested must be a DataFrame of Iris messages (IrisClient.messages) or a Parquet "
            f"file of them, got {type(source).__name__}"
        )
    missing = [c for c in NEEDED if c not in frame.columns]
    if missing:
        raise DataError(
            f"{where} is not a frame of Iris messages: it lacks {', '.join(missing)}",
            hint="pass the frames of cctx.iris.IrisClient().messages(...), concatenated",
        )
    return frame


def _nonces(messages: pd.DataFrame) -> pd.DataFrame:
    """One row per attested V2 message: domain, hash, destination, amount, order, nonce."""
    v2 = messages[pd.to_numeric(messages["cctp_version"], errors="coerce") == 2]
    def usable(values: pd.Series) -> np.ndarray:
        text = values.astype("string").str.lower()
        ok = text.str.fullmatch(r"0x[0-9a-f]{64}").fillna(False) & text.ne(_ZERO).fillna(False)
        return ok.to_numpy(bool)

    nonce = v2["nonce"].astype("string").str.lower()
    event = v2["event_nonce"].astype("string").str.lower()
    chosen = nonce.where(usable(nonce), event)
    good = usable(chosen)
    out = pd.DataFrame({
        "source_domain": v2["source_domain"].astype("int64"),
        "tx": v2["tx_hash"].astype("string").str.lower(),
        "destination_domain": pd.to_numeric(v2["destination_domain"], errors="coerce"),
        "amount_raw": pd.to_numeric(v2["amount_raw"], errors="coerce"),
        "order": v2["message_index"].astype("int64"),
        "attested": chosen,
    })[good]
    out = out.dropna(subset=["tx", "destination_domain", "amount_raw"])
    # the newest answer of a message wins (a sync keeps every answer it got)
    if "as_of" in messages.columns:
        out["as_of"] = messages.loc[out.index, "as_of"]
        out = out.sort_values("as_of", kind="stable").drop(columns="as_of")
    keys = ["source_domain", "tx", "order"]
    return out.drop_duplicates(keys, keep="last").sort_values(keys, kind="stable")


def attach(burns: pd.DataFrame, messages: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``burns`` with the attested nonce on each V2 burn Iris knows; and how many got one.

    A burn already holding a nonce keeps it. Burns and messages of one
    transaction meet on destination and amount, in log order when several share them.
    """
    if not len(burns) or not len(messages):
        return burns, 0
    known = _nonces(messages)
    wanted = (
        (pd.to_numeric(burns["cctp_version"], errors="coerce") == 2).to_numpy(bool)
        & burns["nonce"].isna().to_numpy(bool)
        & burns["burn_tx_hash"].notna().to_numpy(bool)
    )
    if not len(known) or not wanted.any():
        return burns, 0
    side = burns.loc[wanted, ["source_domain", "burn_tx_hash", "destination_domain",
                              "amount_raw"]].copy()  # fmt: skip
    side["tx"] = side["burn_tx_hash"].astype("string").str.lower()
    side["position"] = np.flatnonzero(wanted)
    order = burns["burn_log_index"] if "burn_log_index" in burns.columns else None
    side["log"] = (pd.Series(range(len(side)), index=side.index) if order is None
                   else order[wanted].astype("Float64").fillna(-1))  # fmt: skip
    group = ["source_domain", "tx", "destination_domain", "amount_raw"]
    side = side.sort_values([*group, "log"], kind="stable")
    side["rank"] = side.groupby(group, sort=False).cumcount()
    known = known.astype({"destination_domain": "int64", "amount_raw": "int64"})
    known["rank"] = known.groupby(group, sort=False).cumcount()
    side = side.astype({"destination_domain": "int64", "amount_raw": "int64"})
    matched = side.merge(known[[*group, "rank", "attested"]], on=[*group, "rank"], how="inner")
    if not len(matched):
        return burns, 0
    out = burns.copy()
    nonce = out["nonce"].astype(object).to_numpy(copy=True)
    nonce[matched["position"].to_numpy(np.int64)] = matched["attested"].astype(object).to_numpy()
    out["nonce"] = pd.array(nonce, dtype=burns["nonce"].dtype)
    return out, len(matched)
