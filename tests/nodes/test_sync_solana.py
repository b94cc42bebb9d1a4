"""`sync --chain solana=URL` against a local Solana node serving recorded replies.

The node is tests/solana_node (its docstring cites the semantics and error
texts it follows); the transactions are those of tests/fixtures/solana
(README there: real V1 mainnet transactions, V2 burns rebuilt from real
messages). The end-to-end test adds anvil nodes (conftest.py) carrying the
EVM sides of two of them.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import errors, storage
from cctx_research.cli import main
from cctx_research.nodes import SyncOptions
from cctx_research.nodes.engine import contracts_of
from cctx_research.nodes.rpc import RpcError
from cctx_research.nodes.solana import PROGRAMS, sync_solana
from cctx_research.provenance import provenance
from tests.ingest import real
from tests.solana_node import KEY, Node, SolanaStandin, receive_message, recorded

from .conftest import checkpoints, to_the_old_layout


def _calls_cctp(result: dict) -> bool:
    loaded = result["meta"].get("loadedAddresses") or {}
    keys = [*result["transaction"]["message"]["accountKeys"], *[k for v in loaded.values()
                                                               for k in v]]  # fmt: skip
    return bool(set(PROGRAMS.values()) & set(keys))


CCTP = {r["transaction"]["signatures"][0] for r in recorded() if _calls_cctp(r)}
"""The recorded transactions that call a CCTP program (the two Wormhole redeems do not)."""


def _stored(out: Path) -> list[str]:
    """Every signature in the dataset's Solana files, as often as it is stored."""
    found = []
    for path in sorted((out / "solana" / "transactions").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            found.append(json.loads(line)["transaction"]["signatures"][0])
    return found


def _state(out: Path) -> dict:
    return checkpoints(out)["solana"]


def test_the_recorded_cctp_transactions_are_six():
    assert len(CCTP) == 6
    assert len(recorded()) == 8  # and two Wormhole redeems


def test_a_fresh_sync_fetches_each_transaction_once_and_loads(solana_node, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    out = tmp_path / "cctp"
    result = cctx.sync(out, {"solana": solana_node.url}, start=0, progress=False)
    (chain,) = result.chains
    assert chain.chain == "solana"
    assert chain.logs == 6
    stored = _stored(out)
    assert sorted(stored) == sorted(CCTP)  # each once, though listed under two programs each
    assert (chain.signatures, chain.held) == (12, 6)
    standin = solana_node.standin
    assert set(standin.fetched) == CCTP
    assert set(standin.fetched.values()) == {1}
    # the files are what load(format="solana") reads; the ledger is built from them
    files = sorted((out / "solana" / "transactions").glob("*.jsonl"))
    direct = cctx.load(files, format="solana")
    ledger = cctx.load(out)
    assert len(ledger) == len(direct) == result.transfers == 7
    assert set(ledger["source_domain"]) == {3, 5}  # Solana's burns, and the mint from Arbitrum
    burn = ledger[ledger["nonce"] == "67707"].iloc[0]  # the real 30,000 USDC burn to Ethereum
    assert burn["amount_raw"] == 30_000_000_000
    assert burn["burn_timestamp"] == pd.Timestamp(1724682919, unit="s", tz="UTC")
    # coverage, like an EVM chain's
    status = cctx.sync_status(out).set_index("chain").loc["solana"]
    assert status["first_block"] == 0
    assert status["last_block"] == status["safe_block"] == standin.head
    assert status["last_time"] == pd.Timestamp(standin.time_of(standin.head), unit="s", tz="UTC")
    assert (status["logs"], status["gaps"]) == (6, 0)
    assert status["parts"] == len(files)
    # the key in the node's URL is never logged nor stored; the node is named by its host
    assert KEY not in caplog.text
    assert KEY not in (out / storage.MANIFEST).read_text()
    assert _state(out)["host"].startswith("127.0.0.1:")
    assert "solana (127.0.0.1:" in caplog.text
    assert "6 transactions" in caplog.text


def test_pages_capped_by_the_provider_are_all_followed(tmp_path):
    standin = SolanaStandin(max_limit=1)  # a provider whose pages hold one signature
    with Node(standin) as node:
        result = cctx.sync(tmp_path / "c", {"solana": node.url}, start=0, progress=False)
    assert sorted(_stored(tmp_path / "c")) == sorted(CCTP)
    assert result.chains[0].parts == 6  # one page, one part: a checkpoint after each
    # every listing asked the most, got one, and was followed to its empty end
    assert standin.calls["getSignaturesForAddress"] == 12 + 4
    assert set(standin.fetched.values()) == {1}
    # the ledger is built from the parts joined into one file: the same as reading each
    parts = sorted((tmp_path / "c" / "solana" / "transactions").glob("*.jsonl"))
    built, direct = cctx.load(tmp_path / "c"), cctx.load(parts, format="solana")
    assert len(built) == result.transfers == 7
    order = ["source_domain", "nonce", "amount_raw"]
    pd.testing.assert_frame_equal(built.sort_values(order).reset_index(drop=True),
                                  direct.sort_values(order).reset_index(drop=True))
    named = {Path(f).name for f in provenance(built).files} - {"ledger.parquet"}
    assert named == {p.name for p in parts}  # the parts, not the joined copy
    assert not list((tmp_path / "c").glob(".ledger-*"))  # which is gone


def test_a_small_page_size_pages_and_the_node_checks_limits(tmp_path):
    standin = SolanaStandin()
    with Node(standin) as node:
        result = sync_solana(node.url, tmp_path, SyncOptions(start=0, progress=False), state={},
                             page_size=2)
        assert result.logs == 6
        assert standin.calls["getSignaturesForAddress"] == 3 + 3 + 2 + 2  # 4, 4, 2, 2 listed
        with pytest.raises(ValueError, match="page_size must be a whole number from 1 to 1000"):
            sync_solana(node.url, tmp_path, SyncOptions(start=0), state={}, page_size=1001)
    reply = standin.answer({"jsonrpc": "2.0", "id": 1, "method": "getSignaturesForAddress",
                            "params": [PROGRAMS["v1-messenger"], {"limit": 1001}]})  # fmt: skip
    assert reply["error"] == {"code": -32602, "message": "Invalid limit; max 1000"}


def test_a_second_run_fetches_only_new_signatures(tmp_path):
    standin = SolanaStandin(head=286_100_000)  # three V1 transactions finalized so far
    out = tmp_path / "cctp"
    with Node(standin) as node:
        first = cctx.sync(out, {"solana": node.url}, start=285_000_000, progress=False)
        assert first.chains[0].logs == 3
        standin.head = 400_000_000  # a V1 burn and two V2 burns arrive
        again = cctx.sync(out, {"solana": node.url}, progress=False)
        assert again.chains[0].logs == 3
        assert again.chains[0].first > 286_000_000  # listed back to the last run's newest only
        assert set(standin.fetched.values()) == {1}
        # nothing new: up to date, nothing fetched or written again
        third = cctx.sync(out, {"solana": node.url}, progress=False)
        assert third.chains[0].up_to_date
        assert "up to date at slot 400,000,000" in third.chains[0].line()
        assert sum(standin.fetched.values()) == 6
    assert sorted(_stored(out)) == sorted(CCTP)
    assert third.transfers == again.transfers == 7
    # an earlier start than the first sync's is refused
    with Node(standin) as node, pytest.raises(ValueError, match="is earlier"):
        cctx.sync(out, {"solana": node.url}, start=0, progress=False)


@pytest.mark.parametrize("failure", ["unhealthy", "unavailable"])
def test_a_node_failing_mid_run_is_resumed_without_loss_or_duplicates(tmp_path, failure):
    standin = SolanaStandin(max_limit=1)
    standin.failure = failure
    standin.fail_after = 14  # some pages written, then the node fails every request
    out = tmp_path / "cctp"
    raised = RpcError if failure == "unhealthy" else errors.ServerError
    with Node(standin) as node:
        with pytest.raises(raised, match=r"Node is behind by 150 slots|503|unhealthy"):
            cctx.sync(out, {"solana": node.url}, start=0, progress=False, retries=1,
                      max_workers=1)  # fmt: skip
        state = _state(out)
        before = _stored(out)
        assert 0 < len(before) < 6
        assert any(p["run"] is not None for p in state["programs"].values())
        assert cctx.sync_status(out).set_index("chain").loc["solana", "gaps"] >= 1
        standin.fail_after = None
        resumed = cctx.sync(out, {"solana": node.url}, progress=False)
    stored = _stored(out)
    assert sorted(stored) == sorted(CCTP)  # nothing lost, nothing twice
    assert resumed.chains[0].logs == 6 - len(before)
    state = _state(out)
    assert all(p["run"] is None for p in state["programs"].values())
    assert sum(p["transactions"] for p in state["programs"].values()) == 6
    assert cctx.sync_status(out).set_index("chain").loc["solana", "gaps"] == 0


def test_a_part_its_checkpoint_does_not_count_is_deleted(solana_node, tmp_path):
    out = tmp_path / "cctp"
    cctx.sync(out, {"solana": solana_node.url}, start=0, progress=False)
    state = _state(out)
    # a part written by a run stopped before its checkpoint (the part numbered past it)
    parts = state["programs"]["v1-messenger"]["parts"]
    folder = out / "solana" / "transactions"
    copy = next(folder.glob("solana__transactions__v1-*.jsonl"))
    chunk = storage.Chunk.slots(1, 2, page=parts)
    leftover = folder / storage.Part("solana", "transactions", chunk, label="v1-messenger",
                                     suffix="jsonl").name  # fmt: skip
    leftover.write_bytes(copy.read_bytes())
    cctx.sync(out, {"solana": solana_node.url}, progress=False)
    assert not leftover.exists()
    assert sorted(_stored(out)) == sorted(CCTP)


def test_a_dataset_of_the_old_layout_is_upgraded_and_each_transaction_kept_once(
    solana_node, tmp_path, caplog
):
    out = tmp_path / "cctp"
    cctx.sync(out, {"solana": solana_node.url}, start=0, progress=False)
    want = cctx.sync_status(out)
    to_the_old_layout(out)
    folder = out / "solana" / "transactions"
    assert all(p.name.startswith("v") for p in folder.glob("*.jsonl"))
    pd.testing.assert_frame_equal(cctx.sync_status(out), want)  # read as it is
    # a part its checkpoint does not count, in the old names: a leftover there too
    old_state = json.loads((out / "sync.json").read_text())["chains"]["solana"]
    parts = old_state["programs"]["v1-messenger"]["parts"]
    leftover = folder / f"v1-messenger-{parts:06d}-1-2.jsonl"
    leftover.write_bytes(next(folder.glob("v1-*.jsonl")).read_bytes())
    caplog.set_level(logging.INFO, logger="cctx_research.nodes.store")
    cctx.sync(out, {"solana": solana_node.url}, progress=False)
    assert "upgraded the sync dataset" in caplog.text
    assert not leftover.exists()
    assert all(p.name.startswith("solana__transactions__") for p in folder.glob("*.jsonl"))
    assert sorted(_stored(out)) == sorted(CCTP)
    assert cctx.sync_status(out).set_index("chain").loc["solana", "gaps"] == 0


def test_429s_are_waited_out(tmp_path):
    standin = SolanaStandin()
    standin.throttle, standin.throttle_method = 3, "getTransaction"
    with Node(standin) as node:
        result = cctx.sync(tmp_path / "c", {"solana": node.url}, start=0, progress=False)
    assert standin.throttle == 0
    assert result.chains[0].stats.throttled >= 1  # the runner saw them (and slowed down)
    assert sorted(_stored(tmp_path / "c")) == sorted(CCTP)
    standin.throttle, standin.retry_after = 1, "1"  # a Retry-After is honoured
    with Node(standin) as node:
        assert cctx.sync(tmp_path / "d", {"solana": node.url}, start=0,
                         progress=False).chains[0].logs == 6  # fmt: skip


def test_a_node_without_batches_is_asked_one_call_at_a_time(tmp_path):
    standin = SolanaStandin()
    standin.batches = False
    with Node(standin) as node:
        result = cctx.sync(tmp_path / "c", {"solana": node.url}, start=0, progress=False)
    assert result.chains[0].logs == 6
    assert standin.calls["getTransaction"] == 6  # each alone, once
    assert sorted(_stored(tmp_path / "c")) == sorted(CCTP)


def test_dates_bound_what_is_listed(solana_node, tmp_path):
    out = tmp_path / "cctp"
    # from 2024-08-25 (after the receive of 2024-08-24) to 2026-01-01 (before the V2 burn to Base)
    result = cctx.sync(out, {"solana": solana_node.url}, start="2024-08-25", end="2026-01-01",
                       progress=False)  # fmt: skip
    times = {json.loads(line)["blockTime"] for p in (out / "solana" / "transactions").glob("*")
             for line in p.read_text().splitlines()}  # fmt: skip
    assert result.chains[0].logs == 4
    assert min(times) >= pd.Timestamp("2024-08-25", tz="UTC").timestamp()
    assert max(times) < pd.Timestamp("2026-01-01", tz="UTC").timestamp()
    status = cctx.sync_status(out).set_index("chain").loc["solana"]
    assert status["first_time"] == pd.Timestamp("2024-08-25", tz="UTC")
    assert status["last_time"] <= pd.Timestamp("2026-01-01", tz="UTC")
    # no end: what the end left out comes next
    cctx.sync(out, {"solana": solana_node.url}, progress=False)
    assert len(_stored(out)) == 5  # not the receive before the start


def test_a_skipped_slot_has_no_time_and_the_next_one_is_asked(solana_node, tmp_path):
    start = 285_000_000
    solana_node.standin.skipped = {start: -32007, start + 1: -32009}
    cctx.sync(tmp_path / "c", {"solana": solana_node.url}, start=start, progress=False)
    status = cctx.sync_status(tmp_path / "c").set_index("chain").loc["solana"]
    assert status["first_block"] == start
    expected = solana_node.standin.time_of(start + 2)
    assert status["first_time"] == pd.Timestamp(expected, unit="s", tz="UTC")
    assert solana_node.standin.calls["getBlockTime"] >= 3 + 1


def test_wrong_input_is_said_clearly(solana_node, tmp_path):
    with pytest.raises(ValueError, match="first sync of solana needs start="):
        cctx.sync(tmp_path / "a", {"solana": solana_node.url}, progress=False)
    with pytest.raises(ValueError, match="start must be a slot number or a date"):
        cctx.sync(tmp_path / "b", {"solana": solana_node.url}, start="soonish", progress=False)
    with pytest.raises(ValueError, match="http:// or https://"):
        cctx.sync(tmp_path / "c", {"solana": "wss://api.mainnet-beta.solana.com"}, start=0)
    devnet = SolanaStandin()
    devnet.genesis = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"  # Solana devnet's
    with Node(devnet) as node, pytest.raises(ValueError, match=r"\(devnet\).*mainnet-beta node"):
        cctx.sync(tmp_path / "d", {"solana": node.url}, start=0, progress=False)
    assert not (tmp_path / "d" / "solana").exists()


def test_the_command_syncs_solana_and_shows_its_status(solana_node, tmp_path, capsys,
                                                        monkeypatch):  # fmt: skip
    out = tmp_path / "cctp"
    monkeypatch.setenv("CCTX_RPC_SOLANA", solana_node.url)
    assert main(["sync", "--chain", "solana", "--from", "0", "--out", str(out),
                 "--no-progress"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "solana (127.0.0.1:" in printed
    assert "6 transactions" in printed
    assert "7 transfers" in printed
    assert KEY not in printed
    assert main(["sync", "--status", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "solana" in shown
    assert str(solana_node.standin.head) in shown


def test_solana_legs_link_with_their_evm_sides(solana_node, tmp_path):
    """Arbitrum -> Solana (V1, nonce 290001) and Solana -> Ethereum (V2), both sides synced.

    The Arbitrum burn is the real message the recorded Solana receive carries
    (tests/solana_node.receive_message), replayed on an anvil Arbitrum whose
    clock starts before the receive; the Ethereum mint is the real attested
    message of ``v2_attested_solana_to_eth`` (tests/fixtures/cctp_real),
    replayed on an anvil Ethereum whose clock starts after the Solana burn.
    FILLED: the EVM blocks, times and transaction hashes are the local nodes'.
    """
    from tests.evm_node import Anvil

    from .conftest import _need_anvil

    _need_anvil()
    receive = next(r for r in recorded() if r["slot"] == 285590214)
    burn = real.Message(receive_message(receive), {})
    assert (burn.source_domain, burn.destination_domain, burn.nonce) == (3, 5, 290001)
    solana_burn = real.message("v2_attested_solana_to_eth")
    with Anvil(42161, timestamp=1724522000) as arbitrum, Anvil(1, timestamp=1752000600) as eth:
        arbitrum.install_cctp(contracts_of("arbitrum"))
        arbitrum.replay(real.burn_logs(burn, block=1, tx_hash=real.tx("arb 290001"), index=0,
                                       time=0))  # fmt: skip
        arbitrum.mine(5)
        eth.install_cctp(contracts_of("ethereum"))
        eth.replay(real.mint_logs(solana_burn, block=1, tx_hash=real.tx("eth sol"), index=0,
                                  time=0))  # fmt: skip
        eth.mine(5)
        out = tmp_path / "cctp"
        result = cctx.sync(out, {"solana": solana_node.url, "arbitrum": arbitrum.url,
                                 "ethereum": eth.url}, start=0, confirmations=2,
                           progress=False)  # fmt: skip
    assert [c.chain for c in result.chains] == ["solana", "arbitrum", "ethereum"]
    ledger = cctx.load(out)
    to_solana = ledger[ledger["nonce"] == "290001"].iloc[0]
    assert to_solana["pairing"] == "exact"
    assert (to_solana["source_domain"], to_solana["destination_domain"]) == (3, 5)
    assert to_solana["mint_tx_hash"] == receive["transaction"]["signatures"][0]
    assert to_solana["mint_timestamp"] == pd.Timestamp(receive["blockTime"], unit="s", tz="UTC")
    assert to_solana["burn_timestamp"] < to_solana["mint_timestamp"]
    from_solana = ledger[(ledger["source_domain"] == 5) & (ledger["destination_domain"] == 0)
                         & (ledger["pairing"] == "content")]  # fmt: skip
    assert len(from_solana) == 1
    row = from_solana.iloc[0]
    assert row["amount_raw"] == solana_burn.amount == 100_010_100_000
    assert row["burn_timestamp"] == pd.Timestamp(1752000000, unit="s", tz="UTC")
    assert row["mint_timestamp"] > row["burn_timestamp"]
    assert not pd.isna(row["mint_timestamp"])


def test_iris_is_asked_for_solana_burns_by_their_signature(solana_node, tmp_path):
    """`sync --iris` asks for an open Solana V2 burn with its signature as written (base58 is
    case-sensitive) and the burn takes the nonce Circle attested.

    Served: the real attested Solana -> Ethereum message (``v2_attested_solana_to_eth`` in
    tests/fixtures/cctp_real, whose event the recorded burn carries) with its real nonce,
    under the burn's signature, which tests/fixtures/solana filled in; the attestation's
    signatures are filled in too (the recorded mint's test held placeholder bytes).
    """
    from urllib.parse import parse_qs

    from cctx_research.iris import IrisClient
    from cctx_research.service.server import start_in_background
    from tests.iris.standin import IrisStandin, recorded_messages

    fixture = Path(__file__).parents[1] / "fixtures" / "solana" / "v2_burn_solana_to_ethereum.json"
    doc = json.loads(fixture.read_text())
    signature = doc.get("result", doc)["transaction"]["signatures"][0]
    assert signature != signature.lower()
    real = json.loads((Path(__file__).parents[1] / "fixtures" / "cctp_real"
                       / "v2_messages.json").read_text())["entries"]  # fmt: skip
    attested = next(e for e in real if e["id"] == "v2_attested_solana_to_eth")
    reply = {"messages": [{  # Circle's reply shape (tests/fixtures/iris/README.md)
        "message": attested["message_hex"],
        "eventNonce": attested["decoded"]["nonce"],
        "attestation": "0x" + "ab" * 130,  # filled in: no public source holds this one's
        "cctpVersion": 2,
        "status": "complete",
    }]}
    standin = IrisStandin([*recorded_messages(), (5, signature, reply)])
    handle = start_in_background(standin)
    try:
        with IrisClient(handle.url, cache_dir=tmp_path / "iris-cache", backoff=0.01) as client:
            result = cctx.sync(tmp_path / "c", {"solana": solana_node.url}, start=0,
                               progress=False, iris=client)  # fmt: skip
    finally:
        handle.close()
    # the two V2 burns are open (their EVM mints are not synced): both asked, one known
    assert (result.iris.burns_asked, result.iris.messages, result.iris.not_found) == (2, 1, 1)
    asked = [parse_qs(s.query)["transactionHash"][0] for s in standin.requests_to("/v2/messages/5")]
    assert signature in asked
    burn = cctx.load(tmp_path / "c").set_index("burn_tx_hash").loc[signature]
    assert burn["nonce"] == attested["decoded"]["nonce"]
    assert burn["amount_raw"] == 100_010_100_000


def test_ctrl_c_stops_a_solana_sync_and_the_next_run_goes_on(tmp_path):
    """SIGINT to `cctx-research sync --chain solana=...` mid-run: exit 130 with one line, the
    parts written kept; the same command again completes the dataset, each transaction once."""
    import signal
    import subprocess
    import sys
    import time

    standin = SolanaStandin(max_limit=1)  # a page a signature: a part after each
    standin.delay = 0.25  # a distant node, so the signal lands mid-run
    out = tmp_path / "cctp"
    with Node(standin) as node:
        cmd = [sys.executable, "-m", "cctx_research.cli", "sync", "--chain",
               f"solana={node.url}", "--from", "0", "--out", str(out), "--no-progress"]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        parts = out / "solana" / "transactions"
        deadline = time.monotonic() + 120
        while not list(parts.glob("*.jsonl")) and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        assert err.strip().splitlines()[-1] == "cctx-research: interrupted"
        assert "Traceback" not in err
        kept = _stored(out)
        assert 1 <= len(kept) < len(CCTP)  # stopped in the middle, what was written kept
        standin.delay = 0
        cctx.sync(out, {"solana": node.url}, progress=False)  # the same sync again
    assert sorted(_stored(out)) == sorted(CCTP)  # complete, each transaction once
    assert len(cctx.load(out)) == 7
