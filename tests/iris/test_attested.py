"""Identical V2 transfers linked on the nonces Iris attested (``pairing="attested"``).

The transfers are one real attested message's content three times (an app paying one
recipient a fixed amount): ``v2_attested_base_to_eth_19500`` of
``tests/fixtures/cctp_real/v2_messages.json`` (its Iris reply is recorded there). Filled in:
the second and third attested nonces (the real one with its last byte changed), the hashes
and times, and Iris's replies for the filled-in hashes (the real reply's shape, each with its
own message).
"""

from __future__ import annotations

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research.errors import DataError
from cctx_research.provenance import provenance
from tests.ingest.real import burn_logs, message, mint_logs, tx, write

from .standin import IrisStandin

T0 = 1_763_000_000  # 2025-11-13, filled in
REAL = message("v2_attested_base_to_eth_19500")


def _twin(k: int):
    nonce = REAL.nonce[:-1] + bytes([(REAL.nonce[-1] + k) % 256])
    return type(REAL)(REAL.raw[:12] + nonce + REAL.raw[44:], REAL.entry)


@pytest.fixture
def crossing(tmp_path):
    """Three identical transfers whose mints land out of order: the second burn is minted
    first. Content alone links each mint to the earliest free burn (wrong for two of them)."""
    mint_after = [1800, 300, 1500]  # seconds after each burn
    burns, mints = [], []
    for k in range(3):
        burns += burn_logs(REAL, block=10 + k, tx_hash=tx(f"crossing burn {k}"), index=2,
                           time=T0 + 600 * k)
        mints += mint_logs(_twin(k), block=90 + k, tx_hash=tx(f"crossing mint {k}"), index=5,
                           time=T0 + 600 * k + mint_after[k])
    mints.sort(key=lambda log: log["blockTimestamp"])
    paths = [write(tmp_path / "base.json", burns), write(tmp_path / "ethereum.json", mints)]
    return paths, {"base.json": "base", "ethereum.json": "ethereum"}, mint_after


def _replies():
    out = []
    for k in range(3):
        twin = _twin(k)
        reply = {"messages": [{
            "attestation": REAL.entry["attestation"], "message": "0x" + twin.raw.hex(),
            "eventNonce": "0x" + twin.nonce.hex(), "cctpVersion": 2, "status": "complete",
        }]}  # fmt: skip
        out.append((6, tx(f"crossing burn {k}"), reply))
    return out


def test_iris_nonces_link_identical_transfers_each_to_its_own_mint(crossing, make_iris):
    paths, chain, mint_after = crossing
    by_content = cctx.load(paths, chain=chain)
    assert set(by_content["pairing"]) == {"content_ambiguous"}
    wrong = (by_content["mint_timestamp"] - by_content["burn_timestamp"]).dt.total_seconds()
    assert sorted(wrong.tolist()) != sorted(float(s) for s in mint_after)

    iris = make_iris(IrisStandin(_replies()))
    messages = pd.concat([iris.messages("base", tx(f"crossing burn {k}")) for k in range(3)],
                         ignore_index=True)
    ledger = cctx.load(paths, chain=chain, attested=messages)
    assert set(ledger["pairing"]) == {"attested"}
    assert ledger["link_group_size"].isna().all() or (ledger["link_group_size"] <= 1).all()
    by_burn = ledger.set_index("burn_tx_hash")
    for k in range(3):
        row = by_burn.loc[tx(f"crossing burn {k}")]
        assert row["nonce"] == "0x" + _twin(k).nonce.hex()
        assert row["mint_tx_hash"] == tx(f"crossing mint {k}")
        latency = (row["mint_timestamp"] - row["burn_timestamp"]).total_seconds()
        assert latency == mint_after[k]
    assert ledger["amount_raw"].sum() == 3 * REAL.amount  # still counted once each
    assert provenance(ledger).count["attested_nonces"] == 3


def test_pending_and_unknown_messages_change_nothing(crossing, make_iris):
    paths, chain, _ = crossing
    pending = {"messages": [{"attestation": "PENDING", "message": "0x", "eventNonce": None,
                             "cctpVersion": 2, "status": "pending_confirmations",
                             "delayReason": "insufficient_fee"}]}  # fmt: skip
    iris = make_iris(IrisStandin([(6, tx("crossing burn 0"), pending)]))
    messages = pd.concat([iris.messages("base", tx(f"crossing burn {k}")) for k in range(3)],
                         ignore_index=True)
    assert messages["status"].tolist() == ["pending_confirmations"]
    ledger = cctx.load(paths, chain=chain, attested=messages)
    assert set(ledger["pairing"]) == {"content_ambiguous"}
    assert provenance(ledger).count["attested_nonces"] == 0


def test_attested_input_is_checked(crossing, tmp_path):
    paths, chain, _ = crossing
    with pytest.raises(DataError, match="no such file"):
        cctx.load(paths, chain=chain, attested=tmp_path / "missing.parquet")
    with pytest.raises(DataError, match=r"lacks .*event_nonce"):
        cctx.load(paths, chain=chain, attested=pd.DataFrame({"tx_hash": ["0x1"]}))
    with pytest.raises(TypeError, match="attested must be a DataFrame"):
        cctx.load(paths, chain=chain, attested=42)


def _with_expiration(m, block: int):
    """``m`` with its V2 body's expirationBlock (body offset 196) set (filled in)."""
    raw = bytearray(m.raw)
    at = m.header_size + 196
    raw[at : at + 32] = block.to_bytes(32, "big")
    return type(m)(bytes(raw), m.entry)


@pytest.fixture
def waiting(tmp_path):
    """Four identical burns; only the first is minted (at Ethereum block 90)."""
    burns = []
    for k in range(4):
        burns += burn_logs(REAL, block=10 + k, tx_hash=tx(f"waiting burn {k}"), index=2,
                           time=T0 + 60 * k)
    mints = mint_logs(_twin(0), block=90, tx_hash=tx("waiting mint 0"), index=5, time=T0 + 1100)
    paths = [write(tmp_path / "base.json", burns), write(tmp_path / "ethereum.json", mints)]
    ledger = cctx.load(paths, chain={"base.json": "base", "ethereum.json": "ethereum"})
    return ledger


def test_stuck_says_what_each_transfer_waits_on(waiting, make_iris, tmp_path):
    pending_reply = {"messages": [{  # the real pending reply's shape; the reason filled in
        "attestation": "PENDING", "message": "0x", "eventNonce": None, "cctpVersion": 2,
        "status": "pending_confirmations", "delayReason": "insufficient_fee",
    }]}  # fmt: skip

    def complete(m):
        return {"messages": [{"attestation": REAL.entry["attestation"],
                              "message": "0x" + m.raw.hex(), "eventNonce": "0x" + m.nonce.hex(),
                              "cctpVersion": 2, "status": "complete"}]}  # fmt: skip

    iris = make_iris(IrisStandin([
        (6, tx("waiting burn 0"), complete(_twin(0))),
        (6, tx("waiting burn 1"), pending_reply),
        (6, tx("waiting burn 2"), complete(_twin(2))),
        (6, tx("waiting burn 3"), complete(_with_expiration(_twin(3), 50))),
    ]))  # fmt: skip
    messages = pd.concat([iris.messages("base", tx(f"waiting burn {k}")) for k in range(4)],
                         ignore_index=True)
    as_of = pd.Timestamp(T0 + 86_400, unit="s", tz="UTC")
    plain = cctx.analysis.pending.stuck(waiting, as_of=as_of)
    assert len(plain) == 3
    assert "waiting_on" not in plain.columns
    late = cctx.analysis.pending.stuck(waiting, as_of=as_of, attestations=messages)
    said = late.set_index("burn_tx_hash")
    assert said.loc[tx("waiting burn 1"), "waiting_on"] == "attestation_pending"
    assert said.loc[tx("waiting burn 1"), "delay_reason"] == "insufficient_fee"
    assert said.loc[tx("waiting burn 2"), "waiting_on"] == "attested_not_relayed"
    assert pd.isna(said.loc[tx("waiting burn 2"), "delay_reason"])
    assert said.loc[tx("waiting burn 3"), "waiting_on"] == "expired"  # Ethereum is past 50
    assert said.loc[tx("waiting burn 3"), "expiration_block"] == 50
    # a burn Iris was not asked about
    _same_in_duckdb(lambda d: cctx.analysis.pending.stuck(d, as_of=as_of, attestations=messages),
                    waiting, tmp_path)  # fmt: skip
    partial = cctx.analysis.pending.stuck(waiting, as_of=as_of, attestations=messages.iloc[:2])
    assert partial.set_index("burn_tx_hash").loc[tx("waiting burn 2"), "waiting_on"] == "not_asked"
    with pytest.raises(TypeError, match="attestations must be a DataFrame"):
        cctx.analysis.pending.stuck(waiting, as_of=as_of, attestations="iris")
    with pytest.raises(ValueError, match="lacks"):
        cctx.analysis.pending.stuck(waiting, as_of=as_of, attestations=messages[["status"]])


def test_every_pending_transfer_says_what_it_waits_on(waiting, make_iris, tmp_path):
    pending_reply = {"messages": [{"attestation": "PENDING", "message": "0x", "eventNonce": None,
                                   "cctpVersion": 2, "status": "pending_confirmations",
                                   "delayReason": "amount_above_max"}]}  # fmt: skip
    iris = make_iris(IrisStandin([(6, tx("waiting burn 3"), pending_reply)]))
    messages = iris.messages("base", tx("waiting burn 3"))
    as_of = pd.Timestamp(T0 + 600, unit="s", tz="UTC")  # younger than stuck: pending now
    table = cctx.analysis.pending.waiting(waiting, messages, as_of=as_of)
    assert len(table) == 4  # the first burn is minted only later (at T0 + 1100)
    assert table["age_s"].is_monotonic_decreasing
    said = table.set_index("burn_tx_hash")
    assert said.loc[tx("waiting burn 3"), "delay_reason"] == "amount_above_max"
    assert said.loc[tx("waiting burn 1"), "waiting_on"] == "not_asked"
    _same_in_duckdb(lambda d: cctx.analysis.pending.waiting(d, messages, as_of=as_of),
                    waiting, tmp_path)  # fmt: skip
    with pytest.raises(TypeError, match="attestations must be a DataFrame"):
        cctx.analysis.pending.waiting(waiting, None)


def _same_in_duckdb(call, ledger: pd.DataFrame, tmp_path) -> None:
    """``call`` on the ledger left in DuckDB (judged in the engine) equals it on pandas."""
    duckdb = pytest.importorskip("duckdb", reason="the engines extra is not installed")
    path = tmp_path / "waiting.parquet"
    ledger.to_parquet(path)
    plain = ledger.copy()
    plain.attrs.clear()
    theirs, mine = call(plain), call(duckdb.read_parquet(str(path)))
    assert len(theirs)
    pd.testing.assert_frame_equal(mine, theirs)
    assert mine.attrs == theirs.attrs
