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


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match="ethereum, avalanche, optimism"):
        chains.domain("basee")


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
