"""Figure 11: ``cctx_research.nodes.sync`` against the loop a researcher writes first.

Run::

    .venv/bin/python benchmarks/sync.py            # 200k blocks, 4,000 logs (about 4 minutes)
    .venv/bin/python benchmarks/sync.py --quick    # 20k blocks, 800 logs (under a minute)

200,000 blocks are about 4.6 days of Base (2 s blocks). The range is that
long so that sync sends enough requests for its ideal to mean something:
over 40,000 blocks it sends 6 or 7, and their ideal is a fraction of the one
round trip any sync needs.

The node is anvil (``make tools``) with Base's chain id, Circle's CCTP
contracts' addresses holding ``tests/evm_node/LogReplay.sol``, which replays
the logs of four real transfers (``tests/ingest/real.py``: a V2 and a V1 burn,
a V2 and a V1 mint; 8 logs) ``--copies`` times in one transaction every
``blocks / log-blocks`` blocks. Between the client and the node::

    client -> DelayProxy (RTT, benchmarks/delay_proxy.py) -> RangeLimited (counts) -> anvil

Each proxy runs in a process of its own (as in ``run.py``), so that neither
shares a GIL with the client. ``RangeLimited`` (``tests/evm_node/proxy.py``)
counts the HTTP requests that reach the node (a JSON-RPC batch is one) and,
in the second setting, refuses ``eth_getLogs`` over 2,000 blocks with
Alchemy's error text and strips ``blockTimestamp`` from the logs.

- **naive**: what XChainDataGen does and a researcher writes first:
  ``eth_getLogs`` in fixed 2,000-block chunks, one after another, then one
  ``eth_getBlockByNumber`` per distinct block holding a log, one request at
  a time, each a plain ``requests.post``. Run once at each RTT.
- **sync**: ``cctx_research.nodes.sync`` over the same blocks into a fresh
  temporary directory, with its defaults (best of ``--repeat``). Its logs are
  checked against the naive loop's (same count, same keys); a mismatch
  stops the run.
- **ideal**: the requests sync sent (counted by the proxy) x RTT / its most
  requests in flight (``max_workers``): every request one round trip,
  perfectly overlapped, no CPU.

Sync runs in two settings: the node as anvil answers (no range limit,
``eth_getLogs`` carries ``blockTimestamp``, so sync needs no header), and a
node capped at 2,000 blocks (a common provider limit, and the naive loop's
chunk) whose logs carry no ``blockTimestamp`` (as many nodes answer), where
sync learns the cap and asks the headers of the blocks holding logs in
JSON-RPC batches. The naive loop sends the same requests in both, so it is
timed once per RTT.
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import requests

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from suite import Row, cctp_logs, delayed, machine, stop, table  # noqa: E402

from cctx_research.nodes import sync  # noqa: E402
from cctx_research.nodes.engine import TOPICS, contracts_of  # noqa: E402

CHAIN, CHAIN_ID = "base", 8453
NAIVE_CHUNK = 2_000
RTTS_MS = (50, 150)


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _timed(label: str, fn: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    value = fn()
    _log(f"  {label}: {time.perf_counter() - started:.2f} s")
    return value


# ---------------------------------------------------------------------------
# the chain


def build(node: Any, *, blocks: int, log_blocks: int, copies: int) -> tuple[int, int]:
    """Fill ``blocks`` blocks with ``log_blocks`` evenly spaced ones holding logs; (first, last).

    One ``replay_many`` transaction a log block (automine: its own block), then
    ``anvil_mine`` of the gap in one call. Anvil runs with ``long_chain=True``:
    with its defaults, mining is quadratic in the chain's length.
    """
    logs = cctp_logs()
    _timed("install the CCTP contracts", lambda: node.install_cctp(contracts_of(CHAIN)))
    node.mine(1)
    first = node.head() + 1
    gap = blocks // log_blocks

    def fill() -> None:
        for _ in range(log_blocks):
            node.replay_many(logs, copies)
            node.mine(gap - 1)

    _timed(f"{log_blocks} replays of {len(logs) * copies} logs, {gap - 1} blocks mined after each",
           fill)  # fmt: skip
    last = node.head()
    node.mine(200)  # past the default confirmation depth: every synced block is final
    return first, last


# ---------------------------------------------------------------------------
# the counting (and, in one setting, limiting) proxy, in its own process


class Counter:
    """``RangeLimited`` in front of ``upstream`` in a subprocess: its URL, and its request count."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        assert proc.stdout is not None
        self.url = proc.stdout.readline().strip()

    @property
    def requests(self) -> int:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write("count\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())


@contextlib.contextmanager
def counting(upstream: str, cap: int | None, strip: bool) -> Iterator[Counter]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "counter", upstream,
           "--cap", str(cap or 10**12)] + (["--strip-times"] if strip else [])  # fmt: skip
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            cwd=ROOT)  # fmt: skip
    try:
        yield Counter(proc)
    finally:
        stop(proc)


def counter_worker(args: argparse.Namespace) -> None:
    """The proxy's process: prints its URL, then its request count for every line read."""
    from tests.evm_node.proxy import RangeLimited

    with RangeLimited(args.upstream, max_blocks=args.cap) as proxy:
        proxy.strip_times = args.strip_times
        print(proxy.url, flush=True)
        for _ in sys.stdin:
            print(proxy.requests, flush=True)


# ---------------------------------------------------------------------------
# the naive loop


def _post(url: str, method: str, params: list[Any]) -> Any:
    reply = requests.post(
        url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, timeout=60
    )
    reply.raise_for_status()
    body = reply.json()
    if body.get("error"):
        raise RuntimeError(f"{method}: {body['error']}")
    return body["result"]


def naive(url: str, first: int, last: int) -> dict[str, Any]:
    """eth_getLogs in fixed 2,000-block chunks, then eth_getBlockByNumber per block."""
    started = time.perf_counter()
    addresses = contracts_of(CHAIN)
    logs: list[dict[str, Any]] = []
    for lo in range(first, last + 1, NAIVE_CHUNK):
        hi = min(last, lo + NAIVE_CHUNK - 1)
        query = {"fromBlock": hex(lo), "toBlock": hex(hi), "address": addresses, "topics": [TOPICS]}
        logs += _post(url, "eth_getLogs", [query])
    times = {}
    for number in sorted({int(g["blockNumber"], 16) for g in logs}):
        header = _post(url, "eth_getBlockByNumber", [hex(number), False])
        times[number] = int(header["timestamp"], 16)
    return {
        "seconds": time.perf_counter() - started,
        "logs": logs,
        "blocks": len(times),
        "requests": -(-(last - first + 1) // NAIVE_CHUNK) + len(times),
    }


# ---------------------------------------------------------------------------
# sync


def synced(url: str, first: int, last: int, counter: Any, repeat: int) -> dict[str, Any]:
    """Best of ``repeat`` syncs, each into a fresh directory; its requests and logs."""
    import pandas as pd

    best: dict[str, Any] | None = None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="cctx-bench-sync-") as tmp:
            before = counter.requests
            started = time.perf_counter()
            result = sync(Path(tmp) / "cctp", {CHAIN: url}, start=first, end=last, progress=False)
            seconds = time.perf_counter() - started
            sent = counter.requests - before
            files = sorted((Path(tmp) / "cctp" / CHAIN / "logs").glob("*.parquet"))
            frame = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
        chain = result.chains[0]
        run = {
            "seconds": seconds,
            "fetch_seconds": chain.seconds,
            "requests": sent,
            "logs": chain.logs,
            "keys": set(zip(frame["block_number"].astype(int), frame["log_index"].astype(int),
                            strict=True)),
            "range": chain.range,
            "transfers": result.transfers,
        }  # fmt: skip
        _log(f"    sync: {seconds:.3f} s, {sent} requests, {chain.logs} logs")
        if best is None or seconds < best["seconds"]:
            best = run
    assert best is not None
    return best


def check(naive_run: dict[str, Any], sync_run: dict[str, Any]) -> None:
    """Stop the run when sync and the naive loop did not get the same logs."""
    keys = {(int(g["blockNumber"], 16), int(g["logIndex"], 16)) for g in naive_run["logs"]}
    if sync_run["logs"] != len(naive_run["logs"]) or sync_run["keys"] != keys:
        raise SystemExit(
            f"sync got {sync_run['logs']:,} logs ({len(sync_run['keys']):,} distinct), the naive "
            f"loop {len(naive_run['logs']):,} ({len(keys):,} distinct): the figures would "
            "compare different work"
        )


def figures(rtt_ms: int, naive_run: dict[str, Any], sync_run: dict[str, Any], *,
            label: str, letters: str, workers: int) -> list[Row]:  # fmt: skip
    rtt = rtt_ms / 1000
    ideal = sync_run["requests"] * rtt / workers
    value = sync_run["seconds"]
    return [
        Row(
            f"11{letters[0]} sync vs naive loop, {rtt_ms} ms RTT{label}", value,
            naive_run["seconds"], "s", "<= 0.10", value <= 0.1 * naive_run["seconds"],
            f"{sync_run['logs']:,} logs, {sync_run['requests']} requests (range now "
            f"{sync_run['range']:,}); naive: {naive_run['requests']:,} sequential requests "
            f"({NAIVE_CHUNK:,}-block eth_getLogs, then {naive_run['blocks']:,} "
            "eth_getBlockByNumber)",
        ),
        Row(
            f"11{letters[1]} sync vs ideal, {rtt_ms} ms RTT{label}", value, ideal, "s", "<= 1.5",
            value <= 1.5 * ideal,
            f"ideal: {sync_run['requests']} requests x {rtt_ms} ms / {workers} in flight; "
            f"logs fetched in {sync_run['fetch_seconds']:.2f} s, the rest (the first batch: "
            f"chain id, head, localDomain(); the ledger of {sync_run['transfers']:,} transfers) "
            f"{value - sync_run['fetch_seconds']:.2f} s",
        ),
    ]  # fmt: skip


VARIANTS = [  # (label, the node's eth_getLogs range cap, blockTimestamp stripped)
    ("", None, False),
    (", node capped at 2,000 blocks, no blockTimestamp", 2_000, True),
]


def main(argv: list[str] | None = None) -> int:
    from tests.evm_node import Anvil, anvil_path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20k blocks, 800 logs")
    parser.add_argument("--blocks", type=int, help="blocks in the range (200,000)")
    parser.add_argument("--log-blocks", type=int, help="blocks holding logs (500)")
    parser.add_argument("--copies", type=int, default=1, help="transfer sets per log block (1)")
    parser.add_argument("--repeat", type=int, help="syncs per setting, best of (3)")
    parser.add_argument("--rtt-ms", type=int, nargs="+", default=list(RTTS_MS))
    sub = parser.add_subparsers(dest="mode")
    worker = sub.add_parser("counter", help=argparse.SUPPRESS)
    worker.add_argument("upstream")
    worker.add_argument("--cap", type=int, required=True)
    worker.add_argument("--strip-times", action="store_true")
    args = parser.parse_args(argv)
    if args.mode == "counter":
        counter_worker(args)
        return 0
    blocks = args.blocks or (20_000 if args.quick else 200_000)
    log_blocks = args.log_blocks or (100 if args.quick else 500)
    repeat = args.repeat or (1 if args.quick else 3)
    if anvil_path() is None:
        raise SystemExit("anvil is not installed: run `make tools`")
    workers = 8  # sync's default max_workers

    started = time.perf_counter()
    rows: list[Row] = []
    _log(f"anvil ({CHAIN}, chain id {CHAIN_ID}): {blocks:,} blocks, {log_blocks} holding logs")
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    with Anvil(CHAIN_ID, long_chain=True) as node:
        first, last = build(node, blocks=blocks, log_blocks=log_blocks, copies=args.copies)
        with tempfile.TemporaryDirectory(prefix="cctx-bench-sync-") as tmp:  # imports, first use
            _timed("warm-up sync", lambda: sync(Path(tmp), {CHAIN: node.url}, start=first,
                                                end=first + 1_000, progress=False))  # fmt: skip
        for rtt_ms in args.rtt_ms:
            naive_run: dict[str, Any] | None = None
            for label, cap, strip in VARIANTS:
                with counting(node.url, cap, strip) as counter, \
                        delayed(counter.url, rtt_ms) as url:  # fmt: skip
                    _log(f"{rtt_ms} ms RTT{label}:")
                    if naive_run is None:  # the same requests whatever the setting
                        naive_run = _timed("naive loop", lambda u=url: naive(u, first, last))
                    sync_run = synced(url, first, last, counter, repeat)
                check(naive_run, sync_run)
                rows += figures(rtt_ms, naive_run, sync_run, label=label,
                                letters=next(letters) + next(letters), workers=workers)  # fmt: skip
    print(table(rows))
    print(f"\n{'quick' if args.quick else 'full'} run in {time.perf_counter() - started:.0f} s "
          f"on {machine()}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
