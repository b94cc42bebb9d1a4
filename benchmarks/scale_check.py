"""The whole-history benchmark's checks: its logs against eth-abi, the ledgers against its plan.

:class:`LogCheck` encodes a sample of each group of logs ``scale_data``
builds again, one transfer at a time, with the encoders of
``tests/ingest/logs.py`` (eth-abi from the published event signatures,
``eth_abi.packed`` for the messages), and compares topics and data byte for
byte. :func:`ledger_agrees` and :func:`floor_agrees` compare what ``load``
and the SQL floor linked with what the generator planted.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE.parent / "tests") not in sys.path:
    sys.path.insert(0, str(HERE.parent / "tests"))

from ingest import logs as abi  # noqa: E402

__all__ = ["LogCheck", "floor_agrees", "ledger_agrees", "same_ledger"]


def _hex(matrix: np.ndarray, i: int) -> str:
    return "0x" + bytes(matrix[i]).hex()


def _body(s: Any, i: int, *, attested: bool) -> bytes:
    return abi.burn_body(
        s.version,
        burn_token=_hex(s.usdc_src, i),
        mint_recipient=abi.pad(_hex(s.recipient, i)),
        amount=int(s.amount[i]),
        message_sender=_hex(s.sender, i),
        max_fee=int(s.max_fee[i]),
        fee_executed=int(s.fee[i]) if attested else 0,
        hook_data=bytes(s.hook[i]),
    )


def _burn(s: Any, i: int) -> list[tuple[list[str], str]]:
    """MessageSent and DepositForBurn of transfer ``i`` of the group, encoded with eth-abi."""
    v = s.version
    message = abi.message(
        v,
        source_domain=int(s.src[i]),
        destination_domain=int(s.dst[i]),
        nonce=int(s.nonce[i]) if v == 1 else bytes(32),
        sender=abi.pad(_hex(s.messenger_src, i)),
        recipient=abi.pad(_hex(s.messenger_dst, i)),
        destination_caller=abi.pad(_hex(s.dest_caller, i)),
        body=_body(s, i, attested=False),
        min_finality_threshold=int(s.min_finality[i]),
    )
    values: dict[str, Any] = {
        "burnToken": _hex(s.usdc_src, i),
        "amount": int(s.amount[i]),
        "depositor": _hex(s.sender, i),
        "mintRecipient": abi.pad(_hex(s.recipient, i)),
        "destinationDomain": int(s.dst[i]),
        "destinationTokenMessenger": abi.pad(_hex(s.messenger_dst, i)),
        "destinationCaller": abi.pad(_hex(s.dest_caller, i)),
    }
    if v == 1:
        values["nonce"] = int(s.nonce[i])
    else:
        values.update(maxFee=int(s.max_fee[i]), minFinalityThreshold=int(s.min_finality[i]),
                      hookData=bytes(s.hook[i]))  # fmt: skip
    return [
        abi.encode_event(abi.SIGNATURES[("MessageSent", v)], {"message": message}),
        abi.encode_event(abi.SIGNATURES[("DepositForBurn", v)], values),
    ]


def _mint(s: Any, i: int) -> list[tuple[list[str], str]]:
    """MintAndWithdraw and MessageReceived of transfer ``i`` of the group, encoded with eth-abi."""
    v, fee = s.version, int(s.fee[i])
    mint: dict[str, Any] = {"mintRecipient": _hex(s.recipient, i), "mintToken": _hex(s.usdc_dst, i),
                            "amount": int(s.amount[i]) - fee}  # fmt: skip
    received: dict[str, Any] = {
        "caller": _hex(s.relayer, i),
        "sourceDomain": int(s.src[i]),
        "nonce": int(s.nonce[i]) if v == 1 else bytes(s.nonce32[i]),
        "sender": abi.pad(_hex(s.messenger_src, i)),
        "messageBody": _body(s, i, attested=True),
    }
    if v == 2:
        mint["feeCollected"] = fee
        received["finalityThresholdExecuted"] = int(s.executed[i])
    return [
        abi.encode_event(abi.SIGNATURES[("MintAndWithdraw", v)], mint),
        abi.encode_event(abi.SIGNATURES[("MessageReceived", v)], received),
    ]


class LogCheck:
    """Compare ``sample`` transfers of every group with eth-abi's encoding; count the logs."""

    def __init__(self, sample: int) -> None:
        self.sample = sample
        self.checked = 0

    def __call__(self, s: Any, logs: tuple, side: int) -> None:
        if self.sample <= 0 or s.n == 0:
            return
        for i in np.unique(np.linspace(0, s.n - 1, min(self.sample, s.n)).astype(int)):
            expected = (_burn if side == 0 else _mint)(s, int(i))
            for (_, topics, data), (want_topics, want_data) in zip(logs, expected, strict=True):
                got_topics = ["0x" + bytes(t[i]).hex() for t in topics]
                got_data = "0x" + bytes(data[i]).hex()
                if got_topics != want_topics or got_data != want_data:
                    raise AssertionError(
                        f"transfer {int(s.tid[i])} (V{s.version}, side {side}): the generated "
                        f"log differs from eth-abi's\n topics {got_topics}\n  want  "
                        f"{want_topics}\n data {got_data}\n  want {want_data}"
                    )
                self.checked += 1


def ledger_agrees(planted: dict, result: dict) -> tuple[bool, str]:
    """Every transfer in the ledger once, every minted one linked, the rest pending."""
    ok = (result["rows"] == planted["transfers"] and result["linked"] == planted["minted"]
          and result["pending"] == planted["never_minted"]
          and result["mint_only"] == 0)  # fmt: skip
    return ok, (
        f"{result['rows']:,} rows ({planted['transfers']:,} planted), {result['linked']:,} linked "
        f"({planted['minted']:,}), {result['pending']:,} pending ({planted['never_minted']:,}), "
        f"{result['mint_only']:,} mint-only (0)"
    )


def floor_agrees(planted: dict, result: dict) -> tuple[bool, str]:
    """The SQL floor links every minted transfer, and leaves the others burn-only."""
    ok = result["linked"] == planted["minted"] and result["rows"] == planted["transfers"]
    return ok, (
        f"{result['linked']:,} linked ({planted['minted']:,} planted), {result['rows']:,} rows "
        f"({planted['transfers']:,})"
    )


def same_ledger(reference: Path, other: Path, *, memory_limit: str = "2GiB") -> tuple[bool, str]:
    """Whether two written ledgers hold the same rows, every column of ``reference``, as
    multisets (a lazy engine's ledger is in its dataset's order), compared in DuckDB."""
    import duckdb
    import pyarrow.parquet as pq

    names = pq.read_schema(reference).names
    cols = ", ".join(f'"{c}"::TIMESTAMPTZ::VARCHAR' if c.endswith("_timestamp")
                     else f'"{c}"::VARCHAR' for c in names)  # fmt: skip
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{memory_limit}'")
    a, b = (f"SELECT {cols} FROM read_parquet('{p}')" for p in (reference, other))
    left = con.execute(f"SELECT count(*) FROM ({a} EXCEPT ALL {b})").fetchall()[0][0]
    right = con.execute(f"SELECT count(*) FROM ({b} EXCEPT ALL {a})").fetchall()[0][0]
    con.close()
    if left == right == 0:
        return True, f"equal to load's ledger, {len(names)} columns"
    return False, f"differs from load's ledger: {left} rows only in load's, {right} only here"
