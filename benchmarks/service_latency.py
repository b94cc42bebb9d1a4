"""Latency of the service's store at 1M transfers, next to a raw numpy baseline.

Builds the synthetic sample at ``per_day=33_334`` (about 1M transfers over 30
days), builds a :class:`~cctx_research.service.store.Store` on it, and times
in-process calls of each operation. Next to each, the same query done with
bare numpy on arrays this script builds itself (sorted times, prefix sums,
sorted hash prefixes, a CSR recipient index, sender codes): what the query
costs with no validation, no clock, and no JSON-ready records. Both are
measured in this run, so the ratio is meaningful on any machine.

Run::

    .venv/bin/python benchmarks/service_latency.py [--per-day 33334] [--as-of 2024-07-01]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from cctx_research.service.sample import generate
from cctx_research.service.store import Store

NS = 1_000_000_000
TARGETS_MS = {
    "hash lookup": 5,
    "received page": 20,
    "mint page": 25,
    "volume 30 days": 50,
    "top senders 30 days": 300,
}


def timed(fn: Callable[[int], object], n: int) -> np.ndarray:
    """Milliseconds of ``n`` calls ``fn(i)`` (after a few warm-up calls)."""
    for i in range(min(3, n)):
        fn(i)
    out = np.empty(n)
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        out[i] = (time.perf_counter() - t) * 1000
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-day", type=int, default=33_334)
    parser.add_argument("--as-of", default="2024-07-01")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)

    t = time.perf_counter()
    ledger = generate(args.as_of, per_day=args.per_day)
    t_gen = time.perf_counter() - t
    t = time.perf_counter()
    store = Store(ledger, clock=args.as_of)
    t_build = time.perf_counter() - t
    clock = pd.Timestamp(args.as_of, tz="UTC")
    end = int(clock.value // NS)
    start = end - 30 * 86_400
    print(f"ledger: {len(ledger):,} transfers (generated in {t_gen:.1f} s); "
          f"store built in {t_build:.1f} s")  # fmt: skip

    # ---- raw numpy arrays for the baselines (built here, not the store's)
    burn_s = (ledger["burn_timestamp"].astype("int64") // NS).to_numpy()
    order = np.argsort(burn_s, kind="stable")
    burn_s = burn_s[order]
    amount = ledger["amount_raw"].to_numpy()[order]
    burn_cum = np.concatenate([[0], np.cumsum(amount)])
    mint_ts = ledger["mint_timestamp"]
    minted = mint_ts.notna().to_numpy()
    mint_s_all = (mint_ts.fillna(pd.Timestamp(0, tz="UTC")).astype("int64") // NS).to_numpy()
    m_order = np.argsort(mint_s_all[minted], kind="stable")
    mint_s = mint_s_all[minted][m_order]
    mint_cum = np.concatenate([[0], np.cumsum(ledger["amount_raw"].to_numpy()[minted][m_order])])
    sender_codes, _ = pd.factorize(ledger["message_sender"].iloc[order])
    amount_f = amount.astype(np.float64)
    rcpt_codes, rcpt_uniques = pd.factorize(ledger["mint_recipient"].iloc[order], sort=True)
    rcpt_rows = np.argsort(rcpt_codes, kind="stable")
    rcpt_off = np.concatenate([[0], np.cumsum(np.bincount(rcpt_codes))])
    hashes = ledger["burn_tx_hash"].to_numpy(dtype=object)
    prefixes = np.array([int(h[2:18], 16) for h in hashes], dtype=np.uint64)
    p_sorted = np.sort(prefixes)

    # ---- inputs: random hashes, recipients (by frequency), pages, windows
    n_hash = 2000
    pick = rng.integers(0, len(ledger), n_hash)
    some_mints = ledger["mint_tx_hash"].dropna().to_numpy(dtype=object)
    lookup = [hashes[k] if i % 2 else some_mints[k % len(some_mints)] for i, k in enumerate(pick)]
    lookup_prefix = np.array([int(h[2:18], 16) for h in lookup], dtype=np.uint64)
    recipients = ledger["mint_recipient"].to_numpy(dtype=object)[rng.integers(0, len(ledger), 500)]
    recipient_codes = np.searchsorted(np.asarray(rcpt_uniques, dtype=object), recipients)
    pages = rng.integers(1, 200, 500)
    shifts = rng.integers(0, 86_400, 2000)

    def b_hash(i: int) -> object:
        j = np.searchsorted(p_sorted, lookup_prefix[i])
        return p_sorted[j] == lookup_prefix[i]

    def b_received(i: int) -> object:
        c = recipient_codes[i]
        rows = rcpt_rows[rcpt_off[c] : rcpt_off[c + 1]]
        ts = burn_s[rows]
        keep = rows[(ts >= start) & (ts <= end)]
        return keep[np.argsort(burn_s[keep], kind="stable")][:100]

    def b_mints(i: int) -> object:
        a = np.searchsorted(mint_s, start)
        b = np.searchsorted(mint_s, end, side="right")
        lo = min(a + (pages[i] - 1) * 100, b)
        return m_order[lo : min(lo + 100, b)]

    def b_volume(i: int) -> object:
        s, e = start - shifts[i], end - shifts[i]
        ba, bb = np.searchsorted(burn_s, [s, e + 1])
        ma, mb = np.searchsorted(mint_s, [s, e + 1])
        return burn_cum[bb] - burn_cum[ba], mint_cum[mb] - mint_cum[ma]

    def b_top(i: int) -> object:
        a, b = np.searchsorted(burn_s, [start, end + 1])
        vol = np.bincount(sender_codes[a:b], weights=amount_f[a:b])
        cnt = np.bincount(sender_codes[a:b])
        top = np.argpartition(-vol, 100)[:100]
        return top[np.argsort(-vol[top])], cnt[top]

    cases = [
        ("hash lookup", n_hash, lambda i: store.transaction(lookup[i]), b_hash),
        ("received page", 500, lambda i: store.received(recipients[i], start, end), b_received),
        ("mint page", 500, lambda i: store.mints(start, end, page=int(pages[i])), b_mints),
        (
            "volume 30 days",
            2000,
            lambda i: store.volume(start - int(shifts[i]), end - int(shifts[i])),
            b_volume,
        ),
        ("top senders 30 days", 30, lambda i: store.top_senders(start, end, limit=100), b_top),
    ]
    head = (f"{'operation':<21} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'target':>7} "
            f"{'raw p50':>8} {'raw p99':>8} {'p50 ratio':>9}  ok")  # fmt: skip
    print(head)
    print("-" * len(head))
    for name, n, call, base in cases:
        got = timed(call, n)
        raw = timed(base, n)
        p50, p99 = np.percentile(got, [50, 99])
        r50, r99 = np.percentile(raw, [50, 99])
        target = TARGETS_MS[name]
        print(
            f"{name:<21} {n:>5} {p50:>8.3f} {p99:>8.3f} {target:>7} {r50:>8.3f} {r99:>8.3f} "
            f"{p50 / r50:>8.1f}x  {'yes' if p99 <= target else 'NO'}"
        )


if __name__ == "__main__":
    main()
