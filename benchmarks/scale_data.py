"""The whole-history benchmark's dataset: planned transfers as the logs of a sync dataset.

:func:`generate` writes N transfers (``scale_plan.plan``) as the logs
Circle's contracts emit, four a transfer (two when never minted), in the
layout ``cctx-research sync`` writes: per chain, Parquet parts of cryo's log
columns in block order, and the manifest (``_cctx.json``). The source transaction emits
``MessageSent`` then ``DepositForBurn``; the destination transaction
``MintAndWithdraw`` then ``MessageReceived``, each at its event's contract
(TokenMessenger / MessageTransmitter of the version and chain). V1 messages
carry the source domain's nonce; a V2 burn's message has a zero nonce and
finality executed, and its mint the attested nonce, the finality executed
and the fee (``feeCollected``, and ``feeExecuted`` in the attested body).

The bytes are built with numpy for a whole part at once: each field is a
block of columns of a ``uint8`` matrix (a 32-byte word, a padded address,
a packed message), one matrix per event, version and hook length. Every
part is checked on a sample of its transfers against the same logs encoded
one by one with eth-abi from the event signatures (``tests/ingest/logs.py``):
byte for byte, topics and data. Hashes, nonces, addresses and hook data are
splitmix64 streams of the transfer's number, so nothing random is stored.

Memory: the plan (about 80 bytes a transfer), one chain's event index, and
one part (``part_logs`` logs, 1 M by default, about 0.5 GB of columns).
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
from scale_plan import CHAINS, HOOK_LENGTHS, START, Plan, block_time, plan

HERE = Path(__file__).resolve().parent
if str(HERE.parent / "tests") not in sys.path:
    sys.path.insert(0, str(HERE.parent / "tests"))

from ingest.logs import SIGNATURES, topic0  # noqa: E402  (eth-abi, from the signatures)

__all__ = ["MANIFEST", "Part", "dataset_files", "generate", "random_bytes", "write_dataset"]

QUICK_DAYS = 30
"""The window of the quick runs and the tests: 20k transfers in 240 files, a file a day and
chain (over the whole window: 1,973). They prove rows and rules; they do not measure."""
MANIFEST = "generated.json"
"""What the generator planted (counts), beside the manifest."""

_SALT = {"burn_tx": 1, "mint_tx": 2, "nonce": 3, "hook": 4, "sender": 5, "recipient": 6,
         "relayer": 7}  # fmt: skip
_TOPIC0 = {key: bytes.fromhex(topic0(sig)[2:]) for key, sig in SIGNATURES.items()}


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: a well-spread uint64 of each uint64."""
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def random_bytes(keys: np.ndarray, what: str, width: int, seed: int) -> np.ndarray:
    """``width`` bytes a key, the same for the same (key, what, seed): an ``(n, width)`` matrix."""
    words = -(-width // 8)
    start = np.uint64(seed * 1_000_003 + _SALT[what])
    base = _mix(keys.astype(np.uint64) * np.uint64(64) + start)
    out = np.empty((len(keys), words), dtype=">u8")
    for j in range(words):
        out[:, j] = _mix(base + np.uint64(j))
    return out.view(np.uint8).reshape(len(keys), words * 8)[:, :width]


# ---------------------------------------------------------------- byte columns


def _uint(values: np.ndarray | int, width: int, n: int) -> np.ndarray:
    """Big-endian unsigned integers, ``width`` bytes (zero-padded beyond 8)."""
    values = np.broadcast_to(np.asarray(values, dtype=np.int64), (n,))
    low = np.ascontiguousarray(values).astype(">u8").view(np.uint8).reshape(n, 8)
    if width <= 8:
        return low[:, 8 - width :]
    return np.concatenate([np.zeros((n, width - 8), np.uint8), low], axis=1)


def _word(values: np.ndarray | int, n: int) -> np.ndarray:
    return _uint(values, 32, n)


def _pad(address: np.ndarray) -> np.ndarray:
    """A 20-byte address as a bytes32 word: 12 zero bytes, then the address."""
    return np.concatenate([np.zeros((len(address), 12), np.uint8), address], axis=1)


def _padded(matrix: np.ndarray) -> np.ndarray:
    """Zero bytes after ``matrix`` up to a multiple of 32 (an ABI tail)."""
    extra = -matrix.shape[1] % 32
    return np.concatenate([matrix, np.zeros((len(matrix), extra), np.uint8)], axis=1)


def _binary(matrix: np.ndarray) -> pa.Array:
    """One Arrow binary value a row, without copying the row bytes again."""
    matrix = np.ascontiguousarray(matrix)
    n, width = matrix.shape
    if n * width >= 2**31:
        raise ValueError(f"{n:,} values of {width} bytes overflow a binary column: smaller parts")
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets),
                                                  pa.py_buffer(matrix)])  # fmt: skip


# ---------------------------------------------------------------- one side's logs


@dataclass
class _Side:
    """The values of n transfers of one version and hook length, as byte matrices."""

    tid: np.ndarray
    version: int
    n: int
    src: np.ndarray  # domains
    dst: np.ndarray
    amount: np.ndarray
    max_fee: np.ndarray
    fee: np.ndarray
    min_finality: np.ndarray
    executed: np.ndarray
    nonce: np.ndarray  # V1 nonce (int64)
    nonce32: np.ndarray  # V2 attested nonce (n, 32)
    usdc_src: np.ndarray
    usdc_dst: np.ndarray
    sender: np.ndarray
    recipient: np.ndarray
    relayer: np.ndarray
    dest_caller: np.ndarray
    messenger_src: np.ndarray
    messenger_dst: np.ndarray
    hook: np.ndarray  # (n, hook length)


def _side(p: Plan, tid: np.ndarray, version: int, hook_len: int) -> _Side:
    v = version - 1
    table = {
        "domain": np.array([c.domain for c in CHAINS]),
        "usdc": np.array([list(c.usdc) for c in CHAINS], np.uint8),
        "messenger": np.array([list(c.messenger[v]) for c in CHAINS], np.uint8),
    }
    src, dst, seed = p.src[tid], p.dst[tid], p.seed
    relayer = random_bytes(p.relayer[tid], "relayer", 20, seed)
    return _Side(
        tid, version, len(tid), table["domain"][src], table["domain"][dst], p.amount[tid],
        p.max_fee[tid], p.fee[tid], p.min_finality[tid], p.executed[tid], p.nonce[tid],
        random_bytes(tid, "nonce", 32, seed), table["usdc"][src], table["usdc"][dst],
        random_bytes(p.sender[tid], "sender", 20, seed),
        random_bytes(p.recipient[tid], "recipient", 20, seed), relayer,
        np.where(p.named_caller[tid][:, None], relayer, 0).astype(np.uint8),
        table["messenger"][src], table["messenger"][dst],
        random_bytes(tid, "hook", hook_len, seed) if hook_len
        else np.zeros((len(tid), 0), np.uint8),
    )  # fmt: skip


def _burn_body(s: _Side, *, fee_executed: bool) -> np.ndarray:
    """BurnMessage (V1, 132 bytes) or BurnMessageV2 (228 bytes + hook data), packed."""
    n = s.n
    head = [_uint(s.version - 1, 4, n), _pad(s.usdc_src), _pad(s.recipient), _word(s.amount, n),
            _pad(s.sender)]  # fmt: skip
    if s.version == 1:
        return np.concatenate(head, axis=1)
    fee = _word(s.fee if fee_executed else 0, n)
    return np.concatenate([*head, _word(s.max_fee, n), fee, _word(0, n), s.hook], axis=1)


def _message(s: _Side) -> np.ndarray:
    """The message a burn sends (header + body), packed; V2's nonce and finality executed zero."""
    n = s.n
    if s.version == 1:
        header = [_uint(0, 4, n), _uint(s.src, 4, n), _uint(s.dst, 4, n), _uint(s.nonce, 8, n),
                  _pad(s.messenger_src), _pad(s.messenger_dst), _pad(s.dest_caller)]  # fmt: skip
    else:
        header = [_uint(1, 4, n), _uint(s.src, 4, n), _uint(s.dst, 4, n), _word(0, n),
                  _pad(s.messenger_src), _pad(s.messenger_dst), _pad(s.dest_caller),
                  _uint(s.min_finality, 4, n), _uint(0, 4, n)]  # fmt: skip
    return np.concatenate([*header, _burn_body(s, fee_executed=False)], axis=1)


def _tail(matrix: np.ndarray) -> list[np.ndarray]:
    """A ``bytes`` parameter's tail: its length word, then its bytes padded to 32."""
    return [_word(matrix.shape[1], len(matrix)), _padded(matrix)]


Log = tuple[str, list[np.ndarray], np.ndarray]
"""(contract: "messenger" or "transmitter", topics, data) of one event, n rows."""


def _burn_logs(s: _Side) -> tuple[Log, Log]:
    """MessageSent, then DepositForBurn."""
    n, key = s.n, ("DepositForBurn", s.version)
    sent = np.concatenate([_word(32, n), *_tail(_message(s))], axis=1)
    common = [_pad(s.recipient), _word(s.dst, n), _pad(s.messenger_dst), _pad(s.dest_caller)]
    if s.version == 1:
        topics = [_word(s.nonce, n), _pad(s.usdc_src), _pad(s.sender)]
        data = np.concatenate([_word(s.amount, n), *common], axis=1)
    else:
        topics = [_pad(s.usdc_src), _pad(s.sender), _word(s.min_finality, n)]
        data = np.concatenate([_word(s.amount, n), *common, _word(s.max_fee, n),
                               _word(7 * 32, n), *_tail(s.hook)], axis=1)  # fmt: skip
    sent_topic = np.broadcast_to(np.frombuffer(_TOPIC0[("MessageSent", 1)], np.uint8), (n, 32))
    burn_topic = np.broadcast_to(np.frombuffer(_TOPIC0[key], np.uint8), (n, 32))
    return ("transmitter", [sent_topic], sent), ("messenger", [burn_topic, *topics], data)


def _mint_logs(s: _Side) -> tuple[Log, Log]:
    """MintAndWithdraw, then MessageReceived (its body as attested: the fee executed filled in)."""
    n = s.n
    body = _burn_body(s, fee_executed=True)
    head = [_word(s.src, n), _pad(s.messenger_src), _word(3 * 32, n), *_tail(body)]
    if s.version == 1:
        mint_data = _word(s.amount, n)
        received = [_pad(s.relayer), _word(s.nonce, n)]
    else:
        mint_data = np.concatenate([_word(s.amount - s.fee, n), _word(s.fee, n)], axis=1)
        received = [_pad(s.relayer), s.nonce32, _word(s.executed, n)]
    mint_topic, recv_topic = (
        np.broadcast_to(np.frombuffer(_TOPIC0[(event, s.version)], np.uint8), (n, 32))
        for event in ("MintAndWithdraw", "MessageReceived")
    )
    mint = ("messenger", [mint_topic, _pad(s.recipient), _pad(s.usdc_dst)], mint_data)
    return mint, ("transmitter", [recv_topic, *received], np.concatenate(head, axis=1))


# ---------------------------------------------------------------- parts


_SCHEMA = pa.schema([
    ("block_number", pa.uint64()), ("transaction_index", pa.uint32()), ("log_index", pa.uint32()),
    ("transaction_hash", pa.binary()), ("address", pa.binary()), ("topic0", pa.binary()),
    ("topic1", pa.binary()), ("topic2", pa.binary()), ("topic3", pa.binary()),
    ("data", pa.binary()), ("n_data_bytes", pa.uint32()), ("chain_id", pa.uint64()),
    ("block_timestamp", pa.uint64()),
])  # fmt: skip
"""cryo's log columns (binary as bytes) and the block's time, as a sync writes them."""


@dataclass(frozen=True)
class Part:
    """One part of one chain: its blocks ``first..last`` and their logs, in block order."""

    chain: str
    chain_id: int
    first: int
    last: int
    first_time: int
    last_time: int
    table: pa.Table


@dataclass(frozen=True)
class _Events:
    """Burns and mints on one chain, in block order: transfer, side (0 burn, 1 mint), block."""

    chain: int
    seed: int
    tid: np.ndarray
    side: np.ndarray
    block: np.ndarray
    rank: np.ndarray
    """Rank among the chain's transactions of the same block: where its logs go in the block."""

    def take(self, rows: np.ndarray | slice) -> _Events:
        return _Events(self.chain, self.seed, self.tid[rows], self.side[rows], self.block[rows],
                       self.rank[rows])  # fmt: skip


def _chain_events(p: Plan, chain: int) -> _Events:
    burns = np.flatnonzero(p.src == chain)
    mints = np.flatnonzero((p.dst == chain) & p.minted)
    tid = np.concatenate([burns, mints])
    side = np.repeat(np.array([0, 1], np.int8), [len(burns), len(mints)])
    block = np.concatenate([p.burn_block[burns], p.mint_block[mints]])
    order = np.lexsort((tid, block))
    tid, side, block = tid[order], side[order], block[order]
    new = np.ones(len(block), dtype=bool)
    new[1:] = block[1:] != block[:-1]
    index = np.arange(len(block))
    rank = index - np.maximum.accumulate(np.where(new, index, 0))
    return _Events(chain, p.seed, tid, side, block, rank)


def _cuts(block: np.ndarray, per_part: int) -> list[tuple[int, int]]:
    """Index ranges of about ``per_part`` events, cut where a block ends (parts share none)."""
    n = len(block)
    starts = np.flatnonzero(np.r_[True, block[1:] != block[:-1]]) if n else np.zeros(0, int)
    at = np.searchsorted(starts, np.arange(per_part, n, per_part))
    cuts = np.unique(starts[at[at < len(starts)]])
    edges = [0, *cuts[cuts > 0].tolist(), n]
    return list(itertools.pairwise(edges))


def _log_table(events: _Events, log: Log, second: bool, version: int) -> pa.Table:
    """One event's logs (the first or second of each transaction) as cryo's columns."""
    contract, topics, data = log
    chain = CHAINS[events.chain]
    n = len(events.tid)
    jitter = events.tid % 3  # other contracts' transactions and logs in between
    address = (chain.messenger if contract == "messenger" else chain.transmitter)[version - 1]
    tx = random_bytes(events.tid, "mint_tx" if events.side[0] else "burn_tx", 32, events.seed)
    columns = {
        "block_number": pa.array(events.block, pa.uint64()),
        "transaction_index": pa.array(3 * events.rank + jitter, pa.uint32()),
        "log_index": pa.array(4 * events.rank + jitter + int(second), pa.uint32()),
        "transaction_hash": _binary(tx),
        "address": _binary(np.broadcast_to(np.frombuffer(address, np.uint8), (n, 20))),
        **{f"topic{i}": _binary(topics[i]) if i < len(topics) else pa.nulls(n, pa.binary())
           for i in range(4)},
        "data": _binary(data),
        "n_data_bytes": pa.array(np.full(n, data.shape[1]), pa.uint32()),
        "chain_id": pa.array(np.full(n, chain.chain_id), pa.uint64()),
        "block_timestamp": pa.array(block_time(events.chain, events.block), pa.uint64()),
    }  # fmt: skip
    return pa.table(columns, schema=_SCHEMA)


Check = Callable[[_Side, tuple[Log, Log], int], None]
"""Called with each group's values and logs and its side (0 burn, 1 mint), before writing."""


def _part_table(p: Plan, events: _Events, check: Check) -> pa.Table:
    """A part's logs: every group (side, version, hook length) built at once, in log order."""
    version, hook = p.version[events.tid], p.hook[events.tid]
    tables = []
    for side in (0, 1):
        for v, h in [(1, 0), *((2, h) for h in range(len(HOOK_LENGTHS)))]:
            rows = np.flatnonzero((events.side == side) & (version == v) & (hook == h))
            if not len(rows):
                continue
            group = events.take(rows)
            values = _side(p, group.tid, v, HOOK_LENGTHS[h])
            logs = _burn_logs(values) if side == 0 else _mint_logs(values)
            check(values, logs, side)
            tables += [_log_table(group, log, k == 1, v) for k, log in enumerate(logs)]
    if not tables:
        return _SCHEMA.empty_table()
    return pa.concat_tables(tables).sort_by([("block_number", "ascending"),
                                             ("log_index", "ascending")])  # fmt: skip


def _parts(p: Plan, part_logs: int, check: Check) -> Iterator[Part]:
    """Every chain's parts in turn; the last one of a chain reaches the window's end."""
    for c, chain in enumerate(CHAINS):
        events = _chain_events(p, c)
        end = chain.first_block + ((p.end - START) * 1000 - 1) // chain.block_ms
        first = chain.first_block
        ranges = _cuts(events.block, max(part_logs // 2, 1))
        for i, (lo, hi) in enumerate(ranges):
            last = end if i == len(ranges) - 1 else int(events.block[hi - 1])
            table = _part_table(p, events.take(slice(lo, hi)), check)
            yield Part(chain.name, chain.chain_id, first, last, int(block_time(c, first)),
                       int(block_time(c, last)), table)  # fmt: skip
            first = last + 1


# ---------------------------------------------------------------- the dataset


def write_dataset(root: str | Path, parts: Iterable[Part]) -> dict[str, int]:
    """Write ``parts`` as a sync dataset under ``root``: the one place that knows its layout.

    Through :class:`cctx_research.nodes.store.Dataset`: each part with
    ``write_part`` (final, not tip), then the manifest with each chain's
    checkpoint (first, safe and tip blocks, their times) as a finished sync
    leaves it. Returns the logs and parts written.
    """
    from cctx_research.nodes.store import LOG_SCHEMA, Dataset

    dataset = Dataset(root)
    state: dict = {"chains": {}}
    written = {"logs": 0, "parts": 0}
    for part in parts:
        table = part.table.select(LOG_SCHEMA.names).cast(LOG_SCHEMA)
        dataset.write_part(part.chain, part.first, part.last, table, tip=False)
        entry = state["chains"].setdefault(part.chain, {
            "chain_id": part.chain_id, "host": "generated", "confirmations": 0, "range": None,
            "first": part.first, "first_time": part.first_time,
        })  # fmt: skip
        entry.update(safe=part.last, tip=part.last, tip_time=part.last_time,
                     synced_at=int(time.time()))  # fmt: skip
        written["logs"] += table.num_rows
        written["parts"] += 1
    dataset.save_state(state)
    return written


def dataset_files(root: str | Path) -> list[Path]:
    """The dataset's log parts (what ``cctx.load`` and the SQL floor read)."""
    from cctx_research.nodes.store import Dataset

    return Dataset(root).log_files()


def generate(root: str | Path, n: int, *, seed: int, part_logs: int = 1_000_000,
             unminted: float = 0.03, check: int = 64, days: int | None = None) -> dict:  # fmt: skip
    """Write N planned transfers as a sync dataset under ``root``; returns what was planted.

    ``days``: over the window's first ``days`` days only (:func:`scale_plan.plan`).

    ``check`` transfers of every group of every part are encoded again with
    eth-abi and compared byte for byte (raises AssertionError on the first
    difference). The counts are also written to ``root/generated.json``.
    """
    from scale_check import LogCheck

    started = time.perf_counter()
    p = plan(n, seed=seed, unminted=unminted, days=days)
    checker = LogCheck(check)
    written = write_dataset(root, _parts(p, part_logs, checker))
    v2 = p.version == 2
    planted = {
        "transfers": n, "seed": seed, "days": (p.end - START) // 86_400,
        "v1": int((~v2).sum()), "v2": int(v2.sum()),
        "minted": int(p.minted.sum()), "never_minted": int((~p.minted).sum()),
        "fast": int((p.min_finality == 1000).sum()), "chains": len(CHAINS), **written,
        "checked_logs": checker.checked, "plan_mb": round(p.nbytes() / 2**20, 1),
        "seconds": round(time.perf_counter() - started, 2),
    }  # fmt: skip
    (Path(root) / MANIFEST).write_text(json.dumps(planted, indent=1) + "\n")
    return planted
