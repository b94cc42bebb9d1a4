from __future__ import annotations

import pytest

from cctx_research import chains


@pytest.mark.parametrize("value", ["base", "Base", "BASE", " base ", 6, "6", "Base Mainnet"])
def test_forgiving_lookups_name_base(value):
    assert chains.domain(value) == 6
    assert chains.chain_name(value) == "base"


def test_registry_round_trips_domain_name_and_chain_id():
    for chain in chains.CHAINS:
        assert chains.domain(chain.name) == chain.domain
        assert chains.domain(chain.label) == chain.domain
        assert chains.domain_from_chain_id(chains.chain_id(chain.domain)) == chain.domain


def test_interface_chain_ids():
    assert chains.chain_id(0) == "1"
    assert chains.chain_id(3) == "42161"
    assert chains.chain_id(5) == "solana"
    assert chains.domain_from_chain_id("8453") == 6
    assert chains.domain_from_chain_id("noble") == 4


def test_unknown_values_are_carried_through():
    assert chains.chain_name(42) == "domain-42"
    assert chains.domain("domain-42") == 42
    assert chains.chain_id(42) == "domain-42"
    assert chains.domain_from_chain_id("999999") is None
    assert chains.name_from_chain_id("999999") == "chain-999999"
    assert chains.domain_from_chain_id("domain-42") == 42


def test_unknown_name_lists_valid_names_and_suggests_the_closest():
    with pytest.raises(ValueError, match=r"did you mean 'base'\?") as info:
        chains.domain("basee")
    message = str(info.value)
    for chain in chains.CHAINS:
        assert f"{chain.name} ({chain.domain})" in message
    with pytest.raises(ValueError, match="unknown chain 'zzz'; pass a domain id"):
        chains.domain("zzz")


def test_registry_holds_every_published_domain_v1_and_v2():
    # Circle: V1 domains 0-10; V2 adds 11-19, 21, 22, 25, 26, Stellar (27) and 28-33, 37.
    assert chains.v1_domains() == list(range(11))
    assert set(chains.v2_domains()) == {
        0, 1, 2, 3, 5, 6, 7, *range(10, 20), 21, 22, *range(25, 34), 37
    }
    assert [c.domain for c in chains.CHAINS] == sorted(c.domain for c in chains.CHAINS)
    assert len({c.name for c in chains.CHAINS}) == len(chains.CHAINS)
    assert chains.chain_name(15) == "monad"
    assert chains.chain_name(25) == "starknet"
    assert chains.chain_name(20) == "domain-20"  # unpublished ids still pass through
    assert chains.chain_name(34) == "domain-34"


@pytest.mark.parametrize(
    ("value", "fmt"),
    [
        ("ethereum", "evm"),
        ("noble", "noble"),
        ("solana", "solana"),
        ("sui", "sui"),
        ("aptos", "aptos"),
        ("starknet", "starknet"),
        ("stellar", "stellar"),
        ("bsc", "evm"),
    ],
)
def test_address_formats(value, fmt):
    assert chains.address_format(value) == fmt
    assert chains.info(value).address_format in chains.ADDRESS_FORMATS


def test_fast_transfer_sources_follow_circles_table():
    fast = {chains.chain_name(d) for d in chains.fast_source_domains()}
    assert {"ethereum", "arbitrum", "base", "optimism", "linea", "solana"} <= fast
    # chains whose standard attestation is already fast offer no Fast Transfer
    assert not {"avalanche", "polygon", "sonic", "noble"} & fast


def test_lookups_by_label_alias_and_evm_chain_id():
    assert chains.info("BNB Smart Chain").domain == 17
    assert chains.info("hyperliquid").name == "hyperevm"
    assert chains.by_chain_id("59144").name == "linea"
    assert chains.by_chain_id(1).name == "ethereum"
    assert chains.by_chain_id("424242") is None
    assert chains.domain_from_chain_id("143") == 15


def test_explorer_links():
    assert chains.info("base").tx_url("0xab") == "https://basescan.org/tx/0xab"
    sol = chains.info("solana")
    assert sol.address_url("EPjFW") == "https://solscan.io/account/EPjFW"
    assert (
        chains.info("noble").address_url("noble1x")
        == "https://www.mintscan.io/noble/address/noble1x"
    )
    for chain in chains.CHAINS:
        assert chain.address_url("A").startswith("https://")
        assert "A" in chain.address_url("A")
        assert "T" in chain.tx_url("T")


@pytest.mark.parametrize("bad", [True, 1.5, None, b"6", object()])
def test_wrong_types_are_type_errors(bad):
    with pytest.raises(TypeError, match="domain id"):
        chains.domain(bad)


def test_negative_domain_is_rejected():
    with pytest.raises(ValueError, match="non-negative"):
        chains.domain(-1)


def test_domains_normalises_lists():
    assert chains.domains(None) is None
    assert chains.domains("base") == [6]
    assert chains.domains(["arbitrum", 6, "6", "Ethereum"]) == [0, 3, 6]
    with pytest.raises(ValueError, match="empty"):
        chains.domains([])
    with pytest.raises(TypeError):
        chains.domains(3.5)


def test_an_evm_chain_id_where_a_domain_is_asked_names_the_chain():
    # 8453 is Base's chain id, not a domain: info() used to return None, then user code failed
    for ask in (chains.info, chains.domain, lambda v: chains.domains([v]), chains.address_format,
                chains.tokens, lambda v: chains.contracts(v, 2)):
        with pytest.raises(ValueError, match=r"8453 is not a CCTP domain id but the EVM chain id "
                           r"of Base \(domain 6\): pass 6 or 'base'"):
            ask(8453)
    with pytest.raises(ValueError, match="Arbitrum One"):
        chains.info("42161")
    # a number that is both a domain and a chain id stays the domain (10: Unichain's domain)
    assert chains.info(10).name == "unichain"


def test_info_of_an_unknown_domain_refuses_with_the_domains_held():
    with pytest.raises(ValueError, match=r"no chain of domain 99 in the registry \(it holds "
                       r"domains 0, 1, .*37\); pass one of them"):
        chains.info(99)
    # the name look-ups carry data's unknown domains through, as before
    assert chains.chain_name(99) == "domain-99"
    assert chains.address_format(99) is None
