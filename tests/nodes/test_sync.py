"""`sync` against real anvil nodes carrying real CCTP logs (see conftest.py for the data)."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import requests

import cctx_research as cctx
from cctx_research import errors, storage
from cctx_research.cli import main
from cctx_research.nodes import ranges
from tests.evm_node.proxy import PROVIDERS, RangeLimited

from .conftest import burn, checkpoints, mint, to_the_old_layout


def _spans(out, chain):
    """(first, last) block of each part, in order."""
    parts = [storage.parse_part(p.name) for p in (out / chain / "logs").glob("*.parquet")]
    return sorted((p.chunk.first, p.chunk.last) for p in parts)


def _checkpointed(out, chain):
    """Whether the dataset at ``out`` holds a checkpoint of ``chain`` past some final part."""
    try:
        return (checkpoints(out)[chain].get("safe") or -1) >= 0
    except (FileNotFoundError, KeyError, ValueError):
        return False


def _contiguous(spans, first, last):
    """Whether the spans cover first..last exactly, with no gap and no overlap."""
    edges = [first - 1] + [b for span in spans for b in span] + [last + 1]
    return all(edges[i] + 1 == edges[i + 1] for i in range(0, len(edges), 2))


def _logs(out, chain):
    files = sorted((out / chain / "logs").glob("*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def test_a_fresh_sync_links_across_chains_and_reports(base_node, ethereum_node, tmp_path, capsys):
    out = tmp_path / "cctp"
    result = cctx.sync(out, {"base": base_node.url, "ethereum": ethereum_node.url}, start=0,
                       confirmations=5, progress=False)  # fmt: skip
    assert [c.logs for c in result.chains] == [8, 6]  # 2 burns x 2 logs + 2 mints x 2 logs; ...
    ledger = cctx.load(out)
    assert len(ledger) == result.transfers == 5
    counts = ledger["pairing"].astype(str).value_counts().to_dict()
    # Base -> Ethereum V2 by content, V1 by nonce; two mints from unsynced chains; one in flight
    assert counts == {"content": 1, "exact": 1, "mint_only": 2, "pending": 1}
    linked = ledger[ledger["pairing"].astype(str) == "content"].iloc[0]
    assert linked["amount_raw"] == 19_500_000_000
    assert linked["mint_timestamp"] - linked["burn_timestamp"] >= pd.Timedelta(minutes=9)
    # raw logs in cryo's columns, with the chain id and the block time
    logs = _logs(out, "base")
    assert {"block_number", "transaction_hash", "topic0", "data", "chain_id",
            "block_timestamp"} <= set(logs.columns)  # fmt: skip
    assert set(logs["chain_id"]) == {8453}
    status = cctx.sync_status(out).set_index("chain")
    assert status.loc["base", "last_block"] == base_node.head()
    assert status.loc["base", "safe_block"] == base_node.head() - 5
    assert status.loc["base", "gaps"] == 0
    assert status.loc["ethereum", "logs"] == 6
    # the report reads the synced directory as it is
    report = tmp_path / "r.html"
    assert main(["report", "--data", str(out), "--out", str(report)]) == 0
    assert "19,500" in report.read_text() or "19.5k" in report.read_text()


def test_a_second_run_fetches_only_new_blocks_and_duplicates_nothing(base_node, tmp_path):
    out = tmp_path / "cctp"
    first = cctx.sync(out, {"base": base_node.url}, start=0, confirmations=5, progress=False)
    head = base_node.head()
    base_node.replay(burn("v2_attested_base_to_eth_19500", "again"))
    base_node.mine(3)
    again = cctx.sync(out, {"base": base_node.url}, progress=False)
    assert again.chains[0].first == head - 5 + 1  # the tip again, then the new blocks
    assert again.chains[0].last == base_node.head()
    logs = _logs(out, "base")
    assert len(logs) == first.chains[0].logs + 2
    assert not logs.duplicated(["block_number", "log_index"]).any()
    # nothing new: up to date, nothing written twice
    third = cctx.sync(out, {"base": base_node.url}, progress=False)
    assert len(_logs(out, "base")) == len(logs)
    assert third.transfers == again.transfers
    # an end before the checkpoint fetches nothing and keeps the tip parts it does not fetch
    early = cctx.sync(out, {"base": base_node.url}, end=2, progress=False)
    assert early.chains[0].up_to_date
    assert len(_logs(out, "base")) == len(logs)


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_providers_range_limit_is_learned_and_nothing_is_lost(base_node, tmp_path, provider,
                                                                caplog):  # fmt: skip
    base_node.mine(400)
    base_node.replay(burn("v2_attested_base_to_eth_19500", "late"))
    direct = cctx.sync(tmp_path / "direct", {"base": base_node.url}, start=0, progress=False)
    caplog.set_level(logging.DEBUG)
    with RangeLimited(base_node.url, provider, max_blocks=64) as proxy:
        limited = cctx.sync(tmp_path / "limited", {"base": proxy.url}, start=0, progress=False)
    assert proxy.refused >= 1
    assert limited.chains[0].splits >= 1
    assert limited.chains[0].logs == direct.chains[0].logs == 10
    state = {"chains": checkpoints(tmp_path / "limited")}
    if provider != "geth":  # geth's text caps results, not blocks: the range is found by halving
        assert state["chains"]["base"]["range"] <= 64
    # the key in the node's URL is never logged nor stored
    assert "SECRET-KEY" not in caplog.text
    assert "SECRET-KEY" not in (tmp_path / "limited" / storage.MANIFEST).read_text()
    assert "127.0.0.1" in state["chains"]["base"]["host"]


def test_a_capped_nodes_limit_is_learnt_in_the_first_round(base_node, tmp_path):
    base_node.mine(1200)
    with RangeLimited(base_node.url, max_blocks=32) as proxy:
        cctx.sync(tmp_path / "c", {"base": proxy.url}, start=0, progress=False, range_blocks=128)
    assert proxy.refused == 4  # the first round of 4 ranges, not a segment of 16
    parts = sorted(p.name for p in (tmp_path / "c" / "base" / "logs").glob("*.parquet"))
    # the first part is that round (4 x 128 blocks), the next ones 16 ranges of the learnt 32
    assert "base__logs__blocks_0000000000_to_0000000511.parquet" in parts
    assert "base__logs__blocks_0000000512_to_0000001023.parquet" in parts
    assert len(_logs(tmp_path / "c", "base")) == 8


def test_429s_are_waited_out(base_node, tmp_path):
    with RangeLimited(base_node.url, max_blocks=10_000) as proxy:
        proxy.throttle = 3
        result = cctx.sync(tmp_path / "c", {"base": proxy.url}, start=0, progress=False)
    assert result.chains[0].logs == 8
    assert proxy.throttle == 0
    assert proxy.requests >= 3 + 3


def test_the_proxys_last_range_waits_for_its_stall_then_is_held(base_node):
    """The test proxy's ``last_waits``: the benchmark's SIGINT check relies on a run that
    cannot end before its stall, however fast its other ranges are answered."""
    def logs(lo: int, hi: int, seen: list[object]) -> None:
        query = {"fromBlock": hex(lo), "toBlock": hex(hi)}
        call = {"jsonrpc": "2.0", "id": 1, "method": "eth_getLogs", "params": [query]}
        try:
            seen.append(requests.post(proxy.url, json=call, timeout=30).json())
        except requests.RequestException as exc:  # held, then let go unanswered
            seen.append(exc)

    stall = threading.Event()
    first, last = [], []
    with RangeLimited(base_node.url, max_blocks=10_000) as proxy:
        proxy.stall_when, proxy.last_waits = stall.is_set, 20
        logs(1, 10, first)  # not the last range: answered at once
        assert isinstance(first[0]["result"], list)
        waiting = threading.Thread(target=logs, args=(11, 20, last))
        waiting.start()
        deadline = time.monotonic() + 10
        while proxy.requests < 2 and time.monotonic() < deadline:  # the call has arrived
            time.sleep(0.01)
        time.sleep(0.5)  # an answered call would have ended by now
        assert waiting.is_alive()  # waits for the stall
        assert proxy.stalled == 0
        stall.set()
        deadline = time.monotonic() + 10
        while proxy.stalled == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proxy.stalled == 1  # then held with the others
        assert waiting.is_alive()
    waiting.join(10)
    assert not waiting.is_alive()
    assert isinstance(last[0], requests.RequestException)


def test_a_reorg_within_the_depth_is_replaced(base_node, tmp_path):
    out = tmp_path / "cctp"
    before = base_node.snapshot()
    base_node.replay(burn("v1_base_to_ethereum_761503", "orphaned"))
    cctx.sync(out, {"base": base_node.url}, start=0, confirmations=50, progress=False)
    assert len(_logs(out, "base")) == 10
    base_node.revert(before)  # the orphaned burn's block is gone
    base_node.replay(burn("v2_attested_base_to_eth_19500", "canonical"))
    base_node.mine(5)
    cctx.sync(out, {"base": base_node.url}, progress=False)
    logs = _logs(out, "base")
    assert len(logs) == 10
    hashes = set(logs["transaction_hash"].map(bytes.hex))
    assert base_node.rpc("eth_getTransactionReceipt", "0x" + sorted(hashes)[0]) is not None
    assert all(base_node.rpc("eth_getTransactionReceipt", "0x" + h) for h in hashes)


def test_a_final_part_past_the_checkpoint_is_a_leftover_and_is_deleted(base_node, tmp_path):
    out = tmp_path / "cctp"
    first = cctx.sync(out, {"base": base_node.url}, start=0, confirmations=5, progress=False)
    safe = checkpoints(out)["base"]["safe"]
    holding = next(p for p in (out / "base" / "logs").glob("*.parquet")
                   if pq.read_metadata(p).num_rows)  # fmt: skip
    # what a run stopped between writing a part and its checkpoint leaves
    name = storage.Part("base", "logs", storage.Chunk.blocks(safe + 1, safe + 2)).name
    leftover = out / "base" / "logs" / name
    leftover.write_bytes(holding.read_bytes())
    base_node.mine(3)
    again = cctx.sync(out, {"base": base_node.url}, progress=False)
    assert not leftover.exists()
    assert again.chains[0].first == safe + 1  # its blocks fetched again
    logs = _logs(out, "base")
    assert len(logs) == first.chains[0].logs
    assert not logs.duplicated(["block_number", "log_index"]).any()


def test_a_dataset_of_the_old_layout_is_read_as_it_is_and_upgraded_by_a_sync(
    base_node, tmp_path, caplog
):
    out = tmp_path / "cctp"
    cctx.sync(out, {"base": base_node.url}, start=0, confirmations=5, progress=False)
    want_status = cctx.sync_status(out)
    want = sorted(cctx.load(out)["transfer_id"])
    to_the_old_layout(out)
    old_names = sorted(p.name for p in (out / "base" / "logs").iterdir())
    assert "0-" in old_names[0]
    # status and load read it as it is, and write nothing
    pd.testing.assert_frame_equal(cctx.sync_status(out), want_status)
    assert sorted(cctx.load(out)["transfer_id"]) == want
    assert sorted(p.name for p in (out / "base" / "logs").iterdir()) == old_names
    assert (out / "sync.json").is_file()
    assert not (out / storage.MANIFEST).exists()
    # a sync upgrades it in place (logged), then goes on from its checkpoint
    base_node.replay(burn("v2_attested_base_to_eth_19500", "after-upgrade"))
    base_node.mine(2)
    caplog.set_level(logging.INFO, logger="cctx_research.nodes.store")
    again = cctx.sync(out, {"base": base_node.url}, progress=False)
    assert "upgraded the sync dataset" in caplog.text
    assert not (out / "sync.json").exists()
    before = want_status.set_index("chain").loc["base", "safe_block"]
    assert checkpoints(out)["base"]["safe"] >= before
    names = [p.name for p in (out / "base" / "logs").iterdir()]
    assert names
    assert all(storage.parse_part(n) is not None for n in names)
    logs = _logs(out, "base")
    assert not logs.duplicated(["block_number", "log_index"]).any()
    assert again.transfers == len(want) + 1
    assert cctx.sync_status(out).set_index("chain").loc["base", "gaps"] == 0


@pytest.mark.parametrize("workers", [1, 4])
def test_a_node_that_dies_mid_sync_ends_in_a_typed_error_and_resumes(base_node, tmp_path,
                                                                      workers):  # fmt: skip
    base_node.mine(1200)  # three segments of 16 ranges of 32 blocks
    base_node.replay(burn("v2_attested_base_to_eth_19500", "late"))
    out = tmp_path / "cctp"
    with RangeLimited(base_node.url, max_blocks=32) as proxy:
        # the node is gone once a first segment is checkpointed: the other segments are then
        # in flight beside it, in whatever order the workers took them
        proxy.fail_when = lambda: _checkpointed(out, "base")
        with pytest.raises(errors.ServerError, match=r"connection to 127\.0\.0\.1"):
            cctx.sync(out, {"base": proxy.url}, start=0, progress=False, range_blocks=32,
                      retries=1, max_workers=workers)  # fmt: skip
    state = {"chains": checkpoints(out)}
    assert 0 <= state["chains"]["base"]["safe"] < base_node.head()
    # the segments after the first ran beside its tail, but none was written past the checkpoint
    assert _contiguous(_spans(out, "base"), 0, state["chains"]["base"]["safe"])
    resumed = cctx.sync(out, {"base": base_node.url}, progress=False)
    assert resumed.chains[0].first == state["chains"]["base"]["safe"] + 1
    logs = _logs(out, "base")
    assert len(logs) == 10
    assert not logs.duplicated(["block_number", "log_index"]).any()


def test_wrong_input_is_said_clearly(base_node, ethereum_node, tmp_path, capsys):
    with pytest.raises(ValueError, match="serves chain id 8453, not ethereum's 1"):
        cctx.sync(tmp_path / "a", {"ethereum": base_node.url}, start=0, progress=False)
    with pytest.raises(ValueError, match="first sync of base needs start="):
        cctx.sync(tmp_path / "b", {"base": base_node.url}, progress=False)
    with pytest.raises(ValueError, match=r"unknown chain 'bsae' \(did you mean 'base'\?\)"):
        cctx.sync(tmp_path / "c", {"bsae": base_node.url}, start=0)
    with pytest.raises(ValueError, match="http:// or https://"):
        cctx.sync(tmp_path / "d", {"base": "ws://node"}, start=0)
    with pytest.raises(ValueError, match="start must be a block number or a date"):
        cctx.sync(tmp_path / "e", {"base": base_node.url}, start="yesterday-ish", progress=False)
    old = tmp_path / "old"
    old.mkdir()
    newer = storage.FORMAT + 1
    for found, says in [(0, r"an older cctx-research \(sync format 0\).*new directory"),
                        (newer, rf"a newer cctx-research \(sync format {newer}.*pip install -U"),
                        (None, r"no version this one knows.*new directory"),
                        ("1", r"no version this one knows \(sync format '1'\)")]:  # fmt: skip
        manifest = {"format": found, "kind": "sync", "state": {"chains": {}}}
        (old / storage.MANIFEST).write_text(json.dumps(manifest))
        with pytest.raises(errors.DataError, match=says):
            cctx.sync(old, {"base": base_node.url}, start=0)
        assert main(["sync", "--chain", f"base={base_node.url}", "--out", str(old)]) == 1
        assert re.search(says, capsys.readouterr().err)  # the CLI's one line says what to do
    (old / storage.MANIFEST).write_text("{\"format\": 2, \"ki")
    with pytest.raises(errors.DataError, match=r"cannot be read.*new directory"):
        cctx.sync(old, {"base": base_node.url}, start=0)
    (old / storage.MANIFEST).write_text(json.dumps({"format": storage.FORMAT, "kind": "ledger",
                                                    "state": {"writes": []}}))  # fmt: skip
    with pytest.raises(errors.DataError, match=r"of kind 'ledger', not 'sync'.*new directory"):
        cctx.sync(old, {"base": base_node.url}, start=0)
    # the state file of the layout before the manifest: refused alike unless it is format 1
    (old / storage.MANIFEST).unlink()
    for found, says in [(0, r"an older cctx-research \(sync format 0\).*new directory"),
                        (2, r"no version this one knows \(sync format 2\).*new directory"),
                        (None, r"no version this one knows.*new directory"),
                        ("1", r"no version this one knows \(sync format '1'\)")]:  # fmt: skip
        (old / "sync.json").write_text(json.dumps({"format": found, "chains": {}}))
        with pytest.raises(errors.DataError, match=says):
            cctx.sync(old, {"base": base_node.url}, start=0)
    (old / "sync.json").write_text("{\"format\": 1, \"cha")
    with pytest.raises(errors.DataError, match=r"cannot be read.*new directory"):
        cctx.sync(old, {"base": base_node.url}, start=0)
    assert not (old / storage.MANIFEST).exists()  # a refused dataset is left as it was


def test_a_date_becomes_its_first_block(base_node, tmp_path):
    t = int(base_node.rpc("eth_getBlockByNumber", hex(3), False)["timestamp"], 16)
    result = cctx.sync(tmp_path / "c", {"base": base_node.url},
                       start=pd.Timestamp(t, unit="s", tz="UTC"), progress=False)  # fmt: skip
    first = result.chains[0].first
    assert int(base_node.rpc("eth_getBlockByNumber", hex(first), False)["timestamp"], 16) >= t
    if first > 0:
        prev = base_node.rpc("eth_getBlockByNumber", hex(first - 1), False)
        assert int(prev["timestamp"], 16) < t


def test_range_errors_of_each_provider_are_recognised():
    for _status, _code, text in PROVIDERS.values():
        message = text.format(limit=500, asked=10_000, lo="0x10", hi="0x203")
        assert ranges.too_large(message), message
    assert not ranges.too_large("execution reverted")
    # a stated limit is kept: never asked for more again
    sizer = ranges.Sizer(10_000)
    sizer.failed(10_000, PROVIDERS["alchemy"][2].format(limit=500, lo="0x10", hi="0x203"))
    assert sizer.size == 500
    for _ in range(8):
        sizer.succeeded(sizer.size)
    assert sizer.size == 500
    # an error that states no block count halves, then grows back below what failed
    sizer = ranges.Sizer(10_000)
    sizer.failed(8_000, "upstream timed out")
    assert sizer.size == 4_000
    for _ in range(8):
        sizer.succeeded(sizer.size)
    assert 4_000 < sizer.size < 8_000


def test_the_command_syncs_shows_status_and_never_prints_the_url(base_node, tmp_path, capsys,
                                                                  monkeypatch):  # fmt: skip
    out = tmp_path / "cctp"
    with RangeLimited(base_node.url, max_blocks=10_000) as proxy:
        monkeypatch.setenv("CCTX_RPC_BASE", proxy.url)
        assert main(["sync", "--chain", "base", "--from", "0", "--out", str(out),
                     "--no-progress"]) == 0  # fmt: skip
        printed = capsys.readouterr().out
        assert "base (127.0.0.1:" in printed
        assert "8 logs" in printed
        assert "4 transfers" in printed
        assert "SECRET-KEY" not in printed
        assert main(["sync", "--chain", "base", "--out", str(out), "--no-progress"]) == 0
        assert "4 transfers" in capsys.readouterr().out
    assert main(["sync", "--status", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "base" in shown
    assert "last_block" in shown
    monkeypatch.delenv("CCTX_RPC_BASE")
    assert main(["sync", "--chain", "base", "--out", str(out)]) != 0
    assert "CCTX_RPC_BASE is not set" in capsys.readouterr().err
    assert main(["sync", "--status", str(tmp_path)]) != 0
    assert "not a sync directory" in capsys.readouterr().err


def test_block_times_come_from_batched_headers_when_logs_carry_none(base_node, tmp_path):
    for i in range(6):  # burns in blocks 64 apart: each in another range
        base_node.mine(63)
        base_node.replay(burn("v2_attested_base_to_eth_19500", f"spread-{i}"))
    with RangeLimited(base_node.url, max_blocks=64) as proxy:
        proxy.strip_times = True
        cctx.sync(tmp_path / "c", {"base": proxy.url}, start=0, progress=False, range_blocks=64,
                  confirmations=0)  # fmt: skip
    # one batch per part for its blocks with logs, gathered over its ranges (a batch per range
    # would be 7), one for the coverage's two ends; the chain id and the head in one batch too
    files = list((tmp_path / "c" / "base" / "logs").glob("*.parquet"))
    holding = sum(pq.read_metadata(f).num_rows > 0 for f in files)
    assert holding == 2
    assert proxy.calls["batch of eth_getBlockByNumber"] == 1 + holding, proxy.calls
    assert proxy.calls["eth_getBlockByNumber"] == 0, proxy.calls
    assert proxy.calls["batch of eth_chainId"] == 1, proxy.calls  # with localDomain() too
    assert proxy.calls["eth_call"] == proxy.calls["eth_blockNumber"] == 0, proxy.calls
    assert proxy.calls["eth_getLogs"] == -(-(base_node.head() + 1) // 64), proxy.calls
    logs = _logs(tmp_path / "c", "base")
    assert len(logs) == 8 + 6 * 2
    for number, stamp in zip(logs["block_number"], logs["block_timestamp"], strict=True):
        header = base_node.rpc("eth_getBlockByNumber", hex(int(number)), False)
        assert int(header["timestamp"], 16) == stamp


def test_the_transmitters_local_domain_is_checked(tmp_path):
    """A node of Base's chain id whose CCTP contracts say domain 3 (Arbitrum's): refused."""
    from eth_hash.auto import keccak

    from cctx_research.nodes.engine import LOCAL_DOMAIN, contracts_of
    from tests.evm_node import Anvil

    from .conftest import _need_anvil

    assert "0x" + keccak(b"localDomain()")[:4].hex() == LOCAL_DOMAIN
    _need_anvil()
    with Anvil(8453) as node:
        node.install_cctp(contracts_of("base"), domain=3)
        with pytest.raises(ValueError, match=r"says localDomain 3 \(arbitrum\), not base's 6"):
            cctx.sync(tmp_path / "x", {"base": node.url}, start=0, progress=False)
        assert not (tmp_path / "x" / "base").exists()  # refused before any log was fetched
        node.install_cctp(contracts_of("base"))  # the registry's domain: accepted
        result = cctx.sync(tmp_path / "x", {"base": node.url}, start=0, progress=False)
        assert result.chains[0].chain == "base"


_FULL_DISK = textwrap.dedent(
    """
    import resource, signal, sys
    import cctx_research as cctx
    from cctx_research.errors import DataError
    out, url, limit = sys.argv[1:4]
    # writes past the limit fail with EFBIG, as writes to a full disk fail with ENOSPC
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), int(limit)))
    try:
        cctx.sync(out, {"base": url}, start=0, progress=False, range_blocks=32, max_workers=1)
    except DataError as exc:
        print(str(exc).splitlines()[0])
        sys.exit(3)
    """
)


def test_a_full_disk_ends_in_a_typed_error_naming_the_dataset_and_loses_nothing(
    base_node, tmp_path
):
    logs = burn("v2_attested_base_to_eth_19500", "full-a") + mint(
        "v1_ethereum_to_base_282099", "full-b"
    )
    base_node.mine(600)  # the first parts hold the fixture's 8 logs
    dense = base_node.head() + 1
    for _ in range(150):  # a later part of 150 transactions: twice the first one's size
        base_node.replay_many(logs, 1)
    base_node.mine(100)
    reference = cctx.sync(tmp_path / "ref", {"base": base_node.url}, start=0, progress=False)
    out = tmp_path / "cctp"
    done = subprocess.run([sys.executable, "-c", _FULL_DISK, str(out), base_node.url, "8000"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 3, done.stderr[-2000:]
    assert f"cannot write the sync dataset {out} (File too large" in done.stdout
    assert "run the same sync again" in done.stdout
    # the parts before the dense blocks and their checkpoint are kept; no temporary file is left
    safe = checkpoints(out)["base"]["safe"]
    assert 0 < safe < dense
    assert _contiguous(_spans(out, "base"), 0, safe)
    assert not [p for p in (out / "base" / "logs").iterdir() if p.suffix != ".parquet"]
    assert len(_logs(out, "base")) == 8  # the fixture's, all before the dense blocks
    resumed = cctx.sync(out, {"base": base_node.url}, progress=False)
    assert resumed.chains[0].first == safe + 1
    logs_after = _logs(out, "base")
    assert len(logs_after) == reference.chains[0].logs == 8 + 150 * 4
    assert not logs_after.duplicated(["block_number", "log_index"]).any()
    assert resumed.transfers == reference.transfers


def test_the_ledger_is_built_from_every_part_and_names_them(base_node, tmp_path):
    out = tmp_path / "cctp"
    cctx.sync(out, {"base": base_node.url}, start=0, confirmations=5, progress=False)
    base_node.replay(burn("v2_attested_base_to_eth_19500", "later"))
    base_node.mine(8)
    again = cctx.sync(out, {"base": base_node.url}, confirmations=5, progress=False)
    parts = sorted((out / "base" / "logs").glob("*.parquet"))
    assert len(parts) >= 2
    assert again.ledger == str(out / "ledger")  # the dataset, built in DuckDB
    assert not (out / "ledger.parquet").exists()
    ledger = cctx.load(out)
    assert len(ledger) == again.transfers == 5  # the later burn counted, nothing twice
    from cctx_research.provenance import Provenance, provenance

    # the dataset's own record names the sync directory and its parts
    manifest = storage.read_manifest(out / "ledger", kinds=("ledger",), instead="-")
    record = Provenance.from_dict(manifest.state["writes"][-1])
    assert record.source == str(out)
    assert {Path(f).name for f in record.files} == {p.name for p in parts
                                                     if pq.read_metadata(p).num_rows}  # fmt: skip
    assert record.count["transfers"] == 5
    assert provenance(ledger) is not None
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporary left


def test_a_chains_parts_are_read_in_batches_and_give_the_same_ledger(
    base_node, tmp_path, monkeypatch
):
    import importlib

    import cctx_research.ingest as ingest
    from cctx_research.nodes.store import Dataset

    sync_run = importlib.import_module("cctx_research.nodes.ledger")  # the module

    out = tmp_path / "cctp"
    cctx.sync(out, {"base": base_node.url}, start=0, confirmations=5, progress=False)
    base_node.replay(burn("v2_attested_base_to_eth_19500", "later"))
    base_node.mine(8)
    cctx.sync(out, {"base": base_node.url}, confirmations=5, progress=False)
    parts = sorted((out / "base" / "logs").glob("*.parquet"))
    logs = [pq.read_metadata(p).num_rows for p in parts]
    assert sum(n > 0 for n in logs) >= 2
    read = []
    load = ingest.load
    monkeypatch.setattr(ingest, "load", lambda files, **kw: read.append(files) or load(files, **kw))
    whole = sync_run.build_ledger(Dataset(out), engine="pandas")  # batches: the pandas path
    monkeypatch.setattr(sync_run, "BATCH_LOGS", max(logs))  # no two parts with logs together
    batched = sync_run.build_ledger(Dataset(out), engine="pandas")
    assert whole == batched == 5
    assert len(read[0]) == 1  # the default: the chain's parts in one batch
    assert 2 <= len(read[1]) <= len(parts)
    assert sum(pq.read_metadata(p).num_rows for p in read[1]) == sum(logs)
    ledger = pd.read_parquet(out / "ledger.parquet")
    assert ledger["transfer_id"].is_unique


@pytest.mark.parametrize(
    ("chain", "first", "last"),
    [
        ("base", "2026-11-02", "2026-11-01"),
        ("base", "2026-11-01", "2026-11-01"),
        ("base", "500", "20"),
        ("base", "0x200", "0x20"),
        ("solana", "2026-11-02", "2026-11-01"),
        ("solana", "300000000", "200000000"),
    ],
)
def test_the_command_refuses_a_start_after_its_end_before_asking_a_node(
    chain, first, last, tmp_path, capsys
):
    out = tmp_path / "cctp"
    # a port nothing listens on: the refusal comes before any request
    code = main(["sync", "--chain", f"{chain}=http://127.0.0.1:9", "--from", first,
                 "--to", last, "--out", str(out), "--no-progress"])  # fmt: skip
    assert code != 0
    err = capsys.readouterr().err
    assert f"start={first!r}" in err
    assert "--from" in err
    assert "--to" in err
    assert not (out / chain).exists()


def test_a_block_start_after_a_date_end_is_refused_once_the_node_dates_it(base_node, tmp_path):
    with pytest.raises(ValueError, match=r"base: start=5 is after end='2001-01-01'"):
        cctx.sync(tmp_path / "d", {"base": base_node.url}, start=5, end="2001-01-01",
                  progress=False)  # fmt: skip
    assert not (tmp_path / "d" / "base").exists()
