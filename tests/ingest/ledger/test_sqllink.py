"""The DuckDB linker equals the numpy one, row for row and column for column.

``load(..., engine="duckdb")`` links in SQL (:mod:`cctx_research.ingest.ledger.sqllink`);
every other load links with numpy (:mod:`cctx_research.ingest.ledger.linking`), the
reference. Each test hands both the same sides: those real loads build from the committed
fixtures and the scale benchmark's dataset, and generated sides dense in identical transfers,
ties in time, missing times, repeated events and nonces.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import schema
from cctx_research.ingest import loader
from cctx_research.ingest.ledger import linking

pytest.importorskip("duckdb")
from cctx_research.ingest.ledger import sqllink

ROOT = Path(__file__).resolve().parents[3]
EVM = ROOT / "tests" / "fixtures" / "evm"


def _equal(burns: list[pd.DataFrame], arrivals: list[pd.DataFrame], ambiguous: str) -> dict:
    expected, counts = linking.link(burns, arrivals, ambiguous=ambiguous)
    got, got_counts = sqllink.link(burns, arrivals, ambiguous=ambiguous)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got_counts == counts
    return counts


def _captured(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """The sides every following ``load`` links (it still links them with numpy)."""
    seen: list[tuple] = []
    real = loader._link

    def spy(burns, arrivals, paired, ambiguous, engine):
        seen.append(([b.copy() for b in burns], [a.copy() for a in arrivals], ambiguous))
        return real(burns, arrivals, paired, ambiguous, "pandas")

    monkeypatch.setattr(loader, "_link", spy)
    return seen


_FIXTURE_LOADS = [
    ("getlogs_list.json", {"chain": "ethereum"}),
    ("getlogs.jsonl", {"chain": "ethereum"}),
    ("getlogs_no_time.jsonl", {"chain": "ethereum", "blocks": EVM / "blocks_rpc.json"}),
    ("cryo_logs.parquet", {}),
    ("cryo_logs.csv", {}),
]


@pytest.mark.parametrize(("name", "options"), _FIXTURE_LOADS)
def test_equal_on_the_evm_fixtures(name: str, options: dict,
                                   monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    seen = _captured(monkeypatch)
    cctx.load(EVM / name, **options)
    (burns, arrivals, ambiguous), = seen
    counts = _equal(burns, arrivals, ambiguous)
    assert counts["pending"]
    assert counts["mint_only"]


def test_equal_on_the_scale_benchmarks_dataset(tmp_path: Path, monkeypatch) -> None:
    """The sync-shaped dataset of ``benchmarks/scale.py``: V1 and V2 on eight chains, some never
    minted, fast and standard, identical transfers among them."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from scale_data import QUICK_DAYS, dataset_files, generate

    generate(tmp_path / "sync", 3000, seed=5, part_logs=4000, days=QUICK_DAYS)
    seen = _captured(monkeypatch)
    cctx.load(dataset_files(tmp_path / "sync"))
    (burns, arrivals, _), = seen
    for ambiguous in ("link", "keep"):
        counts = _equal(burns, arrivals, ambiguous)
        assert counts["exact"]
        assert counts["content"]
        assert counts["pending"]
    assert counts["unpaired"] > 0  # identical transfers kept apart


def _hex(rng: np.random.Generator, k: int, width: int) -> list[str]:
    return ["0x" + bytes(rng.integers(0, 256, width, dtype=np.uint8)).hex() for _ in range(k)]


def _sides(n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Burns and arrivals of both versions: few distinct contents (many identical transfers),
    times on a coarse grid (ties), some missing, mints before their burns, V1 nonces, some V2
    burns attested, some burns never minted and some mints without their burn."""
    rng = np.random.default_rng(seed)
    pick = lambda pool: pd.array([pool[i] for i in rng.integers(0, len(pool), n)],  # noqa: E731
                                 dtype=schema.STRING)
    version = rng.choice([1, 2, 2], n)
    start = pd.Timestamp("2026-01-01", tz="UTC").value
    burn_ns = pd.Series(start + rng.integers(0, 20, n) * 10**9).mask(rng.random(n) < 0.05)
    common = {
        "source_domain": rng.choice([0, 6], n), "destination_domain": rng.choice([3, 5], n),
        "burn_token": pick(["0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "0x" + "11" * 20]),
        "mint_recipient": pick(_hex(rng, 3, 32)), "message_sender": pick(_hex(rng, 2, 20)),
        "amount_raw": rng.integers(1, 3, n),
        "max_fee_raw": pd.array(rng.integers(0, 2, n), dtype=schema.NULLABLE_INT),
        "hook_data": pick(["0x", "0xbeef"]),
        "cctp_version": pd.array(version, dtype=schema.NULLABLE_INT),
    }  # fmt: skip
    v1_nonce = [str(i) for i in rng.permutation(n)]
    v2_nonce = _hex(rng, n, 32)
    nonce = [v1 if v == 1 else v2 for v, v1, v2 in zip(version, v1_nonce, v2_nonce, strict=True)]
    burns = pd.DataFrame({
        **common,
        "burn_tx_hash": pd.array(_hex(rng, n, 32), dtype=schema.STRING),
        "burn_log_index": pd.array(rng.integers(0, 5, n), dtype=schema.NULLABLE_INT),
        "burn_block": rng.integers(1, 10**6, n),
        "burn_timestamp": pd.to_datetime(burn_ns, utc=True),
        "nonce": pd.array([x if v == 1 or rng.random() < 0.1 else None
                           for v, x in zip(version, nonce, strict=True)], dtype=schema.STRING),
    })  # fmt: skip
    mint_ns = (burn_ns.fillna(start) + rng.integers(-3, 30, n) * 10**9).mask(rng.random(n) < 0.05)
    arrivals = pd.DataFrame({
        **common,
        "mint_tx_hash": pd.array(_hex(rng, n, 32), dtype=schema.STRING),
        "mint_log_index": pd.array(rng.integers(0, 5, n), dtype=schema.NULLABLE_INT),
        "mint_block": rng.integers(1, 10**6, n),
        "mint_timestamp": pd.to_datetime(mint_ns, utc=True),
        "nonce": pd.array(nonce, dtype=schema.STRING),
        "fee_raw": pd.array(rng.integers(0, 9, n), dtype=schema.NULLABLE_INT),
        "relayer": pick(_hex(rng, 2, 20)),
    })  # fmt: skip
    minted = rng.random(n) < 0.9
    burned = rng.random(n) < 0.95
    arrivals = arrivals[minted].iloc[rng.permutation(int(minted.sum()))].reset_index(drop=True)
    return burns[burned].reset_index(drop=True), arrivals


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("ambiguous", ["link", "keep"])
def test_equal_on_generated_sides(seed: int, ambiguous: str) -> None:
    burns, arrivals = _sides(600, seed)
    repeated = [burns, burns.iloc[:25]], [arrivals.iloc[:40], arrivals]  # events seen twice
    counts = _equal(*repeated, ambiguous)
    assert counts["duplicates"] == 65
    assert counts["exact"]
    assert counts["attested"]
    assert counts["content"]
    assert counts["mint_only"]
    assert counts["content_ambiguous" if ambiguous == "link" else "unpaired"] > 0


def test_equal_on_empty_and_one_sided_input() -> None:
    burns, arrivals = _sides(50, seed=9)
    _equal([], [], "link")
    _equal([burns], [], "link")
    _equal([], [arrivals], "link")


def test_load_with_the_duckdb_engine_links_in_sql(tmp_path: Path, monkeypatch) -> None:
    """``engine="duckdb"`` never calls the numpy linker, and gives the pandas ledger."""
    expected = cctx.load(EVM / "getlogs_list.json", chain="ethereum")

    def refuse(*args, **kwargs):
        raise AssertionError("the numpy linker ran")

    monkeypatch.setattr(linking, "link", refuse)
    relation = cctx.load(EVM / "getlogs_list.json", chain="ethereum", engine="duckdb",
                         out=tmp_path / "ledger")
    got = relation.df().sort_values("transfer_id", ignore_index=True)
    assert got["transfer_id"].tolist() == sorted(expected["transfer_id"].tolist())
    assert got["pairing"].tolist() == expected.sort_values("transfer_id")["pairing"].tolist()


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="ambiguous must be 'link' or 'keep'"):
        sqllink.link([], [], ambiguous="maybe")
    with pytest.raises(ValueError, match="memory_limit must be text such as '2GB'"):
        sqllink.connect(memory_limit=2)
    for bad in (3, ""):
        with pytest.raises(ValueError, match="database must be a file's path"):
            sqllink.connect(database=bad)  # type: ignore[arg-type]


def test_a_connection_keeps_its_tables_in_the_database_file_named(tmp_path: Path) -> None:
    con = sqllink.connect(database=tmp_path / "load.duckdb")
    con.execute("CREATE TABLE kept AS SELECT 1 AS x")
    con.close()
    assert sqllink.connect(database=str(tmp_path / "load.duckdb")).execute(
        "SELECT x FROM kept").fetchall() == [(1,)]  # fmt: skip
