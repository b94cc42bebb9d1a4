"""Reading replies straight from JSON text gives what parsing them first gives, always.

The reference is the reading of parsed values (``text.flatten_parsed``,
every entry parsed into dicts with ``json``/``orjson``); the fast path is
``text.flatten_text`` (what ``decode``, ``decode_json`` and
``load(format="solana")`` use). Replies: the real ones of
tests/fixtures/solana (README there), each fixture file as it is, and copies
written the ways files vary: as ``sync`` writes them (JSON Lines of bare
results), as JSON-RPC responses, as a list, pretty-printed, and with the
faults a file may hold (each named below).
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from cctx_research.addressing import base58_encode
from cctx_research.ingest import solana
from cctx_research.ingest.solana import decoder
from cctx_research.ingest.solana import replies as solana_read
from cctx_research.ingest.solana import text as solana_json
from tests.solana_node.standin import FIXTURES, recorded

FIELDS = ("signature", "slot", "block_time", "entry", "ev_tx", "ev_position", "ev_code",
          "ev_data", "accounts", "skipped", "duplicates", "problems", "entries")  # fmt: skip


def _results() -> list[dict[str, Any]]:
    """Every recorded ``getTransaction`` result (those with only ``meta.status`` are altered
    copies, left out)."""
    return [r for r in recorded(synthetic=True) if "err" in r["meta"]]


def _same(path: Path) -> solana_read.Flat:
    """Check the fast reading of ``path`` against the reference; return the fast one."""
    fast = solana_json.flatten_text(path.read_bytes(), str(path))
    reference = solana_json.flatten_parsed(path.read_bytes(), str(path))
    for name in FIELDS:
        assert getattr(fast, name) == getattr(reference, name), name
    got, want = solana.decode(path), decoder._decoded(reference)
    assert got.counts == want.counts
    for kind in ("burns", "mints", "sent", "received", "bad"):
        pd.testing.assert_frame_equal(getattr(got, kind), getattr(want, kind))
    return fast


def _typed_blocks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the blocks read as typed replies (the fast path taken, not a fallback)."""
    sizes: list[int] = []
    original = solana_read.Reader.typed

    def spy(self: solana_read.Reader, replies: list[Any]) -> bool:
        done = original(self, replies)
        if done:
            sizes.append(len(replies))
        return done

    monkeypatch.setattr(solana_read.Reader, "typed", spy)
    return sizes


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json*")), ids=lambda p: p.name)
def test_every_fixture_reads_the_same(path: Path) -> None:
    _same(path)


def test_replies_as_sync_writes_them_are_read_typed(tmp_path, monkeypatch) -> None:
    results = _results()
    path = tmp_path / "part.jsonl"
    path.write_bytes(b"\n".join(json.dumps(r).encode() for r in results) + b"\n")
    typed = _typed_blocks(monkeypatch)
    flat = _same(path)
    assert typed == [len(results)] * 2  # (flatten, then decode) every reply typed, none parsed
    assert len(flat.ev_data) >= len(results)


@pytest.mark.parametrize("shape", ["responses", "list", "pretty list", "one reply"])
def test_other_shapes_of_replies_are_read_typed(shape, tmp_path, monkeypatch) -> None:
    results = _results()
    responses = [{"jsonrpc": "2.0", "id": i, "result": r} for i, r in enumerate(results)]
    text = {
        "responses": "\n".join(json.dumps(r) for r in responses),
        "list": json.dumps(results),
        "pretty list": json.dumps(responses, indent=1),
        "one reply": json.dumps(responses[3], indent=2),
    }[shape]  # fmt: skip
    path = tmp_path / "replies.json"
    path.write_text(text)
    typed = _typed_blocks(monkeypatch)
    _same(path)
    assert sum(typed) == 2 * (1 if shape == "one reply" else len(results))


def _varied(rng: random.Random, n: int, changes: int = 17) -> list[str]:
    """``n`` lines of replies as sync writes them, most changed in one of the ways files vary."""
    base = _results()
    lines = []
    for i in range(n):
        r = copy.deepcopy(base[rng.randrange(len(base))])
        r["transaction"]["signatures"] = [base58_encode(rng.randrange(8).to_bytes(64, "big"))]
        change = rng.randrange(changes) if rng.random() < 0.7 else -1
        if change == 0:  # failed, its inner instructions not recorded
            r["meta"]["err"] = {"InstructionError": [0, {"Custom": 1}]}
            r["meta"]["innerInstructions"] = None
        elif change == 1:  # a unit error, spelled as a string
            r["meta"]["err"] = "AccountNotFound"
        elif change == 2:  # recorded with its status only
            del r["meta"]["err"]
            r["meta"]["status"] = {"Ok": None}
        elif change == 3:  # CCTP programs called, but no event (two accounts each)
            for group in r["meta"]["innerInstructions"]:
                for ix in group["instructions"]:
                    ix["accounts"] = [*ix["accounts"], 0]
        elif change == 4:  # a program index that is text
            r["transaction"]["message"]["instructions"][0]["programIdIndex"] = "3"
        elif change == 5:  # an account the transaction does not have
            r["meta"]["innerInstructions"][0]["instructions"][0]["programIdIndex"] = 999
        elif change == 6:  # a JSON-RPC response, or an error one
            r = {"jsonrpc": "2.0", "id": i, "result": r} if rng.random() < 0.5 else {
                "jsonrpc": "2.0", "id": i, "error": {"code": -32009, "message": "skipped"}}
        elif change == 7:  # an instruction without data
            del r["transaction"]["message"]["instructions"][-1]["data"]
        elif change == 8:  # non-ASCII text, and a line separator inside a string
            r["meta"]["logMessages"] = ["Program log: Memo: caf\u00e9", "x\u2028y"][
                : rng.randrange(1, 3)]
        elif change == 15:  # non-ASCII text
            r["meta"]["logMessages"] = ["Program log: Memo: caf\u00e9 \u2713"]
        elif change == 9:  # a truncated line
            lines.append(json.dumps(r)[: rng.randrange(10, 400)])
            continue
        elif change == 10:  # a MessageSent account of getProgramAccounts
            owner = "CCTPmbSD7gX1bxKPAmg77w8oFzNFpaQiQUWD43TKaecd"
            r = {"pubkey": "11111111111111111111111111111111",
                 "account": {"data": ["AAAA", "base64"], "owner": owner}}
        elif change == 11:  # no inner instructions recorded
            r["meta"].pop("innerInstructions")
        elif change == 12:  # a token balance without owner, and one that is not an object
            balances = r["meta"].get("postTokenBalances") or []
            if balances:
                balances[0].pop("owner", None)
            if rng.random() < 0.3:
                r["meta"]["preTokenBalances"] = [7]
        elif change == 16:  # an event's accounts spelled otherwise: not numbers, or none
            ix = r["meta"]["innerInstructions"][-1]["instructions"][-1]
            ix["accounts"] = rng.choice([["7"], [7.0], [], [[7]], "7", None, [-1]])
        elif change == 13:  # loaded addresses of a v0 transaction, and a blank line
            r["meta"]["loadedAddresses"] = {"writable": [base58_encode(bytes(32))],
                                            "readonly": []}
            lines.append("")
        lines.append(json.dumps(r, ensure_ascii=rng.random() < 0.5))
    return lines


@pytest.mark.parametrize("accounts", [[], [7], [7, 8], " [ 7 ] ", " [ ] ", ["7"], [7.0], [[7]],
                                      "7", None, [-1], {"7": 7}])  # fmt: skip
def test_accounts_spelled_otherwise_read_the_same(accounts, tmp_path) -> None:
    # an event instruction's accounts: counted in their JSON text, or read as parsed
    lines = []
    for r in _results():
        ix = r["meta"]["innerInstructions"][-1]["instructions"][-1]
        ix["accounts"] = None
        text = json.dumps(r)
        spelled = accounts if isinstance(accounts, str) and "[" in accounts else json.dumps(
            accounts)  # fmt: skip
        lines.append(text.replace('"accounts": null', f'"accounts": {spelled}'))
    path = tmp_path / "accounts.jsonl"
    path.write_text("\n".join(lines) + "\n")
    _same(path)


@pytest.mark.parametrize("seed", range(8))
def test_altered_copies_read_the_same(seed, tmp_path) -> None:
    rng = random.Random(seed)
    lines = _varied(rng, rng.choice([3, 40, 400]))
    ending = rng.choice(["\n", "\r\n"])
    text = ending.join(lines) + rng.choice(["", ending])
    data = text.encode()
    if seed % 3 == 0:
        data = b"\xef\xbb\xbf" + data  # a byte-order mark
    if seed % 4 == 1:
        data = data.replace(b"\n", b"\r", 1)  # one line ended by \r alone
    path = tmp_path / "varied.jsonl"
    path.write_bytes(data)
    flat = _same(path)
    assert flat.entries > 0


def test_small_blocks_read_the_same(tmp_path, monkeypatch) -> None:
    # blocks of a few lines: typed and parsed blocks follow each other in one file
    monkeypatch.setattr(solana_json, "_LINES_BYTES", 3000)
    path = tmp_path / "small.jsonl"
    lines = _varied(random.Random(99), 300, changes=8)  # no line separator in a string
    path.write_text("\n".join(lines) + "\n")
    typed = _typed_blocks(monkeypatch)
    _same(path)
    assert len(typed) > 5


def test_decode_json_reads_text_as_decode_reads_a_file(tmp_path) -> None:
    path = tmp_path / "part.jsonl"
    path.write_text("\n".join(_varied(random.Random(5), 60)))
    from_file, from_text = solana.decode(path), solana.decode_json(path.read_bytes(),
                                                                   source_file=str(path))
    assert from_file.counts == from_text.counts
    for kind in ("burns", "mints", "sent", "received", "bad"):
        pd.testing.assert_frame_equal(getattr(from_file, kind), getattr(from_text, kind))
    same = solana.decode_json(path.read_text(), source_file=str(path))
    pd.testing.assert_frame_equal(same.burns, from_file.burns)


def test_decode_json_says_what_to_pass() -> None:
    with pytest.raises(TypeError, match=r"bytes or str.*decode_replies"):
        solana.decode_json([{"transaction": {}}])  # type: ignore[arg-type]


def test_text_that_is_not_utf8_raises_as_reading_the_file_does(tmp_path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(json.dumps(_results()[0]).encode() + b'\n{"x": "\xff"}\n')
    with pytest.raises(UnicodeDecodeError):
        solana_json.flatten_parsed(path.read_bytes(), str(path))
    with pytest.raises(UnicodeDecodeError):
        solana.decode(path)
