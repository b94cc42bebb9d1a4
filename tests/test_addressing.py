"""Address and hash codecs: each chain's own format and the interface's bytes32.

Real public addresses, each with where it is documented:

- Solana USDC mint ``EPjFWdd5...`` (Circle, "USDC contract addresses"); the
  CCTP V1 programs ``CCTPmbSD...`` (MessageTransmitter) and ``CCTPiPYP...``
  (TokenMessengerMinter), V2 ``CCTPV2Sm...`` / ``CCTPV2vP...`` (Circle, "CCTP
  Solana programs"; circlefin/solana-cctp-contracts).
- Noble: ``noble1mry47pkga5tdswtluy0m8teslpalkdq0kz9xym`` (Trust Wallet
  wallet-core's Noble address test vector).
- Sui USDC package ``0xdba34672...`` and CCTP TokenMessengerMinter package
  ``0x2aa6c5d5...`` (Circle, "USDC contract addresses", "CCTP Sui packages").
- Aptos USDC ``0xbae20765...`` and CCTP TokenMessengerMinter ``0x9bce6734...``
  (Circle, "USDC contract addresses", "CCTP Aptos packages").
- Stellar CCTP TokenMessengerMinter ``CAE2G5Z7...`` (Circle, "CCTP on Stellar").
- EVM: USDC on Ethereum, TokenMessenger V1 on Base (Circle, "CCTP EVM contracts").
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cctx_research import addressing

HEX20 = "ab" * 20

REAL = [
    ("ethereum", "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"),
    ("base", "0x1682ae6375c4e4a97e4b583bc394c861a46d8962"),
    ("solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),
    ("solana", "CCTPmbSD7gX1bxKPAmg77w8oFzNFpaQiQUWD43TKaecd"),
    ("solana", "CCTPiPYPc6AsJuwueEnWgSgucamXDZwBd53dQ11YiKX3"),
    ("solana", "CCTPV2Sm4AdWt5296sk4P66VBZ7bEhcARwFaaS9YPbeC"),
    ("solana", "CCTPV2vPZJS2u2BBsUoscuikbYjnpFmbFsvVuJdgUMQe"),
    ("noble", "noble1mry47pkga5tdswtluy0m8teslpalkdq0kz9xym"),
    ("sui", "0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7"),
    ("sui", "0x2aa6c5d56376c371f88a6cc42e852824994993cb9bab8d3e6450cbe3cb32b94e"),
    ("aptos", "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"),
    ("aptos", "0x9bce6734f7b63e835108e3bd8c36743d4709fe435f44791918801d0989640a9d"),
    ("stellar", "CAE2G5Z77UP7GYPYGFOWFGW7C7J6I4YP2AFGSADRKQY62SYUFLPNFTXL"),
]


@pytest.mark.parametrize(("chain", "address"), REAL)
def test_real_addresses_round_trip_through_bytes32(chain, address):
    wire = addressing.to_bytes32(address, chain)
    assert len(wire) == 66
    assert wire == wire.lower()
    assert addressing.from_bytes32(wire, chain) == address
    assert addressing.normalize_address(address, chain=chain) == address
    assert addressing.normalize_address(wire, chain=chain) == address
    # detected without the chain, the same bytes
    assert addressing.to_bytes32(address) == wire


def test_known_byte_values():
    # the Solana USDC mint's 32 bytes, as Solana's tools print them in hex
    assert addressing.to_bytes32("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v") == (
        "0xc6fa7af3bedbad3a3d65f36aabc97431b1bbe4c2d2f6e0e47ca60203452f5d61"
    )
    # a Noble account is 20 bytes, padded like an EVM address on the wire
    wire = addressing.to_bytes32("noble1mry47pkga5tdswtluy0m8teslpalkdq0kz9xym")
    assert wire.startswith("0x" + "00" * 12)


def test_bip173_vectors():
    assert addressing.bech32_decode("A12UEL5L", "a") == b""
    assert addressing.bech32_decode("a12uel5l", "a") == b""
    assert addressing.bech32_decode("A12uEL5L", "a") is None  # mixed case
    assert addressing.bech32_decode("a12uel5m", "a") is None  # checksum
    vector = "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw"
    raw = addressing.bech32_decode(vector, "abcdef")
    assert addressing.bech32_encode("abcdef", raw) == vector


def test_detects_formats_without_a_chain():
    assert addressing.detect_format("0x" + HEX20) == "evm"
    assert addressing.detect_format("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v") == "solana"
    assert addressing.detect_format("noble1mry47pkga5tdswtluy0m8teslpalkdq0kz9xym") == "noble"
    assert addressing.detect_format("0x" + "11" * 32) == "hex32"
    assert addressing.detect_format("not an address") is None


@pytest.mark.parametrize(
    "value",
    ["0x" + HEX20, "0x" + HEX20.upper(), "0x" + "00" * 12 + HEX20, " 0x" + HEX20 + " "],
)
def test_every_spelling_of_an_evm_address_is_one(value):
    assert addressing.normalize_address(value) == "0x" + HEX20
    assert addressing.normalize_address(value, chain="base") == "0x" + HEX20
    assert addressing.canonical_addresses([value.strip()]).iloc[0] == "0x" + HEX20


def test_short_hex_on_move_chains_is_padded():
    assert addressing.normalize_address("0x1", chain="aptos") == "0x" + "0" * 63 + "1"
    assert addressing.normalize_address("0xA", chain="sui") == "0x" + "0" * 63 + "a"
    with pytest.raises(ValueError, match="40 hex digits"):
        addressing.normalize_address("0x1")  # without the chain, short hex is ambiguous


def test_unpadded_bytes32_is_kept_without_a_chain():
    value = "0x" + "11" * 32
    assert addressing.normalize_address(value) == value
    out = addressing.canonical_addresses(["So1anaAccountBase58", None, value.upper()[2:]])
    assert out.iloc[0] == "So1anaAccountBase58"
    assert out.isna().iloc[1]


def test_canonical_addresses_spells_each_row_for_its_chain():
    rows = [
        ("base", "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"),
        *[(c, a) for c, a in REAL if c != "stellar"],
        ("stellar", "CAE2G5Z77UP7GYPYGFOWFGW7C7J6I4YP2AFGSADRKQY62SYUFLPNFTXL"),
    ]
    wire = [addressing.to_bytes32(a, c).upper().replace("0X", "0x") for c, a in rows]
    out = addressing.canonical_addresses(wire, [c for c, _ in rows])
    assert out.tolist() == [a for _, a in rows]
    # domain ids work as chains, a scalar applies to every row, unknowns pass through
    assert addressing.canonical_addresses(wire[3:4], 5).tolist() == [rows[3][1]]
    unknown = addressing.canonical_addresses([wire[3]], ["domain-99"]).iloc[0]
    assert unknown == wire[3].lower()
    with pytest.raises(ValueError, match="one per row"):
        addressing.canonical_addresses(wire, ["base"])


@pytest.mark.parametrize(
    ("chain", "bad", "says"),
    [
        ("ethereum", "0x123", "40 hex digits"),
        ("ethereum", "0x" + "11" * 32, "40 hex digits"),  # upper 12 bytes not zero
        ("solana", "EPjFWdd5AufqSSqeM2qN1xzybap", "base58 of 32 bytes"),
        ("solana", "0OIl" * 10, "base58"),
        ("noble", "noble1mry47pkga5tdswtluy0m8teslpalkdq0kz9xyn", "bech32"),
        ("noble", "cosmos1mry47pkga5tdswtluy0m8teslpalkdq0kz9xym", "bech32"),
        ("aptos", "0x" + "1" * 65, "up to 64 hex digits"),
        ("stellar", "CAE2G5Z77UP7GYPYGFOWFGW7C7J6I4YP2AFGSADRKQY62SYUFLPNFTXM", "strkey"),
    ],
)
def test_malformed_addresses_name_the_chains_format(chain, bad, says):
    with pytest.raises(ValueError, match=says) as info:
        addressing.normalize_address(bad, chain=chain, name="recipient")
    assert "recipient must be" in str(info.value)
    assert repr(chain) in str(info.value)


def test_malformed_address_without_chain_lists_every_format():
    with pytest.raises(ValueError, match="one of: evm") as info:
        addressing.normalize_address("hello")
    for fmt in addressing.FORMATS:
        assert f"{fmt}:" in str(info.value)


def test_wrong_types():
    with pytest.raises(TypeError, match="address must be a str"):
        addressing.normalize_address(42)
    with pytest.raises(TypeError, match="txHash must be a str"):
        addressing.normalize_hash(None, name="txHash")
    with pytest.raises(ValueError, match="unknown chain"):
        addressing.normalize_address("0x" + HEX20, chain="basee")


SOLANA_SIG = addressing.base58_encode(bytes(range(1, 65)))  # the shape of a signature


def test_hashes():
    assert addressing.normalize_hash("0x" + "AB" * 32) == "0x" + "ab" * 32
    assert addressing.normalize_hash("0x" + "AB" * 32, "aptos") == "0x" + "ab" * 32
    assert addressing.normalize_hash(SOLANA_SIG) == SOLANA_SIG
    assert addressing.normalize_hash(SOLANA_SIG, "solana") == SOLANA_SIG
    assert addressing.normalize_hash("ab" * 32, "noble") == "AB" * 32
    assert addressing.normalize_hash("0x" + "ab" * 32, "noble") == "AB" * 32
    with pytest.raises(ValueError, match="64 hex digits"):
        addressing.normalize_hash("0x" + "ab" * 31)
    with pytest.raises(ValueError, match="base58 signature of 64 bytes"):
        addressing.normalize_hash("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "solana")
    with pytest.raises(ValueError, match="solana:"):
        addressing.normalize_hash("not a hash")


# --------------------------------------------------------------------------
# properties

raw20 = st.binary(min_size=20, max_size=20)
raw32 = st.binary(min_size=32, max_size=32)


@given(raw32, st.sampled_from(["solana", "sui", "aptos", "starknet", "stellar"]))
def test_any_32_bytes_round_trip(raw, chain):
    wire = "0x" + raw.hex()
    shown = addressing.from_bytes32(wire, chain)
    assert addressing.to_bytes32(shown, chain) == wire
    assert addressing.normalize_address(shown, chain=chain) == shown


@given(raw20, st.sampled_from(["ethereum", "noble", "base"]))
def test_any_20_bytes_round_trip(raw, chain):
    wire = "0x" + "00" * 12 + raw.hex()
    shown = addressing.from_bytes32(wire, chain)
    assert addressing.to_bytes32(shown, chain) == wire
    assert addressing.to_bytes32(shown) == wire  # detected


@given(st.binary(min_size=1, max_size=64))
def test_base58_round_trips_any_bytes(raw):
    assert addressing.base58_decode(addressing.base58_encode(raw)) == raw


@given(st.text(max_size=80))
def test_junk_is_rejected_or_a_real_address(text):
    if addressing.detect_format(text) is None:
        with pytest.raises(ValueError, match="must be one of"):
            addressing.normalize_address(text)
    else:
        shown = addressing.normalize_address(text)
        assert addressing.normalize_address(shown) == shown
        assert len(addressing.to_bytes32(shown)) == 66


@given(raw20, st.integers(0, 38), st.sampled_from("qpzry9x8gf2tvdw0s3jn54khce6mua7l"))
def test_a_changed_bech32_character_is_caught(raw, position, char):
    text = addressing.bech32_encode("noble", raw)
    i = len("noble1") + position
    changed = text[:i] + char + text[i + 1 :]
    if changed != text:
        assert addressing.bech32_decode(changed, "noble") is None


def test_the_fast_spelling_of_wire_columns_equals_the_rule():
    """Columns of 0x + 40 or 64 characters take a numpy path; it must spell as the rule."""
    import random

    import pyarrow as pa

    from cctx_research.addressing.columns import _bytes32_canonical, canonical_addresses

    rng = random.Random(3)

    def value() -> str:
        digits = "".join(rng.choice("0123456789abcdefABCDEF") for _ in range(40))
        kind = rng.randrange(4)
        body = digits if kind == 0 else ("0" * 24 + digits if kind < 3 else digits + "00" * 12)
        return rng.choice(["0x", "0X"]) + body

    def rule(v: str) -> str:
        v = v.lower()
        return "0x" + v[26:] if len(v) == 66 and v.startswith("0x" + "0" * 24) else v

    values = [value() for _ in range(500)]
    fast = _bytes32_canonical(pa.array(values, pa.large_string()))
    assert fast is not None
    assert fast.to_pylist() == [rule(v) for v in values]
    assert canonical_addresses(values).tolist() == [rule(v) for v in values]
    # anything else takes the general path
    assert _bytes32_canonical(pa.array([*values, "0x12"], pa.large_string())) is None
    # a column longer than two of the blocks its characters are gathered in
    many = values * 281
    rng.shuffle(many)
    fast = _bytes32_canonical(pa.array(many, pa.large_string()))
    assert fast is not None
    assert fast.to_pylist() == [rule(v) for v in many]


@given(st.lists(st.binary(min_size=32, max_size=32), min_size=1, max_size=40),
       st.integers(0, 32))
def test_base58_of_many_rows_equals_one_by_one(rows, zeros):
    import numpy as np

    from cctx_research.addressing.codecs import base58_encode_rows

    rows = [bytes(zeros) + r[zeros:] for r in rows]  # leading zero bytes are leading "1"s
    matrix = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(-1, 32)
    assert base58_encode_rows(matrix).tolist() == [addressing.base58_encode(r) for r in rows]


@given(st.lists(st.tuples(st.sampled_from([0, 5, 4, 6]), st.binary(min_size=20, max_size=20),
                          st.binary(min_size=32, max_size=32)), min_size=1, max_size=20))
def test_frames_round_trip_between_bytes32_and_each_chains_format(rows):
    import pandas as pd

    wire = pd.DataFrame({
        "source_domain": [5] * len(rows),
        "destination_domain": [d for d, _, _ in rows],
        "message_sender": ["0x" + w.hex() for _, _, w in rows],
        "mint_recipient": ["0x" + (bytes(12) + a if d != 5 else w).hex() for d, a, w in rows],
    })
    spelled = addressing.as_chain_format(wire)
    for (d, a, w), sender, recipient in zip(rows, spelled["message_sender"],
                                            spelled["mint_recipient"], strict=True):
        assert sender == addressing.base58_encode(w)
        chain = {0: "ethereum", 5: "solana", 4: "noble", 6: "base"}[d]
        assert recipient == addressing.from_bytes32("0x" + (bytes(12) + a if d != 5 else w).hex(),
                                                    chain)
    back = addressing.as_bytes32(spelled)
    assert back[["message_sender", "mint_recipient"]].astype(object).values.tolist() == wire[
        ["message_sender", "mint_recipient"]].values.tolist()


_B58_TEXT = st.text(alphabet="123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0OIl +",
                    max_size=90)  # fmt: skip


@given(st.lists(st.one_of(st.binary(max_size=64).map(addressing.base58_encode), _B58_TEXT),
                min_size=1, max_size=30), st.sampled_from([32, 64]))  # fmt: skip
def test_base58_of_many_strings_decodes_as_one_by_one(texts, width):
    """Valid base58 of any length, junk (0, O, I, l, spaces), empty, too long for ``width``."""
    from cctx_research.addressing.codecs import base58_decode_rows

    rows, sizes = base58_decode_rows(texts, width)
    for text, row, size in zip(texts, rows, sizes, strict=True):
        one = addressing.base58_decode(text)
        if one is None or len(one) > width:
            assert size == -1, text
        else:
            assert size == len(one), text
            assert bytes(row) == one.rjust(width, b"\0"), text


def test_the_ledger_index_spells_every_address_as_wire_does():
    """The index's vectorised Solana path and its one-by-one path give wire()'s spelling."""
    import numpy as np
    import pandas as pd

    from cctx_research.service.index import encode_addresses, wire

    zero_prefixed = bytes(12) + bytes(range(1, 21))  # a padded value: 20 bytes of hex
    values = [
        addressing.base58_encode(bytes(range(32))),
        addressing.base58_encode(zero_prefixed),
        addressing.base58_encode(bytes(32)),  # "1" * 32
        addressing.bech32_encode("noble", bytes(range(20))),
        "0x" + "ab" * 20,
        "0x" + "00" * 12 + "cd" * 20,
        "0x" + "ef" * 32,
    ] * 2
    codes, table = encode_addresses(pd.Series(values), "mint_recipient")
    assert table[codes].tolist() == [wire(v) for v in values]
    assert table.tolist() == sorted(set(table.tolist()))
    assert table[codes][1] == "0x" + bytes(range(1, 21)).hex()
    with pytest.raises(Exception, match="not an address: '0OIl'"):
        encode_addresses(pd.Series([*values, "0OIl"]), "mint_recipient")
    assert isinstance(codes, np.ndarray)
