"""Figure 6: the service at 1M transfers, per operation and under load.

Part of the suite (``benchmarks/run.py`` imports :func:`rows`); run alone it
prints the same rows::

    .venv/bin/python benchmarks/service_latency.py [--quick]

Per operation, in-process calls of the :class:`~cctx_research.service.store.Store`
(p50 and p99 against the targets of the service issue), next to the same
query done with bare numpy on arrays built here (sorted times, prefix sums,
sorted hash prefixes, a CSR recipient index, sender codes): what the query
costs with no validation, no clock and no JSON-ready records.

Under load, 8 concurrent clients (threads, one ``requests.Session`` each)
send a fixed mix of the five operations to ``cctx-research serve`` in its own
process for a bounded time; the baseline is the same mix through the WSGI
app called in-process, one at a time (the server's work without HTTP).
"""

from __future__ import annotations

import io
import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np
import pandas as pd

NS = 1_000_000_000
TARGETS_MS = {
    "hash lookup": 5,
    "received page": 20,
    "mint page": 25,
    "volume 30 days": 50,
    "top senders 30 days": 300,
}
CLIENTS = 8


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


class Inputs:
    """Random but reproducible arguments, and the raw numpy baseline of each operation."""

    def __init__(self, ledger: pd.DataFrame, as_of: pd.Timestamp, *, seed: int = 1) -> None:
        rng = np.random.default_rng(seed)
        self.end = int(as_of.value // NS)
        self.start = self.end - 30 * 86_400
        burn_s = (ledger["burn_timestamp"].astype("int64") // NS).to_numpy()
        order = np.argsort(burn_s, kind="stable")
        self.burn_s = burn_s[order]
        amount = ledger["amount_raw"].to_numpy()[order]
        self.burn_cum = np.concatenate([[0], np.cumsum(amount)])
        mint_ts = ledger["mint_timestamp"]
        minted = mint_ts.notna().to_numpy()
        mint_all = (mint_ts.fillna(pd.Timestamp(0, tz="UTC")).astype("int64") // NS).to_numpy()
        self.m_order = np.argsort(mint_all[minted], kind="stable")
        self.mint_s = mint_all[minted][self.m_order]
        self.mint_cum = np.concatenate(
            [[0], np.cumsum(ledger["amount_raw"].to_numpy()[minted][self.m_order])]
        )
        self.sender_codes, _ = pd.factorize(ledger["message_sender"].iloc[order])
        self.amount_f = amount.astype(np.float64)
        rcpt_codes, rcpt_uniques = pd.factorize(ledger["mint_recipient"].iloc[order], sort=True)
        self.rcpt_rows = np.argsort(rcpt_codes, kind="stable")
        self.rcpt_off = np.concatenate([[0], np.cumsum(np.bincount(rcpt_codes))])
        # the store's uint64 prefix index covers 0x-hex hashes; the few others
        # (Solana signatures in base58) sit in a dict beside it
        hashes = ledger["burn_tx_hash"].to_numpy(dtype=object)
        hashes = np.array([h for h in hashes if h.startswith("0x")], dtype=object)
        self.p_sorted = np.sort(np.array([int(h[2:18], 16) for h in hashes], dtype=np.uint64))

        n_hash = 2000
        pick = rng.integers(0, len(ledger), n_hash)
        mints = ledger["mint_tx_hash"].dropna().to_numpy(dtype=object)
        mints = np.array([h for h in mints if h.startswith("0x")], dtype=object)
        self.hashes = [
            hashes[k % len(hashes)] if i % 2 else mints[k % len(mints)]
            for i, k in enumerate(pick)
        ]
        self.hash_prefix = np.array([int(h[2:18], 16) for h in self.hashes], dtype=np.uint64)
        self.recipients = ledger["mint_recipient"].to_numpy(dtype=object)[
            rng.integers(0, len(ledger), 500)
        ]
        self.recipient_codes = np.searchsorted(
            np.asarray(rcpt_uniques, dtype=object), self.recipients
        )
        n_pages = max(1, min(200, int(minted.sum()) // 100))
        self.pages = rng.integers(1, n_pages + 1, 500)
        self.shifts = rng.integers(0, 86_400, 2000)

    def b_hash(self, i: int) -> object:
        j = np.searchsorted(self.p_sorted, self.hash_prefix[i])
        return self.p_sorted[min(j, len(self.p_sorted) - 1)] == self.hash_prefix[i]

    def b_received(self, i: int) -> object:
        c = self.recipient_codes[i]
        rows = self.rcpt_rows[self.rcpt_off[c] : self.rcpt_off[c + 1]]
        ts = self.burn_s[rows]
        keep = rows[(ts >= self.start) & (ts <= self.end)]
        return keep[np.argsort(self.burn_s[keep], kind="stable")][:100]

    def b_mints(self, i: int) -> object:
        a = np.searchsorted(self.mint_s, self.start)
        b = np.searchsorted(self.mint_s, self.end, side="right")
        lo = min(a + (self.pages[i] - 1) * 100, b)
        return self.m_order[lo : min(lo + 100, b)]

    def b_volume(self, i: int) -> object:
        s, e = self.start - self.shifts[i], self.end - self.shifts[i]
        ba, bb = np.searchsorted(self.burn_s, [s, e + 1])
        ma, mb = np.searchsorted(self.mint_s, [s, e + 1])
        return self.burn_cum[bb] - self.burn_cum[ba], self.mint_cum[mb] - self.mint_cum[ma]

    def b_top(self, i: int) -> object:
        a, b = np.searchsorted(self.burn_s, [self.start, self.end + 1])
        vol = np.bincount(self.sender_codes[a:b], weights=self.amount_f[a:b])
        cnt = np.bincount(self.sender_codes[a:b])
        top = np.argpartition(-vol, min(100, len(vol) - 1))[:100]
        return top[np.argsort(-vol[top])], cnt[top]

    def request(self, i: int) -> tuple[str, dict[str, Any]]:
        """The ``i``-th request of the load mix: (operation, JSON body)."""
        window = {"startDate": str(self.start), "endDate": str(self.end)}
        kind = i % 20
        if kind == 19:
            return "stats-senders", {**window, "limit": 100}
        if kind % 4 == 0:
            return "transactions-txHash", {"txHash": self.hashes[i % len(self.hashes)]}
        if kind % 4 == 1:
            return "transactions-address-recipient", {
                **window, "address": self.recipients[i % len(self.recipients)]
            }  # fmt: skip
        if kind % 4 == 2:
            return "transactions-mint", {
                **window, "page": int(self.pages[i % len(self.pages)]), "limit": 100
            }  # fmt: skip
        shift = int(self.shifts[i % len(self.shifts)])
        return "transactions-volume", {
            "startDate": str(self.start - shift), "endDate": str(self.end - shift)
        }  # fmt: skip


def latency(store: Any, inputs: Inputs, *, quick: bool) -> list[dict[str, Any]]:
    """p50/p99 per operation, in-process, next to the raw numpy baseline."""
    s, e = inputs.start, inputs.end
    scale = 10 if quick else 1
    cases = [
        ("hash lookup", 2000, lambda i: store.transaction(inputs.hashes[i]), inputs.b_hash),
        ("received page", 500, lambda i: store.received(inputs.recipients[i], s, e),
         inputs.b_received),
        ("mint page", 500, lambda i: store.mints(s, e, page=int(inputs.pages[i])),
         inputs.b_mints),
        ("volume 30 days", 2000,
         lambda i: store.volume(s - int(inputs.shifts[i]), e - int(inputs.shifts[i])),
         inputs.b_volume),
        ("top senders 30 days", 30, lambda i: store.top_senders(s, e, limit=100), inputs.b_top),
    ]  # fmt: skip
    out = []
    for name, n, call, base in cases:
        n = max(5, n // scale)
        got, raw = timed(call, n), timed(base, n)
        p50, p99 = np.percentile(got, [50, 99])
        r50, r99 = np.percentile(raw, [50, 99])
        out.append({"operation": name, "n": n, "p50": p50, "p99": p99, "raw_p50": r50,
                    "raw_p99": r99, "target": TARGETS_MS[name]})  # fmt: skip
    return out


def call_app(app: Any, operation: str, body: dict[str, Any]) -> bytes:
    """One POST of an operation through the WSGI app itself, with no HTTP: the raw reply."""
    from cctx_research.config import DEMO_API_KEY, DEMO_PROJECT_ID

    payload = json.dumps(body).encode()
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": f"/rest/{DEMO_PROJECT_ID}/{operation}",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(payload)),
        "HTTP_X_API_KEY": DEMO_API_KEY,
        "wsgi.input": io.BytesIO(payload),
    }
    return b"".join(app(environ, lambda status, headers: None))


def in_process_rate(app: Any, inputs: Inputs, seconds: float) -> float:
    """Requests per second of the load mix through the WSGI app, one at a time, no HTTP."""
    done, i = 0, 0
    stop = time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < stop:
        call_app(app, *inputs.request(i))
        done += 1
        i += 1
    return done / (time.perf_counter() - started)


def load(url: str, inputs: Inputs, seconds: float) -> dict[str, Any]:
    """``CLIENTS`` threads sending the mix over loopback for ``seconds``."""
    import requests

    from cctx_research.config import DEMO_API_KEY, DEMO_PROJECT_ID

    counts = [0] * CLIENTS
    errors = [0] * CLIENTS
    latencies: list[list[float]] = [[] for _ in range(CLIENTS)]
    start_gate = threading.Barrier(CLIENTS + 1)
    stop = threading.Event()

    def client(k: int) -> None:
        with requests.Session() as sess:
            start_gate.wait()
            i = k
            while not stop.is_set():
                operation, body = inputs.request(i)
                t = time.perf_counter()
                try:
                    reply = sess.post(
                        f"{url}/rest/{DEMO_PROJECT_ID}/{operation}",
                        json=body,
                        headers={"x-api-key": DEMO_API_KEY},
                        timeout=30,
                    )
                    ok = reply.status_code in (200, 404) and reply.json()["status"] in (200, 404)
                except (requests.RequestException, ValueError, KeyError):
                    ok = False
                latencies[k].append(time.perf_counter() - t)
                counts[k] += 1
                errors[k] += not ok
                i += CLIENTS

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(CLIENTS)]
    for t in threads:
        t.start()
    start_gate.wait()
    started = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(60)
    elapsed = time.perf_counter() - started
    lat = np.concatenate([np.array(x) for x in latencies]) * 1000
    return {
        "requests": sum(counts),
        "errors": sum(errors),
        "rate": sum(counts) / elapsed,
        "seconds": elapsed,
        "p50": float(np.percentile(lat, 50)),
        "p99": float(np.percentile(lat, 99)),
    }


def rows(
    ledger: pd.DataFrame,
    as_of: pd.Timestamp,
    *,
    quick: bool,
    log: TextIO = sys.stderr,
    served: Callable[..., Any] | None = None,
    per_day: int | None = None,
) -> list[Any]:
    """The figure-6 rows of the suite's table.

    ``served(per_day)`` is the suite's context manager running
    ``cctx-research serve`` in a subprocess; without it the load test is skipped.
    """
    from suite import Row

    from cctx_research.config import DEMO_API_KEY, DEMO_PROJECT_ID
    from cctx_research.service.app import make_app
    from cctx_research.service.store import Store

    n = f"{len(ledger):,} transfers"
    print(f"service at {n}...", file=log)
    store = Store(ledger, clock=as_of)
    inputs = Inputs(ledger, as_of)
    out = []
    for r in latency(store, inputs, quick=quick):
        out.append(Row(
            f"6 {r['operation']} p99 (in-process)", r["p99"], r["raw_p99"], "ms",
            f"p99 <= {r['target']} ms", r["p99"] <= r["target"],
            f"p50 {r['p50']:.2f} ms, raw numpy p50 {r['raw_p50']:.3f} ms; {n}, n={r['n']}",
        ))  # fmt: skip
    if served is not None and per_day is not None:
        # --quick proves the row (every operation asked, the errors counted), it does not
        # measure: a second of load, half a second of baseline
        seconds = 1.0 if quick else 15.0
        app = make_app(store, api_key=DEMO_API_KEY, project_id=DEMO_PROJECT_ID)
        base = in_process_rate(app, inputs, 0.5 if quick else 5.0)
        with served(per_day) as url:
            got = load(url, inputs, seconds)
        out.append(Row(
            f"6 throughput, {CLIENTS} clients over loopback", got["rate"], base, "req/s",
            "0 errors", got["errors"] == 0,
            f"{got['requests']:,} requests in {got['seconds']:.1f} s, {got['errors']} errors, "
            f"p50 {got['p50']:.1f} ms, p99 {got['p99']:.1f} ms; baseline: the same mix "
            "through the WSGI app in-process, one at a time",
        ))  # fmt: skip
    return out


def main() -> int:
    import argparse

    import suite

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    from cctx_research.service.sample import generate

    per_day = 1_000 if args.quick else suite.MILLION_PER_DAY
    ledger = generate(suite.AS_OF, per_day=per_day)
    found = rows(ledger, suite.AS_OF, quick=args.quick, served=suite.served, per_day=per_day)
    print(suite.table(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
