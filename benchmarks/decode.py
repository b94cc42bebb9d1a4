"""Figure 8: decoding CCTP event logs, vectorised, against a per-log eth-abi loop.

Run::

    .venv/bin/python benchmarks/decode.py            # 1M logs (a few minutes)
    .venv/bin/python benchmarks/decode.py --quick    # 20k logs, for the test suite

The logs: an even mix of the eight CCTP events (DepositForBurn,
MintAndWithdraw, MessageSent, MessageReceived; V1 and V2, hook data of
three lengths on V2 burns), each template encoded once with eth-abi from the
published signature; the copies vary the amount, nonce, depositor, tx
hash, block and log index by overwriting whole 32-byte words with valid
values, so every log is a correct encoding.

The baseline is the plain loop a researcher would write: for each log, look
its topic0 up, ``eth_abi.decode`` the indexed topics and the data into a
dict. It is timed on a subset (every k-th log) and scaled per log, and the
two are run in turn (``--repeat`` times, best of each), so a change in the
machine's load moves both; the
decoder is timed on all the logs, from the normalised log frame
(``read_logs``' output) to ``DecodedLogs``, and it does more (messages and
burn bodies decoded, every row checked, typed frames). The run checks that
both agree on the amounts, tokens and nonces of the subset.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from suite import Row, machine, table  # noqa: E402

from cctx_research.ingest.evm.events import BY_TOPIC0  # noqa: E402
from cctx_research.ingest.evm.frame import conform_logs  # noqa: E402
from cctx_research.ingest.evm.logs import decode_logs  # noqa: E402

TARGET = 0.10  # decoder time per log <= 1/10 of the loop's


def _templates() -> list[Any]:
    from ingest.logs import make_log, transfer_logs

    logs = transfer_logs(seed=7)
    rng = random.Random(11)
    token, depositor, messenger = "0x" + "a0" * 20, "0x" + "d0" * 20, "0x" + "e0" * 20
    for size in (0, 100):  # V2 burns with other hook lengths
        logs.append(
            make_log(
                "DepositForBurn",
                2,
                {
                    "burnToken": token,
                    "amount": 10**9,
                    "depositor": depositor,
                    "mintRecipient": bytes(12) + bytes.fromhex(depositor[2:]),
                    "destinationDomain": 3,
                    "destinationTokenMessenger": bytes(12) + bytes.fromhex(messenger[2:]),
                    "destinationCaller": bytes(32),
                    "maxFee": 0,
                    "minFinalityThreshold": 2000,
                    "hookData": rng.randbytes(size),
                },
                {},
                rng=rng,
                block_number=1,
                log_index=1,
            )
        )
    return logs


def _word(values: np.ndarray) -> np.ndarray:
    return np.array([f"{int(v):064x}" for v in values], dtype=object)


def generate(n: int, seed: int = 1) -> pd.DataFrame:
    """``n`` CCTP logs as the normalised log frame, built from eth-abi templates."""
    rng = np.random.default_rng(seed)
    templates = _templates()
    which = rng.integers(0, len(templates), n)
    topic0 = np.empty(n, dtype=object)
    topics = [np.full(n, None, dtype=object) for _ in range(3)]
    data = np.empty(n, dtype=object)
    amounts = rng.integers(1, 10**12, n)
    for t, log in enumerate(templates):
        rows = np.flatnonzero(which == t)
        if not len(rows):
            continue
        topic0[rows] = log.topics[0]
        spec = BY_TOPIC0[log.topics[0]]
        for j, param in enumerate(spec.indexed):
            values = np.full(len(rows), log.topics[j + 1], dtype=object)
            if param.name in ("nonce", "depositor") and param.type != "bytes32":
                values = "0x" + _word(rng.integers(1, 2**40, len(rows)))
            topics[j][rows] = values
        head = [p.name for p in spec.data]
        if "amount" in head:  # overwrite the amount word, keep the rest of the encoding
            k = 2 + 64 * head.index("amount")
            data[rows] = log.data[:k] + _word(amounts[rows]) + log.data[k + 64 :]
        else:
            data[rows] = log.data
    tx = np.array(
        ["0x" + h for h in (f"{int(a):032x}" * 2 for a in rng.integers(0, 2**62, n))], dtype=object
    )
    frame = pd.DataFrame(
        {
            "block_number": 20_000_000 + np.arange(n) // 8,
            "log_index": np.arange(n) % 8,
            "tx_hash": tx,
            "address": "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d",
            "topic0": topic0,
            "topic1": topics[0],
            "topic2": topics[1],
            "topic3": topics[2],
            "data": data,
            "block_timestamp": 1_717_200_000 + np.arange(n) // 8 * 12,
        }
    )
    return conform_logs(frame, source_file="generated")


def per_log_loop(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The baseline: eth_abi.decode each log's topics and data into a dict."""
    from eth_abi import decode

    out = []
    for topic0, t1, t2, t3, data in zip(
        frame["topic0"],
        frame["topic1"],
        frame["topic2"],
        frame["topic3"],
        frame["data"],
        strict=True,
    ):
        spec = BY_TOPIC0.get(topic0)
        if spec is None:
            continue
        row: dict[str, Any] = {"event": spec.name, "version": spec.version}
        for param, topic in zip(spec.indexed, (t1, t2, t3), strict=False):
            row[param.name] = decode([param.type], bytes.fromhex(topic[2:]))[0]
        values = decode([p.type for p in spec.data], bytes.fromhex(data[2:]))
        row.update(zip([p.name for p in spec.data], values, strict=True))
        out.append(row)
    return out


def _agree(frame: pd.DataFrame, loop: list[dict[str, Any]], decoded: Any) -> bool:
    """The decoder and the loop give the same amounts, tokens and nonces."""
    burns = decoded.burns.set_index(["tx_hash", "log_index"])
    mints = decoded.mints.set_index(["tx_hash", "log_index"])
    for (tx, index), row in zip(
        frame[["tx_hash", "log_index"]].itertuples(index=False), loop, strict=True
    ):
        key = (tx, index)
        if row["event"] == "DepositForBurn":
            got = burns.loc[key]
            if (
                int(got["amount_raw"]) != row["amount"]
                or got["burn_token"] != row["burnToken"].lower()
            ):
                return False
            if row["version"] == 1 and got["nonce"] != str(row["nonce"]):
                return False
        elif row["event"] == "MintAndWithdraw":
            got = mints.loc[key]
            if (
                int(got["amount_raw"]) != row["amount"]
                or got["mint_token"] != row["mintToken"].lower()
            ):
                return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20k logs instead of 1M")
    parser.add_argument("--logs", type=int, default=None, help="how many logs to decode")
    parser.add_argument("--repeat", type=int, default=2, help="interleaved runs of each (best)")
    args = parser.parse_args(argv)
    n = args.logs or (20_000 if args.quick else 1_000_000)
    every = max(1, n // (2_000 if args.quick else 50_000))
    t = time.perf_counter()
    frame = generate(n)
    print(f"  generated {n:,} logs in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    subset = frame.iloc[::every].reset_index(drop=True)

    # Interleaved, best of each: the machine's load moves both the same way.
    loop_times, times = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        loop = per_log_loop(subset)
        loop_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        decoded = decode_logs(frame)
        times.append(time.perf_counter() - t)
        assert decoded.counts["decoded"] == n, decoded.counts
        del decoded  # one result alive at a time
    loop_per_log = min(loop_times) / len(subset)
    decode_per_log = min(times) / n
    agree = _agree(subset, loop, decode_logs(subset))

    value, baseline = decode_per_log * 1e6, loop_per_log * 1e6
    rows = [
        Row(
            "8 decode_logs vs per-log eth-abi loop",
            value,
            baseline,
            "us/row",
            f"<= {TARGET:.2f}",
            value / baseline <= TARGET,
            f"{baseline / value:.1f}x faster; {n:,} logs in {min(times):.2f} s; loop timed "
            f"on {len(subset):,} (every {every}th) and scaled per log; best of "
            f"{args.repeat}, interleaved",
        ),
        Row(
            "8 decoder and loop agree",
            float(agree),
            None,
            "",
            "-",
            None,
            f"amounts, tokens, nonces of the {len(subset):,} looped logs",
        ),
    ]
    print(table(rows))
    print(f"\n{machine()}")
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
