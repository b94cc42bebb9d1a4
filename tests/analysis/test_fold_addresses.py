"""Address-indexed aggregates: one address in several spellings is one row; others are kept."""

from __future__ import annotations

import pandas as pd

from cctx_research import schema
from cctx_research.analysis import _common
from cctx_research.analysis._common import fold_addresses

EVM = "0x" + "ab" * 20
SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
BYTES32 = "0x" + "c6" * 32  # a 32-byte address of another chain, as hex


def _agg(addresses, volumes):
    index = pd.Index(pd.array(addresses, dtype=schema.STRING), name="mint_recipient")
    return pd.DataFrame({"volume": volumes}, index=index)


def test_canonical_addresses_of_every_format_are_left_as_they_are(monkeypatch):
    def respell(values):
        raise AssertionError("an index with nothing to respell went through the codec")

    monkeypatch.setattr(_common, "canonical_addresses", respell)
    agg = _agg([EVM, SOLANA, BYTES32], [1.0, 2.0, 3.0])
    assert fold_addresses(agg) is agg


def test_an_evm_address_padded_or_in_capitals_is_folded_into_one_row():
    padded = "0x" + "00" * 12 + "AB" * 20
    agg = _agg([EVM, padded, EVM.upper().replace("0X", "0x"), SOLANA], [1.0, 2.0, 4.0, 8.0])
    folded = fold_addresses(agg)
    assert folded["volume"].to_dict() == {EVM: 7.0, SOLANA: 8.0}
