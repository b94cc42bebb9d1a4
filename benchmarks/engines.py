"""Past one machine: the same analysis on pandas, Polars, DuckDB and Dask, in figures.

On a synthetic partitioned dataset written by this script (not committed),
at several sizes, each engine computes the flow matrix, the daily volume per
corridor and the top 100 senders with the toolkit's own functions. Each run
is a fresh process; its peak RSS (the whole process tree: Dask's workers
included) is sampled every 20 ms.

Figures, all against pandas loading the same data in the same run:

- peak RSS ratio (target for Dask at the largest size: <= 0.25);
- wall time ratio (target for Dask: <= 2);
- cost per row (seconds per million rows) at each size: flat means it scales.

Usage::

    python benchmarks/engines.py                   # 5M, 10M, 20M rows
    python benchmarks/engines.py --sizes 200000    # a quick run (the test suite's)
    python benchmarks/engines.py --keep DIR        # keep the datasets in DIR

Every engine's results are checked equal to pandas' before a figure is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ENGINES = ("pandas", "dask", "duckdb", "polars")
DAYS = 120
WORKERS = 2
WORKER_MEMORY = "1.5GiB"


# ----------------------------------------------------------------------------- data


def generate(root: Path, rows: int, *, seed: int = 11) -> None:
    """A transfers dataset of ``rows`` rows over DAYS days, written day by day."""
    from cctx_research import chains, schema
    from cctx_research.ingest import datasets
    from cctx_research.provenance import Provenance, attach

    rng = np.random.default_rng(seed)
    domains = np.array([0, 1, 2, 3, 6, 7])
    names = np.array([chains.chain_name(int(d)) for d in domains], dtype=object)
    senders = np.array([f"0x{0xA0000000 + k:040x}" for k in range(200_000)], dtype=object)
    recipients = np.array([f"0x{0xB0000000 + k:040x}" for k in range(1_000_000)], dtype=object)
    zero = "0x" + "00" * 20
    start = pd.Timestamp("2025-01-01", tz="UTC")
    per_day = rows // DAYS
    for day in range(DAYS):
        n = per_day + (rows - per_day * DAYS if day == DAYS - 1 else 0)
        src = rng.integers(0, len(domains), n)
        dst = (src + rng.integers(1, len(domains), n)) % len(domains)
        raw = np.round(rng.lognormal(6, 2.5, n) * 1e6).astype("int64") + 1
        lo = start + pd.Timedelta(days=day)
        stamps = lo.value + np.sort(rng.integers(0, 86_400, n)) * 1_000_000_000
        frame = pd.DataFrame(
            {
                "transfer_id": pd.array(
                    np.char.add(f"{day}_", np.arange(n).astype(str)), dtype=schema.STRING
                ),
                "timestamp": pd.to_datetime(stamps, utc=True).astype(schema.TIMESTAMP),
                "amount": raw / 1e6,
                "amount_raw": raw,
                "is_completed": np.ones(n, dtype=bool),
                "source_domain": domains[src],
                "destination_domain": domains[dst],
                "source_chain": schema.chain_categorical(names[src]),
                "destination_chain": schema.chain_categorical(names[dst]),
                "mint_recipient": pd.array(
                    recipients[(rng.random(n) ** 2 * len(recipients)).astype(int)],
                    dtype=schema.STRING,
                ),
                "message_sender": pd.array(
                    senders[(rng.random(n) ** 3 * len(senders)).astype(int)], dtype=schema.STRING
                ),
                "burn_token": pd.array(np.full(n, zero, dtype=object), dtype=schema.STRING),
                "destination_caller": pd.array(np.full(n, zero, dtype=object), dtype=schema.STRING),
                "destination_token_messenger": pd.array(
                    np.full(n, zero, dtype=object), dtype=schema.STRING
                ),
            }
        )
        window = (lo, lo + pd.Timedelta(days=1))
        datasets.write(attach(frame, Provenance(source="benchmark", window=window)), root)


# ----------------------------------------------------------------------------- one run


def _native(engine: str, root: Path):
    from cctx_research.ingest import datasets

    if engine == "pandas":
        return datasets.read(root), None
    if engine == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.execute("SET threads TO 2")
        return datasets.scan(root, engine="duckdb", connection=con), con
    if engine == "polars":
        return datasets.scan(root, engine="polars"), None
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=WORKERS,
        threads_per_worker=1,
        memory_limit=WORKER_MEMORY,
        processes=True,
        dashboard_address=None,
    )
    # On a real cluster: client = Client("tcp://scheduler:8786"), the rest unchanged
    client = Client(cluster)
    return datasets.scan(root, engine="dask"), (client, cluster)


def run_one(engine: str, root: Path) -> dict:
    """Load (or point at) the dataset and compute the three results; timed."""
    import warnings

    warnings.simplefilter("ignore")
    from cctx_research.analysis import addresses, flows, volumes

    t0 = time.perf_counter()
    data, handle = _native(engine, root)
    matrix = flows.matrix(data)
    daily = volumes.timeseries(data, freq="1D", by="corridor")
    top = addresses.top(data, role="sender", n=100)
    seconds = time.perf_counter() - t0
    if engine == "dask":
        handle[0].close()
        handle[1].close()
    return {
        "seconds": seconds,
        "matrix_total": float(matrix.to_numpy().sum()),
        "daily_rows": len(daily),
        "daily_count": int(daily["count"].sum()),
        "top": top["address"].astype(str).tolist()[:100],
        "top_volume_raw": int(top["volume_raw"].sum()),
    }


def measure(engine: str, root: Path) -> dict:
    """Run one engine in a fresh process; sample the process tree's RSS."""
    import psutil

    cmd = [sys.executable, __file__, "--one", engine, "--data", str(root)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    parent = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        total = 0
        try:
            for p in [parent, *parent.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    total += p.memory_info().rss
        except psutil.Error:
            pass
        peak = max(peak, total)
        time.sleep(0.02)
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"{engine} run failed with exit code {proc.returncode}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss"] = peak
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[5_000_000, 10_000_000, 20_000_000])
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--keep", default=None, metavar="DIR", help="write datasets here")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--data", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one, Path(args.data))))
        return 0
    if "pandas" not in args.engines:
        args.engines.insert(0, "pandas")
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="cctx-engines-"))
    print(f"engines benchmark: {os.cpu_count()} cores; Dask: LocalCluster of {WORKERS} workers, "
          f"{WORKER_MEMORY} each")
    header = (f"{'rows':>11} {'engine':<7} {'seconds':>8} {'s per 1M':>9} {'peak RSS MiB':>13} "
              f"{'RSS vs pandas':>14} {'time vs pandas':>15}")
    print(header)
    for rows in args.sizes:
        root = base / f"transfers-{rows}"
        if not (root / "_cctx.json").is_file():
            generate(root, rows)
        results = {engine: measure(engine, root) for engine in args.engines}
        want = results["pandas"]
        for engine, res in results.items():
            for key in ("daily_rows", "daily_count", "top", "top_volume_raw"):
                if res[key] != want[key]:
                    raise SystemExit(f"{engine} disagrees with pandas on {key} at {rows:,} rows")
            if not np.isclose(res["matrix_total"], want["matrix_total"], rtol=1e-9):
                raise SystemExit(f"{engine} disagrees with pandas on the flow matrix")
            print(
                f"{rows:>11,} {engine:<7} {res['seconds']:>8.2f} "
                f"{res['seconds'] / rows * 1e6:>9.3f} {res['peak_rss'] / 2**20:>13,.0f} "
                f"{res['peak_rss'] / want['peak_rss']:>14.2f} "
                f"{res['seconds'] / want['seconds']:>15.2f}",
                flush=True,
            )
    print("results equal to pandas' for every engine and size")
    return 0


if __name__ == "__main__":
    sys.exit(main())
