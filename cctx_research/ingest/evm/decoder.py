"""Decode CCTP event logs, all rows at once.

:func:`decode_logs` takes the normalised log frame
(:mod:`cctx_research.ingest.evm.frame`) and returns :class:`DecodedLogs`:
one frame per event family, a table of the logs it could not decode, and
counts. Fixed 32-byte words are read for every log of an event at once
(numpy over one flat byte buffer, see :mod:`cctx_research.ingest.hexcodec`);
only the dynamic ``bytes`` fields (``hookData``, ``message``,
``messageBody``) are sliced per row, still without an ABI library.

Examples
--------
>>> import pandas as pd
>>> from cctx_research.ingest.evm.events import MINT_AND_WITHDRAW_V1 as spec
>>> word = lambda v: "%064x" % v
>>> logs = pd.DataFrame({"block_number": [9], "log_index": [2], "tx_hash": ["0x" + "ab" * 32],
...     "address": ["0x" + "11" * 20],
...     "topic0": [spec.topic0], "topic1": ["0x" + word(0xCAFE)], "topic2": ["0x" + word(0xBEEF)],
...     "data": ["0x" + word(1_500_000)]})
>>> decoded = decode_logs(logs, chain="base")
>>> mint = decoded.mints.iloc[0]
>>> int(mint.amount_raw), int(mint.domain), mint.chain_id, mint.mint_recipient[-4:]
(1500000, 6, '8453', 'cafe')
>>> decoded.counts["decoded"], decoded.counts["missing_times"]
(1, 1)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from cctx_research import schema
from cctx_research.ingest.evm import events as ev
from cctx_research.ingest.evm.fields import KINDS, Chunk, decode_event, event_frame
from cctx_research.ingest.evm.frame import conform_logs, conforms, is_binary
from cctx_research.ingest.evm.log_keys import chain_columns, duplicates, timestamps
from cctx_research.ingest.hexcodec import large_binaries
from cctx_research.ingest.rows import column

__all__ = ["COUNTS", "DecodedLogs", "decode_logs"]

logger = logging.getLogger(__name__)

COUNTS = (
    "logs",
    "decoded",
    "skipped_other_events",
    "duplicates",
    "removed",
    "bad",
    "missing_times",
)
"""The keys of :attr:`DecodedLogs.counts`."""

_BAD_COLUMNS = {"source_file": schema.STRING, "index": "int64", "reason": schema.STRING}


@dataclass(frozen=True)
class DecodedLogs:
    """What :func:`decode_logs` returns: one frame per event family, bad logs, counts."""

    burns: pd.DataFrame
    """``DepositForBurn``, V1 and V2."""
    mints: pd.DataFrame
    """``MintAndWithdraw``, V1 and V2."""
    sent: pd.DataFrame
    """``MessageSent``, with the message header and burn body decoded."""
    received: pd.DataFrame
    """``MessageReceived``, with the burn body decoded."""
    bad: pd.DataFrame
    """Logs that could not be decoded: ``source_file``, ``index``, ``reason``."""
    counts: Mapping[str, int] = field(default_factory=dict)
    """``logs``, ``decoded``, ``skipped_other_events``, ``duplicates``, ``removed``,
    ``bad``, ``missing_times``."""


CHUNK_LOGS = 1 << 17
"""Logs decoded at once: each event family's rows come chunk by chunk, V1 then V2 in each."""


def decode_logs(
    logs: pd.DataFrame,
    *,
    chain: Any = None,
    blocks: pd.DataFrame | None = None,
    message: bool = True,
) -> DecodedLogs:
    """Decode the CCTP events in a frame of logs, vectorised.

    Parameters
    ----------
    logs : DataFrame
        What :func:`~cctx_research.ingest.evm.logs.read_logs` returns (or any
        frame :func:`~cctx_research.ingest.evm.frame.conform_logs` accepts).
    chain : str, int or mapping, optional
        The chain of logs whose row has no ``chain_id``: a chain name or
        ``"domain-N"`` (``"base"``), or an EVM chain id (``8453``; numbers are
        always chain ids, never domains), or a mapping from ``source_file``
        to either. Rows with a ``chain_id`` (cryo) keep theirs.
    blocks : DataFrame, optional
        Block times (:func:`~cctx_research.ingest.evm.logs.read_blocks`), used
        for logs without ``block_timestamp``. Joined on ``(chain_id,
        block_number)`` when the blocks carry a chain id, else on the number.
    message : bool
        Give each ``MessageSent`` its whole ``message`` as hex (the default).
        False leaves that column null (the message's fields are decoded all
        the same), which saves a large load making hex it does not use.

    Returns
    -------
    DecodedLogs
        ``burns``, ``mints``, ``sent``, ``received``, ``bad`` and ``counts``.
        Reorged logs (``removed``) are dropped, duplicates (same chain, tx
        hash and log index) kept once, logs of other events skipped, and
        malformed logs listed in ``bad`` with the reason; every one of those
        is counted. Nothing raises for bad rows: the caller decides. Each
        frame holds V1 rows, then V2 rows, each in the order of the logs
        (sort by ``timestamp`` or ``block_number`` as needed).

    Raises
    ------
    TypeError, ValueError
        If ``logs`` is not a log frame, or ``chain`` or ``blocks`` are not
        what is described above.
    """
    # read_logs' frame conforms already: decoded as it is, not copied once more
    frame = logs if conforms(logs) else conform_logs(logs)
    counts = dict.fromkeys(COUNTS, 0)
    counts["logs"] = len(frame)
    removed = frame["removed"].fillna(False).to_numpy(dtype=bool)
    counts["removed"] = int(removed.sum())
    if removed.any():
        frame = frame[~removed].reset_index(drop=True)
    chain_id, domain = chain_columns(frame, chain)
    event, usable, bad = _screen(frame, chain_id, counts)
    where = {
        "domain": domain,
        "chain_id": chain_id,
        "timestamp": timestamps(frame, chain_id, blocks),
        "source_file": frame["source_file"],
        "index": frame["index"],
    }
    parts: dict[str, list[pd.DataFrame]] = {k: [] for k in KINDS}
    # Chunks keep each step's working set in the CPU caches: per log, a whole
    # million at once is several times slower than a hundred thousand.
    for lo in range(0, len(frame), CHUNK_LOGS):
        bad += _decode_chunk(frame, lo, usable, event, where, parts, message)
    return _decoded(parts, bad, counts)


def _screen(
    frame: pd.DataFrame, chain_id: pd.Series, counts: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, list[pd.DataFrame]]:
    """Each log's event (its place in ``EVENTS``, -1 for others), which logs are decoded (not
    unreadable, not a duplicate), and the unreadable ones as bad rows; counted."""
    problem = frame["problem"].notna().to_numpy()
    bad = [
        frame.loc[problem, ["source_file", "index", "problem"]].rename(
            columns={"problem": "reason"}
        )
    ]
    duplicate = duplicates(frame, chain_id) & ~problem
    counts["duplicates"] = int(duplicate.sum())
    if is_binary(frame["topic0"]):
        topic0 = large_binaries(frame["topic0"])
        known = pa.array([bytes.fromhex(e.topic0[2:]) for e in ev.EVENTS], pa.large_binary())
    else:
        topic0 = pc.ascii_lower(pc.utf8_trim_whitespace(column(frame["topic0"])))
        known = pa.array([e.topic0 for e in ev.EVENTS])
    event = pc.index_in(topic0, value_set=known)
    event = pc.fill_null(event, -1).to_numpy(zero_copy_only=False)
    usable = ~problem & ~duplicate
    counts["skipped_other_events"] = int((usable & (event < 0)).sum())
    return event, usable, bad


def _decode_chunk(frame: pd.DataFrame, lo: int, usable: np.ndarray, event: np.ndarray,
                  where: dict[str, pd.Series], parts: dict[str, list[pd.DataFrame]],
                  message: bool = True) -> list[pd.DataFrame]:  # fmt: skip
    """Decode the logs of the chunk starting at ``lo`` into ``parts``, each event's rows with
    the columns of ``where``; the logs that do not decode, as bad rows."""
    hi = min(lo + CHUNK_LOGS, len(frame))
    shared = Chunk(frame.iloc[lo:hi], message=message)
    bad = []
    for k, spec in enumerate(ev.EVENTS):
        local = np.flatnonzero(usable[lo:hi] & (event[lo:hi] == k))
        if not len(local):
            continue
        good, reasons = decode_event(spec, shared, local, parts[spec.kind])
        rows = local + lo
        for name, values in where.items():
            parts[spec.kind][-1][name] = values.iloc[rows[good]].array
        bad.append(
            pd.DataFrame(
                {
                    "source_file": frame["source_file"].iloc[rows[~good]].to_numpy(),
                    "index": frame["index"].iloc[rows[~good]].to_numpy(),
                    "reason": reasons[~good],
                }
            )
        )
    return bad


def _decoded(parts: dict[str, list[pd.DataFrame]], bad: list[pd.DataFrame],
             counts: dict[str, int]) -> DecodedLogs:  # fmt: skip
    """The typed frames of every event, the bad rows in file order, and the counts."""
    frames = {kind: event_frame(kind, p) for kind, p in parts.items()}
    bad_frame = pd.concat(bad, ignore_index=True).astype(_BAD_COLUMNS)
    bad_frame = bad_frame.sort_values(["source_file", "index"], ignore_index=True)
    counts["bad"] = len(bad_frame)
    counts["decoded"] = sum(len(f) for f in frames.values())
    counts["missing_times"] = int(sum(f["timestamp"].isna().sum() for f in frames.values()))
    logger.info(
        "decoded %(decoded)d of %(logs)d logs: %(skipped_other_events)d other events, "
        "%(duplicates)d duplicates, %(removed)d removed, %(bad)d bad, "
        "%(missing_times)d without a time",
        counts,
    )
    return DecodedLogs(bad=bad_frame, counts=counts, **frames)
