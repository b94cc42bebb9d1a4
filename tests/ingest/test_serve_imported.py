"""`import`, then `serve --data`: the five operations answer as the imported ledger says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from browser_support import free_port

import cctx_research as cctx
from cctx_research.cli import main
from cctx_research.client import Client

from .encoded import burn_body_v1, deposit_v1, mint_v1, received_v1

DUNE = Path(__file__).parent.parent / "fixtures" / "dune"
KEY = "imported-ledger-key-0123"
PROJECT = "11111111-2222-4333-8444-555555555555"
AS_OF = pd.Timestamp("2024-07-03T00:00:00Z")
START, END = "2024-06-30", "2024-07-03"
ALL = list(range(8))
T0 = 1_719_828_000
SENDERS = ["0x" + "a1" * 20, "0x" + "a2" * 20]
RECIPIENTS = ["0x" + "b1" * 20, "0x" + "b2" * 20]


def _tx(n: int) -> str:
    return "0x" + f"{n:064x}"


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """A ledger imported from Ethereum and Base logs plus Dune deposits and withdrawals."""
    root = tmp_path_factory.mktemp("imported")
    eth, base = [], []
    for k in range(6):
        amount = 1_000_000 * (k + 1) + k
        who, to = SENDERS[k % 2], RECIPIENTS[k % 2]
        eth.append(deposit_v1(700 + k, amount, who, to, 6, block=10 + k, tx=_tx(100 + k),
                              index=1, time=T0 + 60 * k))
        if k < 4:  # two stay pending
            where = {"block": 500 + k, "tx": _tx(200 + k), "time": T0 + 60 * k + 900}
            base.append(mint_v1(to, amount, index=2, **where))
            base.append(received_v1(0, 700 + k, burn_body_v1(amount, who, to), index=3, **where))
    (root / "eth.jsonl").write_text("\n".join(json.dumps(x) for x in eth))
    (root / "base.json").write_text(json.dumps(base))
    out = root / "ledger.parquet"
    code = main(
        ["import", str(root / "eth.jsonl"), str(root / "base.json"),
         str(DUNE / "bridges_evms_deposits.csv"), str(DUNE / "bridges_evms_withdrawals.csv"),
         "--chain", f"{root / 'eth.jsonl'}=ethereum", "--chain", f"{root / 'base.json'}=base",
         "--no-progress", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    return out


def test_import_writes_the_ledger_and_says_what_it_did(imported, capsys):
    ledger = pd.read_parquet(imported)
    assert len(ledger) == 6 + 3
    record = cctx.provenance.provenance(cctx.load(imported))
    assert record.format == "cctx"
    assert sorted(p.name for p in imported.parent.iterdir()) == ["base.json", "eth.jsonl",
                                                                  "ledger.parquet"]


@pytest.fixture(scope="module")
def served(imported):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cctx_research.cli", "serve", "--port", str(port), "--data",
         str(imported), "--floor-times", "--as-of", AS_OF.isoformat(), "--api-key", KEY,
         "--project-id", PROJECT],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    client = Client(url, PROJECT, KEY, cache=False, progress=False, clock=lambda: AS_OF)
    try:
        for _ in range(150):
            if proc.poll() is not None:  # the server stopped: say why, do not wait on it
                pytest.fail(f"serve --data exited {proc.returncode}: {proc.stderr.read()}")
            try:
                client.volume(START, END)
                break
            except cctx.errors.ServerError:
                time.sleep(0.1)
        yield client
    finally:
        client.close()
        proc.terminate()
        proc.communicate(timeout=15)


def test_serve_refuses_sub_second_times_unless_told_to_floor_them(imported, capsys):
    code = main(["serve", "--data", str(imported), "--port", str(free_port())])
    assert code != 0
    err = capsys.readouterr().err
    assert "fraction of a second" in err
    assert "row " in err


def test_the_five_operations_equal_the_ledger(imported, served):
    ledger = cctx.load(imported)
    truth = cctx.transfers_from_ledger(ledger)
    done = truth[truth["is_completed"]]

    mints = served.mints(START, END, source=ALL, destination=ALL)
    got = mints.sort_values("transfer_id").reset_index(drop=True)
    want = done.sort_values("transfer_id").reset_index(drop=True)
    assert got["transfer_id"].tolist() == want["transfer_id"].tolist()
    assert got["amount_raw"].tolist() == want["amount_raw"].tolist()
    # the interface speaks whole Unix seconds
    assert (got["timestamp"] == want["timestamp"].dt.floor("s")).all()
    assert got["mint_recipient"].tolist() == want["mint_recipient"].tolist()
    assert got["source_chain"].astype(str).tolist() == want["source_chain"].astype(str).tolist()

    volume = served.volume(START, END)
    assert volume["mint_volume_raw"] == int(done["amount_raw"].sum())
    burned = ledger[ledger["burn_timestamp"].notna()]
    assert volume["burn_volume_raw"] == int(burned["amount_raw"].sum())
    assert volume["burn_count"] == len(burned)

    for _, row in ledger.dropna(subset=["burn_tx_hash"]).iterrows():
        tx = served.transaction(row["burn_tx_hash"])
        assert tx["transaction_type"] == "burn"
        assert (tx["amount_raw"], tx["block_number"]) == (row["amount_raw"], row["burn_block"])
        assert tx["timestamp"] == row["burn_timestamp"].floor("s")
    minted = ledger.dropna(subset=["mint_tx_hash"]).iloc[0]
    tx = served.transaction(minted["mint_tx_hash"])
    assert (tx["transaction_type"], tx["block_number"]) == ("mint", minted["mint_block"])

    for who in RECIPIENTS:
        got_ids = sorted(served.received(who, START, END)["transfer_id"].astype(str))
        want_ids = sorted(truth.loc[truth["mint_recipient"] == who, "transfer_id"].astype(str))
        assert got_ids == want_ids

    top = served.top_senders(START, END).set_index("address")["volume_raw"]
    sums = burned.groupby(burned["message_sender"].astype(str))["amount_raw"].sum()
    assert top.sort_index().to_dict() == {k: int(v) for k, v in sums.sort_index().items()}
    assert np.issubdtype(top.dtype, np.integer)


# --------------------------------------------------------------- what serve --data says


@pytest.fixture(scope="module")
def four_and_one(tmp_path_factory) -> Path:
    """An imported ledger of 5 Ethereum -> Base V1 transfers: 4 minted (linked), 1 pending."""
    root = tmp_path_factory.mktemp("four-and-one")
    eth, base = [], []
    for k in range(5):
        amount = 2_500_000 * (k + 1)
        who, to = SENDERS[k % 2], RECIPIENTS[k % 2]
        eth.append(deposit_v1(900 + k, amount, who, to, 6, block=30 + k, tx=_tx(300 + k),
                              index=1, time=T0 + 120 * k))  # fmt: skip
        if k < 4:
            where = {"block": 700 + k, "tx": _tx(400 + k), "time": T0 + 120 * k + 1080}
            base.append(mint_v1(to, amount, index=2, **where))
            base.append(received_v1(0, 900 + k, burn_body_v1(amount, who, to), index=3, **where))
    (root / "eth.jsonl").write_text("\n".join(json.dumps(x) for x in eth))
    (root / "base.json").write_text(json.dumps(base))
    out = root / "ledger.parquet"
    code = main(
        ["import", str(root / "eth.jsonl"), str(root / "base.json"), "--no-progress",
         "--chain", f"{root / 'eth.jsonl'}=ethereum", "--chain", f"{root / 'base.json'}=base",
         "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    return out


def test_loading_an_imported_ledger_counts_its_pairings(four_and_one):
    counts = cctx.provenance.provenance(cctx.load(four_and_one)).count
    assert (counts["paired"], counts["exact"], counts["pending"]) == (4, 4, 1)
    assert counts["mint_only"] == 0


def test_a_transfers_file_is_counted_by_its_sides(four_and_one, tmp_path):
    transfers = cctx.transfers_from_ledger(cctx.load(four_and_one))
    assert sorted(transfers["is_completed"].tolist()) == [False, True, True, True, True]
    path = tmp_path / "transfers.parquet"
    transfers.to_parquet(path)
    counts = cctx.provenance.provenance(cctx.load(path)).count
    assert (counts["paired"], counts["pending"], counts["mint_only"]) == (4, 1, 0)


def test_serve_data_logs_the_ledgers_counts(four_and_one):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cctx_research.cli", "serve", "--port", "0", "--threads", "2",
         "--data", str(four_and_one)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True,
    )  # fmt: skip
    lines = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # ends when the command exits
            lines.append(line)
            if "serving on" in line:
                break
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    said = "".join(lines)
    assert "serving on" in said, said
    assert f"serving 5 transfers from {four_and_one}: paired 4, pending 1, mint only 0" in said
    loaded = next(line for line in lines if "loaded 5 transfers" in line)
    assert "paired 4" in loaded
    assert "pending 1" in loaded
