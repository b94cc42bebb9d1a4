"""A real local EVM node for the sync tests: anvil, with Circle's CCTP logs replayed on it.

- :class:`Anvil`: the node (``@foundry-rs/anvil-linux-amd64``, installed by
  ``make tools`` into ``.tools/``) on a free port, with the chain id of the
  chain it stands for.
- :func:`compiled`: ``LogReplay.sol`` compiled by solc-js (npm ``solc``, same
  install), once: kept in ``.tools/compiled/`` until its source or solc changes.
- :meth:`Anvil.install_cctp`: the compiled contract set (``anvil_setCode``) at
  the registry's real CCTP addresses of the chain, V1 and V2;
  :meth:`Anvil.replay` sends the recorded logs of real CCTP transfers
  (``tests/ingest/real.py``: real messages from public sources) through it,
  one node transaction per recorded transaction, so a burn's ``MessageSent``
  and ``DepositForBurn`` share a transaction as they do on a real chain.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import subprocess
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import requests
from eth_abi import encode
from eth_hash.auto import keccak

from cctx_research import chains

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools" / "node_modules"
ANVIL = TOOLS / "@foundry-rs" / "anvil-linux-amd64" / "bin" / "anvil"
SOLC = TOOLS / "solc"
HERE = Path(__file__).resolve().parent

__all__ = ["ANVIL", "Anvil", "anvil_path", "compiled", "free_port"]


def anvil_path() -> Path | None:
    """The anvil binary: ``$ANVIL``, ``.tools/``, or the PATH."""
    for candidate in (os.environ.get("ANVIL"), str(ANVIL), shutil.which("anvil")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_COMPILED: dict[str, Any] = {}
_FIELDS = {"compiler", "abi", "runtime"}


def compiled() -> dict[str, Any]:
    """``{compiler, abi, runtime}`` of LogReplay.sol, compiled by solc-js (once a session).

    The output is kept in ``.tools/compiled/``, named by a digest of the source, the
    compile script and solc's ``package.json``: each test worker and benchmark process
    (3 s of CPU a compile) reads it there until one of the three changes. A kept file
    that cannot be read whole is compiled again and replaced.
    """
    if not _COMPILED:
        digest = hashlib.sha256()
        for path in (HERE / "LogReplay.sol", HERE / "compile.js", SOLC / "package.json"):
            digest.update(path.read_bytes() + b"\0")
        kept = ROOT / ".tools" / "compiled" / f"LogReplay-{digest.hexdigest()[:20]}.json"
        try:
            found = json.loads(kept.read_text())
        except (OSError, ValueError):
            found = None
        if not isinstance(found, dict) or set(found) != _FIELDS:
            out = subprocess.run(
                ["node", str(HERE / "compile.js"), str(SOLC), str(HERE / "LogReplay.sol")],
                check=True, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            found = json.loads(out.stdout)
            with contextlib.suppress(OSError):  # a read-only checkout compiles every time
                kept.parent.mkdir(parents=True, exist_ok=True)
                part = kept.with_name(f"{kept.name}.{os.getpid()}.part")
                part.write_text(out.stdout)
                os.replace(part, kept)
        _COMPILED.update(found)
    return _COMPILED


def _selector(signature: str) -> bytes:
    return keccak(signature.encode())[:4]


class Anvil:
    """An anvil process on a free port; a context manager."""

    def __init__(
        self, chain_id: int, *, block_time: int | None = None, long_chain: bool = False,
        timestamp: int = 1764547200,
    ) -> None:
        binary = anvil_path()
        if binary is None:
            raise FileNotFoundError("anvil is not installed: run `make tools`")
        self.chain_id = chain_id
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # default 2025-12-01: recent, and the same on every run
        cmd = [str(binary), "--port", str(self.port), "--chain-id", str(chain_id), "--silent",
               "--timestamp", str(timestamp)]
        if block_time:
            cmd += ["--block-time", str(block_time)]
        if long_chain:
            # By default anvil keeps the state of every block, and under Prague the state grows
            # by a slot a block (EIP-2935's block-hash history): mining n blocks costs O(n^2),
            # 10k blocks about a minute, 40k a quarter of an hour. Without the kept states and
            # under Cancun's rules, mining is flat in the chain's length (20k blocks in 2 s).
            # Snapshots and logs of past blocks still work; state at past blocks is gone.
            cmd += ["--prune-history", "--hardfork", "cancun"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._session = requests.Session()
        deadline = time.monotonic() + 30
        while True:
            try:
                self.rpc("eth_chainId")
                break
            except requests.ConnectionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                    raise RuntimeError(f"anvil did not start: {err[-500:]}") from None
                time.sleep(0.05)
        self.account = self.rpc("eth_accounts")[0]

    def __enter__(self) -> Anvil:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill()

    def rpc(self, method: str, *params: Any) -> Any:
        reply = self._session.post(
            self.url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)},
            timeout=60,
        ).json()
        if reply.get("error"):
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def head(self) -> int:
        return int(self.rpc("eth_blockNumber"), 16)

    def mine(self, blocks: int = 1) -> None:
        self.rpc("anvil_mine", hex(blocks))

    def snapshot(self) -> str:
        return self.rpc("evm_snapshot")

    def revert(self, snapshot: str) -> None:
        assert self.rpc("evm_revert", snapshot) is True

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._session.close()

    # ------------------------------------------------------------------ CCTP

    def install_cctp(self, addresses: list[str], domain: int | None = None) -> None:
        """The compiled LogReplay at each address (the chain's real CCTP contracts).

        ``domain``: what their ``localDomain()`` answers (storage slot 0); default the
        registry's domain of the node's chain id (0 for a chain id it does not know).
        """
        if domain is None:
            domain = chains.domain_from_chain_id(self.chain_id) or 0
        runtime = compiled()["runtime"]
        for address in addresses:
            self.rpc("anvil_setCode", address, runtime)
            self.rpc("anvil_setStorageAt", address, "0x0", "0x" + f"{domain:064x}")

    def replay(self, logs: list[dict[str, Any]]) -> list[str]:
        """Emit recorded logs, one transaction per recorded transaction; their new hashes.

        Each transaction is mined in its own block (anvil's automine).
        """
        by_tx: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for log in logs:
            by_tx[log["transactionHash"]].append(log)
        hashes = []
        for group in by_tx.values():
            group.sort(key=lambda g: int(g["logIndex"], 16))
            emitters = [g["address"] for g in group]
            topics = [[bytes.fromhex(t[2:]) for t in g["topics"]] for g in group]
            data = [bytes.fromhex(g["data"][2:]) for g in group]
            call = _selector("replay(address[],bytes32[][],bytes[])") + encode(
                ["address[]", "bytes32[][]", "bytes[]"], [emitters, topics, data]
            )
            hashes.append(self.send(emitters[0], call))
        return hashes

    def replay_many(self, logs: list[dict[str, Any]], copies: int) -> str:
        """The same logs ``copies`` times in one transaction (load for benchmarks)."""
        emitters = [g["address"] for g in logs] * copies
        topics = [[bytes.fromhex(t[2:]) for t in g["topics"]] for g in logs] * copies
        data = [bytes.fromhex(g["data"][2:]) for g in logs] * copies
        call = _selector("replay(address[],bytes32[][],bytes[])") + encode(
            ["address[]", "bytes32[][]", "bytes[]"], [emitters, topics, data]
        )
        return self.send(emitters[0], call)

    def send(self, to: str, call: bytes) -> str:
        tx = self.rpc("eth_sendTransaction", {
            "from": self.account, "to": to, "data": "0x" + call.hex(), "gas": hex(29_000_000),
        })  # fmt: skip
        receipt, deadline = None, time.monotonic() + 30
        while receipt is None and time.monotonic() < deadline:  # mined at once, indexed soon
            receipt = self.rpc("eth_getTransactionReceipt", tx)
            if receipt is None:
                time.sleep(0.02)
        if receipt is None or receipt["status"] != "0x1":
            raise RuntimeError(f"replay transaction failed: {receipt}")
        return tx
