"""`sync --iris`: Circle's attestation API asked for what the chains leave open.

The nodes replay real messages (conftest.py); the Iris stand-in (tests/iris/standin.py)
serves Circle's real replies. Filled in: the pending burn's transaction hash is the local
node's, so the stand-in serves that burn's real reply (recorded for its real hash
0xff839aad..., ``v2_attested_eth_to_arb_fast_100`` in tests/fixtures/cctp_real) under the
local hash too.
"""

from __future__ import annotations

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research.cli import main
from cctx_research.iris import IrisClient
from cctx_research.service.server import start_in_background
from tests.iris.standin import IrisStandin, recorded_messages

REAL_TX = "0xff839aaddd817159f2f3784bc1a7d1c8c330af5e4b46e1ff4ea959ee30cb015e"


def _real_reply(tx_hash: str) -> dict:
    return next(reply for _, tx, reply in recorded_messages() if tx and tx.lower() == tx_hash)


@pytest.fixture
def synced(base_node, ethereum_node, tmp_path):
    out = tmp_path / "cctp"
    nodes = {"base": base_node.url, "ethereum": ethereum_node.url}
    cctx.sync(out, nodes, start=0, confirmations=5, progress=False)
    ledger = cctx.load(out)
    pending = ledger[ledger["pairing"].astype(str) == "pending"]
    assert len(pending) == 1
    return out, nodes, pending["burn_tx_hash"].iloc[0]


@pytest.fixture
def iris_server(synced):
    _, _, local_tx = synced
    standin = IrisStandin([*recorded_messages(), (0, local_tx, _real_reply(REAL_TX))])
    handle = start_in_background(standin)
    yield standin, handle.url
    handle.close()


def test_sync_asks_iris_for_open_burns_and_keeps_a_history(synced, iris_server, tmp_path):
    out, nodes, local_tx = synced
    standin, url = iris_server
    with IrisClient(url, cache_dir=tmp_path / "iris-cache", backoff=0.01) as client:
        first = cctx.sync(out, nodes, confirmations=5, progress=False, iris=client)
        assert first.iris.burns_asked == 1  # the one V2 burn with no mint; linked ones are not
        assert first.iris.messages == 1
        messages = pd.read_parquet(out / "iris" / "messages.parquet")
        assert messages["tx_hash"].tolist() == [local_tx]
        assert messages["status"].tolist() == ["complete"]
        asked = {s.path for s in standin.requests_to("/v2/burn/USDC/fees/")}
        assert asked == {"/v2/burn/USDC/fees/0/3", "/v2/burn/USDC/fees/6/0"}  # V2 routes synced
        second = cctx.sync(out, nodes, confirmations=5, progress=False, iris=client)
    assert second.iris.burns_asked == 0  # complete messages are never asked again
    allowance = pd.read_parquet(out / "iris" / "allowance.parquet")
    assert len(allowance) == 2  # one snapshot a run: the allowance gains a history
    assert allowance["as_of"].is_monotonic_increasing
    # why the transfer waits: attested, nobody relayed it
    ledger = cctx.load(out)
    late = cctx.analysis.pending.stuck(ledger, as_of=ledger["burn_timestamp"].max()
                                       + pd.Timedelta(days=1), attestations=messages)
    row = late.set_index("burn_tx_hash").loc[local_tx]
    assert row["waiting_on"] == "attested_not_relayed"
    # the report on the synced directory says it too
    page = tmp_path / "r.html"
    assert main(["report", "--data", str(out), "--out", str(page)]) == 0
    assert "wait on (Circle" in page.read_text()
    assert "attested_not_relayed" in page.read_text()


def test_an_iris_outage_keeps_the_chains_data_and_asks_again(synced, iris_server, tmp_path):
    out, nodes, _ = synced
    standin, url = iris_server
    standin.fail_next(503, times=100)
    with IrisClient(url, cache_dir=tmp_path / "iris-cache", backoff=0.01, retries=1) as client:
        down = cctx.sync(out, nodes, confirmations=5, progress=False, iris=client)
        assert down.iris.failed >= 1
        assert down.transfers == 5  # the chains' ledger stands
        assert not (out / "iris" / "messages.parquet").exists()
        standin._faults.clear()
        up = cctx.sync(out, nodes, confirmations=5, progress=False, iris=client)
    assert up.iris.burns_asked == 1
    assert up.iris.messages == 1


def test_the_command_takes_iris_and_says_what_it_asked(synced, iris_server, capsys, monkeypatch,
                                                        tmp_path):
    out, nodes, _ = synced
    _, url = iris_server
    monkeypatch.setenv("CCTX_IRIS_URL", url)
    monkeypatch.setenv("CCTX_CACHE_DIR", str(tmp_path / "cache"))
    args = ["sync", "--out", str(out), "--iris", "--no-progress", "--confirmations", "5"]
    for name, node in nodes.items():
        args += ["--chain", f"{name}={node}"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "iris: 1 burns asked (1 messages" in printed
    # its replies are kept where CCTX_CACHE_DIR says (they went to the platform's cache)
    assert (tmp_path / "cache" / "iris" / "http.sqlite").is_file()
    with pytest.raises(TypeError, match="iris must be True"):
        cctx.sync(out, nodes, iris=3)
