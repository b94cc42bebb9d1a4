"""Cryo's logs decoded and sided in DuckDB SQL equal the pandas reader's sides, row for row.

``load(..., engine="duckdb")`` of cryo's Parquet logs with times decodes them in SQL
(:mod:`cctx_research.ingest.evm.sql_decode`) and builds the sides there
(:mod:`cctx_research.ingest.ledger.sql_sides`); every other load uses the pandas reader and
:mod:`~cctx_research.ingest.ledger.sides`, the reference. Each test gives both the same files
and compares the sides (after ``unique_sides``: every column, dtype, value and the row
order, the linker's tie order), the counts, and the whole ledger ``load`` returns.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import cctx_research as cctx
from cctx_research import schema, scratch
from cctx_research.errors import DataError
from cctx_research.ingest import datasets, lazy, loader, reading, sqlread
from cctx_research.ingest.ledger import linking
from cctx_research.provenance import attach, provenance
from tests.ingest import logs as encoded
from tests.ingest.test_load_engines import _rows

pytest.importorskip("duckdb")
from cctx_research.ingest.evm import sql_decode, sql_logs
from cctx_research.ingest.ledger import sql_sides, sqllink

ROOT = Path(__file__).resolve().parents[3]
EVM = ROOT / "tests" / "fixtures" / "evm"


def _pandas_sides(files: list[Path], monkeypatch: pytest.MonkeyPatch) -> tuple:
    """The sides the pandas reader builds of ``files`` (unique_sides applied), its counts."""
    seen: list[tuple] = []
    real = loader._link

    def spy(burns, arrivals, paired, ambiguous, engine):
        seen.append(([b.copy() for b in burns], [a.copy() for a in arrivals]))
        return real(burns, arrivals, paired, ambiguous, engine)

    with monkeypatch.context() as m:
        m.setattr(loader, "_link", spy)
        m.setattr(sqlread, "SQL_FROM_BYTES", float("inf"))  # the pandas readers, at any size
        ledger = cctx.load(files)
    (burns, arrivals), = seen
    b, a, _ = linking.unique_sides(burns, arrivals)
    return b, a, ledger


_ARROW_TYPES = {pa.int64(): schema.NULLABLE_INT, pa.int32(): schema.NULLABLE_INT,
                pa.string(): schema.STRING, pa.large_string(): schema.STRING}  # fmt: skip


def _side_frame(con, table: str, spec: dict) -> pd.DataFrame:
    """A side table (its rows in ``_p`` order) as the pandas side, ``spec``'s columns and dtypes."""
    found = con.sql(f"SELECT {', '.join(spec)} FROM {table} ORDER BY _p").to_arrow_table()
    return linking.typed(found.to_pandas(types_mapper=_ARROW_TYPES.get), spec)


def _sql_sides(files: list[Path]) -> tuple[pd.DataFrame, pd.DataFrame]:
    con = sqllink.connect()
    try:
        assert sql_decode.decode_files(con, files) is not None
        sql_sides.build(con)
        return (_side_frame(con, "cx_burns", linking.BURN_COLUMNS),
                _side_frame(con, "cx_arrivals", linking.ARRIVAL_COLUMNS))  # fmt: skip
    finally:
        con.close()


def _duckdb_ledger(files: list[Path], tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> pd.DataFrame:  # fmt: skip
    """``load(files, engine="duckdb")``: the ledger it writes, with the provenance it writes,
    the pandas reader and the in-memory ledger refused (the SQL path must take the whole
    load, its rows streamed from SQL into the dataset)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the pandas reader or an in-memory ledger was used")

    records: list = []
    real = datasets.write_stream

    def keep(frames, directory, *, record):
        records.append(record)
        return real(frames, directory, record=record)

    with monkeypatch.context() as m:
        m.setattr(reading, "read_all", refuse)
        m.setattr(lazy, "write_and_scan", refuse)
        m.setattr(datasets, "write_stream", keep)
        got = cctx.load(files, engine="duckdb", out=tmp_path / "ledger").df()
    (record,) = records
    attach(got, record)
    return got


def _default_in_duckdb(files: list[Path], monkeypatch: pytest.MonkeyPatch) -> pd.DataFrame:
    """``load(files)`` (the default engine) as a load past ``SQL_FROM_BYTES`` reads it: in
    DuckDB, the pandas readers refused, the ledger a frame at the end."""

    def refuse(*args, **kwargs):
        raise AssertionError("the pandas reader was used")

    with monkeypatch.context() as m:
        m.setattr(sqlread, "SQL_FROM_BYTES", 0)
        m.setattr(reading, "read_all", refuse)
        return cctx.load(files)


def _same(files: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple:
    want_b, want_a, want = _pandas_sides(files, monkeypatch)
    got_b, got_a = _sql_sides(files)
    pd.testing.assert_frame_equal(got_b, want_b, check_exact=True)
    pd.testing.assert_frame_equal(got_a, want_a, check_exact=True)
    got = _duckdb_ledger(files, tmp_path, monkeypatch)
    assert _rows(got) == _rows(want)
    assert provenance(got).count == provenance(want).count
    # the default engine past its size: the pandas reader's frame, row for row, in its order
    frame = _default_in_duckdb(files, monkeypatch)
    pd.testing.assert_frame_equal(frame, want, check_exact=True)
    mine, theirs = provenance(frame).to_dict(), provenance(want).to_dict()
    assert {k: v for k, v in mine.items() if k != "fetched_at"} == {
        k: v for k, v in theirs.items() if k != "fetched_at"}
    return want_b, want_a, provenance(want).count


def _with_times(source: Path, blocks: Path, out: Path) -> Path:
    """A cryo log file given its blocks' times as ``block_timestamp`` (what sync writes)."""
    logs, times = pq.read_table(source), pq.read_table(blocks)
    at = pc.index_in(logs["block_number"], value_set=times["block_number"])
    stamp = pc.take(times["timestamp"], at).cast(pa.uint64())
    pq.write_table(logs.append_column("block_timestamp", stamp), out)
    return out


def _cryo(path: Path, logs: list, chain_id: int = 8453) -> Path:
    table = encoded.cryo_table(logs, chain_id=chain_id, binary=True)
    stamps = pa.array([lg.block_timestamp for lg in logs], pa.uint64())
    pq.write_table(table.append_column("block_timestamp", stamps), path)
    return path


def test_the_fixture_v1_v2_generic_messages_and_lone_mints(tmp_path, monkeypatch) -> None:
    """One log of every event and version, each in a transaction of its own: mints without
    their message, burns without their mint."""
    path = _with_times(EVM / "cryo_logs.parquet", EVM / "cryo_blocks.parquet",
                       tmp_path / "logs.parquet")  # fmt: skip
    assert sql_logs.readable(path)
    burns, arrivals, counts = _same([path], tmp_path, monkeypatch)
    assert set(burns["cctp_version"]) == {1, 2}
    assert set(arrivals["cctp_version"]) == {1, 2}
    assert counts["skipped_mints_without_message"] == 2
    assert counts["pending"] == 4


def test_chains_files_and_duplicates_across_them(tmp_path, monkeypatch) -> None:
    one = _cryo(tmp_path / "one.parquet", encoded.transfer_logs(7, chain="ethereum"), 1)
    two = _cryo(tmp_path / "two.parquet", encoded.transfer_logs(
        8, chain="ethereum", start_block=19_500_000, start_time=1_723_200_000), 1)
    again = shutil.copy(one, tmp_path / "one_again.parquet")
    files = [one, two, Path(again)]
    _, _, counts = _same(files, tmp_path, monkeypatch)
    assert counts["duplicates"] >= 6  # the copy's every event (and nonces both seeds share)


def test_repeats_are_asked_of_a_hash_then_of_the_keys(tmp_path, monkeypatch) -> None:
    """Repeated logs and keys are looked for by a 64-bit hash first and checked on the keys
    only where a hash is shared. A hash made to collide for half of all rows (``% 2``) must
    change nothing: with duplicates across files, and without any, the sides, the ledger and
    its counts equal the pandas reader's."""
    monkeypatch.setattr(sql_sides, "_HASH", "hash({keys}) % 2")
    monkeypatch.setattr(sql_logs, "_LOG_HASH", "hash(f, chain_id, tx, log_index) % 2")
    answers: list[tuple[bool, str]] = []  # (shared, what was grouped)
    real = sql_sides._shared

    def spied(con, table, keys, where):
        found = real(con, table, keys, where)
        answers.append((found, keys))
        return found

    monkeypatch.setattr(sql_sides, "_shared", spied)
    one = _cryo(tmp_path / "one.parquet", encoded.transfer_logs(7, chain="ethereum"), 1)
    _, _, counts = _same([one], tmp_path, monkeypatch)
    assert counts["duplicates"] == 0
    # every hash shared and no key: each such answer was asked again of the keys, which
    # said no (so no window ran for a repeat there is not)
    hashed = [found for found, keys in answers if keys.startswith("hash(")]
    keyed = [found for found, keys in answers if not keys.startswith("hash(")]
    assert any(hashed)
    assert len(keyed) == sum(hashed)
    assert not any(keyed)
    again = shutil.copy(one, tmp_path / "one_again.parquet")
    _, _, counts = _same([one, Path(again)], tmp_path, monkeypatch)
    assert counts["duplicates"] >= 6


def test_a_large_load_keeps_its_tables_in_a_database_file_and_removes_it(
    tmp_path, monkeypatch
) -> None:
    """Past ``ON_DISK_FROM_BYTES`` of files, the load's tables (events, repeats, sides) are
    tables of a database file in its spill directory, where DuckDB writes them compressed,
    not temporary ones: the same ledger as in memory, and the file gone when the load ends."""
    one = _cryo(tmp_path / "one.parquet", encoded.transfer_logs(7, chain="ethereum"), 1)
    files = [one, Path(shutil.copy(one, tmp_path / "again.parquet"))]  # repeats: every table
    seen: list[tuple] = []
    real = sql_sides.build

    def spied(con):
        path = con.execute("SELECT path FROM duckdb_databases() "
                           "WHERE database_name = current_database()").fetchone()[0]
        tables = con.execute("SELECT table_name, temporary FROM duckdb_tables() "
                             "WHERE starts_with(table_name, 'cx_')").fetchall()  # fmt: skip
        built = real(con)
        tables += con.execute("SELECT table_name, temporary FROM duckdb_tables() "
                              "WHERE starts_with(table_name, 'cx_')").fetchall()  # fmt: skip
        seen.append((path, tables))
        return built

    monkeypatch.setattr(sql_sides, "build", spied)
    want = cctx.load(files, engine="duckdb", out=tmp_path / "in_memory").df()
    monkeypatch.setattr(sqlread, "ON_DISK_FROM_BYTES", 0)
    got = cctx.load(files, engine="duckdb", out=tmp_path / "on_disk").df()
    assert _rows(got) == _rows(want)
    (memory, _), (path, tables) = seen
    assert memory is None  # below the threshold: in memory
    assert Path(path).name == "load.duckdb"
    assert Path(path).parent.name.startswith("cctx-duckdb-spill-")
    # the events as decoded, then the sides (the events taken once: a copy, as rows repeat)
    assert {name for name, _ in tables} >= {"cx_deposits", "cx_sent", "cx_burns", "cx_arrivals"}
    assert not [name for name, temporary in tables if temporary]
    assert not Path(path).parent.exists()


def test_a_load_removes_the_spill_directory_a_killed_load_left(tmp_path, monkeypatch) -> None:
    """A load killed outright leaves its spill directory (and its database file) in the
    system temp; the next load removes it before making its own (:mod:`cctx_research.scratch`)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    left = temp / "cctx-duckdb-spill-killed"
    left.mkdir()
    (left / scratch.OWNER).write_text(done.stdout.strip())
    (left / "load.duckdb").write_bytes(b"\0" * 4096)
    path = _cryo(tmp_path / "one.parquet", encoded.transfer_logs(7, chain="ethereum"), 1)
    got = cctx.load(path, engine="duckdb", out=tmp_path / "ledger")
    assert _rows(got.df()) == _rows(cctx.load(path))
    assert not left.exists()
    assert list(temp.iterdir()) == []  # and the load's own went with it


def test_the_scale_benchmarks_dataset(tmp_path, monkeypatch) -> None:
    """The sync-shaped dataset of ``benchmarks/scale.py`` at its quick size (20k): V1 and V2
    on eight chains, Circle's TokenMessengers, merged events, transfers never minted,
    identical transfers (the sides' order decides their links)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from scale_data import QUICK_DAYS, dataset_files, generate

    generate(tmp_path / "sync", 20_000, seed=3, part_logs=30_000, days=QUICK_DAYS)
    files = dataset_files(tmp_path / "sync")
    _, arrivals, counts = _same(files, tmp_path, monkeypatch)
    for key in ("merged", "exact", "content", "content_ambiguous", "pending"):
        assert counts[key], key
    assert set(arrivals["cctp_version"]) == {1, 2}


def test_a_malformed_log_is_named_by_the_pandas_reader(tmp_path, monkeypatch) -> None:
    logs = encoded.transfer_logs(9, chain="ethereum")
    logs[0].data = logs[0].data[:-2]  # a DepositForBurn one byte short
    path = _cryo(tmp_path / "bad.parquet", logs, 1)
    con = sqllink.connect()
    assert sql_decode.decode_files(con, [path]) is None  # the SQL finds it, and says so
    con.close()
    with pytest.raises(DataError, match="data is not the 160 bytes"):
        cctx.load(path, engine="duckdb", out=tmp_path / "ledger")
    want = cctx.load(path, errors="report")
    got = cctx.load(path, engine="duckdb", errors="report", out=tmp_path / "ledger").df()
    assert _rows(got) == _rows(want)


def test_logs_that_say_another_chain_are_refused_as_the_pandas_reader_refuses(tmp_path) -> None:
    path = _cryo(tmp_path / "base.parquet", encoded.transfer_logs(7))  # messages from domain 0
    con = sqllink.connect()
    assert sql_decode.decode_files(con, [path]) is None
    con.close()
    with pytest.raises(DataError, match="the data says ethereum"):
        cctx.load(path, engine="duckdb", out=tmp_path / "ledger")


def test_other_inputs_keep_the_pandas_reader(tmp_path) -> None:
    assert not sql_logs.readable(EVM / "cryo_logs.parquet")  # no block_timestamp
    assert not sql_logs.readable(EVM / "cryo_logs.csv")
    assert not sql_logs.readable(tmp_path / "absent.parquet")


def test_the_word_checks_agree_with_the_numbers_at_their_bounds() -> None:
    """``cx_fits`` / ``cx_i64`` / ``cx_addr`` compare a word with a constant: at each bound,
    and for words too short, they say what the number says."""
    con = sqllink.connect()
    try:
        con.execute(sql_decode._MACROS)
        values = [0, 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64,
                  2**160 - 1, 2**160, 2**255, 2**256 - 1]  # fmt: skip
        for value in values:
            word = value.to_bytes(32, "big")
            got = con.execute("SELECT cx_fits($w, 4), cx_fits($w, 8), cx_i64($w), cx_addr($w)",
                              {"w": word}).fetchone()  # fmt: skip
            assert got == (value < 2**32, value < 2**64, value < 2**63, value < 2**160), value
        for short in (b"", b"\x00" * 31, b"\x00" * 33):
            got = con.execute("SELECT cx_fits($w, 8), cx_i64($w), cx_addr($w)",
                              {"w": short}).fetchone()  # fmt: skip
            assert got == (False, False, False), short
    finally:
        con.close()


def test_two_identical_burns_in_one_transaction(tmp_path, monkeypatch) -> None:
    """A contract that burns the same amount for the same recipient twice in one transaction:
    two deposits and two messages share the key, and pair by their rank in it (the pandas
    sides' rule). The scale dataset's V2 burn is copied within its own transaction (V2's
    ``MessageSent`` carries no nonce, so the copy is what such a contract emits): the message
    then the deposit, after the transaction's last log."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from scale_data import QUICK_DAYS, dataset_files, generate

    generate(tmp_path / "sync", 2_000, seed=3, part_logs=30_000, days=QUICK_DAYS)
    files = dataset_files(tmp_path / "sync")
    table = pq.read_table(files[0])
    deposit, sent = (bytes.fromhex(encoded.topic0(encoded.SIGNATURES[(event, 2)])[2:])
                     for event in ("DepositForBurn", "MessageSent"))  # fmt: skip
    at = pc.index(table["topic0"], pa.scalar(deposit, pa.binary())).as_py()
    assert at >= 0
    tx = table["transaction_hash"][at]
    same_tx = table.filter(pc.equal(table["transaction_hash"], tx))
    message = same_tx.filter(pc.equal(same_tx["topic0"], pa.scalar(sent, pa.binary())))
    assert message.num_rows == 1
    last = pc.max(same_tx["log_index"]).as_py()
    copies = pa.concat_tables([message, table.slice(at, 1)])
    index = pa.array([last + 1, last + 2], table.schema.field("log_index").type)
    copies = copies.set_column(table.schema.get_field_index("log_index"), "log_index", index)
    pq.write_table(pa.concat_tables([table, copies]), files[0])

    repeated: list[str] = []  # the tables whose keys repeat
    real = sql_sides._repeated

    def spied(con, table, *args):
        found = real(con, table, *args)
        repeated.extend([table] if found else [])
        return found

    monkeypatch.setattr(sql_sides, "_repeated", spied)
    burns, _, _ = _same(files, tmp_path, monkeypatch)
    assert {"cx_dep", "cx_sx"} <= set(repeated), "the burns' keys repeat: the ranked path runs"
    twins = burns[burns["burn_tx_hash"] == "0x" + tx.as_py().hex()]
    assert len(twins) == 2
    assert twins["burn_log_index"].tolist() == sorted(twins["burn_log_index"])


def test_the_default_engine_reads_in_duckdb_past_its_size_when_duckdb_is_there(
    tmp_path, monkeypatch
) -> None:
    path = _cryo(tmp_path / "one.parquet", encoded.transfer_logs(7, chain="ethereum"), 1)
    named = [(path, None)]
    assert sqlread.wanted("duckdb", named)  # always
    assert not sqlread.wanted("pandas", named)  # a small load: the pandas readers
    monkeypatch.setattr(sqlread, "SQL_FROM_BYTES", path.stat().st_size)
    assert sqlread.wanted("pandas", named)
    assert sqlread.wanted("polars", named)
    monkeypatch.setattr(sqlread.importlib.util, "find_spec", lambda name: None)  # no DuckDB
    assert not sqlread.wanted("pandas", named)


@pytest.mark.parametrize("engine", ["polars", "dask"])
def test_the_lazy_engines_past_the_size_write_the_pandas_readers_ledger(
    tmp_path, monkeypatch, engine
) -> None:
    pytest.importorskip(engine)
    path = _with_times(EVM / "cryo_logs.parquet", EVM / "cryo_blocks.parquet",
                       tmp_path / "logs.parquet")  # fmt: skip
    want = cctx.load(path)  # a small load: the pandas readers

    def refuse(*args, **kwargs):
        raise AssertionError("the pandas reader was used")

    monkeypatch.setattr(sqlread, "SQL_FROM_BYTES", 0)
    monkeypatch.setattr(reading, "read_all", refuse)
    lazy_ledger = cctx.load(path, engine=engine, out=tmp_path / "ledger")
    got = lazy_ledger.collect().to_pandas() if engine == "polars" else lazy_ledger.compute()
    assert _rows(got) == _rows(want)
    back = datasets.read(tmp_path / "ledger")  # the dataset is the canonical ledger
    pd.testing.assert_frame_equal(
        back.sort_values("transfer_id").reset_index(drop=True),
        want.sort_values("transfer_id").reset_index(drop=True),
        check_exact=True,
    )
