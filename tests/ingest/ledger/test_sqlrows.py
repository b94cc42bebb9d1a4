"""The ledger's rows built in DuckDB SQL and streamed into the dataset equal the numpy ones.

``load(..., engine="duckdb")`` builds the ledger's columns in SQL and writes them a batch at
a time (:mod:`cctx_research.ingest.ledger.sqlrows`,
:func:`~cctx_research.ingest.datasets.write_stream`);
a pandas load gathers them with numpy (:func:`~cctx_research.ingest.ledger.rows.ledger_rows`)
and :func:`~cctx_research.ingest.datasets.write` writes the frame. Each test holds the two
equal: the same files, each file's table (schema and metadata included), the manifest, and
the rows read back; on the committed fixtures, the scale benchmark's dataset, and generated
sides dense in identical transfers, ties, missing times and Solana recipients.
"""

from __future__ import annotations

import filecmp
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import cctx_research as cctx
from cctx_research import schema, storage
from cctx_research.addressing import as_chain_format
from cctx_research.errors import DataError
from cctx_research.ingest import datasets, day_parts
from cctx_research.ingest.ledger import linking
from cctx_research.provenance import Provenance, attach

pytest.importorskip("duckdb")
from cctx_research.ingest.ledger import sqllink, sqlrows

from .test_sqllink import _sides

ROOT = Path(__file__).resolve().parents[3]
EVM = ROOT / "tests" / "fixtures" / "evm"


def _same_datasets(want: Path, got: Path) -> int:
    """``got`` holds the files of ``want``, each the same table; the same manifest. Rows.

    A file of the same bytes is the same table, and the two datasets read back the same
    frame when every file is; a file that differs is compared as tables (schema and
    metadata included), and the datasets' rows read back, so a difference is named.
    """
    files = sorted(p.relative_to(want) for p in want.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(got) for p in got.rglob("*") if p.is_file())
    parts = [name for name in files if name.suffix == ".parquet"]
    differ = [name for name in parts if not filecmp.cmp(want / name, got / name, shallow=False)]
    for name in differ:
        a, b = pq.read_table(want / name), pq.read_table(got / name)
        assert b.equals(a, check_metadata=True), name
    manifests = [json.loads((d / storage.MANIFEST).read_text()) for d in (want, got)]
    assert manifests[1] == manifests[0]
    if not differ:
        return sum(pq.read_metadata(want / name).num_rows for name in parts)
    back = [datasets.read(d) for d in (want, got)]
    pd.testing.assert_frame_equal(back[1], back[0], check_exact=True)
    return len(back[0])


def _pandas_ledger(burns: list, arrivals: list, ambiguous: str) -> tuple[pd.DataFrame, dict]:
    """The ledger a pandas load makes of the sides: linked with numpy, spelled, completed."""
    ledger, counts = linking.link(burns, arrivals, ambiguous=ambiguous)
    ledger = as_chain_format(schema.complete(ledger, "ledger"))[schema.columns("ledger")]
    return ledger.reset_index(drop=True), counts


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ambiguous", ["link", "keep"])
def test_rows_equal_the_numpy_gather(seed: int, ambiguous: str) -> None:
    """Every row, column and dtype, in order: ties in time broken by id, unknown times
    last, identical transfers, V1 and V2, attested nonces, Solana recipients in base58."""
    burns, arrivals = _sides(600, seed)
    sides = [burns, burns.iloc[:25]], [arrivals.iloc[:40], arrivals]
    want, counts = _pandas_ledger(*sides, ambiguous)
    ledger = sqlrows.from_sides(*sides, ambiguous=ambiguous)
    try:
        got = pd.concat(list(ledger.batches(batch_rows=97)), ignore_index=True)
        summary = ledger.summary()
    finally:
        ledger.close()
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert summary.counts == counts
    assert summary.transfers == len(want)
    assert summary.untimed == int((want["burn_timestamp"].isna()
                                   & want["mint_timestamp"].isna()).sum())  # fmt: skip
    assert summary.untimed
    assert counts["content_ambiguous" if ambiguous == "link" else "unpaired"]
    solana = want["destination_domain"] == 5
    assert solana.any()
    assert not got.loc[solana, "mint_recipient"].str.startswith("0x").any()


def test_empty_and_one_sided_input() -> None:
    burns, arrivals = _sides(50, seed=9)
    for sides in (([], []), ([burns], []), ([], [arrivals])):
        want, _ = _pandas_ledger(*sides, "link")
        ledger = sqlrows.from_sides(*sides)
        try:
            got = list(ledger.batches())
        finally:
            ledger.close()
        got = pd.concat(got, ignore_index=True) if got else schema.empty("ledger")
        pd.testing.assert_frame_equal(got, want, check_exact=True, check_index_type=False)


def test_streamed_dataset_equals_the_written_frame(tmp_path: Path, monkeypatch) -> None:
    """Small batches: days that span batches and batches that span days."""
    monkeypatch.setattr(day_parts, "BATCH_ROWS", 40)  # the writer's batches of whole days
    burns, arrivals = _sides(400, seed=4)
    burns = burns[burns["burn_timestamp"].notna()]
    arrivals = arrivals[arrivals["mint_timestamp"].notna()]
    burns["burn_timestamp"] += pd.to_timedelta(np.arange(len(burns)) * 3, unit="h")
    want, _ = _pandas_ledger([burns], [arrivals], "link")
    record = Provenance(source="test", operation="load", counts={"transfers": len(want)})
    datasets.write(attach(want, record), tmp_path / "want")
    ledger = sqlrows.from_sides([burns], [arrivals])
    try:
        written = datasets.write_stream(ledger.batches(batch_rows=13), tmp_path / "got",
                                        record=record)  # fmt: skip
    finally:
        ledger.close()
    assert _same_datasets(tmp_path / "want", tmp_path / "got") == written.rows == len(want)
    assert len(written.days) > 10


_FIXTURE_LOADS = [
    ("getlogs_list.json", {"chain": "ethereum"}),
    ("getlogs.jsonl", {"chain": "ethereum"}),
    ("getlogs_no_time.jsonl", {"chain": "ethereum", "blocks": EVM / "blocks_rpc.json"}),
    ("cryo_logs.parquet", {"blocks": EVM / "cryo_blocks.parquet"}),
    ("cryo_logs.csv", {"blocks": EVM / "cryo_blocks.parquet"}),
]


@pytest.mark.parametrize(("name", "options"), _FIXTURE_LOADS)
def test_load_writes_the_pandas_loads_dataset(tmp_path: Path, name: str, options: dict,
                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    want = cctx.load(EVM / name, **options)
    datasets.write(want, tmp_path / "want")
    monkeypatch.setattr(datasets, "write", _refuse)  # the duckdb path never writes a frame
    relation = cctx.load(EVM / name, engine="duckdb", out=tmp_path / "got", **options)
    assert _same_datasets(tmp_path / "want", tmp_path / "got") == len(want)
    assert relation.aggregate("count(*)").fetchall() == [(len(want),)]
    assert set(want["pairing"]) >= {"pending", "mint_only"}


def _refuse(*args, **kwargs):
    raise AssertionError("the ledger was written from a whole frame")


def test_load_of_the_scale_benchmarks_dataset(tmp_path: Path, monkeypatch) -> None:
    """``scale.py --generate``'s data: V1 and V2 on eight chains, fast and standard, some
    never minted, identical transfers (linked in time order, or kept apart)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from scale_data import QUICK_DAYS, dataset_files, generate

    generate(tmp_path / "sync", 20_000, seed=5, part_logs=20_000, days=QUICK_DAYS)
    files = dataset_files(tmp_path / "sync")
    for ambiguous in ("link", "keep"):
        want = cctx.load(files, ambiguous=ambiguous)
        datasets.write(want, tmp_path / f"want-{ambiguous}")
        cctx.load(files, ambiguous=ambiguous, engine="duckdb", out=tmp_path / f"got-{ambiguous}")
        rows = _same_datasets(tmp_path / f"want-{ambiguous}", tmp_path / f"got-{ambiguous}")
        assert rows > 19_000
        assert set(want["cctp_version"]) == {1, 2}
        assert {"exact", "content", "pending"} <= set(want["pairing"])
        assert {"link": "content_ambiguous", "keep": "unpaired"}[ambiguous] in set(want["pairing"])


def test_rows_without_a_time_are_refused_before_writing(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="have no time; a dataset is partitioned by day"):
        cctx.load(EVM / "getlogs_no_time.jsonl", chain="ethereum", out=tmp_path / "pandas")
    with pytest.raises(DataError, match="have no time; a dataset is partitioned by day"):
        cctx.load(EVM / "getlogs_no_time.jsonl", chain="ethereum", engine="duckdb",
                  out=tmp_path / "duckdb")  # fmt: skip
    assert list(tmp_path.iterdir()) == []


def test_the_stream_refuses_what_it_cannot_write(tmp_path: Path) -> None:
    burns, _ = _sides(50, seed=9)
    ledger = sqlrows.from_sides([burns[burns["burn_timestamp"].notna()]], [])
    try:
        with pytest.raises(ValueError, match="batch_rows must be a positive integer"):
            next(ledger.batches(batch_rows=0))
        rows = pd.concat(list(ledger.batches()), ignore_index=True)
    finally:
        ledger.close()
    record = Provenance(source="test")
    later = rows.assign(burn_timestamp=rows["burn_timestamp"] + pd.Timedelta(days=2))
    with pytest.raises(ValueError, match="needs its rows in time order"):
        datasets.write_stream([later, rows], tmp_path / "a", record=record)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="writes a new dataset"):
        datasets.write_stream([rows], tmp_path / "b", record=record)
    with pytest.raises(DataError, match="does not follow the 'ledger' schema"):
        datasets.write_stream([rows.drop(columns=["token"])], tmp_path / "c", record=record)
    assert day_parts.write_days([], tmp_path, "ledger") == (0, [])


def test_the_pairing_codes_are_the_links_querys() -> None:
    """``links_query`` numbers each pairing; the rows name them by the same list."""
    burns, arrivals = _sides(300, seed=2)
    ledger = sqlrows.from_sides([burns], [arrivals])
    try:
        got = pd.concat(list(ledger.batches()), ignore_index=True)
    finally:
        ledger.close()
    want, _ = sqllink.link([burns], [arrivals])
    assert got["pairing"].tolist() == want["pairing"].tolist()
