"""Figure 12: the actor analyses on a large ledger, against a group-by in the same run.

Run::

    .venv/bin/python benchmarks/actors.py                   # 10M transfers, pandas and DuckDB
    .venv/bin/python benchmarks/actors.py --engines duckdb  # one engine (each under 10 minutes)
    .venv/bin/python benchmarks/actors.py --quick           # 200k transfers

The ledger is synthetic (made here, never committed): 30 days, six chains,
200k depositors, 1M recipients, 40 relayers, a twentieth of transfers coming
back (the previous depositor, the route reversed: round trips), V1 and V2,
hook data on a twentieth of V2 burns, a twentieth of burns by labelled
integrators' contracts (Mayan FastMCTP, Circle Bridge Kit) and one transfer in
a hundred minted to a forwarding contract that burns it on within minutes (a
wrapped leg and its continuation); only the columns the analyses read are built.

Each analysis runs on a pandas ledger and on a DuckDB relation of the same
data, and is compared with the group-by a researcher would write for the same
question, in the same engine, in the same run (best of ``--repeat``,
interleaved):

- ``actors.relayers(by="route")``: per (route, relayer) of the minted
  transfers, count, sum of ``amount_raw`` and median of burn-to-mint seconds
  (the question asks each relayer's time to relay);
- ``actors.integrators()``: per depositor, count, sum and distinct routes
  (the question asks "volume, transfers and routes per integrator");
- ``movements.rebalancing_share()``: per (depositor, route), count and sum;
- ``movements.dedupe()``: per recipient, count and sum; on pandas *plus*
  the ledger filtered to the rows dedupe keeps (a boolean mask made before
  the timing), the two timed apart and added (a copy run right after a
  group-by also pays for the group-by's memory, up to twice the copy
  alone). Any pandas answer that is the ledger without some rows copies
  every column of the rows it keeps; the group-by alone makes no such copy.
  The detail column gives the ratio against the group-by alone too, and the
  time of the rule alone (``movements.continuations``). On DuckDB dedupe
  returns a relation of the kept rows (nothing copied); it is timed with a
  count and sum of them, against the group-by alone.

The detail column also gives the ratio against a bare count-and-sum over the
same keys where the question's group-by does more, and the CPU seconds of
the analysis and of the group-by (the process's, every thread: other work on a
shared machine moves them less than wall times). The analyses do more than
either (shares, labels, halves and versions, round-trip and continuation
matching); the target is a ratio of 1.5.
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
LABELLED = np.array(  # bundled labels (cctx_research.labels): Mayan FastMCTP, Circle Bridge Kit
    ["0xc1062b7c5dc8e4b1df9f200fe360cdc0ed6e7741", "0xb3fa262d0fb521cc93be83d87b322b8a23daf3f0"]
)


def _pool(prefix: int, n: int) -> pd.arrays.ArrowStringArray:
    return pd.array([f"0x{prefix:08x}{k:032x}" for k in range(n)], dtype=schema.STRING)


def generate(n: int, seed: int = 5) -> pd.DataFrame:
    """A ledger of ``n`` transfers with the columns the actor analyses read."""
    rng = np.random.default_rng(seed)
    senders, recipients = _pool(0xA0, 200_000), _pool(0xB0, 1_000_000)
    relayers, forwarders = _pool(0xC0, 40), _pool(0xD0, 20)
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
    amount = (np.round(rng.lognormal(6, 2.5, n) * 1e6) + 1).astype("int64")
    sender_col = senders.take(sender).to_numpy(dtype=object)
    labelled = rng.random(n) < 0.05
    sender_col[labelled] = LABELLED[rng.integers(0, len(LABELLED), int(labelled.sum()))]
    recipient_col = recipients.take(rng.integers(0, len(recipients), n)).to_numpy(dtype=object)
    # one transfer in a hundred minted to a forwarder (with a hook: wrapped), which burns
    # the first transfer at least a minute after that mint on toward another chain
    first = np.flatnonzero(minted & (rng.random(n) < 0.01))
    on = np.searchsorted(burn, burn[first] + latency[first] + 60_000_000_000)
    keep = on < n
    first, on = first[keep], on[keep]
    _, once = np.unique(on, return_index=True)
    first, on = first[once], on[once]
    keep = ~np.isin(on, first)
    first, on = first[keep], on[keep]
    via = forwarders.take(rng.integers(0, len(forwarders), len(first))).to_numpy(dtype=object)
    recipient_col[first], version[first] = via, 2
    hook[first] = "0x" + "ab" * 40
    sender_col[on], src[on] = via, dst[first]
    dst[on] = (src[on] + 1 + rng.integers(0, len(DOMAINS) - 1, len(on))) % len(DOMAINS)
    amount[on] = np.minimum(amount[on], amount[first])
    mint = pd.to_datetime(start + burn + latency, utc=True).astype(schema.TIMESTAMP)
    frame = pd.DataFrame(
        {
            "transfer_id": pd.array(np.arange(n).astype(str), dtype=schema.STRING),
            "source_domain": DOMAINS[src],
            "destination_domain": DOMAINS[dst],
            "amount_raw": amount,
            "burn_timestamp": pd.to_datetime(start + burn, utc=True).astype(schema.TIMESTAMP),
            "mint_timestamp": mint.where(minted),
            "burn_tx_hash": pd.array(np.full(n, "0x1", dtype=object), dtype=schema.STRING),
            "burn_block": np.arange(n, dtype="int64"),
            "message_sender": pd.array(sender_col, dtype=schema.STRING),
            "mint_recipient": pd.array(recipient_col, dtype=schema.STRING),
            "destination_caller": pd.array(
                np.full(n, "0x" + "0" * 40, dtype=object), dtype=schema.STRING
            ),
            "cctp_version": pd.array(version, dtype=schema.NULLABLE_INT),
            "hook_data": pd.array(hook, dtype=schema.STRING),
            "fee_raw": pd.array(np.where(version == 2, 0, -1), dtype=schema.NULLABLE_INT),
            "relayer": relayers.take(rng.integers(0, len(relayers), n)),
        }
    )
    frame.loc[~minted, "relayer"] = pd.NA
    frame["fee_raw"] = frame["fee_raw"].where(frame["fee_raw"] >= 0)
    return frame


def _pandas_count_sum(keys: list[str]) -> Callable[[pd.DataFrame], Any]:
    return lambda t: t.groupby(keys, sort=False, observed=True)["amount_raw"].agg(["size", "sum"])


def _pandas_relayers(t: pd.DataFrame) -> Any:
    latency = (t["mint_timestamp"] - t["burn_timestamp"]).dt.total_seconds()
    # unminted transfers have no relayer: the group-by drops them as null keys
    return (
        t.assign(latency_s=latency)
        .groupby(["source_domain", "destination_domain", "relayer"], sort=False, observed=True)
        .agg(
            mints=("amount_raw", "size"),
            volume_raw=("amount_raw", "sum"),
            median_relay_s=("latency_s", "median"),
        )
    )


def _pandas_integrators(t: pd.DataFrame) -> Any:
    route = t["source_domain"] * 64 + t["destination_domain"]
    return (
        t.assign(route=route)
        .groupby("message_sender", sort=False, observed=True)
        .agg(
            transfers=("amount_raw", "size"),
            volume_raw=("amount_raw", "sum"),
            routes=("route", "nunique"),
        )
    )


def _sql(select: str, keys: str, where: str = "") -> str:
    return f"SELECT {keys}, {select} FROM ledger {where} GROUP BY {keys}"


COUNT_SUM = "count(*) AS n, sum(amount_raw) AS s"
ROUTE = "source_domain, destination_domain"
Case = tuple[str, Callable[[Any], Any], Callable[[pd.DataFrame], Any], str, Any, Any]
CASES: list[Case] = [
    # name, analysis, pandas group-by, its DuckDB SQL, and the bare count-and-sum of both
    (
        "actors.relayers by route",
        lambda t: actors.relayers(t, by="route"),
        _pandas_relayers,
        _sql(
            f"{COUNT_SUM}, median(epoch(mint_timestamp) - epoch(burn_timestamp)) AS m",
            f"{ROUTE}, relayer",
            "WHERE mint_timestamp IS NOT NULL",
        ),
        _pandas_count_sum(["source_domain", "destination_domain", "relayer"]),
        _sql(COUNT_SUM, f"{ROUTE}, relayer"),
    ),
    (
        "actors.integrators",
        lambda t: actors.integrators(t),
        _pandas_integrators,
        _sql(
            f"{COUNT_SUM}, count(DISTINCT source_domain * 64 + destination_domain) AS r",
            "message_sender",
        ),
        _pandas_count_sum(["message_sender"]),
        _sql(COUNT_SUM, "message_sender"),
    ),
    (
        "movements.rebalancing_share",
        lambda t: movements.rebalancing_share(t),
        _pandas_count_sum(["message_sender", "source_domain", "destination_domain"]),
        _sql(COUNT_SUM, f"message_sender, {ROUTE}"),
        None,
        None,
    ),
    (
        "movements.dedupe",
        lambda t: movements.dedupe(t),
        _pandas_count_sum(["mint_recipient"]),
        _sql(COUNT_SUM, "mint_recipient"),
        None,
        None,
    ),
]


def _dedupe_counted(relation: Any) -> Any:
    """:func:`movements.dedupe` of a DuckDB relation, its kept rows counted and summed (the
    relation is lazy: without a query of it, nothing would be filtered)."""
    return movements.dedupe(relation).aggregate("count(*) AS n, sum(amount_raw) AS s").fetchall()


def _kept(ledger: pd.DataFrame) -> np.ndarray:
    """A mask of as many rows as :func:`movements.dedupe` keeps (the same rows)."""
    legs = movements.continuations(ledger)
    return ~ledger["transfer_id"].isin(legs["transfer_id"]).to_numpy()


def in_engine(con: Any, ledger: pd.DataFrame, pandas_fn: Any, sql: Any) -> Callable[[], Any]:
    """The group-by in the engine being measured: pandas, or DuckDB's SQL to a frame."""
    if con is None:
        return lambda: pandas_fn(ledger)
    return lambda: con.sql(sql).df()


def best_pairs(
    fn: Callable[[], Any], base: Callable[[], Any], repeat: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Best wall time of each, run in turn so a change in the machine's load moves both; and
    the best CPU seconds of each (the process's, every thread of DuckDB and numpy), which
    other work on a shared machine moves less."""
    times, bases, cpus, base_cpus = [], [], [], []
    for _ in range(repeat):
        c, t = time.process_time(), time.perf_counter()
        base()
        bases.append(time.perf_counter() - t)
        base_cpus.append(time.process_time() - c)
        c, t = time.process_time(), time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return (min(times), min(bases)), (min(cpus), min(base_cpus))


def best_pair(fn: Callable[[], Any], base: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Best wall time of each, run in turn (see :func:`best_pairs`)."""
    return best_pairs(fn, base, repeat)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200k transfers instead of 10M")
    parser.add_argument("--rows", type=int, default=None, help="how many transfers")
    parser.add_argument("--repeat", type=int, default=2, help="interleaved runs of each (best)")
    parser.add_argument("--engines", default="pandas,duckdb", help="comma-separated engines")
    args = parser.parse_args(argv)
    n = args.rows or (200_000 if args.quick else 10_000_000)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ("pandas", "duckdb")]
    if unknown:
        raise SystemExit(f"unknown engine(s) {unknown}; use pandas and/or duckdb")
    t = time.perf_counter()
    ledger = generate(n)
    print(f"  generated {n:,} transfers in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    rows: list[Row] = []
    for engine in engines:
        con = None
        if engine == "duckdb":
            import duckdb

            con = duckdb.connect()
            con.register("ledger", ledger)
            data: Any = con.table("ledger")
        else:
            data = ledger

        for name, fn, pandas_base, sql_base, pandas_bare, sql_bare in CASES:
            if name == "movements.dedupe" and engine != "pandas":
                # on DuckDB dedupe returns a relation of the kept rows: counted and summed
                fn = _dedupe_counted
            base = in_engine(con, ledger, pandas_base, sql_base)
            (value, baseline), (cpu, base_cpu) = best_pairs(
                lambda fn=fn, data=data: fn(data), base, args.repeat
            )
            detail = f"{n:,} transfers; best of {args.repeat}, interleaved"
            detail += f"; CPU {cpu:.2f} s vs {base_cpu:.2f} s ({cpu / max(base_cpu, 1e-9):.2f}x)"
            if name == "movements.dedupe" and engine == "pandas":
                # the baseline also filters the ledger to the rows dedupe keeps, timed apart:
                # a copy run right after a group-by pays for the group-by's memory too
                alone, kept = baseline, _kept(ledger)
                _, copy = best_pair(lambda: None, lambda kept=kept: ledger[kept], args.repeat)
                baseline = alone + copy
            ratio = value / baseline
            if pandas_bare is not None:
                bare_fn = in_engine(con, ledger, pandas_bare, sql_bare)
                _, bare = best_pair(lambda: None, bare_fn, args.repeat)
                detail += f"; {value / bare:.2f}x a bare count and sum ({bare:.2f} s)"
            if name == "movements.dedupe" and engine == "pandas":
                # the group-by alone (no copy of the kept rows), and the rule alone
                rule, _ = best_pair(
                    lambda: movements.continuations(ledger), lambda: None, args.repeat
                )
                detail += (
                    f"; baseline: group-by {alone:.2f} s + the ledger filtered to the"
                    f" {int(kept.sum()):,} rows kept {copy:.2f} s, timed apart;"
                    f" {value / alone:.2f}x the group-by alone; the rule alone"
                    f" (movements.continuations) {rule:.2f} s ({rule / alone:.2f}x)"
                )
            row = Row(
                f"12 {name} vs group-by ({engine})",
                value,
                baseline,
                "s",
                f"<= {TARGET:.1f}",
                ratio <= TARGET,
                detail,
            )
            print(f"  {row.figure}: {value:.2f} s vs {baseline:.2f} s; {detail}", file=sys.stderr)
            rows.append(row)
        if con is not None:
            con.close()
    print(table(rows))
    print(f"\n{machine()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
