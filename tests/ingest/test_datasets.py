"""Partitioned datasets: written by day and source chain, rewritten without duplicates."""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest
from analysis.frames import random_transfers

import cctx_research
from cctx_research import schema, storage
from cctx_research.analysis.results import result_info
from cctx_research.errors import DataError
from cctx_research.ingest import datasets, day_parts
from cctx_research.provenance import Provenance, attach, provenance


def _window(frame: pd.DataFrame, start: str, end: str) -> pd.DataFrame:
    lo, hi = pd.Timestamp(start, tz="UTC"), pd.Timestamp(end, tz="UTC")
    out = frame[(frame["timestamp"] >= lo) & (frame["timestamp"] < hi)].copy()
    return attach(out, Provenance(source="test", window=(lo, hi), synthetic=True))


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values("transfer_id").reset_index(drop=True)


@pytest.fixture
def transfers() -> pd.DataFrame:
    return random_transfers(3_000, days=6)


def test_layout_round_trip_and_provenance(tmp_path, transfers):
    part = _window(transfers, "2024-06-01", "2024-06-04")
    summary = datasets.write(part, tmp_path / "ds")
    assert summary.days == ("2024-06-01", "2024-06-02", "2024-06-03")
    assert (summary.rows, summary.replaced_rows) == (len(part), 0)
    chains = {p.name for p in (tmp_path / "ds" / "day=2024-06-02").iterdir()}
    assert chains == {f"source_chain={c}" for c in part["source_chain"].astype(str).unique()}
    # each partition's part is named by what it covers: its chain, the kind, its day
    for folder in (tmp_path / "ds" / "day=2024-06-02").iterdir():
        chain = folder.name.removeprefix("source_chain=")
        assert [p.name for p in folder.iterdir()] == [f"{chain}__transfers__day_2024-06-02.parquet"]
    manifest = json.loads((tmp_path / "ds" / storage.MANIFEST).read_text())
    assert manifest["format"] == storage.FORMAT
    assert (manifest["kind"], manifest["synthetic"]) == ("transfers", True)
    assert manifest["library_version"] == cctx_research.__version__
    assert len(manifest["state"]["writes"]) == 1
    back = datasets.read(tmp_path / "ds")
    schema.validate(back, "transfers")
    pd.testing.assert_frame_equal(_canonical(back), _canonical(part), check_like=False)
    record = provenance(back)
    assert record.synthetic
    assert record.format == "cctx-dataset"


def test_overlapping_rewrite_replaces_and_never_duplicates(tmp_path, transfers):
    root = tmp_path / "ds"
    datasets.write(_window(transfers, "2024-06-01", "2024-06-04"), root)
    # a rerun over a window that starts mid-day: the morning of June 3 stays
    second = _window(transfers, "2024-06-03 12:00", "2024-06-06")
    summary = datasets.write(second, root)
    overlap = len(_window(transfers, "2024-06-03 12:00", "2024-06-04"))
    assert overlap > 0
    assert summary.replaced_rows == overlap
    assert summary.days == ("2024-06-03", "2024-06-04", "2024-06-05")
    again = datasets.write(second, root)  # the same again: replaced, not added
    assert again.replaced_rows == len(second)
    back = datasets.read(root)
    want = _window(transfers, "2024-06-01", "2024-06-06")
    assert back["transfer_id"].is_unique
    pd.testing.assert_frame_equal(_canonical(back), _canonical(want))


def test_a_window_with_no_rows_clears_its_days(tmp_path, transfers):
    root = tmp_path / "ds"
    datasets.write(_window(transfers, "2024-06-01", "2024-06-03"), root)
    empty = attach(
        schema.empty("transfers"),
        Provenance(
            source="test",
            window=(pd.Timestamp("2024-06-02", tz="UTC"), pd.Timestamp("2024-06-03", tz="UTC")),
        ),
    )
    datasets.write(empty, root)
    back = datasets.read(root)
    assert back["timestamp"].max() < pd.Timestamp("2024-06-02", tz="UTC")


def test_other_engines_read_the_directory(tmp_path, transfers):
    pl = pytest.importorskip("polars")
    dd = pytest.importorskip("dask.dataframe")
    from cctx_research.analysis import flows

    root = tmp_path / "ds"
    datasets.write(_window(transfers, "2024-06-01", "2024-06-07"), root)
    want = flows.matrix(datasets.read(root))
    lazy = pl.scan_parquet(str(root / "**" / "*.parquet"), hive_partitioning=True)
    pd.testing.assert_frame_equal(flows.matrix(lazy), want, check_exact=False, rtol=1e-9)
    pd.testing.assert_frame_equal(
        flows.matrix(dd.read_parquet(str(root / "day=*" / "*" / "*.parquet"))),
        want,
        check_exact=False,
        rtol=1e-9,
    )


def test_bad_input(tmp_path, transfers):
    with pytest.raises(DataError, match="follows neither"):
        datasets.write(pd.DataFrame({"x": [1]}), tmp_path / "ds")
    with pytest.raises(TypeError, match="directory must be a str or Path"):
        datasets.write(transfers, 42)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        datasets.write(transfers, tmp_path / "file")
    with pytest.raises(DataError, match="not a cctx_research dataset"):
        datasets.read(tmp_path)
    root = tmp_path / "ds"
    datasets.write(transfers, root)
    meta = json.loads((root / "_cctx.json").read_text())
    assert meta["kind"] == "transfers"
    ledger = schema.complete(schema.empty("ledger"), "ledger")
    with pytest.raises(DataError, match="holds 'transfers' frames"):
        datasets.write(ledger, root)


def test_scan_gives_each_engine_a_lazy_frame_with_the_same_results(tmp_path, transfers):
    pytest.importorskip("polars")
    pytest.importorskip("duckdb")
    pytest.importorskip("dask.dataframe")
    import duckdb

    from cctx_research.analysis import addresses, volumes

    root = tmp_path / "ds"
    datasets.write(_window(transfers, "2024-06-01", "2024-06-07"), root)
    frame = datasets.read(root)
    want = volumes.timeseries(frame, freq="1D", by="corridor")
    top_want = addresses.top(frame, role="sender", n=5)["address"].tolist()
    con = duckdb.connect()
    for engine in datasets.ENGINES:
        lazy = datasets.scan(root, engine=engine, connection=con if engine == "duckdb" else None)
        got = volumes.timeseries(lazy, freq="1D", by="corridor")
        assert got["count"].tolist() == want["count"].tolist(), engine
        assert result_info(got).span == result_info(want).span, engine
        top = addresses.top(lazy, role="sender", n=5)
        assert top["address"].tolist() == top_want, engine
    with pytest.raises(ValueError, match="engine must be one of"):
        datasets.scan(root, engine="spark")


@pytest.mark.slow
def test_dask_on_a_local_cluster_with_its_real_scheduler(tmp_path, transfers):
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("dask.distributed")
    from cctx_research.analysis import addresses, flows, volumes

    root = tmp_path / "ds"
    datasets.write(_window(transfers, "2024-06-01", "2024-06-07"), root)
    frame = datasets.read(root)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, memory_limit="512MiB", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        lazy = datasets.scan(root, engine="dask")
        with distributed.get_task_stream(client) as stream:
            matrix = flows.matrix(lazy)
        pd.testing.assert_frame_equal(matrix, flows.matrix(frame), check_exact=False, rtol=1e-9)
        # the work ran as tasks on the cluster's two workers, not in this process
        workers = set(client.scheduler_info()["workers"])
        assert len(workers) == 2
        assert stream.data
        assert {task["worker"] for task in stream.data} <= workers
        assert (
            volumes.timeseries(lazy, freq="1D")["count"].tolist()
            == volumes.timeseries(frame, freq="1D")["count"].tolist()
        )
        assert (
            addresses.top(lazy, n=10)["address"].tolist()
            == addresses.top(frame, n=10)["address"].tolist()
        )


def test_a_ledger_dataset_round_trips_and_load_reads_it(tmp_path):
    import cctx_research as cctx

    ledger = cctx.load_sample(as_of="2026-11-20", days=2)
    root = tmp_path / "ledger"
    datasets.write(ledger, root)
    datasets.write(ledger, root)  # again: replaced, not added
    back = datasets.read(root)
    key = ["transfer_id"]
    pd.testing.assert_frame_equal(
        back.sort_values(key).reset_index(drop=True)[ledger.columns],
        ledger.sort_values(key).reset_index(drop=True),
    )
    loaded = cctx.load(root)
    assert sorted(loaded["transfer_id"]) == sorted(ledger["transfer_id"])
    assert provenance(loaded).synthetic


def test_import_writes_a_dataset_directory(tmp_path, capsys):
    import cctx_research as cctx
    from cctx_research.cli import main

    source = tmp_path / "ledger.parquet"
    cctx.load_sample(as_of="2026-11-20", days=1).to_parquet(source)
    out = str(tmp_path / "ds") + "/"
    assert main(["import", str(source), "--no-progress", "--out", out]) == 0
    assert (tmp_path / "ds" / "_cctx.json").is_file()
    assert len(cctx.load(out)) == len(pd.read_parquet(source))


def test_a_failed_write_leaves_the_old_day_in_place(tmp_path, transfers, monkeypatch):
    root = tmp_path / "ds"
    datasets.write(_window(transfers, "2024-06-01", "2024-06-03"), root)
    before = datasets.read(root)
    manifest = (root / storage.MANIFEST).read_text()
    calls = {"n": 0}
    real_write = day_parts.pq.write_table

    def full_disk(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 1:  # the first chain's part of the day is written, then the disk is full
            raise OSError(28, "No space left on device")
        return real_write(*args, **kwargs)

    monkeypatch.setattr(day_parts.pq, "write_table", full_disk)
    with pytest.raises(OSError, match="No space left"):
        datasets.write(_window(transfers, "2024-06-02", "2024-06-04"), root)
    monkeypatch.undo()
    pd.testing.assert_frame_equal(_canonical(datasets.read(root)), _canonical(before))
    assert (root / storage.MANIFEST).read_text() == manifest
    assert not [p.name for p in root.iterdir() if p.name.startswith(".")]  # nothing left over


def _to_the_old_layout(root) -> None:
    """A dataset as versions before the convention wrote it: ``part-<id>-0.parquet`` parts and
    a ``_cctx.json`` of the kind and the writes only."""
    manifest = json.loads((root / storage.MANIFEST).read_text())
    for i, path in enumerate(sorted(root.glob("day=*/source_chain=*/*.parquet"))):
        path.rename(path.with_name(f"part-{i:08x}-0.parquet"))
    old = {"kind": manifest["kind"], "writes": manifest["state"]["writes"]}
    (root / storage.MANIFEST).write_text(json.dumps(old, indent=1))


def test_a_dataset_of_the_old_layout_is_read_as_it_is_and_upgraded_by_a_write(
    tmp_path, transfers, caplog
):
    pytest.importorskip("polars")
    root = tmp_path / "ds"
    datasets.write(_window(transfers, "2024-06-01", "2024-06-04"), root)
    want = datasets.read(root)
    _to_the_old_layout(root)
    manifest = (root / storage.MANIFEST).read_text()
    back = datasets.read(root)
    pd.testing.assert_frame_equal(_canonical(back), _canonical(want))
    assert provenance(back).synthetic
    assert datasets.scan(root, engine="polars").collect().height == len(want)
    assert (root / storage.MANIFEST).read_text() == manifest  # reading writes nothing
    caplog.set_level(logging.INFO, logger="cctx_research.ingest.datasets")
    datasets.write(_window(transfers, "2024-06-03", "2024-06-05"), root)
    assert "upgraded the dataset" in caplog.text
    upgraded = json.loads((root / storage.MANIFEST).read_text())
    assert (upgraded["format"], upgraded["kind"]) == (storage.FORMAT, "transfers")
    assert len(upgraded["state"]["writes"]) == 2
    names = [p.name for p in root.glob("day=*/source_chain=*/*.parquet")]
    assert names
    assert all(storage.parse_part(n) is not None for n in names)
    back = datasets.read(root)
    pd.testing.assert_frame_equal(
        _canonical(back), _canonical(_window(transfers, "2024-06-01", "2024-06-05"))
    )


def test_a_manifest_of_another_format_or_kind_is_refused_saying_what_to_do(tmp_path, transfers):
    root = tmp_path / "ds"
    datasets.write(_window(transfers, "2024-06-01", "2024-06-02"), root)
    manifest = json.loads((root / storage.MANIFEST).read_text())
    newer = {**manifest, "format": storage.FORMAT + 1}
    (root / storage.MANIFEST).write_text(json.dumps(newer))
    for call in (datasets.read, lambda r: datasets.write(transfers, r)):
        with pytest.raises(DataError, match=r"newer cctx-research.*pip install -U"):
            call(root)
    (root / storage.MANIFEST).write_text(json.dumps({**manifest, "kind": "sync"}))
    with pytest.raises(DataError, match=r"of kind 'sync', not 'transfers' or 'ledger'.*new dir"):
        datasets.read(root)
    (root / storage.MANIFEST).write_text("{")
    with pytest.raises(DataError, match=r"cannot be read.*new directory"):
        datasets.scan(root, engine="polars")


def test_days_written_new_and_days_rewritten_hold_the_same_files(tmp_path, transfers):
    """A write's new days come from one Arrow table sliced by day and chain, days already there
    are merged frame by frame: the two paths write the same parts, row for row."""
    import pyarrow.parquet as pq

    frame = _window(transfers, "2024-06-01", "2024-06-05")
    datasets.write(frame, tmp_path / "new")
    datasets.write(_window(transfers, "2024-06-02", "2024-06-03"), tmp_path / "again")
    datasets.write(frame, tmp_path / "again")  # 06-02 merged onto what is there, the rest new
    new = sorted(p.relative_to(tmp_path / "new") for p in (tmp_path / "new").rglob("*.parquet"))
    again = sorted(p.relative_to(tmp_path / "again")
                   for p in (tmp_path / "again").rglob("*.parquet"))  # fmt: skip
    assert new == again
    assert len(new) > 4
    for name in new:  # (a merged day's chain columns come back as text, not categories)
        pd.testing.assert_frame_equal(
            pq.read_table(tmp_path / "new" / name).to_pandas(),
            pq.read_table(tmp_path / "again" / name).to_pandas(),
            check_dtype=False, check_categorical=False, obj=str(name))  # fmt: skip


def test_a_partitions_day_labels_are_its_rows_days_formatted():
    # each distinct day is formatted once; the labels are those of formatting every row
    from cctx_research.ingest.day_parts import _day_labels

    times = pd.Series(
        pd.to_datetime(
            ["2024-06-29 23:59:59.999", "2024-06-30 00:00:00.000", "2024-06-29 00:00:00.000", None],
            utc=True,
        ),
        name="burn_timestamp",
        index=[7, 3, 5, 1],
    )
    for case in (times, times.dropna(), times.iloc[:0]):
        pd.testing.assert_series_equal(_day_labels(case), case.dt.strftime("%Y-%m-%d"))
    assert _day_labels(times.dropna()).tolist() == ["2024-06-29", "2024-06-30", "2024-06-29"]


def test_parts_are_written_side_by_side_and_a_failure_is_raised_once_all_have_ended(
    tmp_path, monkeypatch
):
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.setattr(day_parts, "WRITERS", 2)
    tables = [pa.table({"amount_raw": list(range(k, k + 50))}) for k in range(6)]
    good = [(t, tmp_path / f"part-{k}.parquet") for k, t in enumerate(tables)]
    day_parts.write_parts(good)
    assert [pq.read_table(p).equals(t) for t, p in good] == [True] * 6
    missing = tmp_path / "no-such-folder" / "part.parquet"
    others = [(t, tmp_path / f"other-{k}.parquet") for k, t in enumerate(tables)]
    with pytest.raises(FileNotFoundError, match="no-such-folder"):
        day_parts.write_parts([others[0], (tables[0], missing), *others[1:]])
    assert all(p.is_file() for _, p in others)  # every other write ran to its end


def test_interrupted_parts_drop_the_writes_not_begun(tmp_path, monkeypatch):
    import threading

    import pyarrow as pa

    monkeypatch.setattr(day_parts, "WRITERS", 2)
    release, real_write = threading.Event(), day_parts.pq.write_table

    def held(table, path):  # each write waits until Ctrl-C has been pressed
        release.wait(10)
        real_write(table, path)

    def ctrl_c(jobs):  # the two writes under way, four to come
        threading.Timer(0.5, release.set).start()
        raise KeyboardInterrupt

    monkeypatch.setattr(day_parts.pq, "write_table", held)
    monkeypatch.setattr(day_parts.cf, "wait", ctrl_c)
    parts = [(pa.table({"amount_raw": [k]}), tmp_path / f"part-{k}.parquet") for k in range(6)]
    with pytest.raises(KeyboardInterrupt):
        day_parts.write_parts(parts)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["part-0.parquet", "part-1.parquet"]
