"""cryo's Parquet decoded straight from its binary columns equals the hex path, row for row.

``load`` reads cryo's logs with ``read_logs(binary=True)``: hashes, topics and
data stay bytes from the file to the decoder, and hex text is made only for
the columns the event frames show. The frames must be those the hex text gives,
on a generated sync-shaped dataset (``benchmarks/scale_data.py``: V1 and V2,
four logs a transfer, eight chains) and on logs spoilt in every way the
decoder checks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cctx_research.ingest.evm import decode_logs, read_logs
from cctx_research.ingest.evm.frame import is_binary

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from scale_data import QUICK_DAYS, dataset_files, generate

        generate(root, 1_500, seed=7, part_logs=2_500, check=4, days=QUICK_DAYS)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return dataset_files(root)


def _assert_same(path: Path) -> None:
    text, raw = read_logs(path), read_logs(path, binary=True)
    assert is_binary(raw["data"])
    assert not is_binary(text["data"])
    old, new = decode_logs(text), decode_logs(raw)
    for kind in ("burns", "mints", "sent", "received", "bad"):
        pd.testing.assert_frame_equal(getattr(new, kind), getattr(old, kind), check_exact=True)
    assert new.counts == old.counts


def test_every_part_of_a_generated_dataset_decodes_the_same(parts):
    assert len(parts) >= 8
    for path in parts:
        _assert_same(path)
    decoded = decode_logs(read_logs(parts[0], binary=True))
    assert len(decoded.sent)
    assert len(decoded.burns)
    assert decoded.sent["message"].str.len().min() > 2


def _spoil(table: pa.Table) -> pa.Table:
    """Rows broken the ways the decoder names: short data, a short topic, no tx hash, a
    hash of the wrong width, an extra topic, a duplicate log, a message cut short."""
    cols = {name: table.column(name).to_pylist() for name in table.column_names}
    cols["data"][0] = cols["data"][0][:40]
    cols["topic1"][1] = cols["topic1"][1][:31]
    cols["transaction_hash"][2] = None
    cols["transaction_hash"][3] = cols["transaction_hash"][3][:20]
    cols["topic3"][4] = b"\x01" * 32 if cols["topic3"][4] is None else None
    cols["data"][5] = cols["data"][5][:-7]
    for name in cols:
        cols[name].append(cols[name][6])  # the same log twice
    return pa.table({name: pa.array(values, table.schema.field(name).type)
                     for name, values in cols.items()})  # fmt: skip


def test_spoilt_logs_are_the_same_bad_rows(parts, tmp_path):
    spoilt = tmp_path / "spoilt.parquet"
    pq.write_table(_spoil(pq.read_table(parts[0])), spoilt)
    _assert_same(spoilt)
    decoded = decode_logs(read_logs(spoilt, binary=True))
    assert len(decoded.bad) >= 5
    assert decoded.counts["duplicates"] == 1


def test_fixed_width_binary_columns_read_the_same(parts, tmp_path):
    table = pq.read_table(parts[0])
    widths = {"transaction_hash": 32, "address": 20, "topic0": 32}
    fixed = table
    for name, width in widths.items():
        at = fixed.column_names.index(name)
        fixed = fixed.set_column(at, name, fixed.column(name).cast(pa.binary(width)))
    path = tmp_path / "fixed.parquet"
    pq.write_table(fixed, path)
    _assert_same(path)


def test_bytes_beside_hex_text_read_as_hex(parts, tmp_path):
    logs = read_logs(parts[0]).head(3)
    node = [{"address": a, "topics": [t for t in (t0, t1, t2, t3) if isinstance(t, str)],
             "data": d, "blockNumber": hex(int(b)), "transactionHash": h,
             "logIndex": hex(int(i)), "transactionIndex": "0x0"}
            for a, t0, t1, t2, t3, d, b, h, i in zip(
                logs.address, logs.topic0, logs.topic1, logs.topic2, logs.topic3, logs.data,
                logs.block_number, logs.tx_hash, logs.log_index, strict=True)]  # fmt: skip
    path = tmp_path / "node.json"
    path.write_text(json.dumps(node))
    both = read_logs([parts[0], path], binary=True)
    assert not any(is_binary(both[c]) for c in ("tx_hash", "data", "topic0"))
    pd.testing.assert_frame_equal(both, read_logs([parts[0], path]))


def test_without_the_message_hex_only_that_column_differs(parts):
    logs = read_logs(parts[1], binary=True)
    whole, lean = decode_logs(logs), decode_logs(logs, message=False)
    assert whole.sent["message"].notna().all()
    assert lean.sent["message"].isna().all()
    pd.testing.assert_frame_equal(lean.sent.drop(columns="message"),
                                  whole.sent.drop(columns="message"))  # fmt: skip
    for kind in ("burns", "mints", "received", "bad"):
        pd.testing.assert_frame_equal(getattr(lean, kind), getattr(whole, kind))
