"""Figure 10: linking V2 burns to their mints, against a bare pandas merge on the same key.

Run::

    .venv/bin/python benchmarks/linking.py            # 10M transfers (several minutes, ~20 GiB)
    .venv/bin/python benchmarks/linking.py --quick    # 200k transfers, for the test suite

The data: ``n`` V2 transfers as the decoder and :mod:`cctx_research.ingest.ledger.sides`
hand them to the linker, a *burns* table and an *arrivals* table (the mint
side: attested nonce, fee, mint time a few seconds to minutes later). Chains
are drawn from eight EVM domains, recipients and senders from pools of
2M and 500k addresses, amounts from a log-normal; 1% of the transfers repeat
the key of another (an app sending a fixed amount to one recipient), so the
linker's identical-transfer path runs too.

The baseline is the merge a researcher would write first,
``burns.merge(arrivals, on=CONTENT_KEY)``: it links nothing in time order,
dedupes nothing and builds no ids, so it is a floor. The linker is timed
from the two tables to the finished ledger (``linking.link``: dedupe, nonce
and content links, identical groups in time order, ids, tokens, sort).

Each side runs in its own process on the same data (same seed), twice
(best time); its peak memory is the highest RSS seen while it runs, less
the RSS before, sampled every 5 ms, the highest of the runs (a later run
starts with the pages Arrow's and the C allocator kept from the first, so
its rise undercounts).
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import Row, machine, table  # noqa: E402

from cctx_research import schema  # noqa: E402
from cctx_research.ingest.hexcodec import bytes_to_hex  # noqa: E402
from cctx_research.ingest.ledger import linking  # noqa: E402

TIME_TARGET = 2.0
MEMORY_TARGET = 2.0
_DOMAINS = np.array([0, 1, 2, 3, 6, 7, 10, 11])
_USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"


def _hex(rng: np.random.Generator, n: int, width: int) -> pd.Series:
    raw = rng.integers(0, 256, size=(n, width), dtype=np.uint8)
    return pd.Series(pd.array(bytes_to_hex(raw), dtype=schema.STRING))


def _pick(pool: pd.Series, index: np.ndarray) -> pd.Series:
    return pd.Series(pool.array.take(index))


def generate(n: int, seed: int = 9) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(burns, arrivals) of ``n`` V2 transfers; 1% share the key of another."""
    rng = np.random.default_rng(seed)
    recipients = _hex(rng, 2_000_000 if n > 1_000_000 else n, 20)
    senders = _hex(rng, 500_000 if n > 1_000_000 else max(n // 4, 1), 20)
    src = _DOMAINS[rng.integers(0, len(_DOMAINS), n)]
    dst = _DOMAINS[(np.searchsorted(_DOMAINS, src) + rng.integers(1, len(_DOMAINS), n))
                   % len(_DOMAINS)]
    recipient = rng.integers(0, len(recipients), n)
    sender = rng.integers(0, len(senders), n)
    amount = np.maximum(1, rng.lognormal(18, 2.5, n)).astype(np.int64)
    max_fee = np.where(rng.random(n) < 0.5, 0, amount // 10_000 + 1)
    repeat = rng.random(n) < 0.01  # identical transfers: the key of the transfer before
    for arr in (src, dst, recipient, sender, amount, max_fee):
        arr[1:][repeat[1:]] = arr[:-1][repeat[1:]]
    burn_time = pd.Timestamp("2026-11-01", tz="UTC").value + np.sort(
        rng.integers(0, 30 * 86_400 * 10**9, n)
    )
    mint_time = burn_time + rng.integers(8, 1_200, n) * 10**9
    token = pd.Series(pd.array([_USDC] * n, dtype=schema.STRING))
    hook = pd.Series(pd.array(["0x"] * n, dtype=schema.STRING))
    common = {
        "source_domain": src,
        "destination_domain": dst,
        "burn_token": token,
        "mint_recipient": _pick(recipients, recipient),
        "message_sender": _pick(senders, sender),
        "amount_raw": amount,
        "max_fee_raw": pd.array(max_fee, dtype=schema.NULLABLE_INT),
        "hook_data": hook,
        "cctp_version": pd.array(np.full(n, 2), dtype=schema.NULLABLE_INT),
    }
    stamp = lambda ns: pd.Series(pd.to_datetime(ns, utc=True)).astype(schema.TIMESTAMP)  # noqa: E731
    burns = pd.DataFrame(
        {
            **common,
            "burn_tx_hash": _hex(rng, n, 32),
            "burn_log_index": pd.array(rng.integers(0, 300, n), dtype=schema.NULLABLE_INT),
            "burn_block": rng.integers(20_000_000, 30_000_000, n),
            "burn_timestamp": stamp(burn_time),
            "min_finality_threshold": pd.array(np.full(n, 1000), dtype=schema.NULLABLE_INT),
        }
    )
    arrivals = pd.DataFrame(
        {
            **common,
            "mint_tx_hash": _hex(rng, n, 32),
            "mint_log_index": pd.array(rng.integers(0, 300, n), dtype=schema.NULLABLE_INT),
            "mint_block": rng.integers(20_000_000, 30_000_000, n),
            "mint_timestamp": stamp(mint_time),
            "nonce": _hex(rng, n, 32),
            "fee_raw": pd.array(max_fee // 2, dtype=schema.NULLABLE_INT),
            "finality_threshold_executed": pd.array(np.full(n, 1000), dtype=schema.NULLABLE_INT),
        }
    )
    order = rng.permutation(n)  # mints arrive in another order than burns
    return (
        linking.typed(burns, linking.BURN_COLUMNS),
        linking.typed(arrivals.iloc[order].reset_index(drop=True), linking.ARRIVAL_COLUMNS),
    )


def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _measure(run) -> tuple[float, int, object]:
    """(seconds, peak RSS above the start, result) of ``run()``, RSS sampled every 5 ms."""
    gc.collect()
    start = _rss()
    peak = [start]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.005):
            peak[0] = max(peak[0], _rss())

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    t = time.perf_counter()
    result = run()
    elapsed = time.perf_counter() - t
    done.set()
    watcher.join()
    peak[0] = max(peak[0], _rss())
    return elapsed, peak[0] - start, result


def worker(kind: str, n: int, repeat: int) -> dict:
    burns, arrivals = generate(n)
    if kind == "merge":
        key = list(linking.CONTENT_KEY)
        op = lambda: burns.merge(arrivals, on=key)  # noqa: E731
    else:
        op = lambda: linking.link([burns], [arrivals])  # noqa: E731
    times, peaks, summary = [], [], {}
    for _ in range(repeat):
        elapsed, peak, result = _measure(op)
        times.append(elapsed)
        peaks.append(peak)
        if kind == "link":
            ledger, counts = result
            summary = {k: counts[k] for k in ("content", "content_ambiguous", "pending",
                                              "mint_only")}
            summary["rows"] = len(ledger)
        else:
            summary = {"rows": len(result)}
        del result
        gc.collect()
    # the highest peak: a later run starts with the pages the allocators kept from the
    # first, so its rise above the RSS before undercounts what the operation needs
    return {"seconds": min(times), "peak": max(peaks), "peaks": peaks, **summary}


def _spawn(kind: str, n: int, repeat: int) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--worker", kind, "--transfers", str(n), "--repeat",
         str(repeat)],
        capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{kind} worker failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200k transfers instead of 10M")
    parser.add_argument("--transfers", type=int, default=None, help="how many transfers")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each (best)")
    parser.add_argument("--worker", choices=("link", "merge"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    n = args.transfers or (200_000 if args.quick else 10_000_000)
    if args.worker:
        print(json.dumps(worker(args.worker, n, args.repeat)))
        return 0
    merge = _spawn("merge", n, args.repeat)
    link = _spawn("link", n, args.repeat)
    linked = link["content"] + link["content_ambiguous"]
    rows = [
        Row(
            "10a link V2 burns to mints vs bare merge",
            link["seconds"],
            merge["seconds"],
            "s",
            f"<= {TIME_TARGET:.1f}",
            link["seconds"] / merge["seconds"] <= TIME_TARGET,
            f"{n:,} transfers; {linked:,} linked ({link['content_ambiguous']:,} among identical "
            f"ones), {link['pending']:,} pending, {link['mint_only']:,} mint-only; "
            f"the merge gave {merge['rows']:,} rows; best of {args.repeat}",
        ),
        Row(
            "10b peak memory of linking vs bare merge",
            link["peak"] / 2**20,
            merge["peak"] / 2**20,
            "MiB",
            f"<= {MEMORY_TARGET:.1f}",
            link["peak"] / max(merge["peak"], 1) <= MEMORY_TARGET,
            "highest RSS while it runs, less the RSS before (5 ms samples), own process each, "
            f"highest of {args.repeat} (runs: link "
            f"{', '.join(f'{p / 2**20:,.0f}' for p in link['peaks'])}, merge "
            f"{', '.join(f'{p / 2**20:,.0f}' for p in merge['peaks'])} MiB)",
        ),
    ]
    print(table(rows))
    print(f"\n{machine()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
