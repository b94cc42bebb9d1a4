"""load(engine=..., out=...): the ledger as a dataset on disk and each engine's lazy frame over it;
written whole or not at all (a real Ctrl-C mid-write leaves the previous ledger)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import schema
from cctx_research.errors import DataError
from cctx_research.ingest import datasets

FIXTURES = Path(__file__).parent.parent / "fixtures"
LOGS = FIXTURES / "evm" / "cryo_logs.parquet"
BLOCKS = FIXTURES / "evm" / "cryo_blocks.parquet"
FLOWS = FIXTURES / "dune" / "bridges_evms_flows.csv"


def _rows(frame: pd.DataFrame) -> list[tuple]:
    """Every ledger value of every row, engine types made comparable (times as UTC instants)."""
    out = frame[list(schema.columns("ledger"))].copy()
    for name in out.columns:
        if name.endswith("_timestamp"):
            out[name] = pd.to_datetime(out[name], utc=True).astype("datetime64[ns, UTC]")
        out[name] = out[name].astype(object).where(out[name].notna(), None)
    out = out.sort_values("transfer_id", kind="stable")
    return [tuple(r) for r in out.itertuples(index=False)]


@pytest.mark.parametrize("engine", ["duckdb", "polars", "dask"])
def test_each_engine_gives_the_pandas_ledger_lazily(tmp_path, engine):
    pytest.importorskip(engine)
    want = cctx.load(LOGS, blocks=BLOCKS)
    lazy = cctx.load(LOGS, blocks=BLOCKS, engine=engine, out=tmp_path / "ledger")
    got = {"duckdb": lambda f: f.df(), "polars": lambda f: f.collect().to_pandas(),
           "dask": lambda f: f.compute()}[engine](lazy)  # fmt: skip
    assert len(got) == len(want) == 6
    assert _rows(got) == _rows(want)
    back = datasets.read(tmp_path / "ledger")  # the dataset is the canonical ledger
    order = ["transfer_id"]
    pd.testing.assert_frame_equal(
        back.sort_values(order).reset_index(drop=True),
        want.sort_values(order).reset_index(drop=True),
        check_exact=True,
    )


def test_without_out_a_lazy_ledger_lives_in_a_temporary_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    relation = cctx.load(LOGS, blocks=BLOCKS, engine="duckdb")
    (made,) = tmp_path.glob("cctx-ledger-*")
    assert str(made) in relation.sql_query()
    assert relation.aggregate("count(*)").fetchall() == [(6,)]
    assert len(datasets.read(made)) == 6


def test_the_temporary_dataset_goes_when_the_process_exits(tmp_path):
    probe = textwrap.dedent(
        """
        import sys
        import cctx_research as cctx
        relation = cctx.load(sys.argv[1], blocks=sys.argv[2], engine="duckdb")
        print(relation.aggregate("count(*)").fetchall()[0][0])
        """
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", probe, str(LOGS), str(BLOCKS)], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["6"]  # the lazy frame read it while the process ran
    assert not list(tmp_path.glob("cctx-ledger-*"))


def test_pandas_with_out_returns_the_frame_and_writes_the_dataset(tmp_path):
    ledger = cctx.load(FLOWS, out=tmp_path / "ledger")
    assert isinstance(ledger, pd.DataFrame)
    assert sorted(datasets.read(tmp_path / "ledger")["transfer_id"]) == sorted(
        ledger["transfer_id"]
    )
    again = cctx.load(LOGS, blocks=BLOCKS, out=tmp_path / "ledger")  # a new load replaces it
    assert sorted(datasets.read(tmp_path / "ledger")["transfer_id"]) == sorted(again["transfer_id"])


def test_bad_engine_or_out_is_refused_before_anything_is_read(tmp_path):
    missing = tmp_path / "nothing.parquet"  # never read: the arguments fail first
    with pytest.raises(ValueError, match="engine must be one of 'pandas', 'polars'"):
        cctx.load(missing, engine="spark")
    with pytest.raises(TypeError, match="out must be a directory path"):
        cctx.load(missing, engine="duckdb", out=3)
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="is a file; pass a directory"):
        cctx.load(missing, out=tmp_path / "notes.txt")
    with pytest.raises(DataError, match="not a ledger dataset"):
        cctx.load(LOGS, blocks=BLOCKS, engine="duckdb", out=tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


_SLOW_WRITE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import cctx_research as cctx
    from cctx_research.ingest import datasets

    written = datasets.write
    def write_then_wait(frame, directory):  # the dataset is half written: wait for the signal
        summary = written(frame, directory)
        Path(sys.argv[2]).touch()
        time.sleep(120)
        return summary
    datasets.write = write_then_wait
    cctx.load(sys.argv[3], engine="duckdb", out=sys.argv[1])
""")

_SLOW_STREAM = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import cctx_research as cctx
    from cctx_research.ingest import day_parts

    written = day_parts.write_parts
    def write_then_wait(parts):  # the first days streamed in, the rest to come
        written(parts)
        Path(sys.argv[2]).touch()
        time.sleep(120)
    day_parts.write_parts = write_then_wait
    cctx.load(sys.argv[3], blocks=sys.argv[4], engine="duckdb", out=sys.argv[1])
""")


@pytest.mark.parametrize(("script", "args"), [
    (_SLOW_WRITE, [str(FLOWS)]),  # source-paired rows: the frame is written
    (_SLOW_STREAM, [str(LOGS), str(BLOCKS)]),  # event logs: the rows are streamed from SQL
], ids=["frame", "stream"])  # fmt: skip
def test_ctrl_c_while_writing_leaves_the_previous_ledger(tmp_path, script, args):
    out = tmp_path / "ledger"
    before = cctx.load(FLOWS if script is _SLOW_STREAM else LOGS, blocks=BLOCKS, engine="pandas",
                       out=out)  # fmt: skip
    marker = tmp_path / "writing"
    proc = subprocess.Popen([sys.executable, "-c", script, str(out), str(marker), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    assert marker.exists(), proc.communicate()[1]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in err
    assert sorted(datasets.read(out)["transfer_id"]) == sorted(before["transfer_id"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ledger", "writing"]  # no temporaries


def test_the_lazy_engines_are_the_datasets_engines():
    from cctx_research.ingest import lazy

    assert ("pandas", *datasets.ENGINES) == lazy.LOAD_ENGINES
