"""The event facts: signatures, topic0 = keccak256(signature), indexed params, layouts."""

from __future__ import annotations

import importlib

import pytest
from eth_utils import keccak
from test_public_api import isort_key

from cctx_research.ingest.evm import events as ev
from ingest.logs import SIGNATURES, canonical_signature, parse_signature

SPECS = {
    ("DepositForBurn", 1): ev.DEPOSIT_FOR_BURN_V1,
    ("DepositForBurn", 2): ev.DEPOSIT_FOR_BURN_V2,
    ("MintAndWithdraw", 1): ev.MINT_AND_WITHDRAW_V1,
    ("MintAndWithdraw", 2): ev.MINT_AND_WITHDRAW_V2,
    ("MessageSent", 1): ev.MESSAGE_SENT,
    ("MessageSent", 2): ev.MESSAGE_SENT,
    ("MessageReceived", 1): ev.MESSAGE_RECEIVED_V1,
    ("MessageReceived", 2): ev.MESSAGE_RECEIVED_V2,
}


@pytest.mark.parametrize("spec", ev.EVENTS, ids=lambda s: f"{s.name}V{s.version}")
def test_topic0_is_keccak_of_the_signature(spec):
    assert spec.topic0 == "0x" + keccak(text=spec.signature).hex()
    assert ev.BY_TOPIC0[spec.topic0] is spec


@pytest.mark.parametrize(("key", "declared"), SIGNATURES.items(), ids=str)
def test_params_match_circles_declaration(key, declared):
    spec = SPECS[key]
    name, params = parse_signature(declared)
    assert spec.name == name
    assert spec.signature == canonical_signature(declared)
    assert [(p.name, p.type, p.indexed) for p in spec.params] == params
    assert len(spec.indexed) <= 3


def test_the_versions_differ_where_circle_changed_them():
    assert ev.DEPOSIT_FOR_BURN_V1.topic0 != ev.DEPOSIT_FOR_BURN_V2.topic0
    assert ev.MINT_AND_WITHDRAW_V1.topic0 != ev.MINT_AND_WITHDRAW_V2.topic0
    assert ev.MESSAGE_RECEIVED_V1.topic0 != ev.MESSAGE_RECEIVED_V2.topic0
    assert len(ev.BY_TOPIC0) == len(ev.EVENTS) == 7


@pytest.mark.parametrize(
    ("layout", "offsets", "body"),
    [
        (
            ev.MESSAGE_V1,
            {
                "sourceDomain": 4,
                "destinationDomain": 8,
                "nonce": 12,
                "sender": 20,
                "recipient": 52,
                "destinationCaller": 84,
            },
            116,
        ),
        (
            ev.MESSAGE_V2,
            {
                "nonce": 12,
                "sender": 44,
                "recipient": 76,
                "destinationCaller": 108,
                "minFinalityThreshold": 140,
                "finalityThresholdExecuted": 144,
            },
            148,
        ),
        (
            ev.BURN_MESSAGE_V1,
            {"burnToken": 4, "mintRecipient": 36, "amount": 68, "messageSender": 100},
            132,
        ),
        (ev.BURN_MESSAGE_V2, {"maxFee": 132, "feeExecuted": 164, "expirationBlock": 196}, 228),
    ],
    ids=lambda v: getattr(v, "name", ""),
)
def test_layouts_match_circles_indices(layout, offsets, body):
    """The *_INDEX constants of Message.sol, MessageV2.sol, BurnMessage.sol, BurnMessageV2.sol."""
    assert {k: layout.field(k).offset for k in offsets} == offsets
    assert layout.body_offset == body
    with pytest.raises(KeyError, match="has no field"):
        layout.field("nope")


def test_the_registry_knows_the_emitting_contracts_of_the_fixtures():
    from cctx_research import chains

    from ..logs import EMITTERS

    for chain, table in EMITTERS.items():
        for (_, version), address in table.items():
            found = chains.contracts(chain, version)
            assert address in (found.token_messenger, found.message_transmitter)
            assert chains.domain(chain) in chains.contract_domains(address)


@pytest.mark.parametrize(
    "name",
    [
        "evm",
        "evm.events",
        "evm.logs",
        "evm.decoder",
        "evm.frame",
        "evm.log_keys",
        "hexcodec",
        "evm.abi_words",
        "evm.messages",
        "rows",
    ],
)
def test_all_is_sorted_and_resolves(name):
    module = importlib.import_module(f"cctx_research.ingest.{name}")
    assert module.__all__ == sorted(module.__all__, key=isort_key)
    assert all(hasattr(module, attr) for attr in module.__all__)
