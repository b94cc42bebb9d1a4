"""Sync faults, in figures: a section of ``reliability.py`` (see there for the command).

``cctx_research.nodes.sync`` against a real node (anvil, Base's chain id,
real CCTP logs replayed at Circle's addresses: ``tests/evm_node``), most of
them through ``tests/evm_node/proxy.py``'s ``RangeLimited``, which answers
like a provider. Every fault ends either in a typed error or in a dataset
equal to a fault-free sync of the same blocks (the same logs, by block,
index and transaction; no gap; no duplicate), checked after the run that met
the fault or after the run that resumed it:

* each provider's "range too large" error (its code, HTTP status and text);
* 429 with ``Retry-After``, and connections dropped without a reply;
* the node gone mid-sync (every connection closed after some answers): a
  ``ServerError``, then the same sync resumed against a live node;
* a reorg within the confirmation depth (anvil's snapshot and revert, then
  other logs in the blocks that were replaced): the next sync replaces them;
* Ctrl-C: ``KeyboardInterrupt`` (a real SIGINT to this process) in the
  middle of ``cctx.sync``, and SIGINT to a ``cctx-research sync`` process,
  each resumed;
* the disk full: ``cctx.sync`` in a process whose file size limit
  (``RLIMIT_FSIZE``, SIGXFSZ ignored, so writes past it fail with ``EFBIG``
  as on a full disk with ``ENOSPC``) lets the first parts through and stops a
  later one: a ``DataError`` naming the dataset and what to do, the
  checkpointed parts kept, the rerun exact;
* a dataset of an older and of a newer format (its manifest ``_cctx.json``):
  one line saying what to do, the dataset untouched.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from cctx_research import errors, storage
from cctx_research.cli import main as cli_main
from cctx_research.nodes import status, sync
from cctx_research.nodes.engine import contracts_of

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _path in (HERE, ROOT / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from evm_node import Anvil, anvil_path  # noqa: E402  (tests/evm_node)
from evm_node.proxy import PROVIDERS, RangeLimited  # noqa: E402
from suite import cctp_logs  # noqa: E402

CHAIN, CHAIN_ID = "base", 8453
CAP = 100  # blocks per eth_getLogs the limiting proxy lets through in the multi-segment faults
KEY = "SECRET-KEY-123"  # in RangeLimited's URL path: must appear in no file of the datasets

_CLI = textwrap.dedent(
    """
    import sys
    from cctx_research import cli
    sys.exit(cli.main(sys.argv[1:]))
    """
)
_SYNC = textwrap.dedent(
    """
    import resource, signal, sys
    out, url, first, last, limit = sys.argv[1:6]
    if int(limit):
        # writes past the limit fail with EFBIG, as writes to a full disk fail with ENOSPC
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), int(limit)))
    import cctx_research as cctx
    from cctx_research.errors import DataError
    try:
        cctx.sync(out, {"base": url}, start=int(first), end=int(last), progress=False,
                  range_blocks=%d)
    except DataError as exc:
        print("DataError:", str(exc).splitlines()[0])
        sys.exit(3)
    """
) % CAP


# --------------------------------------------------------------------------- the chain


def _build(node: Anvil, quick: bool) -> tuple[int, int]:
    """Sparse logs (a transaction every 100 blocks), then dense ones; (first, last) block.

    The dense blocks (8 transactions in a row every 107 blocks) make the
    parts that hold them several times the size of the first ones: the disk
    full figure sets its file size limit between the two.
    """
    logs = cctp_logs()
    node.install_cctp(contracts_of(CHAIN))
    node.mine(1)
    first = node.head() + 1
    sparse, dense = (16, 8) if quick else (64, 48)
    for i in range(sparse + dense):
        for _ in range(1 if i < sparse else 8):
            node.replay_many(logs, 1)  # one transaction, in a block of its own
        node.mine(99)
    last = node.head()
    node.mine(100)  # past the default confirmation depth
    return first, last


def _dataset(out: Path) -> pd.DataFrame:
    files = sorted((out / CHAIN / "logs").glob("*.parquet"))
    frame = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    return frame.sort_values(["block_number", "log_index"], ignore_index=True)


def _keys(frame: pd.DataFrame) -> list[tuple[int, int, bytes, bytes]]:
    return list(zip(frame["block_number"].astype(int), frame["log_index"].astype(int),
                    frame["transaction_hash"], frame["data"], strict=True))  # fmt: skip


def _verdict(out: Path, reference: list[Any]) -> tuple[bool, str]:
    """Whether ``out`` equals the reference (same logs, no gap, no duplicate); the details."""
    frame = _dataset(out)
    dups = int(frame.duplicated(["block_number", "log_index"]).sum())
    gaps = int(status(out)["gaps"].sum())
    same = _keys(frame) == reference
    return same and dups == 0 and gaps == 0, f"{len(frame)} logs, {gaps} gaps, {dups} dups"


def _tmp_files(out: Path) -> int:
    return sum(1 for p in out.rglob("*") if p.name.endswith(".tmp"))


def _cli(args: list[str], *, env: dict[str, str]) -> subprocess.Popen[str]:
    """``cctx-research sync ARGS`` in a process of its own."""
    cmd = [sys.executable, "-c", _CLI, "sync", *args, "--no-progress"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **env}, cwd=ROOT)  # fmt: skip


def _when(ready: Any, action: Any, timeout: float = 120) -> threading.Thread:
    """Run ``action()`` on a thread as soon as ``ready()`` is true."""

    def watch() -> None:
        deadline = time.monotonic() + timeout
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.005)
        action()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _chain_state(out: Path) -> dict[str, Any]:
    """The chain's checkpoint entry, as the dataset's manifest keeps it."""
    return json.loads((out / storage.MANIFEST).read_text())["state"]["chains"][CHAIN]


def _checkpoint(out: Path) -> int | None:
    """The chain's checkpoint (its last final block) in ``out``, if any."""
    try:
        return _chain_state(out).get("safe")
    except (OSError, ValueError, KeyError):
        return None


# --------------------------------------------------------------------------- the section


def section_sync(t: Any, tmp: Path, quick: bool) -> None:
    """Add the sync-fault figures to table ``t``."""
    if anvil_path() is None:
        t.add("sync", "anvil not installed (`make tools`): section skipped", "-", "-", None,
              correctness=False)  # fmt: skip
        return
    root = tmp / "sync"
    root.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    with Anvil(CHAIN_ID, long_chain=True) as node:
        first, last = _build(node, quick)
        ref = sync(root / "reference", {CHAIN: node.url}, start=first, end=last, progress=False)
        reference = _keys(_dataset(root / "reference"))
        span = dict(start=first, end=last, progress=False)
        t.add("sync", "fault-free sync: blocks / logs / transfers",
              f"{last - first + 1:,} / {ref.chains[0].logs:,} / {ref.transfers:,}", "-", None,
              correctness=False)  # fmt: skip

        _providers(t, node, root, reference, span, quick)
        _throttled(t, node, root, reference, span)
        _node_gone(t, node, root, reference, span)
        with _ctrl_c_heard():
            _interrupted(t, node, root, reference, span)
        _disk_full(t, node, root, reference, first, last)
        _formats(t, node, root)
        _reorg(t, node, root, first)  # last: it changes the chain

    leaked = sum(p.read_bytes().count(KEY.encode()) for p in root.rglob("*") if p.is_file())
    t.add("sync", "node URL key in the datasets' files", leaked, "0", leaked == 0)
    t.add("sync", "wall time of the section", f"{time.perf_counter() - began:.1f} s", "-", None,
          correctness=False)  # fmt: skip


def _providers(t: Any, node: Anvil, root: Path, reference: list[Any], span: dict[str, Any],
               quick: bool) -> None:  # fmt: skip
    names = ["alchemy", "infura", "geth"] if quick else sorted(PROVIDERS)
    exact, splits, refused = 0, 0, 0
    for name in names:
        out = root / f"provider-{name}"
        with RangeLimited(node.url, name, max_blocks=CAP) as proxy:
            result = sync(out, {CHAIN: proxy.url}, **span)
        ok, _ = _verdict(out, reference)
        exact += ok
        splits += result.chains[0].splits
        refused += proxy.refused
    t.add("sync", f"provider range errors ({len(names)} providers' texts): datasets exact",
          f"{exact}/{len(names)}", "all", exact == len(names))  # fmt: skip
    t.add("sync", "provider range errors: refusals met / ranges split", f"{refused} / {splits}",
          "> 0 / > 0", refused > 0 and splits > 0)  # fmt: skip


def _throttled(t: Any, node: Anvil, root: Path, reference: list[Any],
               span: dict[str, Any]) -> None:  # fmt: skip
    out = root / "throttled"
    with RangeLimited(node.url, max_blocks=CAP) as proxy:
        # mid-run, as rate limits are met: after the 4th eth_getLogs, the next 5 requests get
        # 429 with Retry-After: 1 (thrown by the proxy as it answers, so never after the run)
        def throttle(answered: int) -> None:
            if answered == 4:
                proxy.throttle = 5

        proxy.on_logs = throttle
        began = time.perf_counter()
        result = sync(out, {CHAIN: proxy.url}, range_blocks=CAP, **span)
        took = time.perf_counter() - began
        left = proxy.throttle
    ok, detail = _verdict(out, reference)
    throttled = result.chains[0].stats.throttled
    t.add("sync", "429 with Retry-After (5 in a row, mid-run): dataset exact",
          f"{ok} ({detail})", "True", ok and left == 0)  # fmt: skip
    t.add("sync", "429 with Retry-After: requests throttled / seconds (>= 1 s asked)",
          f"{throttled} / {took:.1f} s", "5 / >= 1 s", throttled == 5 and took >= 1.0)  # fmt: skip
    out = root / "dropped"
    with RangeLimited(node.url, max_blocks=CAP) as proxy:
        proxy.drop = 3  # the next 3 connections closed without a reply
        sync(out, {CHAIN: proxy.url}, **span)
        left = proxy.drop
    ok, detail = _verdict(out, reference)
    t.add("sync", "connections dropped (3 in a row): dataset exact", f"{ok} ({detail})", "True",
          ok and left == 0)  # fmt: skip


def _node_gone(t: Any, node: Anvil, root: Path, reference: list[Any],
               span: dict[str, Any]) -> None:  # fmt: skip
    out = root / "node-gone"
    with RangeLimited(node.url, max_blocks=CAP) as proxy:
        # the node goes the moment a checkpoint is on disk (the proxy asks at each call, so
        # the run is always mid-way then): what it saved must hold
        proxy.fail_when = lambda: _checkpoint(out) is not None
        try:
            # ranges small enough for several segments, so the run goes on past a checkpoint
            sync(out, {CHAIN: proxy.url}, retries=2, range_blocks=50, **span)
            outcome = "no error"
        except errors.CctxError as exc:
            outcome = type(exc).__name__
    safe = _chain_state(out).get("safe")
    t.add("sync", "node gone mid-sync: error", outcome, "ServerError", outcome == "ServerError")
    resumed = sync(out, {CHAIN: node.url}, **span)  # the same command again
    ok, detail = _verdict(out, reference)
    goes_on = safe is not None and resumed.chains[0].first == safe + 1
    t.add("sync", "node gone mid-sync: resumed after the checkpoint, exact",
          f"{goes_on}, {ok} ({detail})", "True, True", goes_on and ok)  # fmt: skip


@contextlib.contextmanager
def _ctrl_c_heard() -> Iterator[None]:
    """Python's SIGINT handler for the Ctrl-C checks, if SIGINT is ignored.

    A run started in the background (nohup, a job of a non-interactive shell) starts with
    SIGINT ignored, Python keeps it so, and the processes it starts inherit it: neither
    this process nor the `sync` it stops would hear the signal, and each check would wait
    on a stalled node until its timeout.
    """
    before = signal.getsignal(signal.SIGINT)
    if before is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _interrupted(t: Any, node: Anvil, root: Path, reference: list[Any],
                 span: dict[str, Any]) -> None:  # fmt: skip
    # a real SIGINT to this process in the middle of cctx.sync (Python's handler: KeyboardInterrupt)
    out = root / "ctrl-c"
    finished = threading.Event()

    def interrupt() -> None:
        if not finished.is_set():
            os.kill(os.getpid(), signal.SIGINT)

    with RangeLimited(node.url, max_blocks=CAP) as proxy:
        # after 6 ranges the node stops answering, and the signal is sent once a call waits
        # on it: the run is certainly mid-way, however fast the machine
        proxy.stall_when = lambda: proxy.logs_answered >= 6
        watcher = _when(lambda: proxy.stalled > 0, interrupt)
        began = time.perf_counter()
        took = 0.0
        try:
            try:
                sync(out, {CHAIN: proxy.url}, range_blocks=CAP, **span)
                outcome = "no interrupt"
            finally:
                took = time.perf_counter() - began
                finished.set()
                watcher.join()  # a signal sent late is raised here, inside the try
        except KeyboardInterrupt:
            outcome = "KeyboardInterrupt"
        answered = proxy.logs_answered
    mid = answered < -(-(span["end"] - span["start"] + 1) // CAP)
    t.add("sync", "Ctrl-C in cctx.sync: raised mid-run", f"{outcome}, mid-run {mid}",
          "KeyboardInterrupt, mid-run True", outcome == "KeyboardInterrupt" and mid)  # fmt: skip
    t.add("sync", "Ctrl-C in cctx.sync: seconds to stop", f"{took:.2f}", "-", None,
          correctness=False)  # fmt: skip
    sync(out, {CHAIN: node.url}, **span)  # the same command again
    ok, detail = _verdict(out, reference)
    t.add("sync", "Ctrl-C in cctx.sync: resumed, exact", f"{ok} ({detail})", "True", ok)

    # SIGINT to a `cctx-research sync` process that keeps a dataset current: a first run
    # (to a quarter of the blocks) learns the node's limit; the second is stopped mid-run
    out = root / "sigint"
    middle = span["start"] + (span["end"] - span["start"]) // 4
    with RangeLimited(node.url, max_blocks=CAP) as proxy:
        sync(out, {CHAIN: proxy.url}, start=span["start"], end=middle, progress=False)
        # stopped once it has checkpointed a segment past the first run's end: the node
        # stops answering then, and the signal is sent while a call waits on it. The next
        # segment's ranges run while one is written, so on a fast machine every range could
        # be answered before the checkpoint moves: the last range waits until it has
        proxy.stall_when = lambda: (_checkpoint(out) or 0) > middle
        proxy.last_waits = span["end"]
        proc = _cli(["--chain", CHAIN, "--to", str(span["end"]), "--out", str(out)],
                    env={"CCTX_RPC_BASE": proxy.url})  # fmt: skip
        _when(lambda: proxy.stalled > 0, lambda: proc.send_signal(signal.SIGINT))
        _, err = proc.communicate(timeout=300)
    one_line = proc.returncode == 130 and err.strip() == "cctx-research: interrupted"
    t.add("sync", "SIGINT to `cctx-research sync`: exit 130, one line",
          f"{proc.returncode}, {err.strip()[:40]!r}", "130, 'cctx-research: interrupted'",
          one_line)  # fmt: skip
    safe = _checkpoint(out) or 0
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):  # the same command again, in this process
        code = cli_main(["sync", "--chain", f"{CHAIN}={node.url}", "--to", str(span["end"]),
                         "--out", str(out), "--no-progress"])  # fmt: skip
    ok, detail = _verdict(out, reference)
    went_on = f"blocks {safe + 1:,}-" in printed.getvalue()
    t.add("sync", "SIGINT to `cctx-research sync`: rerun goes on after the checkpoint, exact",
          f"{went_on}, {ok} ({detail}; checkpoint {safe:,}, first run to {middle:,})", "True, True",
          went_on and ok and code == 0 and safe > middle)  # fmt: skip


def _disk_full(t: Any, node: Anvil, root: Path, reference: list[Any], first: int,
               last: int) -> None:  # fmt: skip
    # the limit: above the first part of a fault-free run with the same ranges, below a later one
    sizer = root / "sizes"
    sync(sizer, {CHAIN: node.url}, start=first, end=last, progress=False, range_blocks=CAP)
    parts = sorted((sizer / CHAIN / "logs").glob("*.parquet"),
                   key=lambda p: storage.parse_part(p.name).chunk.first)  # fmt: skip
    sizes = [p.stat().st_size for p in parts]
    limit = (sizes[0] + max(sizes)) // 2
    out = root / "disk-full"
    args = [str(out), node.url, str(first), str(last)]
    done = subprocess.run([sys.executable, "-c", _SYNC, *args, str(limit)], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)  # fmt: skip
    told = f"DataError: cannot write the sync dataset {out} (File too large"
    said = (done.returncode == 3 and done.stdout.startswith(told)
            and "run the same sync again" in done.stdout)  # fmt: skip
    t.add("sync", "disk full (RLIMIT_FSIZE): DataError naming the dataset and what to do",
          f"{said} (limit {limit:,} B)", "True", said)  # fmt: skip
    safe = _chain_state(out).get("safe")
    kept = _dataset(out) if safe is not None else pd.DataFrame()
    prefix = [k for k in reference if safe is not None and k[0] <= safe]
    exact = safe is not None and first <= safe < last and _keys(kept) == prefix
    t.add("sync", "disk full: checkpointed parts kept, exact, mid-run",
          f"{exact} ({len(kept)} logs up to block {safe})", "True", exact)  # fmt: skip
    t.add("sync", "disk full: partial files left", _tmp_files(out), "0", _tmp_files(out) == 0)
    # the same sync again, with room (in this process)
    again = sync(out, {CHAIN: node.url}, start=first, end=last, progress=False, range_blocks=CAP)
    ok, detail = _verdict(out, reference)
    goes_on = safe is not None and again.chains[0].first == safe + 1
    t.add("sync", "disk full: rerun with room goes on after the checkpoint, exact",
          f"{goes_on}, {ok} ({detail})", "True, True", goes_on and ok)  # fmt: skip


def _formats(t: Any, node: Anvil, root: Path) -> None:
    for found, says in ((0, "older"), (storage.FORMAT + 1, "newer")):
        out = root / f"format-{found}"
        out.mkdir()
        text = json.dumps({"format": found, "kind": "sync",
                           "state": {"chains": {CHAIN: {"first": 0, "safe": 10}}}})  # fmt: skip
        (out / storage.MANIFEST).write_text(text)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = cli_main(["sync", "--chain", f"{CHAIN}={node.url}", "--out", str(out),
                             "--no-progress"])  # fmt: skip
        line = err.getvalue().strip()
        todo = "new directory" if found < 1 else "pip install -U cctx-research"
        ok = (code == 1 and "\n" not in line and says in line and todo in line
              and (out / storage.MANIFEST).read_text() == text and len(list(out.iterdir())) == 1)
        t.add("sync", f"dataset of a{'n' if says == 'older' else ''} {says} format ({found}): "
              "one line saying what to do, untouched", ok, "True", ok)  # fmt: skip


def _reorg(t: Any, node: Anvil, root: Path, first: int) -> None:
    logs = cctp_logs()
    out = root / "reorg"
    before = node.snapshot()
    for _ in range(3):  # orphaned: burns and mints in the next blocks
        node.replay_many(logs, 1)
    node.mine(5)
    sync(out, {CHAIN: node.url}, start=first, confirmations=50, progress=False)
    orphaned = set(_dataset(out)["transaction_hash"].map(bytes.hex))
    node.revert(before)  # those blocks are gone; others take their numbers
    for _ in range(2):
        node.replay_many(logs[4:], 2)  # the mints only, twice per transaction
    node.mine(8)
    sync(out, {CHAIN: node.url}, progress=False)
    fresh = root / "reorg-fresh"
    sync(fresh, {CHAIN: node.url}, start=first, confirmations=50, progress=False)
    same = _keys(_dataset(out)) == _keys(_dataset(fresh))
    kept = orphaned & set(_dataset(out)["transaction_hash"].map(bytes.hex))
    gone = {h for h in kept if node.rpc("eth_getTransactionReceipt", "0x" + h) is None}
    t.add("sync", "reorg within the confirmation depth: equals a fresh sync of the new chain",
          same, "True", same)  # fmt: skip
    t.add("sync", "reorg: logs of orphaned transactions left", len(gone), "0", not gone)
