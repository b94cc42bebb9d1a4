"""A ledger dataset served as it lies on disk answers exactly as the same ledger's frame.

``serve --data DIR`` / ``dashboard --data DIR`` index a ledger dataset a column
at a time (:class:`~cctx_research.service.dataset.LedgerDataset`), never as a
frame. Each case serves one ledger twice on loopback, from its frame and from
its dataset, and holds every operation's answer equal (the interface's JSON,
byte for byte, and the real client's frames): on the store's edge-case ledger,
on the sample (Solana and Noble legs, base58 signatures and addresses), and on
``benchmarks/scale_data.py``'s sync-shaped 20k transfers built as ``sync``
builds them.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import requests

import cctx_research as cctx
from cctx_research.config import DEMO_API_KEY, DEMO_PROJECT_ID
from cctx_research.errors import DataError
from cctx_research.ingest import datasets
from cctx_research.service.dataset import LedgerDataset, ledger_dataset
from cctx_research.service.loading import load_ledger
from cctx_research.service.local import local_service
from cctx_research.service.sample import generate
from cctx_research.service.store import Store

from .conftest import CLOCK, make_ledger

ROOT = Path(__file__).resolve().parents[2]
NS = 1_000_000_000


def _write(frame: pd.DataFrame, directory: Path) -> Path:
    datasets.write(frame, directory)
    return directory


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, tuple[pd.DataFrame, Path, pd.Timestamp]]:
    """name -> (the ledger frame as ``load`` reads it, its dataset, the clock)."""
    root = tmp_path_factory.mktemp("ledgers")
    out = {}
    edge = _write(make_ledger(), root / "edge")
    out["edge"] = (load_ledger(edge), edge, CLOCK)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the sample's synthetic warning
        sample = generate("2024-07-01", days=2, per_day=1500)
    assert (sample["source_domain"] == 5).any()  # Solana legs both ways
    assert (sample["destination_domain"] == 5).any()
    sampled = _write(sample, root / "sample")
    out["sample"] = (load_ledger(sampled), sampled, pd.Timestamp("2024-07-01", tz="UTC"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from scale_data import QUICK_DAYS, dataset_files
    from scale_data import generate as scale_generate

    scale_generate(root / "sync", 20_000, seed=1, part_logs=1_000_000, days=QUICK_DAYS)
    cctx.load(dataset_files(root / "sync"), engine="duckdb", out=root / "scale")
    scaled = root / "scale"
    frame = load_ledger(scaled)
    out["scale"] = (frame, scaled, frame["mint_timestamp"].max() + pd.Timedelta(hours=1))
    return out


@pytest.fixture(scope="module")
def served(cases):
    """name -> (a client of the ledger's frame, a client of its dataset), each served on
    loopback once a module: both tests of a case ask the same two services (the 20k-transfer
    case's stores take seconds each to build; they were built twice)."""
    made: dict[str, tuple[cctx.Client, cctx.Client]] = {}

    def pair(name: str) -> tuple[cctx.Client, cctx.Client]:
        if name not in made:
            frame, directory, clock = cases[name]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # synthetic data says so; both do
                framed = cctx.connect(data=frame, as_of=clock, loopback=True, cache=False)
                try:
                    stored = cctx.connect(data=str(directory), as_of=clock, loopback=True,
                                          cache=False)  # fmt: skip
                except BaseException:
                    framed.close()
                    raise
            made[name] = (framed, stored)
        return made[name]

    yield pair
    for clients in made.values():
        for client in clients:
            client.close()


def _probes(frame: pd.DataFrame, clock: pd.Timestamp) -> list[tuple[str, dict]]:
    """Requests of every operation: listings paged and filtered, every recipient spelling,
    hashes of burns, mints and none, volume and senders over whole and partial windows."""
    first = int(frame["burn_timestamp"].min().value // NS)
    last = int(clock.value // NS)
    whole = {"startDate": first, "endDate": last}
    half = {"startDate": (first + last) // 2, "endDate": last - 3600}
    probes: list[tuple[str, dict]] = []
    for window in (whole, half, {}):
        probes += [("transactions-volume", window), ("stats-senders", {**window, "limit": 7})]
        probes += [("transactions-mint", {**window, "page": p, "limit": 50}) for p in (1, 3)]
    probes.append(("transactions-mint", {**whole, "sourceDomain": 5, "limit": 1000}))
    probes.append(("transactions-mint", {**whole, "destinationDomain": 5, "limit": 1000}))
    probes.append(("transactions-mint", {**whole, "sourceDomain": 3, "page": 2, "limit": 9}))
    rng = np.random.default_rng(3)
    rows = frame.iloc[rng.choice(len(frame), 8, replace=False)]
    rows = pd.concat([rows, frame[frame["source_domain"] == 5].head(2),
                      frame[frame["destination_domain"] == 5].head(2)])  # fmt: skip
    for _, row in rows.iterrows():
        who = row["mint_recipient"]
        spellings = {who, who.upper().replace("0X", "0x")} if who.startswith("0x") else {who}
        if who.startswith("0x") and len(who) == 42:
            spellings.add("0x" + "0" * 24 + who[2:])  # the interface's bytes32
        for form in sorted(spellings):
            probes.append(("transactions-address-recipient", {"address": form, **whole,
                                                              "limit": 5, "page": 2}))  # fmt: skip
            probes.append(("transactions-address-recipient", {"address": form, **whole}))
        for column in ("burn_tx_hash", "mint_tx_hash"):
            if isinstance(row[column], str):
                probes.append(("transactions-txHash", {"txHash": row[column]}))
    probes.append(("transactions-txHash", {"txHash": "0x" + "ab" * 32}))  # none has it
    return probes


@pytest.mark.parametrize("name", ["edge", "sample", "scale"])
def test_every_answer_equals_the_frames_over_loopback(cases, served, name):
    frame, _, clock = cases[name]
    probes = _probes(frame, clock)
    framed, stored = served(name)
    assert "ledger dataset" in stored.source  # served from the dataset, not from a frame of it
    assert "ledger dataset" not in framed.source
    found = 0
    with requests.Session() as http:
        for operation, body in probes:
            answers = []
            for client in (framed, stored):  # the services' JSON itself, not the client's frames
                url = f"{client.base_url}/rest/{client.project_id}/{operation}"
                r = http.post(url, json=body, headers={"x-api-key": DEMO_API_KEY},
                              timeout=60)  # fmt: skip
                answers.append((r.status_code, r.json()))
            assert answers[0] == answers[1], (operation, body)
            found += answers[0][0] == 200 and answers[0][1] not in ([], {})
    assert found > len(probes) // 2  # most probes find something: the equality says much


@pytest.mark.parametrize("name", ["sample", "scale"])
def test_the_client_reads_the_same_frames_from_both(cases, served, name):
    frame, _, clock = cases[name]
    first = frame["burn_timestamp"].min()
    a, b = served(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # synthetic data says so; both do
        assert a.synthetic == b.synthetic
        mints = a.mints(first, clock)
        assert len(mints) > 100
        pd.testing.assert_frame_equal(mints, b.mints(first, clock))
        pd.testing.assert_series_equal(a.volume(first, clock), b.volume(first, clock))
        pd.testing.assert_frame_equal(a.top_senders(first, clock),
                                      b.top_senders(first, clock))  # fmt: skip
        who = mints["mint_recipient"].iloc[len(mints) // 2]
        pd.testing.assert_frame_equal(a.received(who, first, clock),
                                      b.received(who, first, clock))  # fmt: skip
        row = frame.dropna(subset=["mint_tx_hash"]).iloc[7]
        pd.testing.assert_series_equal(a.transaction(row["mint_tx_hash"]),
                                       b.transaction(row["mint_tx_hash"]))  # fmt: skip


def test_the_sample_dataset_stays_marked_synthetic(cases):
    frame, directory, clock = cases["sample"]
    served = local_service(str(directory), as_of=clock)
    assert served.synthetic
    assert "ledger dataset" in served.source
    assert served.transfers == len(frame)
    held = set(frame["source_domain"]) | set(frame["destination_domain"])
    assert served.domains == tuple(sorted(held))


def test_a_sync_directory_serves_its_ledger_dataset(cases, tmp_path):
    _, directory, _ = cases["scale"]
    sync = directory.parent / "sync"
    assert ledger_dataset(sync) is None or ledger_dataset(sync) == directory
    assert ledger_dataset(directory) == directory
    assert ledger_dataset(tmp_path) is None  # an empty directory is not a dataset


def test_rows_without_times_are_left_out_with_a_warning(tmp_path, caplog):
    frame = make_ledger(200)
    directory = _write(frame, tmp_path / "ledger")
    part = sorted(directory.glob("day=*/source_chain=*/*.parquet"))[0]
    import pyarrow.parquet as pq

    table = pq.read_table(part)
    times = table.column("mint_timestamp").type
    table = table.set_column(table.schema.get_field_index("burn_timestamp"), "burn_timestamp",
                             pa_nulls(len(table), times))  # fmt: skip
    table = table.set_column(table.schema.get_field_index("mint_timestamp"), "mint_timestamp",
                             pa_nulls(len(table), times))  # fmt: skip
    pq.write_table(table, part)
    with caplog.at_level("WARNING"):
        store = Store(LedgerDataset(directory), clock=CLOCK)
    assert len(store) == 200 - len(table)
    assert f"{len(table)} transfers have no burn or mint time" in caplog.text


def pa_nulls(n, kind):
    import pyarrow as pa

    return pa.nulls(n, kind)


def test_a_fraction_of_a_second_is_refused_or_floored(tmp_path):
    frame = make_ledger(200)
    frame.loc[3, "burn_timestamp"] += pd.Timedelta(milliseconds=250)
    directory = _write(frame, tmp_path / "ledger")
    with pytest.raises(DataError, match="fraction of a second"):
        LedgerDataset(directory)
    with pytest.warns(UserWarning, match="1 time"):
        floored = Store(LedgerDataset(directory, fractions="floor"), clock=CLOCK)
    with pytest.warns(UserWarning, match="1 time"):
        framed = Store(load_ledger(directory, fractions="floor"), clock=CLOCK)
    assert floored.volume(0, 2**40) == framed.volume(0, 2**40)


def test_a_dataset_without_a_served_column_says_so(tmp_path):
    directory = _write(make_ledger(50), tmp_path / "ledger")
    import pyarrow.parquet as pq

    for part in directory.glob("day=*/source_chain=*/*.parquet"):
        pq.write_table(pq.read_table(part).drop_columns(["burn_tx_hash"]), part)
    with pytest.raises(DataError, match="lacks the column"):
        LedgerDataset(directory)
    with pytest.raises(ValueError, match="fractions"):
        LedgerDataset(directory, fractions="round")


def test_serve_data_serves_a_dataset_as_its_frame(cases):
    """``cctx-research serve --data DIR`` (a separate process, real HTTP) logs that it serves
    the dataset's transfers and answers as the frame's store does."""
    import os
    import subprocess
    import time

    from browser_support import free_port

    frame, directory, clock = cases["edge"]
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cctx_research.cli", "serve", "--port", str(port), "--data",
         str(directory), "--as-of", clock.isoformat(), "--api-key", "k" * 24],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )  # fmt: skip
    store = Store(frame, clock=clock)
    window = {"startDate": int(frame["burn_timestamp"].min().value // NS), "endDate": 2**33}
    try:
        url = f"http://127.0.0.1:{port}/rest/{DEMO_PROJECT_ID}"
        for _ in range(600):
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            try:
                r = requests.post(f"{url}/transactions-volume", json=window,
                                  headers={"x-api-key": "k" * 24}, timeout=30)  # fmt: skip
                break
            except requests.ConnectionError:
                time.sleep(0.2)
        assert r.status_code == 200, r.text
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert f"serving {len(frame)} transfers from {directory}" in err
    assert "indexed a column at a time" in err  # the dataset, never read into a frame
    assert "paired" in err
    assert str((frame["mint_timestamp"].isna()).sum()) in err  # pending, counted from the data
    assert r.json()["body"] == store.volume(window["startDate"], window["endDate"])


def test_hashes_parsed_a_slice_at_a_time_are_found_alike(cases, monkeypatch):
    """Hashes are parsed a slice of rows at a time; with slices of 97 rows (the Solana
    signatures' rows offset by their slice) every hash is found as in one piece."""
    from cctx_research.service import index

    frame, directory, clock = cases["sample"]
    whole = Store(LedgerDataset(directory), clock=clock)
    monkeypatch.setattr(index, "_HASH_SLICE", 97)
    sliced = [Store(LedgerDataset(directory), clock=clock), Store(frame, clock=clock)]
    solana = frame[(frame["source_domain"] == 5) | (frame["destination_domain"] == 5)]
    rows = pd.concat([frame.iloc[::301], solana.iloc[::37]])
    hashes = [h for c in ("burn_tx_hash", "mint_tx_hash") for h in rows[c].dropna()]
    assert any(not h.startswith("0x") for h in hashes)  # base58 signatures among them
    for tx_hash in hashes:
        answer = whole.transaction(tx_hash)
        assert answer["transaction"]["transactionHash"] == tx_hash
        for store in sliced:
            assert store.transaction(tx_hash) == answer
    who = frame["mint_recipient"].iloc[5]
    start = int(frame["burn_timestamp"].min().value // NS)
    for store in sliced:
        assert store.received(who, start, 2**33) == whole.received(who, start, 2**33)


class _Passes:
    """The dataset's reader, counting its passes over the files and the columns of each."""

    def __init__(self, dataset) -> None:
        self.dataset, self.passes = dataset, []

    def to_table(self, columns):
        self.passes.append(tuple(columns))
        return self.dataset.to_table(columns=columns)


def test_a_small_dataset_is_read_in_two_passes_a_large_one_a_group_at_a_time(
    cases, monkeypatch
):
    """Each pass opens every file (the 20k-transfer dataset's 1,900-odd files were opened
    eight times). A pass now reads ahead what fits ``PASS_BYTES``; under a budget of one
    column, a group at a time as before. Every column is the same either way, and a
    column asked for again is read again."""
    from cctx_research.service import dataset as module

    frame, directory, _ = cases["sample"]
    served = [name for name in module.SERVED if name not in module._GROUPS[0]]

    def read(budget: int) -> tuple[dict, list]:
        monkeypatch.setattr(module, "PASS_BYTES", budget)
        held = LedgerDataset(directory)
        counted = _Passes(held._dataset)
        held._dataset = counted
        columns = {name: held[name] for name in reversed(served)}
        columns["burn_tx_hash_again"] = held["burn_tx_hash"]
        return columns, counted.passes

    small, passes = read(module.PASS_BYTES)
    assert len(passes) == 2, passes  # the rest in one pass, then the hashes asked again
    assert sorted(passes[0]) == sorted(served)
    assert passes[1] == ("burn_tx_hash",)
    large, passes = read(1)
    assert len(passes) == len(module._GROUPS), passes  # every group alone, the hashes again
    assert all(len(p) == 1 for p in passes)
    assert small.keys() == large.keys()
    for name, column in small.items():
        assert column.equals(large[name]), name
        assert len(column) == len(frame), name


def test_a_ledger_in_any_row_order_finds_every_hash_alike(cases):
    """The index reorders the hashes' 32 bytes, not their text, and the few hashes not
    written as 0x hex (Solana's base58 signatures) by their row in the new order: the
    sample's rows shuffled find every hash, 0x or not, as in burn order."""
    frame, _, clock = cases["sample"]
    shuffled = frame.sample(frac=1.0, random_state=7).reset_index(drop=True)
    assert not shuffled["burn_timestamp"].is_monotonic_increasing
    stores = [Store(frame, clock=clock), Store(shuffled, clock=clock)]
    solana = frame[(frame["source_domain"] == 5) | (frame["destination_domain"] == 5)]
    rows = pd.concat([frame.iloc[::211], solana.iloc[::17]])
    hashes = [h for c in ("burn_tx_hash", "mint_tx_hash") for h in rows[c].dropna()]
    assert sum(not h.startswith("0x") for h in hashes) >= 5
    for tx_hash in hashes:
        answer = stores[0].transaction(tx_hash)
        assert answer["transaction"]["transactionHash"] == tx_hash
        assert stores[1].transaction(tx_hash) == answer
