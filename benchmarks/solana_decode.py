"""Decoding Solana CCTP transactions, vectorised, against a per-transaction loop.

Run::

    .venv/bin/python benchmarks/solana_decode.py            # 1M transactions
    .venv/bin/python benchmarks/solana_decode.py --quick    # 20k, for the test suite

The transactions: copies of the replies in tests/fixtures/solana (four real
mainnet V1 transactions, two V2 burns and a V2 receive), each copy with its
own signature and amount (the event bytes re-encoded), parsed already (as
``json.loads`` or an RPC client gives them: both decoders start there, so
parsing JSON is not timed).

The baseline is the loop one writes with the usual tools: for each
transaction, skip it if it failed, resolve each instruction's program, and
for an event instruction of Circle's programs base58-decode its data (ten
digits at a time into a Python int, the fast pure-Python way; ``solders``
leaves instruction data as base58 text too), match tag and discriminator,
``struct.unpack`` the Borsh fields and make a row dict; then one DataFrame.
It does less than the decoder (no message body decoding, no token-account
owners, no typed frames). It is timed on every k-th transaction and scaled
per transaction; the two run in turn ``--repeat`` times, best of each.

The figure is CPU time (``time.process_time``: this process, all its
threads, so BLAS threads count), which other jobs on a shared machine do not
move; the wall clock of both is printed beside it.
"""

from __future__ import annotations

import argparse
import copy
import json
import struct
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite import Row, machine, table  # noqa: E402

from cctx_research.addressing import base58_encode  # noqa: E402
from cctx_research.ingest.solana import decode_replies  # noqa: E402
from cctx_research.ingest.solana_base58 import ALPHABET  # noqa: E402
from cctx_research.ingest.solana_layouts import (  # noqa: E402
    EMITTERS,
    EVENT_TAG,
    LAYOUTS,
    PROGRAMS,
    discriminator,
)

TARGET = 0.10
FIX = HERE.parent / "tests" / "fixtures" / "solana"
_INDEX = {c: i for i, c in enumerate(ALPHABET)}
_NAMES = {discriminator(n): n for n in EMITTERS}


def _templates() -> list[dict[str, Any]]:
    out = []
    for path in sorted(FIX.glob("*.json*")):
        if path.name.endswith(".message.json"):
            continue
        text = path.read_text()
        docs = [json.loads(line) for line in text.splitlines()] if path.suffix == ".jsonl" else [
            json.loads(text)]
        for doc in docs:
            for item in doc if isinstance(doc, list) else [doc]:
                item = item.get("result", item)
                if "transaction" in item and any(k in json.dumps(item) for k in PROGRAMS):
                    out.append(item)
    return out


def _b58(text: str) -> bytes:
    """The fast pure-Python base58 decode: ten digits per big-int step."""
    digits = [_INDEX[c] for c in text]
    number = 0
    for i in range(0, len(digits), 10):
        value = 0
        for d in digits[i : i + 10]:
            value = value * 58 + d
        number = number * 58 ** len(digits[i : i + 10]) + value
    body = number.to_bytes((number.bit_length() + 7) // 8, "big") if number else b""
    return b"\x00" * (len(text) - len(text.lstrip("1"))) + body


def _variants(templates: list[dict[str, Any]], per: int) -> list[list[dict[str, Any]]]:
    """``per`` copies of each template whose events carry other amounts (re-encoded)."""
    out = []
    for t in templates:
        copies = []
        for k in range(per):
            c = {**t, "meta": {**t["meta"]}}
            c["meta"]["innerInstructions"] = copy.deepcopy(t["meta"]["innerInstructions"])
            msg = t["transaction"]["message"]
            loaded = t["meta"].get("loadedAddresses") or {}
            keys = msg["accountKeys"] + loaded.get("writable", []) + loaded.get("readonly", [])
            for group in c["meta"]["innerInstructions"]:
                for ix in group["instructions"]:
                    program = keys[ix["programIdIndex"]]
                    if program not in PROGRAMS or len(ix["accounts"]) != 1:
                        continue
                    raw = bytearray(_b58(ix["data"]))
                    name = _NAMES.get(bytes(raw[8:16]))
                    if raw[:8] == EVENT_TAG and name in ("DepositForBurn", "MintAndWithdraw"):
                        at = 16 + LAYOUTS[(name, PROGRAMS[program])].field("amount").offset
                        raw[at:at + 8] = struct.pack("<Q", 1_000_000 + 7919 * k)
                        ix["data"] = base58_encode(bytes(raw))
            copies.append(c)
        out.append(copies)
    return out


def _transactions(n: int, per: int = 50) -> list[dict[str, Any]]:
    variants = _variants(_templates(), per)
    out = []
    for i in range(n):
        family = variants[i % len(variants)]
        base = family[(i // len(variants)) % len(family)]
        tx = {**base, "transaction": {**base["transaction"],
                                      "signatures": [base58_encode(i.to_bytes(64, "big"))]}}
        out.append(tx)
    return out


def baseline(replies: list[dict[str, Any]]) -> pd.DataFrame:
    """The per-transaction loop (see the module note)."""
    rows = []
    for r in replies:
        meta = r["meta"]
        if meta.get("err") is not None:
            continue
        msg = r["transaction"]["message"]
        loaded = meta.get("loadedAddresses") or {}
        keys = msg["accountKeys"] + loaded.get("writable", []) + loaded.get("readonly", [])
        inner = {g["index"]: g["instructions"] for g in meta["innerInstructions"]}
        position = 0
        for i, top in enumerate(msg["instructions"]):
            for ix in (top, *inner.get(i, ())):
                program = keys[ix["programIdIndex"]]
                if program in PROGRAMS and len(ix["accounts"]) == 1:
                    data = _b58(ix["data"])
                    name = _NAMES.get(data[8:16]) if data[:8] == EVENT_TAG else None
                    if name is not None:
                        layout = LAYOUTS[(name, PROGRAMS[program])]
                        row = {"tx_hash": r["transaction"]["signatures"][0], "slot": r["slot"],
                               "block_time": r.get("blockTime"), "log_index": position,
                               "event": name}
                        for f in layout.fields:
                            at = 16 + f.offset
                            if f.type in ("pubkey", "bytes32"):
                                row[f.name] = "0x" + data[at:at + 32].hex()
                            elif f.type == "u64":
                                row[f.name] = struct.unpack_from("<Q", data, at)[0]
                            elif f.type == "u32":
                                row[f.name] = struct.unpack_from("<I", data, at)[0]
                            else:
                                (size,) = struct.unpack_from("<I", data, at)
                                row[f.name] = "0x" + data[at + 4:at + 4 + size].hex()
                        rows.append(row)
                position += 1
    return pd.DataFrame(rows)


def _timed(fn: Any) -> tuple[Any, float, float]:
    """``fn()``'s value, its CPU seconds (this process, every thread) and its wall seconds."""
    cpu, wall = time.process_time(), time.perf_counter()
    value = fn()
    return value, time.process_time() - cpu, time.perf_counter() - wall


def run(n: int, repeat: int, sample: int) -> list[Row]:
    replies = _transactions(n)
    subset = replies[::sample]
    scale = len(replies) / len(subset)
    vec, loop = [float("inf")] * 2, [float("inf")] * 2  # best (cpu, wall) of each
    events = 0
    for _ in range(repeat):  # in turns, so that both meet the same load
        decoded, cpu, wall = _timed(lambda: decode_replies(replies))
        vec = [min(vec[0], cpu), min(vec[1], wall)]
        events = len(decoded.burns) + len(decoded.mints) + len(decoded.received)
        del decoded
        frame, cpu, wall = _timed(lambda: baseline(subset))
        loop = [min(loop[0], cpu * scale), min(loop[1], wall * scale)]
    check = decode_replies(subset)
    amounts = sorted(check.burns["amount_raw"].tolist() + check.mints["amount_raw"].tolist())
    assert amounts == sorted(frame["amount"].dropna().astype(int).tolist()), "decoders disagree"
    ratio, wall_ratio = loop[0] / vec[0], loop[1] / vec[1]
    print(f"{n:,} transactions, {events:,} events; per-transaction loop {loop[0]:.1f} s CPU "
          f"({loop[1]:.1f} s wall, scaled from {len(subset):,}), vectorised {vec[0]:.1f} s CPU "
          f"({vec[1]:.1f} s wall): {ratio:.1f}x by CPU time, {wall_ratio:.1f}x by wall clock "
          f"(target >= {1 / TARGET:.0f}x)")
    value, base = vec[0] / n * 1e6, loop[0] / n * 1e6
    return [
        Row("solana decode_replies vs per-transaction loop (CPU)", value, base, "us/tx",
            f"<= {TARGET:.2f}", value / base <= TARGET,
            f"{ratio:.1f}x faster by CPU time ({wall_ratio:.1f}x by wall clock); {n:,} "
            f"transactions ({events:,} events) in {vec[0]:.2f} s CPU; loop timed on "
            f"{len(subset):,} (every {sample}th) and scaled; best of {repeat}, in turns"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20k transactions")
    parser.add_argument("-n", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--sample", type=int, default=20)
    args = parser.parse_args()
    n = args.n or (20_000 if args.quick else 1_000_000)
    print(machine())
    print(table(run(n, args.repeat, args.sample)))


if __name__ == "__main__":
    main()
