"""Figure 9: the actor analyses on a large ledger, against a bare group-by in the same run.

Run::

    .venv/bin/python benchmarks/actors.py            # 10M transfers (several minutes)
    .venv/bin/python benchmarks/actors.py --quick    # 200k transfers

The ledger is synthetic (made here, never committed): 30 days, six chains,
200k depositors, 1M recipients, 40 relayers, a tenth of depositors'
transfers coming back within a day (round trips), V1 and V2, hook data on a
twentieth of V2 burns; only the columns the analyses read are built.

Each analysis runs on a pandas ledger and on a DuckDB relation of the same
data, and is compared with the bare group-by a researcher would write for
the same grouping, in the same engine, in the same run (best of
``--repeat``, interleaved):

- ``actors.relayers(by="route")`` vs ``groupby([route, relayer])`` size and sum;
- ``actors.integrators()`` vs ``groupby(message_sender)`` size and sum;
- ``movements.rebalancing_share()`` vs ``groupby([message_sender, route])`` size and sum;
- ``movements.dedupe()`` vs ``groupby(mint_recipient)`` size and sum.

The analyses do more than the group-by (medians, shares, labels, halves,
round-trip and continuation matching); the target is a ratio of 1.5.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import Row, machine, table  # noqa: E402

from cctx_research import schema  # noqa: E402
from cctx_research.analysis import actors, movements  # noqa: E402

TARGET = 1.5
DAYS = 30
DOMAINS = np.array([0, 1, 2, 3, 6, 7])


def _pool(prefix: int, n: int) -> pd.arrays.ArrowStringArray:
    return pd.array([f"0x{prefix:08x}{k:032x}" for k in range(n)], dtype=schema.STRING)


def generate(n: int, seed: int = 5) -> pd.DataFrame:
    """A ledger of ``n`` transfers with the columns the actor analyses read."""
    rng = np.random.default_rng(seed)
    senders, recipients = _pool(0xA0, 200_000), _pool(0xB0, 1_000_000)
    relayers = _pool(0xC0, 40)
    src = rng.integers(0, len(DOMAINS), n)
    dst = (src + rng.integers(1, len(DOMAINS), n)) % len(DOMAINS)
    sender = rng.integers(0, len(senders), n)
    burn = np.sort(rng.integers(0, DAYS * 86_400, n)) * 1_000_000_000
    back = rng.random(n) < 0.05  # a return leg: the previous row's sender, route reversed
    prev = np.maximum(np.arange(n) - 1, 0)
    sender[back] = sender[prev[back]]
    src[back], dst[back] = dst[prev[back]], src[prev[back]]
    start = pd.Timestamp("2025-01-01", tz="UTC").value
    latency = rng.integers(20, 1_800, n) * 1_000_000_000
    minted = rng.random(n) < 0.995
    version = np.where(rng.random(n) < 0.4, 2, 1)
    hook = np.where((version == 2) & (rng.random(n) < 0.05), "0x01020304", "0x")
    mint = pd.to_datetime(start + burn + latency, utc=True).astype(schema.TIMESTAMP)
    frame = pd.DataFrame(
        {
            "transfer_id": pd.array(np.arange(n).astype(str), dtype=schema.STRING),
            "source_domain": DOMAINS[src],
            "destination_domain": DOMAINS[dst],
            "amount_raw": (np.round(rng.lognormal(6, 2.5, n) * 1e6) + 1).astype("int64"),
            "burn_timestamp": pd.to_datetime(start + burn, utc=True).astype(schema.TIMESTAMP),
            "mint_timestamp": mint.where(minted),
            "burn_tx_hash": pd.array(np.full(n, "0x1", dtype=object), dtype=schema.STRING),
            "burn_block": np.arange(n, dtype="int64"),
            "message_sender": senders.take(sender),
            "mint_recipient": recipients.take(rng.integers(0, len(recipients), n)),
            "destination_caller": pd.array(
                np.full(n, "0x" + "0" * 40, dtype=object), dtype=schema.STRING
            ),
            "cctp_version": pd.array(version, dtype=schema.NULLABLE_INT),
            "hook_data": pd.array(hook, dtype=schema.STRING).astype(schema.STRING),
            "fee_raw": pd.array(np.where(version == 2, 0, -1), dtype=schema.NULLABLE_INT),
            "relayer": relayers.take(rng.integers(0, len(relayers), n)),
        }
    )
    frame.loc[~minted, "relayer"] = pd.NA
    frame["fee_raw"] = frame["fee_raw"].where(frame["fee_raw"] >= 0)
    return frame


def _bare_pandas(ledger: pd.DataFrame, keys: list[str]) -> Callable[[], Any]:
    return lambda: ledger.groupby(keys, sort=False, observed=True)["amount_raw"].agg(
        ["size", "sum"]
    )


def _bare_duckdb(con: Any, keys: list[str]) -> Callable[[], Any]:
    cols = ", ".join(keys)
    query = f"SELECT {cols}, count(*) AS n, sum(amount_raw) AS s FROM ledger GROUP BY {cols}"
    return lambda: con.sql(query).df()


CASES: list[tuple[str, Callable[[Any], Any], list[str]]] = [
    (
        "actors.relayers by route",
        lambda t: actors.relayers(t, by="route"),
        ["source_domain", "destination_domain", "relayer"],
    ),
    ("actors.integrators", lambda t: actors.integrators(t), ["message_sender"]),
    (
        "movements.rebalancing_share",
        lambda t: movements.rebalancing_share(t),
        ["message_sender", "source_domain", "destination_domain"],
    ),
    ("movements.dedupe", lambda t: movements.dedupe(t), ["mint_recipient"]),
]


def best_pair(fn: Callable[[], Any], base: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Best time of each, run in turn so a change in the machine's load moves both."""
    times, bases = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        base()
        bases.append(time.perf_counter() - t)
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), min(bases)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200k transfers instead of 10M")
    parser.add_argument("--rows", type=int, default=None, help="how many transfers")
    parser.add_argument("--repeat", type=int, default=2, help="interleaved runs of each (best)")
    parser.add_argument("--engines", default="pandas,duckdb", help="comma-separated engines")
    args = parser.parse_args(argv)
    n = args.rows or (200_000 if args.quick else 10_000_000)
    t = time.perf_counter()
    ledger = generate(n)
    print(f"  generated {n:,} transfers in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    rows: list[Row] = []
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for engine in engines:
        con = None
        if engine == "duckdb":
            import duckdb

            con = duckdb.connect()
            con.register("ledger", ledger)
            data: Any = con.table("ledger")
        elif engine == "pandas":
            data = ledger
        else:
            raise SystemExit(f"unknown engine {engine!r}; use pandas or duckdb")
        for name, fn, keys in CASES:
            if name == "movements.dedupe" and engine != "pandas":
                continue  # dedupe returns the pandas ledger's rows: pandas only
            base = _bare_pandas(ledger, keys) if con is None else _bare_duckdb(con, keys)
            value, baseline = best_pair(lambda fn=fn, data=data: fn(data), base, args.repeat)
            ratio = value / baseline
            row = Row(
                f"9 {name} vs bare groupby ({engine})",
                value,
                baseline,
                "s",
                f"<= {TARGET:.1f}",
                ratio <= TARGET,
                f"{n:,} transfers; best of {args.repeat}, interleaved",
            )
            print(f"  {row.figure}: {value:.2f} s vs {baseline:.2f} s", file=sys.stderr)
            rows.append(row)
        if con is not None:
            con.close()
    print(table(rows))
    print(f"\n{machine()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
