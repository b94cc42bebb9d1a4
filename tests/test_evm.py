from __future__ import annotations

import pytest

from cctx_research import evm

HEX20 = "ab" * 20


@pytest.mark.parametrize(
    "value",
    ["0x" + HEX20, "0x" + HEX20.upper(), "0x" + "00" * 12 + HEX20, " 0x" + HEX20 + " "],
)
def test_every_spelling_of_an_evm_address_is_one(value):
    assert evm.normalize_address(value) == "0x" + HEX20
    assert evm.canonical_addresses([value.strip()]).iloc[0] == "0x" + HEX20


def test_non_evm_values_are_kept():
    solana = "0x" + "11" * 32  # a bytes32 that is not a padded EVM address
    assert evm.normalize_address(solana) == solana
    out = evm.canonical_addresses(["So1anaAccountBase58", None, solana.upper().replace("0X", "0x")])
    assert out.iloc[0] == "So1anaAccountBase58"
    assert out.isna().iloc[1]
    assert out.iloc[2] == solana


@pytest.mark.parametrize("bad", ["0x123", "ab" * 20, "0x" + "zz" * 20, ""])
def test_bad_addresses_say_what_to_pass(bad):
    with pytest.raises(ValueError, match="40 hex digits"):
        evm.normalize_address(bad)


def test_wrong_types():
    with pytest.raises(TypeError, match="address must be a str"):
        evm.normalize_address(42)
    with pytest.raises(TypeError, match="txHash must be a str"):
        evm.normalize_hash(None, name="txHash")


def test_hashes():
    assert evm.normalize_hash("0x" + "AB" * 32) == "0x" + "ab" * 32
    with pytest.raises(ValueError, match="64 hex digits"):
        evm.normalize_hash("0x" + "ab" * 31)
