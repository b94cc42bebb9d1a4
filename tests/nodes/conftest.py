"""Fixtures of the sync tests: anvil nodes standing for Base and Ethereum, with real CCTP logs.

The logs are rebuilt from real messages (``tests/ingest/real.py``; sources in
``tests/fixtures/cctp_real/README.md``) and replayed at the real contract
addresses by ``tests/evm_node/LogReplay.sol``, compiled with solc-js. What the
replay fills in: the block numbers, times and transaction hashes are the local
node's; the relayer (``caller``) is the fixtures' stand-in.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cctx_research import storage
from cctx_research.nodes.engine import contracts_of
from tests.evm_node import Anvil, anvil_path
from tests.ingest import real

BASE_ID, ETHEREUM_ID = 8453, 1


def _need_anvil() -> None:
    if anvil_path() is None:
        if os.environ.get("CI"):
            pytest.fail("anvil is missing under CI: `make test` installs it with `make tools`")
        pytest.skip("anvil is not installed: run `make tools`")


def checkpoints(out: Path) -> dict:
    """The chains' checkpoints, as the dataset's manifest keeps them on disk."""
    manifest = json.loads((out / storage.MANIFEST).read_text())
    assert (manifest["kind"], manifest["format"]) == ("sync", storage.FORMAT)
    return manifest["state"]["chains"]


def to_the_old_layout(out: Path) -> None:
    """Turn a sync dataset back into the layout before the manifest (``sync.json``, plain
    part names): what a user who synced with an earlier version holds."""
    manifest = json.loads((out / storage.MANIFEST).read_text())
    for path in out.glob("*/logs/*.parquet"):
        c = storage.parse_part(path.name).chunk
        path.rename(path.with_name(f"{'tip-' if c.tip else ''}{c.first}-{c.last}.parquet"))
    for path in out.glob("solana/transactions/*.jsonl"):
        part = storage.parse_part(path.name)
        c = part.chunk
        path.rename(path.with_name(f"{part.label}-{c.page:06d}-{c.first}-{c.last}.jsonl"))
    (out / "sync.json").write_text(json.dumps({"format": 1, **manifest["state"]}, indent=2))
    (out / storage.MANIFEST).unlink()


def burn(entry: str, tag: str) -> list[dict]:
    return real.burn_logs(real.message(entry), block=1, tx_hash=real.tx(tag), index=0, time=0)


def mint(entry: str, tag: str) -> list[dict]:
    return real.mint_logs(real.message(entry), block=1, tx_hash=real.tx(tag), index=0, time=0)


@pytest.fixture
def base_node():
    """Base (8453): a V2 and a V1 burn toward Ethereum, a V2 and a V1 mint from elsewhere."""
    _need_anvil()
    with Anvil(BASE_ID) as node:
        node.install_cctp(contracts_of("base"))
        node.replay(burn("v2_attested_base_to_eth_19500", "base-burn-v2"))
        node.replay(burn("v1_base_to_ethereum_761503", "base-burn-v1"))
        node.replay(mint("v2_attested_op_to_base_fast_fee1", "base-mint-v2"))
        node.replay(mint("v1_ethereum_to_base_282099", "base-mint-v1"))
        node.mine(20)
        yield node


@pytest.fixture
def ethereum_node():
    """Ethereum (1): the mints of both Base burns, ten minutes later, and a V2 burn to Arbitrum."""
    _need_anvil()
    with Anvil(ETHEREUM_ID) as node:
        node.install_cctp(contracts_of("ethereum"))
        node.rpc("evm_increaseTime", 600)
        node.replay(mint("v2_attested_base_to_eth_19500", "eth-mint-v2"))
        node.replay(mint("v1_base_to_ethereum_761503", "eth-mint-v1"))
        node.replay(burn("v2_attested_eth_to_arb_fast_100", "eth-burn-v2"))
        node.mine(20)
        yield node


@pytest.fixture
def solana_node():
    """The Solana stand-in (tests/solana_node) on loopback, serving the recorded replies."""
    from tests.solana_node import Node

    with Node() as node:
        yield node
