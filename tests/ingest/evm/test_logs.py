"""Reading and decoding real CCTP log encodings in every input shape."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cctx_research import schema
from cctx_research.errors import DataError
from cctx_research.ingest.evm.logs import decode_logs, read_blocks, read_logs
from cctx_research.ingest.hexcodec import hex_slices, hex_to_bytes
from ingest.logs import (
    FIXTURES,
    block_objects,
    fixture_logs,
    make_log,
    response,
    transfer_logs,
    write_cryo,
    write_cryo_blocks,
    write_json,
    write_jsonl,
)

FRAME = {
    "DepositForBurn": "burns",
    "MintAndWithdraw": "mints",
    "MessageSent": "sent",
    "MessageReceived": "received",
}
BASE_DTYPES = {
    "domain": schema.NULLABLE_INT,
    "chain_id": schema.STRING,
    "block_number": "int64",
    "timestamp": schema.TIMESTAMP,
    "tx_hash": schema.STRING,
    "log_index": "int64",
    "contract": schema.STRING,
    "cctp_version": "int64",
    "source_file": schema.STRING,
    "index": "int64",
}


def node_logs(logs, *, with_time=True):
    return [lg.node(with_time=with_time) for lg in logs]


WRITERS = {
    "list": lambda p, logs: write_json(p / "logs.json", node_logs(logs)),
    "response": lambda p, logs: write_json(p / "logs.json", response(node_logs(logs))),
    "responses": lambda p, logs: write_json(
        p / "logs.json", [response(node_logs(logs[:3]), 1), response(node_logs(logs[3:]), 2)]
    ),
    "jsonl-logs": lambda p, logs: write_jsonl(p / "logs.jsonl", node_logs(logs)),
    "jsonl-responses": lambda p, logs: write_jsonl(
        p / "logs.jsonl", [response(node_logs(logs[:5]), 1), response(node_logs(logs[5:]), 2)]
    ),
    "cryo-parquet": lambda p, logs: write_cryo(p / "logs.parquet", logs),
    "cryo-csv": lambda p, logs: write_cryo(p / "logs.csv", logs),
}


def found(decoded, log):
    frame = getattr(decoded, FRAME[log.event])
    rows = frame[frame["tx_hash"] == log.tx_hash]
    assert len(rows) == 1, f"{log.event} V{log.version} not decoded once: {decoded.bad}"
    return rows.iloc[0]


def same(actual, expected):
    if expected is None:
        return pd.isna(actual)
    return actual == expected


@pytest.mark.parametrize("shape", WRITERS)
def test_every_field_round_trips(tmp_path, shape):
    logs = transfer_logs()
    path = WRITERS[shape](tmp_path, logs)
    cryo = shape.startswith("cryo")
    decoded = decode_logs(read_logs(path), chain=None if cryo else "base")
    assert decoded.bad.empty, decoded.bad
    assert decoded.counts["decoded"] == len(logs) == decoded.counts["logs"]
    for position, log in enumerate(logs):
        row = found(decoded, log)
        for name, value in log.expected.items():
            assert same(row[name], value), (log.event, log.version, name, row[name], value)
        assert row["block_number"] == log.block_number
        assert row["log_index"] == log.log_index
        assert row["contract"] == log.address
        assert row["cctp_version"] == log.version
        assert row["domain"] == 6
        assert row["chain_id"] == "8453"
        assert row["source_file"] == str(path)
        assert row["index"] == position
        if cryo:  # cryo's logs carry no time
            assert pd.isna(row["timestamp"])
        else:
            assert row["timestamp"] == pd.Timestamp(log.block_timestamp, unit="s", tz="UTC")
    for kind in FRAME.values():
        frame = getattr(decoded, kind)
        for name, dtype in BASE_DTYPES.items():
            assert frame[name].dtype == dtype, (kind, name, frame[name].dtype)


def test_frame_dtypes_follow_the_contract(tmp_path):
    decoded = decode_logs(read_logs(WRITERS["list"](tmp_path, transfer_logs())), chain=8453)
    assert decoded.burns["amount_raw"].dtype == "int64"
    assert decoded.burns["max_fee_raw"].dtype == schema.NULLABLE_INT
    assert decoded.burns["nonce"].dtype == schema.STRING
    assert decoded.mints["fee_raw"].dtype == schema.NULLABLE_INT
    assert decoded.sent["amount_raw"].dtype == schema.NULLABLE_INT
    assert decoded.received["finality_threshold_executed"].dtype == schema.NULLABLE_INT
    assert list(decoded.bad.columns) == ["source_file", "index", "reason"]
    assert set(decoded.counts) == {
        "logs",
        "decoded",
        "skipped_other_events",
        "duplicates",
        "removed",
        "bad",
        "missing_times",
    }


BLOCK_WRITERS = {
    "rpc-list": lambda p, logs: write_json(p / "blocks.json", block_objects(logs)),
    "rpc-responses": lambda p, logs: write_json(
        p / "blocks.json",
        [{"jsonrpc": "2.0", "id": i, "result": b} for i, b in enumerate(block_objects(logs))],
    ),
    "rpc-jsonl": lambda p, logs: write_jsonl(p / "blocks.jsonl", block_objects(logs)),
    "cryo-parquet": lambda p, logs: write_cryo_blocks(p / "blocks.parquet", logs),
    "cryo-csv": lambda p, logs: write_cryo_blocks(p / "blocks.csv", logs),
}


@pytest.mark.parametrize("shape", BLOCK_WRITERS)
def test_times_come_from_a_blocks_file(tmp_path, shape):
    logs = transfer_logs()
    path = write_json(tmp_path / "logs.json", node_logs(logs, with_time=False))
    blocks = read_blocks(BLOCK_WRITERS[shape](tmp_path, logs))
    assert blocks["block_number"].dtype == "int64"
    assert blocks["timestamp"].dtype == schema.TIMESTAMP
    assert ("chain_id" in blocks) == shape.startswith("cryo")
    decoded = decode_logs(read_logs(path), chain="base", blocks=blocks)
    assert decoded.counts["missing_times"] == 0
    for log in logs:
        assert found(decoded, log)["timestamp"] == pd.Timestamp(
            log.block_timestamp, unit="s", tz="UTC"
        )


def test_blocks_of_another_chain_give_no_time(tmp_path):
    logs = transfer_logs()
    path = write_cryo(tmp_path / "logs.parquet", logs, chain_id=8453)
    blocks = read_blocks(write_cryo_blocks(tmp_path / "blocks.parquet", logs, chain_id=42161))
    decoded = decode_logs(read_logs(path), blocks=blocks)
    assert decoded.counts["missing_times"] == len(logs)
    ok = read_blocks(write_cryo_blocks(tmp_path / "b2.parquet", logs, chain_id=8453))
    assert decode_logs(read_logs(path), blocks=ok).counts["missing_times"] == 0


def test_missing_times_are_nat_and_counted(tmp_path):
    logs = transfer_logs()
    path = write_json(tmp_path / "logs.json", node_logs(logs, with_time=False))
    decoded = decode_logs(read_logs(path), chain="base")
    assert decoded.counts["missing_times"] == len(logs)
    assert decoded.burns["timestamp"].isna().all()


def tampered_logs():
    """The 8 good logs, then: another event, a duplicate, a reorged log, malformed ones."""
    import random

    logs = transfer_logs()
    rows = node_logs(logs)
    rng = random.Random(9)
    other = dict(
        rows[0],
        topics=["0x" + "dd" * 32, "0x" + "00" * 32],
        logIndex="0x40",
        transactionHash="0x" + "01" * 32,
    )
    removed = make_log(
        "MintAndWithdraw",
        1,
        {"mintRecipient": "0x" + "aa" * 20, "amount": 5, "mintToken": "0x" + "bb" * 20},
        {},
        rng=rng,
        block_number=1,
        log_index=9,
    ).node()
    removed["removed"] = True
    bad_hex = dict(rows[2], data="0xzz" + rows[2]["data"][4:], logIndex="0x50")
    short = dict(rows[2], data=rows[2]["data"][:-2], logIndex="0x51")
    few_topics = dict(rows[0], topics=rows[0]["topics"][:2], logIndex="0x52")
    no_hash = {k: v for k, v in rows[3].items() if k != "transactionHash"}
    overflow = make_log(
        "MintAndWithdraw",
        2,
        {
            "mintRecipient": "0x" + "aa" * 20,
            "amount": 2**64,
            "mintToken": "0x" + "bb" * 20,
            "feeCollected": 0,
        },
        {},
        rng=rng,
        block_number=2,
        log_index=3,
    ).node()
    extra = [other, dict(rows[1]), removed, bad_hex, short, few_topics, no_hash, overflow]
    return logs, rows + extra


def test_skipped_duplicate_removed_and_malformed_are_counted(tmp_path):
    logs, rows = tampered_logs()
    lines = [json.dumps(row) for row in rows]
    lines.insert(10, "{not json")  # line 11, the 11th entry (index 10)
    path = tmp_path / "logs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    decoded = decode_logs(read_logs(path), chain="base")
    counts = decoded.counts
    assert counts["logs"] == len(rows) + 1
    assert counts["decoded"] == len(logs)
    assert counts["skipped_other_events"] == 1
    assert counts["duplicates"] == 1
    assert counts["removed"] == 1
    assert counts["bad"] == 6
    bad = dict(zip(decoded.bad["index"], decoded.bad["reason"], strict=True))
    assert bad[10].startswith("line 11: not JSON")
    assert "data is not 0x hex" in bad[12]
    assert "data is not the 32 bytes of MintAndWithdraw V1" in bad[13]
    assert "topic2 (burnToken) missing" in bad[14]
    assert "missing transactionHash" in bad[15]
    overflow = bad[16]
    assert str(2**64) in overflow
    assert "does not fit int64" in overflow
    assert rows[-1]["transactionHash"] in overflow
    assert set(decoded.bad["source_file"]) == {str(path)}


def test_duplicates_across_files_count_once(tmp_path):
    logs = transfer_logs()
    one = write_json(tmp_path / "a.json", node_logs(logs))
    two = write_json(tmp_path / "b.json", response(node_logs(logs[:4])))
    decoded = decode_logs(read_logs([one, two]), chain="ethereum")
    assert decoded.counts["duplicates"] == 4
    assert decoded.counts["decoded"] == len(logs)
    assert set(decoded.burns["source_file"]) == {str(one)}


def test_the_same_log_on_two_chains_is_not_a_duplicate(tmp_path):
    logs = transfer_logs()
    base = write_cryo(tmp_path / "base.parquet", logs, chain_id=8453)
    arb = write_cryo(tmp_path / "arb.parquet", logs, chain_id=42161)
    decoded = decode_logs(read_logs([base, arb]))
    assert decoded.counts["duplicates"] == 0
    assert sorted(decoded.mints["domain"].unique()) == [3, 6]


def test_chain_per_file_and_by_chain_id(tmp_path):
    logs = transfer_logs()
    eth = write_json(tmp_path / "eth.json", node_logs(logs[:4]))
    op = write_json(tmp_path / "op.json", node_logs(logs[4:]))
    frame = read_logs([eth, op])
    decoded = decode_logs(frame, chain={str(eth): "ethereum", str(op): 10})
    assert set(decoded.burns["domain"]) == {0}
    assert set(decoded.burns["chain_id"]) == {"1"}
    assert set(decoded.sent["domain"]) == {2}
    assert set(decoded.sent["chain_id"]) == {"10"}
    unknown = decode_logs(frame, chain=999_999)
    assert unknown.burns["domain"].isna().all()
    assert set(unknown.burns["chain_id"]) == {"999999"}
    nothing = decode_logs(frame)
    assert nothing.burns["domain"].isna().all()
    assert nothing.burns["chain_id"].isna().all()
    with pytest.raises(ValueError, match="unknown chain 'atlantis'"):
        decode_logs(frame, chain="atlantis")
    with pytest.raises(TypeError, match="chain must be"):
        decode_logs(frame, chain=1.5)


def test_cryo_json_rows_read_too(tmp_path):
    logs = transfer_logs()
    table = pq.read_table(write_cryo(tmp_path / "logs.parquet", logs))
    rows = pd.read_parquet(tmp_path / "logs.parquet").to_dict("records")
    for row in rows:
        for k, v in row.items():
            if isinstance(v, bytes):
                row[k] = "0x" + v.hex()
            elif v is None or (isinstance(v, float) and pd.isna(v)):
                row[k] = None
            else:
                row[k] = int(v)
    assert table.num_rows == len(rows)
    decoded = decode_logs(read_logs(write_json(tmp_path / "cryo.json", rows)))
    assert decoded.counts["decoded"] == len(logs)
    assert decoded.bad.empty


def test_a_file_of_another_format_says_what_was_expected(tmp_path):
    path = write_json(tmp_path / "x.json", {"rows": []})
    with pytest.raises(DataError, match="not eth_getLogs output"):
        read_logs(path)
    parquet = tmp_path / "x.parquet"
    pq.write_table(pa.table({"block_number": [1], "amount": [2]}), parquet)
    with pytest.raises(DataError, match=r"lacks the columns .*transaction_hash.* of cryo's logs"):
        read_logs(parquet)
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_logs(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="no files given"):
        read_logs([])
    with pytest.raises(ValueError, match="lack the columns"):
        decode_logs(pd.DataFrame({"a": [1]}))
    with pytest.raises(DataError, match="unusable block entries"):
        read_blocks(write_json(tmp_path / "b.json", [{"number": "0x1"}]))


def test_the_decoder_needs_no_abi_library():
    code = (
        "import sys, cctx_research.ingest.evm.logs; "
        "assert not {'eth_abi', 'eth_utils', 'eth_hash'} & set(sys.modules), sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@given(st.lists(st.binary(max_size=70), max_size=20))
def test_hex_columns_decode_like_bytes_fromhex(values):
    texts = ["0x" + v.hex() for v in values]
    col = hex_to_bytes(pa.array(texts, pa.large_string()))
    assert col.ok.all()
    for i, v in enumerate(values):
        start = col.starts[i]
        assert bytes(col.buffer[start : start + col.lengths[i]]) == v


@given(st.lists(st.one_of(st.none(), st.text(max_size=12)), max_size=20))
def test_hex_columns_flag_what_bytes_fromhex_rejects(texts):
    def valid(t):
        if t is None or t[:2].lower() != "0x" or not t.isascii():
            return False
        try:
            bytes.fromhex(t[2:])
        except ValueError:
            return False
        return " " not in t and len(t) % 2 == 0

    col = hex_to_bytes(pa.array(texts, pa.large_string()))
    assert col.ok.tolist() == [valid(t) for t in texts]


@pytest.mark.parametrize(
    ("name", "blocks"),
    [
        ("getlogs_list.json", None),
        ("getlogs_response.json", None),
        ("getlogs_responses.json", None),
        ("getlogs.jsonl", None),
        ("getlogs_no_time.jsonl", "blocks_rpc.json"),
        ("cryo_logs.parquet", "cryo_blocks.parquet"),
        ("cryo_logs.csv", "cryo_blocks.csv"),
    ],
)
def test_committed_fixtures_decode(name, blocks):
    """The small files under tests/fixtures/evm (rewrite with python tests/ingest/logs.py)."""
    logs = fixture_logs()
    times = read_blocks(FIXTURES / blocks) if blocks else None
    decoded = decode_logs(read_logs(FIXTURES / name), chain="ethereum", blocks=times)
    assert decoded.bad.empty
    assert decoded.counts["missing_times"] == 0
    for log in logs:
        row = found(decoded, log)
        assert row["contract"] == log.address
        assert row["domain"] == 0
        assert row["timestamp"] == pd.Timestamp(log.block_timestamp, unit="s", tz="UTC")
        for column, value in log.expected.items():
            assert same(row[column], value), (name, log.event, column)


@given(st.lists(st.tuples(st.binary(max_size=40), st.booleans()), max_size=12), st.data())
def test_hex_slices_cut_the_right_bytes(items, data):
    texts = ["0x" + (v.hex().upper() if upper else v.hex()) for v, upper in items]
    col = hex_to_bytes(pa.array(texts, pa.large_string()))
    cuts = [data.draw(st.tuples(st.integers(0, len(v)), st.integers(0, len(v)))) for v, _ in items]
    starts = np.array([col.starts[i] + min(a, b) for i, (a, b) in enumerate(cuts)], dtype=np.int64)
    lengths = np.array([abs(a - b) for a, b in cuts], dtype=np.int64)
    got = hex_slices(col.text, starts, lengths).to_pylist()
    want = [
        "0x" + v[min(a, b) : max(a, b)].hex() for (v, _), (a, b) in zip(items, cuts, strict=True)
    ]
    assert got == want
