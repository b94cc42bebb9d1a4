"""The registry's contracts, tokens, run-time additions and chains.toml."""

from __future__ import annotations

import pytest

from cctx_research import addressing, chains
from cctx_research.errors import ConfigError

V2_MESSENGER = "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d"
V2_TRANSMITTER = "0x81d40f21f12a8f0e3252bccb954d722d4c464b64"
V2_MINTER = "0xfd78ee919681417d192449715b2594ab58f5d002"
EDGE_MESSENGER = "0x98706a006bc632df31cadfcbd43f38887ce2ca5c"


@pytest.fixture(autouse=True)
def _fresh_registry(tmp_path, monkeypatch):
    """Every test starts from the built-in registry and an empty config directory."""
    monkeypatch.setenv("CCTX_CONFIG_DIR", str(tmp_path / "config"))
    chains.reload()
    yield
    monkeypatch.delenv("CCTX_CONFIG_DIR")
    chains.reload()


NEW_DOMAINS = [
    (28, "edge", "EDGE", "3343"),
    (29, "injective", "Injective", "1776"),
    (30, "morph", "Morph", "2818"),
    (31, "pharos", "Pharos", "1672"),
    (32, "cronos", "Cronos", "25"),
    (33, "plasma", "Plasma", "9745"),
    (37, "x_layer", "X Layer", "196"),
]


@pytest.mark.parametrize(("d", "name", "label", "evm_id"), NEW_DOMAINS)
def test_domains_after_27_resolve_by_name_label_id_and_chain_id(d, name, label, evm_id):
    assert chains.domain(name) == d
    assert chains.domain(label) == d
    assert chains.chain_name(d) == name
    assert chains.chain_label(d) == label
    assert chains.domain_from_chain_id(evm_id) == d
    assert chains.chain_id(d) == evm_id
    chain = chains.info(d)
    assert chain.in_v2
    assert not chain.in_v1
    assert chain.address_format == "evm"
    assert chains.tokens(d)["USDC"].startswith("0x")
    assert len(chains.tokens(d)["USDC"]) == 42


def test_edge_has_its_own_v2_contracts_and_others_share_the_create2_ones():
    edge = chains.contracts("edge", 2)
    assert edge == chains.Contracts(
        EDGE_MESSENGER,
        "0x5b61381fc9e58e70efc13a4a97516997019198ee",
        "0x338dfd607855beec17f33e539ac2479853cc8384",
    )
    common = chains.Contracts(V2_MESSENGER, V2_TRANSMITTER, V2_MINTER)
    assert chains.contracts("pharos", 2) == common
    assert chains.contract_domains(EDGE_MESSENGER) == frozenset({28})
    shared = chains.contract_domains(V2_MESSENGER)
    assert 28 not in shared
    assert {0, 1, 2, 3, 6, 7, 10, 11, 30, 31} <= shared
    assert not shared & {4, 5, 8, 9, 25, 27}  # non-EVM domains have their own programs


def test_v1_contracts_by_domain_and_their_owners():
    eth = chains.contracts(0, 1)
    assert eth.token_messenger == "0xbd3fa81b58ba92a82136038b25adec7066af3155"
    assert eth.message_transmitter == "0x0a992d191deec32afe36203ad87d7d289a738f81"
    assert chains.contracts("unichain", 1).token_minter == (
        "0x726bfef3cbb3f8af7d8cb141e78f86ae43c34163"
    )
    for d in (0, 1, 2, 3, 6, 7, 10):
        found = chains.contracts(d, 1)
        for address in (found.token_messenger, found.message_transmitter, found.token_minter):
            assert chains.contract_domains(address) == frozenset({d})
            assert chains.contract_domains(address.upper().replace("0X", "0x")) == {d}
    assert chains.contracts("linea", 1) is None
    assert chains.contracts("noble", 2) is None


def test_solana_programs_are_the_32_byte_form_of_their_base58_ids():
    v1, v2 = chains.contracts("solana", 1), chains.contracts("solana", 2)
    assert v1.token_messenger == addressing.to_bytes32(
        "CCTPiPYPc6AsJuwueEnWgSgucamXDZwBd53dQ11YiKX3"
    )
    assert v1.message_transmitter == addressing.to_bytes32(
        "CCTPmbSD7gX1bxKPAmg77w8oFzNFpaQiQUWD43TKaecd"
    )
    assert v2.token_messenger == addressing.to_bytes32(
        "CCTPV2vPZJS2u2BBsUoscuikbYjnpFmbFsvVuJdgUMQe"
    )
    assert v2.message_transmitter == addressing.to_bytes32(
        "CCTPV2Sm4AdWt5296sk4P66VBZ7bEhcARwFaaS9YPbeC"
    )
    assert chains.token_messengers("solana") == {v1.token_messenger, v2.token_messenger}
    assert chains.contract_domains("CCTPmbSD7gX1bxKPAmg77w8oFzNFpaQiQUWD43TKaecd") == {5}


def test_token_messengers_give_both_spellings_of_20_byte_addresses():
    base = chains.token_messengers("base")
    assert base == {
        V2_MESSENGER, "0x" + "00" * 12 + V2_MESSENGER[2:],
        "0x1682ae6375c4e4a97e4b583bc394c861a46d8962",
        "0x" + "00" * 12 + "1682ae6375c4e4a97e4b583bc394c861a46d8962",
    }
    padded = "0x" + "00" * 12 + EDGE_MESSENGER[2:]
    assert chains.token_messengers("edge") == {EDGE_MESSENGER, padded}
    assert chains.token_messengers(99) == frozenset()
    assert chains.token_messengers("arc") == frozenset()  # a testnet: mainnet contracts unknown


@pytest.mark.parametrize(
    ("d", "address", "symbol"),
    [
        (0, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "USDC"),
        (0, "0x000000000000000000000000a0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "USDC"),
        ("bnb", "0x8D0fA28f221eB5735BC71d3a0Da67EE5bC821311", "USYC"),
        ("bnb", "0x0000000000000000000000008d0fa28f221eb5735bc71d3a0da67ee5bc821311", "USYC"),
        ("ethereum", "0x1aBaEA1f7C830bD89Acc67eC4af516284b1bC33c", "EURC"),
        ("solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "USDC"),
        ("solana", addressing.to_bytes32("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"), "USDC"),
        ("noble", "0x487039debedbf32d260137b0a6f66b90962bec777250910d253781de326a716d", "USDC"),
        ("x_layer", "0xB6CEceAB302E2E4948951eE7843FC24E92933061", "USDC"),
    ],
)
def test_token_symbol_reads_plain_and_padded_forms(d, address, symbol):
    assert chains.token_symbol(d, address) == symbol


def test_token_symbol_is_per_domain_and_bnb_burns_usyc_only():
    usdc_eth = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
    assert chains.token_symbol("base", usdc_eth) is None
    assert chains.token_symbol(42, usdc_eth) is None
    assert set(chains.tokens("bnb")) == {"USYC"}
    assert chains.tokens("ethereum")["USDC"] == usdc_eth


def test_register_adds_a_domain_seen_by_every_lookup():
    entry = chains.register({
        "domain": 90,
        "name": "new_chain",
        "chain_id": 909090,
        "aliases": ["newc"],
        "explorer": "https://scan.new-chain.example/",
        "contracts": {"v2": {"token_messenger": "0x" + "AB" * 20}},
        "tokens": {"USDC": "0x" + "cd" * 20},
    })
    assert entry.label == "New Chain"
    assert chains.domain("newc") == 90
    assert chains.chain_name(90) == "new_chain"
    assert chains.domain_from_chain_id("909090") == 90
    assert "new_chain" in chains.known_names()
    assert 90 in chains.v2_domains()
    assert 90 not in chains.v1_domains()
    assert chains.contracts(90, 2).token_messenger == "0x" + "ab" * 20
    assert chains.contracts(90, 2).message_transmitter is None
    assert chains.contract_domains("0x" + "ab" * 20) == {90}
    assert chains.token_symbol(90, "0x" + "CD" * 20) == "USDC"
    assert chains.info(90).tx_url("0x1") == "https://scan.new-chain.example/tx/0x1"
    assert chains.CHAINS[-1].domain == 90
    chains.reload()
    assert chains.chain_name(90) == "domain-90"


def test_register_amends_a_builtin_domain_and_keeps_what_it_leaves_out():
    chains.register({"domain": 17, "tokens": {"USDC": "0x" + "ee" * 20}})
    assert chains.tokens("bnb") == {
        "USYC": "0x8d0fa28f221eb5735bc71d3a0da67ee5bc821311", "USDC": "0x" + "ee" * 20
    }
    assert chains.chain_name(17) == "bnb"
    assert chains.contracts(17, 2).token_messenger == V2_MESSENGER


def test_register_a_chain_record_replaces_the_entry():
    chains.register(chains.Chain(domain=91, name="plain", label="Plain", chain_id=None,
                                 in_v1=False, address_format="sui"))
    assert chains.info("plain").address_format == "sui"
    assert chains.token_messengers(91) == frozenset()


@pytest.mark.parametrize(
    ("entry", "error", "match"),
    [
        ({"domain": -1, "name": "x"}, ValueError, "'domain' must be a non-negative integer"),
        ({"domain": True, "name": "x"}, ValueError, "'domain'"),
        ({"domain": 92}, ValueError, "'name' is required"),
        ({"domain": 92, "name": "Not Snake"}, ValueError, "'name' must be snake_case"),
        ({"domain": 92, "name": "x", "address_format": "cosmos"}, ValueError, "address_format"),
        ({"domain": 92, "name": "x", "tokens": {"USDC": "0x12"}}, ValueError, "tokens.USDC"),
        ({"domain": 92, "name": "x", "tokens": {"usdc": "0x" + "ab" * 20}}, ValueError, "upper"),
        ({"domain": 92, "name": "x", "contracts": {3: {}}}, ValueError, "CCTP versions"),
        ({"domain": 92, "name": "x", "contracts": {2: {"messenger": "0x"}}}, ValueError,
         "unknown key 'messenger'"),
        ({"domain": 92, "name": "x", "chain_id": "abc"}, ValueError, "'chain_id'"),
        ({"domain": 92, "name": "x", "in_v2": "yes"}, TypeError, "'in_v2' must be true or false"),
        ({"domain": 92, "name": "x", "colour": "red"}, ValueError, "unknown key 'colour'"),
        ({"domain": 92, "name": "base"}, ValueError, "already names domain 6"),
        ({"domain": 92, "name": "x", "explorer": "ftp://x"}, ValueError, "http"),
    ],
)
def test_register_rejects_bad_entries_naming_the_key(entry, error, match):
    with pytest.raises(error, match=match):
        chains.register(entry)
    assert chains.chain_name(92) == "domain-92"  # nothing half-registered
    assert chains.chain_name(6) == "base"


def test_register_rejects_what_is_not_a_chain():
    with pytest.raises(TypeError, match="chain must be a Chain or a mapping"):
        chains.register(["domain", 1])


def test_lookup_arguments_are_checked():
    with pytest.raises(ValueError, match=r"version must be one of \(1, 2\)"):
        chains.contracts(0, 3)
    with pytest.raises(TypeError, match="version must be the int 1 or 2"):
        chains.contracts(0, "2")
    with pytest.raises(ValueError, match="unknown chain 'nowhere'"):
        chains.tokens("nowhere")
    with pytest.raises(ValueError, match="must be an address"):
        chains.token_symbol(0, "not an address")
    with pytest.raises(TypeError, match="token address must be an address as a str"):
        chains.token_symbol(0, 12)
    with pytest.raises(TypeError, match="address must be an address as a str"):
        chains.contract_domains(None)


TOML = """
[[chain]]
domain = 95
name = "toml_chain"
label = "Toml Chain"
chain_id = "959595"
explorer = "https://scan.toml.example"

[chain.contracts.v2]
token_messenger = "0x00000000000000000000000000000000000000f1"

[chain.tokens]
USDC = "0x00000000000000000000000000000000000000f2"

[[chain]]
domain = 29
tokens = { EURC = "0x00000000000000000000000000000000000000f3" }
"""


def test_chains_toml_in_the_config_dir_is_read_at_the_first_lookup(tmp_path, monkeypatch):
    config = tmp_path / "elsewhere"
    config.mkdir()
    (config / "chains.toml").write_text(TOML, encoding="utf-8")
    monkeypatch.setenv("CCTX_CONFIG_DIR", str(config))
    chains.reload()
    assert chains.config_file() == str(config / "chains.toml")
    assert chains.chain_name(95) == "toml_chain"
    assert chains.domain("Toml Chain") == 95
    assert chains.domain_from_chain_id("959595") == 95
    assert chains.contract_domains("0x" + "00" * 19 + "f1") == {95}
    assert chains.token_symbol(95, "0x" + "00" * 31 + "f2") == "USDC"
    assert chains.token_symbol("injective", "0x" + "00" * 19 + "f3") == "EURC"
    assert chains.tokens("injective")["USDC"] == "0xa00c59ff5a080d2b954d0c75e46e22a0c371235a"
    # read once: a later edit is seen only after reload()
    (config / "chains.toml").write_text("", encoding="utf-8")
    assert chains.chain_name(95) == "toml_chain"
    chains.reload()
    assert chains.chain_name(95) == "domain-95"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[[chain]]\ndomain = 96\nname = 'Bad Name'\n", r"\[\[chain\]\] table 1: 'name'"),
        ("[[chain]]\ndomain = 96\nname = 'ok'\n[chain.tokens]\nUSDC = 'zz'\n",
         r"table 1: 'tokens.USDC'"),
        ("[[chain]]\ndomain = 96\n", r"table 1: 'name' is required"),
        ("[chain]\ndomain = 96\n", r"key 'chain' must be an array of tables"),
        ("colour = 'red'\n", r"unknown key 'colour'"),
        ("[[chain]\n", r"is not valid TOML"),
        ("[[chain]]\ndomain = 96\nname = 'a'\n[[chain]]\ndomain = 97\nname = 'a'\n",
         r"already names domain 96"),
    ],
)
def test_an_invalid_chains_toml_raises_naming_the_file_and_key(tmp_path, text, match):
    path = tmp_path / "config" / "chains.toml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    chains.reload()
    with pytest.raises(ConfigError, match=match) as info:
        chains.chain_name(6)
    assert str(path) in str(info.value)
    path.unlink()
    chains.reload()
    assert chains.chain_name(6) == "base"
