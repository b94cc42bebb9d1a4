"""The walk over Solana replies reads a block as it reads each of its replies alone.

Alone: each reply put in the walk's shape first (``replies.shaped``, what a
block the walk does not read as it is goes through), then read as a block
of one.

Replies: the real ones of tests/fixtures/solana (README there), with copies
changed the ways sync output and files vary (FILLED: the changes, each
named below).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from cctx_research.addressing import base58_encode
from cctx_research.ingest.solana import replies as solana_read
from cctx_research.ingest.solana.base58 import decode_many
from cctx_research.ingest.solana.walk import Unexpected, read_block
from tests.solana_node.standin import recorded


def _replies() -> list[dict[str, Any]]:
    """Every recorded ``getTransaction`` result (those with only ``meta.status`` are altered
    copies, left out)."""
    return [r for r in recorded(synthetic=True) if "err" in r["meta"]]


def _varied() -> list[dict[str, Any]]:
    rng = random.Random(11)
    base = _replies()
    out = []
    for i in range(120):
        r = copy.deepcopy(base[i % len(base)])
        r["transaction"]["signatures"] = [base58_encode(i.to_bytes(64, "big"))]
        change = rng.randint(0, 4)
        if change == 0:  # failed, its inner instructions not recorded
            r["meta"]["err"] = {"InstructionError": [0, {"Custom": 1}]}
            r["meta"]["innerInstructions"] = None
        elif change == 1:  # a unit error, spelled as a string
            r["meta"]["err"] = "AccountNotFound"
        elif change == 2:  # the same transaction twice
            out.append(copy.deepcopy(r))
        elif change == 3:  # CCTP programs called, but no event (two accounts each)
            for group in r["meta"]["innerInstructions"]:
                for ix in group["instructions"]:
                    ix["accounts"] = [*ix["accounts"], 0]
        out.append(r)
    return out


def _read(replies: list[dict[str, Any]], *, columns: bool) -> solana_read.Flat:
    if columns:
        return solana_read.flatten_documents(((r, None) for r in replies), "f")
    flat, seen = solana_read.Flat("f"), set()
    for i, reply in enumerate(replies):
        solana_read.read_shaped([reply], [i], flat, seen)
    flat.entries = len(replies)
    return flat


def _fields(flat: solana_read.Flat) -> dict[str, Any]:
    return {k: getattr(flat, k) for k in ("signature", "slot", "block_time", "entry", "ev_tx",
                                          "ev_position", "ev_code", "ev_data", "skipped",
                                          "duplicates", "problems", "entries")}  # fmt: skip


def test_a_block_reads_as_each_reply_alone_reads():
    replies = _varied()
    flat = solana_read.Flat("f")
    read_block(replies, list(range(len(replies))), flat, set())  # no Unexpected: all columnar
    columns, one_by_one = _read(replies, columns=True), _read(replies, columns=False)
    assert _fields(columns) == _fields(one_by_one)
    assert set(columns.skipped) == {"failed_transactions", "no_cctp_events"}
    assert columns.duplicates > 0
    assert len(columns.ev_data) > 30


def test_what_the_walk_does_not_read_as_it_is_is_shaped_first():
    replies = _varied()
    odd = copy.deepcopy(replies[3])
    del odd["meta"]["err"]  # recorded with its status only
    odd["meta"]["status"] = {"Ok": None}
    lost = copy.deepcopy(replies[5])
    lost["meta"]["innerInstructions"] = None  # a truncated reply of a CCTP transaction
    lost["meta"]["err"] = None
    mixed = [*replies, odd, lost]
    with pytest.raises(Unexpected):
        read_block(mixed, list(range(len(mixed))), solana_read.Flat("f"), set())
    flat = _read(mixed, columns=True)
    assert _fields(flat) == _fields(_read(mixed, columns=False))
    assert [p["index"] for p in flat.problems] == [len(mixed) - 1]


def test_long_base58_strings_decode_exactly():
    rng = random.Random(2)
    raws = [bytes(rng.randint(0, 2)) + rng.randbytes(n) for n in (700, 900, 1500, 3000)]
    texts = [base58_encode(r) for r in raws]
    buffer, starts, lengths, ok = decode_many(texts)
    assert ok.all()
    for i, raw in enumerate(raws):
        assert bytes(buffer[starts[i] : starts[i] + lengths[i]]) == raw
