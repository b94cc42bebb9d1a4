"""The whole-history benchmark's floor: decoding and linking CCTP logs directly in DuckDB SQL.

What ``cctx.load`` does to a sync dataset, written as one query over its
Parquet parts, and nothing more: decode ``MessageSent`` (header and burn
body), ``DepositForBurn``, ``MessageReceived`` (header fields and the
attested body) and ``MintAndWithdraw`` of both versions; keep the messages
whose header sender is a TokenMessenger of their source domain (token
transfers); join each ``DepositForBurn`` to the ``MessageSent`` before it in
its transaction, and each ``MessageReceived`` to the ``MintAndWithdraw``
before it; link V1 on (source domain, nonce) and V2 on the content a burn
and its mint share (domains, burn token, mint recipient, sender, amount,
max fee, hook data), identical transfers paired in time order on each side;
write one row a transfer (linked, or one side alone) to Parquet with the
fields a ledger needs, addresses and hashes as ``0x`` hex.

It checks less than ``load`` (no malformed-row reports, no duplicates
across files, no per-file chain checks) and builds no ids or token
symbols: a floor, the time and memory a direct query needs.

The layouts are Circle's (``MessageV2.sol``, ``BurnMessageV2.sol`` and the V1 ones; the CCTP
reference); offsets below are 1-based byte positions, as DuckDB slices
blobs: ``b[i:j]`` is bytes i..j inclusive.
"""

from __future__ import annotations

import time
from pathlib import Path

from scale_plan import CHAINS

from cctx_research import chains

__all__ = ["floor", "query"]

_TOPIC0 = {  # keccak256 of the events' signatures (recomputed by the generator's check)
    "sent": "8c5261668696ce22758910d05bab8f186d6eb247ceac2af2e82c7dc17669b036",
    "burn1": "2fa9ca894982930190727e75500a97d8dc500233a5065e0f3126c48fbe0343c0",
    "burn2": "0c8c1cbdc5190613ebd485511d4e2812cfa45eecb79d845893331fedad5130a5",
    "mint1": "1b2a7ff080b8cb6ff436ce0372e399692bbfb6d4ae5766fd8d58a7b8cc6142e6",
    "mint2": "50c55e915134d457debfa58eb6f4342956f8b0616d51a89a3659360178e1ab63",
    "received1": "58200b4c34ae05ee816d710053fff3fb75af4395915d3d2a771b24aa10e3cc5d",
    "received2": "ff48c13eda96b1cceacc6b9edeedc9e9db9d6226afbc30146b720c19d3addb1c",
}

_MACROS = """
CREATE OR REPLACE MACRO u(b) AS b::BIT::BIGINT;
CREATE OR REPLACE MACRO word(b, i) AS b[32 * i + 1 : 32 * i + 32];
CREATE OR REPLACE MACRO low(b, i) AS u(b[32 * i + 25 : 32 * i + 32]);
CREATE OR REPLACE MACRO hx(b) AS '0x' || lower(hex(b));
CREATE OR REPLACE MACRO tail(b, i) AS b[32 * i + 33 : 32 * i + 32 + low(b, i)];
"""
"""u: big-endian bytes as an integer; word/low: the i-th 32-byte word and its low 8 bytes;
tail: the bytes of a ``bytes`` parameter whose length word is word i."""

_QUERY = """
WITH logs AS NOT MATERIALIZED (
  SELECT d.domain, l.transaction_hash AS tx, l.log_index, l.block_number AS block,
         l.block_timestamp AS ts, l.topic0, l.topic1, l.topic2, l.topic3, l.data
  FROM read_parquet({files}) l JOIN (VALUES {domains}) d(chain_id, domain) USING (chain_id)
), messengers AS (
  SELECT * FROM (VALUES {messengers}) m(source_domain, sender)
), sent AS (
  SELECT domain, tx, log_index, tail(data, 1) AS msg FROM logs WHERE topic0 = unhex('{sent}')
), sent_fields AS (
  SELECT domain, tx, log_index, u(msg[5:8]) AS source_domain,
         CASE WHEN u(msg[1:4]) = 0 THEN u(msg[13:20]) END AS nonce,
         CASE WHEN u(msg[1:4]) = 0 THEN msg[21:52] ELSE msg[45:76] END AS sender
  FROM sent
), deposits AS (
  SELECT domain AS source_domain, tx, log_index, block, ts,
         CASE WHEN topic0 = unhex('{burn1}') THEN 1 ELSE 2 END AS version,
         CASE WHEN topic0 = unhex('{burn1}') THEN topic2 ELSE topic1 END[13:32] AS burn_token,
         CASE WHEN topic0 = unhex('{burn1}') THEN topic3 ELSE topic2 END[13:32] AS sender,
         low(data, 0) AS amount, word(data, 1) AS mint_recipient,
         low(data, 2) AS destination_domain,
         CASE WHEN topic0 = unhex('{burn2}') THEN low(data, 5) END AS max_fee,
         CASE WHEN topic0 = unhex('{burn2}') THEN u(topic3[25:32]) END AS min_finality,
         CASE WHEN topic0 = unhex('{burn2}') THEN tail(data, 7) END AS hook
  FROM logs WHERE topic0 IN (unhex('{burn1}'), unhex('{burn2}'))
), burns AS (
  SELECT d.*, s.nonce FROM deposits d
  JOIN sent_fields s ON s.domain = d.source_domain AND s.tx = d.tx AND s.log_index = d.log_index - 1
  JOIN messengers m ON m.source_domain = s.source_domain AND m.sender = s.sender
), received AS (
  SELECT domain AS destination_domain, tx, log_index, block, ts, topic1[13:32] AS relayer,
         CASE WHEN topic0 = unhex('{received1}') THEN 1 ELSE 2 END AS version,
         low(data, 0) AS source_domain, word(data, 1) AS sender,
         CASE WHEN topic0 = unhex('{received1}') THEN u(topic2[25:32]) END AS nonce,
         CASE WHEN topic0 = unhex('{received2}') THEN topic2 END AS nonce32,
         CASE WHEN topic0 = unhex('{received2}') THEN u(topic3[25:32]) END AS executed,
         tail(data, 3) AS body
  FROM logs WHERE topic0 IN (unhex('{received1}'), unhex('{received2}'))
), mints AS (
  SELECT domain, tx, log_index, low(data, 0) AS minted,
         CASE WHEN topic0 = unhex('{mint2}') THEN low(data, 1) END AS fee
  FROM logs WHERE topic0 IN (unhex('{mint1}'), unhex('{mint2}'))
), arrivals AS (
  SELECT r.destination_domain, r.tx, r.log_index, r.block, r.ts, r.relayer, r.version,
         r.source_domain, r.nonce, r.nonce32, r.executed, r.body[17:36] AS burn_token,
         r.body[37:68] AS mint_recipient, u(r.body[93:100]) AS amount,
         r.body[113:132] AS sender,
         CASE WHEN r.version = 2 THEN u(r.body[157:164]) END AS max_fee,
         CASE WHEN r.version = 2 THEN r.body[229:octet_length(r.body)] END AS hook,
         m.fee
  FROM received r
  JOIN messengers g ON g.source_domain = r.source_domain AND g.sender = r.sender
  LEFT JOIN mints m ON m.domain = r.destination_domain AND m.tx = r.tx
       AND m.log_index = r.log_index - 1
), v1 AS (
  SELECT b.*, a.*
  FROM (SELECT * FROM burns WHERE version = 1) b
  FULL JOIN (SELECT * FROM arrivals WHERE version = 1) a
    ON a.source_domain = b.source_domain AND a.nonce = b.nonce
), b2 AS (
  SELECT *, row_number() OVER (PARTITION BY {key} ORDER BY ts, log_index) AS k
  FROM burns WHERE version = 2
), a2 AS (
  SELECT *, row_number() OVER (PARTITION BY {key} ORDER BY ts, log_index) AS k
  FROM arrivals WHERE version = 2
), v2 AS (
  SELECT b.*, a.* FROM b2 b FULL JOIN a2 a ON {on} AND a.k = b.k
), linked AS (
  SELECT * EXCLUDE (k, k_1) FROM v2 UNION ALL BY NAME SELECT * FROM v1
)
SELECT
  coalesce(source_domain, source_domain_1) AS source_domain,
  coalesce(destination_domain, destination_domain_1) AS destination_domain,
  coalesce(version, version_1) AS cctp_version,
  coalesce(CAST(coalesce(nonce, nonce_1) AS VARCHAR), hx(nonce32)) AS nonce,
  coalesce(amount, amount_1) AS amount_raw, fee AS fee_raw,
  coalesce(max_fee, max_fee_1) AS max_fee_raw,
  min_finality AS min_finality_threshold, executed AS finality_threshold_executed,
  hx(coalesce(sender, sender_1)) AS message_sender,
  hx(coalesce(mint_recipient, mint_recipient_1)[13:32]) AS mint_recipient,
  hx(coalesce(burn_token, burn_token_1)) AS burn_token,
  hx(coalesce(hook, hook_1)) AS hook_data,
  hx(tx) AS burn_tx_hash, log_index AS burn_log_index, block AS burn_block,
  to_timestamp(ts) AS burn_timestamp,
  hx(tx_1) AS mint_tx_hash, log_index_1 AS mint_log_index, block_1 AS mint_block,
  to_timestamp(ts_1) AS mint_timestamp, hx(relayer) AS relayer
FROM linked
"""

_KEY = ("source_domain", "destination_domain", "burn_token", "mint_recipient", "sender", "amount",
        "max_fee", "hook")  # fmt: skip


def _messengers() -> str:
    """(domain, TokenMessenger as bytes32) of every version, for the token-transfer check."""
    rows = []
    for c in CHAINS:
        for version in (1, 2):
            found = chains.contracts(c.domain, version)
            if found is not None and found.token_messenger:
                rows.append(f"({c.domain}, unhex('{'00' * 12}{found.token_messenger[2:]}'))")
    return ", ".join(rows)


def query(files: list[Path]) -> str:
    """The floor's SELECT over ``files`` (Parquet log parts of the chains in ``scale_plan``)."""
    listed = "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"
    return _QUERY.format(
        files=listed,
        domains=", ".join(f"({c.chain_id}::UBIGINT, {c.domain})" for c in CHAINS),
        messengers=_messengers(),
        key=", ".join(_KEY),
        on=" AND ".join(f"a.{k} = b.{k}" for k in _KEY),
        **_TOPIC0,
    )


def floor(files: list[Path], out: Path, *, memory_limit: str | None = None,
          temp: Path | None = None) -> dict:  # fmt: skip
    """Run the floor from ``files`` to ``out`` (Parquet); its seconds, rows and links.

    ``seconds`` covers the query and the write (Parquet with DuckDB's default compression,
    snappy, as ``DataFrame.to_parquet`` writes a ledger); the counts are read back after.
    """
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    if memory_limit:
        con.execute(f"SET memory_limit = '{memory_limit}'")
    if temp is not None:
        con.execute(f"SET temp_directory = '{temp}'")
    con.execute(_MACROS)
    started = time.perf_counter()
    con.execute(f"COPY ({query(files)}) TO '{out}' (FORMAT parquet)")
    seconds = time.perf_counter() - started
    rows, linked, pending = con.execute(
        f"SELECT count(*), count(*) FILTER (burn_tx_hash IS NOT NULL AND mint_tx_hash IS NOT NULL),"
        f" count(*) FILTER (mint_tx_hash IS NULL) FROM read_parquet('{out}')"
    ).fetchone()
    con.close()
    return {"seconds": seconds, "rows": rows, "linked": linked, "pending": pending}
