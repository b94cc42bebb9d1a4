"""Decoding cryo's EVM log files in DuckDB SQL, all files at once, into event tables.

The SQL form of :func:`~cctx_research.ingest.evm.decoder.decode_logs` and of the
reader's guards (:mod:`cctx_research.ingest.ledger.guards`) for one shape of
input: cryo's ``logs`` dataset as Parquet (binary columns as bytes) with
``block_timestamp`` (what ``sync`` writes). The files of a load are read
together by DuckDB (:mod:`.sql_logs`: one relation of every log, each row keeping its
file's place and its row in the file), and each event family (``DepositForBurn``,
``MessageSent``, ``MintAndWithdraw`` and ``MessageReceived``, V1 and V2) is
decoded with byte slices in one statement into its event table (``cx_deposits``,
``cx_sent``, ``cx_received``, ``cx_mints``), which DuckDB keeps under its memory
limit and spills past it: no pandas frame of logs or of events is made, and no
table of the logs either (the steps of a family are nested subqueries).

The rules are the pandas decoder's: a log is read once per file (the same chain,
transaction and log index again is a duplicate), logs of other events are
skipped, an event its chain's CCTP contract did not emit is skipped
(``unknown_emitter``), a message body is read as a burn only when its header
sender is a TokenMessenger of its source domain (or of a domain the registry
lists none for) and its length fits a burn message.

What the SQL does not do is *describe* a bad log. A malformed log (a wrong
length, a bad offset, a number past int64, a time outside CCTP's era, an
amount past USDC's supply), testnet data, or logs whose contracts say another
chain than their ``chain_id`` are marked as they are decoded (``_flag``) and
counted by a few aggregates over the event tables at the end; when there is
one, :func:`decode_files` returns ``None`` and the load is read by the pandas
reader instead, which names each such log as ``errors=`` asks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ... import chains
from ..ledger import guards
from . import events as ev
from . import sql_logs
from .decoder import CHUNK_LOGS

__all__ = ["EVENT_TABLES", "decode_files"]

EVENT_TABLES = ("cx_deposits", "cx_sent", "cx_received", "cx_mints")
"""The event tables :func:`decode_files` fills, one per event family."""

_MACROS = """
CREATE OR REPLACE MACRO cx_u(b) AS CASE WHEN octet_length(b) > 0 THEN b::BIT::BIGINT END;
CREATE OR REPLACE MACRO cx_uu(b) AS CASE WHEN octet_length(b) > 0 THEN b::BIT::UBIGINT END;
CREATE OR REPLACE MACRO cx_zero(b, n) AS b = unhex(repeat('00', n));
CREATE OR REPLACE MACRO cx_w(d, i) AS d[32 * i + 1 : 32 * i + 32];
CREATE OR REPLACE MACRO cx_below(w, lead, n) AS
  octet_length(w) = 32 AND w < unhex(repeat('00', 31 - n) || lead || repeat('00', n));
CREATE OR REPLACE MACRO cx_fits(w, k) AS cx_below(w, '01', k);
CREATE OR REPLACE MACRO cx_i64(w) AS cx_below(w, '80', 7);
CREATE OR REPLACE MACRO cx_lowat(d, s) AS cx_u(d[s + 24 : s + 31]);
CREATE OR REPLACE MACRO cx_a32at(d, s) AS CASE WHEN cx_zero(d[s:s + 11], 12)
  THEN d[s + 12:s + 31] ELSE d[s:s + 31] END;
CREATE OR REPLACE MACRO cx_addr(t) AS cx_below(t, '01', 20);
"""
"""Byte helpers (1-based, inclusive slices): ``cx_u`` a big-endian integer of up to 8 bytes,
``cx_zero(b, n)`` b is n zero bytes (n a constant, so the zeros are folded once),
``cx_w`` the i-th 32-byte word, ``cx_below(w, lead, n)`` a 32-byte word below the word of
byte ``lead`` followed by n zero bytes (blobs compare byte by byte, unsigned: for words of
32 bytes, as numbers; one comparison with a folded constant, no slice), ``cx_fits(w, k)`` a
word whose value fits its low k bytes, ``cx_i64`` a uint256 word within int64, ``cx_addr`` a
topic holding a 20-byte address; of the word of ``d`` at byte s, ``cx_lowat(d, s)`` its low
8 bytes as an integer and ``cx_a32at(d, s)`` a bytes32 address as the decoder spells it
(20 bytes when padded), each one slice of ``d``, not word then part (a slice is a copy).
An ABI ``bytes`` parameter: :func:`_abi_bytes` (its offset and length read once a row)."""


def _abi_bytes(j: int, ok: str, name: str) -> list[str]:
    """Steps adding ``name``, the ABI ``bytes`` parameter of ``data`` whose offset is word j,
    and ``ok``, whether its offset and length are sound (``name`` is null where not)."""
    o, n, k = f"_o{j}", f"_n{j}", f"_k{j}"
    sound = f"{k} AND {n} <= (octet_length(data) - {o} - 32)::UBIGINT"
    return [
        f"SELECT *, cx_lowat(data, {32 * j + 1}) AS {o}, cx_fits(cx_w(data, {j}), 8) AS {k}0 "
        "FROM {src}",
        f"SELECT *, {k}0 AND {o} >= 0 AND {o} % 32 = 0 AND {o} + 32 <= octet_length(data) "
        f"AS {k} FROM {{src}}",
        f"SELECT *, CASE WHEN {k} THEN cx_uu(data[{o} + 25 : {o} + 32]) END AS {n} FROM {{src}}",
        f"SELECT *, {sound} AS {ok}, CASE WHEN {sound} "
        f"THEN data[{o} + 33 : {o} + 32 + {n}::BIGINT] END AS {name} FROM {{src}}",
    ]

_TABLES = """
CREATE OR REPLACE TABLE cx_deposits (f INT, idx BIGINT, ev INT, domain BIGINT, tx BLOB,
  log_index BIGINT, block BIGINT, ts BIGINT, address BLOB, txfrom BLOB, version INT,
  nonce UBIGINT, burn_token BLOB, amount BIGINT, sender BLOB, mint_recipient BLOB,
  destination_domain BIGINT, dtm BLOB, dcaller BLOB, max_fee BIGINT, min_finality BIGINT,
  hook BLOB, _flag TINYINT);
CREATE OR REPLACE TABLE cx_sent (f INT, idx BIGINT, ev INT, domain BIGINT, tx BLOB,
  log_index BIGINT, block BIGINT, ts BIGINT, address BLOB, txfrom BLOB, version INT,
  source_domain BIGINT, destination_domain BIGINT, nonce VARCHAR, hsender BLOB,
  recipient BLOB, dcaller BLOB, min_finality BIGINT, burn_token BLOB, mint_recipient BLOB,
  amount BIGINT, message_sender BLOB, max_fee BIGINT, hook BLOB, _flag TINYINT);
CREATE OR REPLACE TABLE cx_received (f INT, idx BIGINT, ev INT, domain BIGINT, tx BLOB,
  log_index BIGINT, block BIGINT, ts BIGINT, address BLOB, txfrom BLOB, version INT,
  caller BLOB, source_domain BIGINT, nonce VARCHAR, sender BLOB, executed BIGINT,
  burn_token BLOB, mint_recipient BLOB, amount BIGINT, message_sender BLOB,
  max_fee BIGINT, fee_executed BIGINT, hook BLOB, _flag TINYINT);
CREATE OR REPLACE TABLE cx_mints (f INT, idx BIGINT, ev INT, domain BIGINT, tx BLOB,
  log_index BIGINT, block BIGINT, ts BIGINT, address BLOB, txfrom BLOB, version INT,
  amount BIGINT, fee BIGINT, _flag TINYINT);
"""

_BASE_BAD = """(block IS NULL OR log_index IS NULL OR octet_length(tx) IS DISTINCT FROM 32
  OR octet_length(address) IS DISTINCT FROM 20 OR data IS NULL)"""


def _topics(n: int) -> str:
    """A log of an event with ``n`` indexed parameters has topics 1..n of 32 bytes, no more."""
    have = [f"octet_length(topic{j}) IS DISTINCT FROM 32" for j in range(1, n + 1)]
    more = [f"topic{j} IS NOT NULL" for j in range(n + 1, 4)]
    return "(" + " OR ".join([*have, *more]) + ")" if have or more else "false"


_TOKEN_STEP = """SELECT x.*, CASE WHEN x.src NOT IN (SELECT domain FROM cx_tm)
  OR t.word IS NOT NULL THEN x.body0 END AS body
FROM {src} x LEFT JOIN (SELECT DISTINCT domain, word FROM cx_tm) t
  ON t.domain = x.src AND t.word = x.hs"""
"""The body, where a TokenMessenger (or a testnet one) of the source domain sent it, or the
domain has none: only those are read as burns."""


def _body_step(body: str, version: str) -> str:
    """The step adding ``bok``, whether ``body`` is a burn message (``BurnMessage``/``V2``
    of ``version``), and ``bv2``, whether it is one of V2: each computed once a row."""
    return (f"SELECT *, (({version}) = 1 AND octet_length({body}) = 132 OR "
            f"({version}) = 2 AND octet_length({body}) >= 228) AS bok, "
            f"({version}) = 2 AS bv2 FROM {{src}}")


def _body(body: str) -> dict[str, str]:
    """The burn message fields of ``body`` (1-based offsets of ``BurnMessage``/``V2``), read
    where ``bok`` (:func:`_body_step`) says the body is one."""
    return {
        "burn_token": f"CASE WHEN bok THEN cx_a32at({body}, 5) END",
        "mint_recipient": f"CASE WHEN bok THEN cx_a32at({body}, 37) END",
        "amount": f"CASE WHEN bok THEN cx_lowat({body}, 69) END",
        "message_sender": f"CASE WHEN bok THEN cx_a32at({body}, 101) END",
        "max_fee": f"CASE WHEN bok AND bv2 THEN cx_lowat({body}, 133) END",
        "fee_executed": f"CASE WHEN bok AND bv2 THEN cx_lowat({body}, 165) END",
        "hook": f"CASE WHEN bok AND bv2 THEN {body}[229:octet_length({body})] END",
        "bad": f"(bok AND NOT (cx_i64({body}[69:100]) AND (NOT bv2 OR cx_i64({body}[133:164])"
        f" AND cx_i64({body}[165:196]) AND cx_i64({body}[197:228]))))",
    }


_COMMON = "f, idx, ev, domain, tx, log_index, block, ts, address, txfrom"


def _deposits() -> tuple[list[str], str, str]:
    """(the SELECT of ``cx_deposits``' fields, the malformed-log test) of DepositForBurn."""
    v1 = "ev = 0"
    fields = f"""f, idx, ev, domain, tx, log_index, block, ts, address, txfrom,
      CASE WHEN {v1} THEN 1 ELSE 2 END AS version,
      CASE WHEN {v1} THEN cx_uu(topic1[25:32]) END AS nonce,
      CASE WHEN {v1} THEN topic2 ELSE topic1 END[13:32] AS burn_token,
      cx_lowat(data, 1) AS amount,
      CASE WHEN {v1} THEN topic3 ELSE topic2 END[13:32] AS sender,
      cx_a32at(data, 33) AS mint_recipient, cx_lowat(data, 65) AS destination_domain,
      cx_a32at(data, 97) AS dtm, cx_a32at(data, 129) AS dcaller,
      CASE WHEN NOT {v1} THEN cx_lowat(data, 161) END AS max_fee,
      CASE WHEN NOT {v1} THEN cx_lowat(topic3, 1) END AS min_finality,
      CASE WHEN NOT {v1} THEN hook6 END AS hook"""
    bad = f"""{_topics(3)} OR ({v1} AND octet_length(data) <> 160)
      OR (NOT {v1} AND octet_length(data) < 256)
      OR NOT cx_i64(cx_w(data, 0)) OR NOT cx_fits(cx_w(data, 2), 4)
      OR NOT cx_addr(CASE WHEN {v1} THEN topic2 ELSE topic1 END)
      OR NOT cx_addr(CASE WHEN {v1} THEN topic3 ELSE topic2 END)
      OR ({v1} AND NOT cx_fits(topic1, 8))
      OR (NOT {v1} AND NOT (cx_i64(cx_w(data, 5)) AND cx_fits(topic3, 4)
                            AND okh))"""
    return _abi_bytes(6, "okh", "hook6"), fields, bad


def _mints() -> tuple[list[str], str, str]:
    v1 = "ev = 2"
    fields = f"""{_COMMON},
      CASE WHEN {v1} THEN 1 ELSE 2 END AS version, cx_lowat(data, 1) AS amount,
      CASE WHEN NOT {v1} THEN cx_lowat(data, 33) END AS fee"""
    bad = f"""{_topics(2)} OR octet_length(data) <> CASE WHEN {v1} THEN 32 ELSE 64 END
      OR NOT cx_addr(topic1) OR NOT cx_addr(topic2) OR NOT cx_i64(cx_w(data, 0))
      OR (NOT {v1} AND NOT cx_i64(cx_w(data, 1)))"""
    return [], fields, bad


def _sent() -> tuple[list[str], str, str]:
    """MessageSent: the header (V1 116 bytes, V2 148) and the burn body after it."""
    steps = [
        *_abi_bytes(0, "okm", "m"),
        "SELECT *, cx_u(m[1:4]) AS mv, octet_length(m) AS ml FROM {src}",
        """SELECT *, CASE WHEN mv = 1 THEN m[149:ml] ELSE m[117:ml] END AS body0,
           cx_u(m[5:8]) AS src, CASE WHEN mv = 1 THEN m[45:76] ELSE m[21:52] END AS hs
           FROM {src}""",
        _TOKEN_STEP,
    ]
    version = "CASE WHEN mv = 1 THEN 2 ELSE 1 END"
    steps.append(_body_step("body", version))
    b = _body("body")
    fields = f"""{_COMMON}, {version} AS version,
      src AS source_domain, cx_u(m[9:12]) AS destination_domain,
      CASE WHEN mv = 1 THEN '0x' || lower(hex(m[13:44]))
           ELSE CAST(cx_uu(m[13:20]) AS VARCHAR) END AS nonce,
      hs AS hsender, cx_a32at(m, CASE WHEN mv = 1 THEN 77 ELSE 53 END) AS recipient,
      cx_a32at(m, CASE WHEN mv = 1 THEN 109 ELSE 85 END) AS dcaller,
      CASE WHEN mv = 1 THEN cx_u(m[141:144]) END AS min_finality,
      {b['burn_token']} AS burn_token, {b['mint_recipient']} AS mint_recipient,
      {b['amount']} AS amount, {b['message_sender']} AS message_sender,
      {b['max_fee']} AS max_fee, {b['hook']} AS hook"""
    bad = f"""{_topics(0)} OR octet_length(data) < 64 OR NOT okm
      OR ml < 4 OR mv NOT IN (0, 1) OR ml < CASE WHEN mv = 1 THEN 148 ELSE 116 END
      OR {b['bad']}"""
    return steps, fields, bad


def _received() -> tuple[list[str], str, str]:
    v1 = "ev = 5"
    version = f"CASE WHEN {v1} THEN 1 ELSE 2 END"
    steps = [
        *_abi_bytes(2, "okb", "body0"),
        "SELECT *, cx_lowat(data, 1) AS src, cx_w(data, 1) AS hs FROM {src}",
        _TOKEN_STEP,
        _body_step("body", version),
    ]
    b = _body("body")
    fields = f"""{_COMMON}, {version} AS version,
      topic1[13:32] AS caller, src AS source_domain,
      CASE WHEN {v1} THEN CAST(cx_uu(topic2[25:32]) AS VARCHAR)
           ELSE '0x' || lower(hex(topic2)) END AS nonce,
      hs AS sender, CASE WHEN NOT {v1} THEN cx_lowat(topic3, 1) END AS executed,
      {b['burn_token']} AS burn_token, {b['mint_recipient']} AS mint_recipient,
      {b['amount']} AS amount, {b['message_sender']} AS message_sender,
      {b['max_fee']} AS max_fee, {b['fee_executed']} AS fee_executed, {b['hook']} AS hook"""
    bad = f"""{_topics(2)} AND {v1} OR {_topics(3)} AND NOT {v1}
      OR octet_length(data) < 128 OR NOT cx_addr(topic1) OR NOT cx_fits(cx_w(data, 0), 4)
      OR ({v1} AND NOT cx_fits(topic2, 8)) OR (NOT {v1} AND NOT cx_fits(topic3, 4))
      OR NOT okb OR {b['bad']}"""
    return steps, fields, bad


_FAMILIES: dict[str, tuple[tuple[int, ...], str, Callable[[], tuple[list[str], str, str]]]] = {
    "cx_deposits": ((0, 1), "token_messenger", _deposits),
    "cx_mints": ((2, 3), "token_messenger", _mints),
    "cx_sent": ((4,), "message_transmitter", _sent),
    "cx_received": ((5, 6), "message_transmitter", _received),
}
"""Each event table: its events' places in :data:`~.events.EVENTS`, the contract that emits
them (:func:`~cctx_research.ingest.ledger.guards.emitters`) and its SQL."""


def _blob(hex_text: str) -> str:
    return f"unhex('{hex_text.removeprefix('0x').lower()}')"


def _padded(address: str) -> str:
    return _blob(address.removeprefix("0x").rjust(64, "0"))


def _setup(con: Any) -> None:
    """The macros, the event tables and the registry's TokenMessengers as a table."""
    con.execute(_MACROS)
    con.execute(_TABLES)
    testnet = [a for a, what in guards.TESTNET_CONTRACTS.items() if "TokenMessenger" in what]
    rows = []
    for domain in chains.all_domains():
        known = chains.token_messengers(domain)
        if known:
            words = {_padded(a) for a in known if len(a) in (42, 66)}
            words |= {_padded(a) for a in testnet}
            rows += [f"({domain}, {w}, {int(any(w == _padded(t) for t in testnet))})"
                     for w in sorted(words)]  # fmt: skip
    con.execute("CREATE OR REPLACE TABLE cx_tm (domain BIGINT, word BLOB, testnet BOOLEAN)")
    if rows:
        con.execute(f"INSERT INTO cx_tm VALUES {', '.join(rows)}")


def _event_case() -> str:
    whens = " ".join(f"WHEN {_blob(e.topic0)} THEN {k}" for k, e in enumerate(ev.EVENTS))
    return f"CASE topic0 {whens} END"


def _emitters(con: Any) -> None:
    """Circle's contracts of each domain by role, for the unknown-emitter skip."""
    rows = [f"({d}, {sql_logs.quote(role)}, {_blob(a)})" for d in chains.all_domains()
            for role in ("token_messenger", "message_transmitter")
            for a in sorted(guards.emitters(d, role))]  # fmt: skip
    con.execute("CREATE OR REPLACE TABLE cx_emit (domain BIGINT, role VARCHAR, address BLOB)")
    if rows:
        con.execute(f"INSERT INTO cx_emit VALUES {', '.join(rows)}")


def _family(table: str, logs: str, domain: str) -> str:
    """The INSERT of one event family, decoded in one statement over every file.

    ``_flag`` marks what the checks read at the end: 0 an event kept, 1 one its chain's
    contract did not emit (``unknown_emitter``), 2 a malformed log."""
    codes, role, build = _FAMILIES[table]
    topics = ", ".join(_blob(ev.EVENTS[k].topic0) for k in codes)
    src = f"""(SELECT l.*, {_event_case()} AS ev, {domain} AS domain FROM {logs} l
      ANTI JOIN cx_dup d ON d.f = l.f AND d.idx = l.idx
      WHERE topic0 IN ({topics}))"""
    steps, fields, bad = build()
    for step in steps:  # each a column or two, so no expression is written out twice
        src = "(" + step.replace("{src}", src) + ")"
    return f"""INSERT INTO {table} SELECT {fields},
      CASE WHEN coalesce({_BASE_BAD} OR {bad}, true) THEN 2
           WHEN e_address IS NULL THEN 1 ELSE 0 END AS _flag
      FROM {src} AS x LEFT JOIN (SELECT domain AS e_domain, address AS e_address FROM cx_emit
                                 WHERE role = '{role}') e
        ON e_domain = x.domain AND e_address = x.address"""


def _refused(con: Any, domains: dict[int, set[int]], now: int) -> bool:
    """Whether the decoded events hold something the guards refuse or the chain check raises
    for: testnet contracts or tokens, contracts of other chains only, a message whose source
    domain is not its chain's, a time outside CCTP's era, an amount past the supply."""
    testnet = ", ".join(_blob(a) for a in guards.TESTNET_CONTRACTS)
    padded = ", ".join(_padded(a) for a in guards.TESTNET_CONTRACTS)
    launch = int(guards.CCTP_LAUNCH.timestamp())
    cap = guards.USDC_SUPPLY_CAP_RAW
    checks = []
    for table in EVENT_TABLES:
        token = "burn_token IN ({testnet})" if table == "cx_deposits" else (
            "burn_token IN ({testnet}) OR burn_token IN ({padded})")
        token = "false" if table == "cx_mints" else token.format(testnet=testnet, padded=padded)
        checks.append(f"SELECT count(*) FROM {table} WHERE _flag = 0 AND (address IN ({testnet}) "
                      f"OR {token} OR ts < {launch} OR ts > {now + 86_400} OR amount > {cap})")
    checks.append("SELECT count(*) FROM cx_sent WHERE _flag = 0 AND source_domain <> domain")
    return any(con.execute(q).fetchone()[0] for q in checks) or _foreign(con, domains)


def _foreign(con: Any, domains: dict[int, set[int]]) -> bool:
    """Whether a contract of a file's events is a CCTP contract of one other chain only."""
    distinct = " UNION ".join(f"SELECT DISTINCT f, address FROM {t} WHERE _flag = 0"
                              for t in EVENT_TABLES)  # spelt once a contract, not once a log
    found = con.execute(f"SELECT f, '0x' || lower(hex(address)) FROM ({distinct})").fetchall()
    for f, address in found:
        owners = chains.contract_domains(address)
        if len(owners) == 1 and not owners <= domains.get(f, set()):
            return True
    return False


def _tally(con: Any) -> dict[int, tuple[int, int, int]] | None:
    """Each file's (events read of the four families, malformed, unknown emitter); None when
    a log is malformed."""
    union = " UNION ALL ".join(f"SELECT f, _flag FROM {t}" for t in EVENT_TABLES)
    found = {f: (n, bad, unknown) for f, n, bad, unknown in con.execute(
        f"SELECT f, count(*), count(*) FILTER (_flag = 2), count(*) FILTER (_flag = 1) "
        f"FROM ({union}) GROUP BY f").fetchall()}  # fmt: skip
    return None if any(bad for _, bad, _ in found.values()) else found


def decode_files(con: Any, files: Sequence[Path],
                 progress: Callable[[str, int, int], None] | None = None
                 ) -> list[dict[str, int]] | None:  # fmt: skip
    """Decode ``files`` into the event tables of ``con``; each file's counts.

    The files are read together: each event family is decoded in one statement over all of
    them, and the reader's checks are aggregates over the event tables at the end.
    ``progress(stage, done, total)`` is told when the files have been read (``"read"``) and
    as each of the four families is decoded (``"decode"``). Returns ``None`` when the load
    needs the pandas reader (see the module note); the tables must not be used then.

    Each event row keeps ``f`` (the file's place in ``files``), ``idx`` (the log's row in
    its file), ``ev`` (the event's place in :data:`~.events.EVENTS`) and ``_flag`` (0 for the
    events the sides take): the order the pandas decoder gives its frames is ``f``,
    ``idx // CHUNK_LOGS``, ``ev``, ``idx``.
    """
    _setup(con)
    _emitters(con)
    if not files:
        return []
    logs = sql_logs.sources(files)
    known = sql_logs.domains(con, logs)
    if known is None:
        return None
    domains, domain = known
    dup = sql_logs.duplicates(con, logs)
    if progress is not None:
        progress("read", len(files), len(files))
    for k, table in enumerate(_FAMILIES):
        con.execute(_family(table, logs, domain))
        if progress is not None:
            progress("decode", k + 1, len(_FAMILIES))
    con.execute("DROP TABLE cx_dup")
    tally = _tally(con)
    if tally is None or _refused(con, domains, int(time.time())):
        return None
    counts = []
    for f, path in enumerate(files):
        n, _, unknown = tally.get(f, (0, 0, 0))
        rows = sql_logs.rows(path)
        counts.append({"rows_read": rows, "duplicates": dup.get(f, 0),
                       "other_events": rows - dup.get(f, 0) - n, "unknown_emitter": unknown,
                       "decoded": n - unknown})  # fmt: skip
    return counts


ORDER = f"f, idx // {CHUNK_LOGS}, ev, idx"
"""The order of the pandas decoder's event rows, as an SQL ``ORDER BY`` list."""
