"""The provenance record: typed, frozen, carried through attrs and Parquet."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from cctx_research import schema
from cctx_research.provenance import Provenance, attach, combine, is_synthetic, provenance


def test_record_is_frozen_and_typed():
    record = Provenance(
        source="http://127.0.0.1:8000",
        operation="mints",
        window=("2026-11-01", pd.Timestamp("2026-11-02", tz="UTC")),
        parameters={"page_size": 100},
        requests=3,
    )
    assert record.window == (
        pd.Timestamp("2026-11-01", tz="UTC"),
        pd.Timestamp("2026-11-02", tz="UTC"),
    )
    assert record.params == {"page_size": 100}
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.source = "elsewhere"  # type: ignore[misc]
    with pytest.raises(TypeError, match="synthetic must be a bool"):
        Provenance(source="x", synthetic="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="source must be a str"):
        Provenance(source=None)  # type: ignore[arg-type]


def test_round_trip_through_attrs_copies_and_parquet(tmp_path):
    frame = pd.DataFrame({"x": [1, 2, 3]})
    record = Provenance(
        source="synthetic sample",
        synthetic=True,
        operation="sample",
        window=(pd.Timestamp("2026-11-01", tz="UTC"), pd.Timestamp("2026-11-02", tz="UTC")),
        files=("a.json",),
        counts={"rows": 3},
    )
    attach(frame, record)
    assert provenance(frame) == record
    assert provenance(frame.copy()) == record
    assert provenance(frame[frame["x"] > 1]) == record
    path = tmp_path / "f.parquet"
    frame.to_parquet(path)
    assert provenance(pd.read_parquet(path)) == record


def test_missing_and_bad_inputs():
    assert provenance(pd.DataFrame()) is None
    assert not is_synthetic(pd.DataFrame())
    with pytest.raises(TypeError, match="DataFrame or Series"):
        provenance([1, 2])
    with pytest.raises(TypeError, match="must be a Provenance"):
        attach(pd.DataFrame(), {"source": "x"})  # type: ignore[arg-type]


def test_is_synthetic_reads_the_flag_not_the_words():
    worded = attach(pd.DataFrame(), Provenance(source="synthetic sample, not flagged"))
    flagged = attach(pd.DataFrame(), Provenance(source="x", synthetic=True))
    assert not is_synthetic(worded)
    assert is_synthetic(worded, flagged)


def test_combine_adds_counters_and_keeps_the_synthetic_flag():
    a = Provenance(source="s1", requests=2, cache_hits=1)
    b = Provenance(source="s2", synthetic=True, requests=3, files=("f",))
    merged = combine([a, None, b], operation="report")
    assert merged is not None
    assert (merged.source, merged.requests, merged.cache_hits) == ("s1; s2", 5, 1)
    assert merged.synthetic
    assert (merged.operation, merged.files) == ("report", ("f",))
    assert combine([]) is None


def test_ledger_v2_columns_are_optional_and_nullable():
    ledger = schema.empty("ledger").drop(columns=list(schema.LEDGER_V2))
    with pytest.raises(schema.DataError, match="cctp_version"):
        schema.validate(ledger, "ledger")
    schema.validate(schema.complete(ledger, "ledger"), "ledger")
    assert str(ledger["fee_raw"].dtype) == "Int64"
