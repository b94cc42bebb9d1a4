"""``getTransaction`` replies from JSON text: the front ends of the one reader.

A reply (encoding ``json``) is 3-20 kB of JSON, of which the CCTP decoder
reads the signature, slot and time, ``meta.err``, the account keys, the
instructions (program index, accounts, data), the inner instructions and
the token balances; the log messages, balances in lamports, rewards and
the rest are most of the text. Parsing all of it into dicts (``json``,
``orjson``) makes a Python object of every value, and those objects then
cost the garbage collector again. Here msgspec's decoder reads the text
into the structs below, which hold only those fields: the rest is skipped
in C, and no dict is made.

Both front ends hand their replies to the same
:class:`~cctx_research.ingest.solana.replies.Reader`: the typed structs
(:func:`flatten_text`), read by the walk through their attributes, and,
for what the structs do not fit, values parsed into dicts
(:func:`flatten_parsed`; orjson, or ``json`` for what only it reads). The
structs also answer ``reply["meta"]``, ``.get(...)`` and ``in`` as the
dicts do.

What the structs do not fit is parsed, with the same result: a file whose
text is not one list of replies or JSON Lines of replies, a block of lines
holding anything else (a JSON-RPC envelope, ``jsonParsed``, a
``MessageSent`` account, a bad line, a mistyped field), lines numbered as
in the whole file. ``tests/ingest/solana/test_text.py`` checks that both
readings agree.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable
from typing import Any

import msgspec
import orjson
from msgspec import UNSET, Raw, Struct, UnsetType

from .replies import BLOCK, Flat, Reader

__all__ = ["Reply", "Response", "flatten_parsed", "flatten_text", "line_documents",
           "text_documents"]  # fmt: skip

_LINES_BYTES = 1 << 22
"""About this many bytes of JSON Lines are decoded together (a few hundred replies): their
containers die young, so the garbage collector never walks many of them."""

_NONSPACE = re.compile(rb"\S")
_SEPARATORS = ("\x85", "\u2028", "\u2029")  # what str.splitlines() also splits lines at


class _Object(Struct, gc=False):
    """A struct read as the JSON object it was decoded from (a missing field is not in it)."""

    def __getitem__(self, key: str) -> Any:
        value = getattr(self, key, UNSET)
        if value is UNSET:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        value = getattr(self, key, UNSET)
        return default if value is UNSET else value

    def __contains__(self, key: str) -> bool:
        return getattr(self, key, UNSET) is not UNSET


class Instruction(_Object, gc=False):
    """A compiled instruction (encoding ``json``); fields keep the reply's own names.

    Its accounts are kept as their JSON text: a tuple for each of the ten or
    more instructions of a reply would be made, tracked by the garbage
    collector and freed, while only those of Circle's programs are read
    (:func:`~cctx_research.ingest.solana.walk.calls` reads them all
    at once; ``ix["accounts"]`` reads one).
    """

    programIdIndex: int
    accounts_json: Raw = msgspec.field(default=Raw(b"[]"), name="accounts")
    data: str | UnsetType = UNSET

    @property
    def accounts(self) -> tuple[int, ...]:
        return _ACCOUNTS.decode(self.accounts_json)


_ACCOUNTS = msgspec.json.Decoder(tuple[int, ...])


class InnerInstructions(_Object, gc=False):
    index: int
    instructions: tuple[Instruction, ...]


class LoadedAddresses(_Object, gc=False):
    writable: tuple[str, ...] = ()
    readonly: tuple[str, ...] = ()


class TokenBalance(_Object, gc=False):
    accountIndex: int
    mint: str
    owner: str | None = None


class Meta(_Object, gc=False):
    err: Any = UNSET
    innerInstructions: tuple[InnerInstructions, ...] | None = None
    loadedAddresses: LoadedAddresses | None = None
    preTokenBalances: tuple[TokenBalance, ...] | None = None
    postTokenBalances: tuple[TokenBalance, ...] | None = None


class Message(_Object, gc=False):
    accountKeys: tuple[str, ...]
    instructions: tuple[Instruction, ...]


class Transaction(_Object, gc=False):
    signatures: tuple[str, ...]
    message: Message


class Reply(_Object, gc=False):
    """One ``getTransaction`` result (encoding ``json``): the fields the decoder reads."""

    slot: int
    meta: Meta
    transaction: Transaction
    blockTime: int | None = None


class Response(_Object, gc=False):
    """A JSON-RPC response holding one reply (an error response does not fit: it is a bad
    entry, read as before)."""

    jsonrpc: str
    result: Reply
    error: None = None
    transaction: Any = UNSET  # a reply that also says jsonrpc: read as before


def _results(responses: list[Response]) -> list[Reply] | None:
    if any(r.transaction is not UNSET for r in responses):
        return None
    return [r.result for r in responses]


# each shape: (one line, a whole file), and what gives its replies (None if they do not fit)
_SHAPES = (
    (msgspec.json.Decoder(Reply), msgspec.json.Decoder(list[Reply] | Reply), list),
    (msgspec.json.Decoder(Response), msgspec.json.Decoder(list[Response] | Response), _results),
)


def flatten_text(data: bytes, source_file: str) -> Flat:
    """A :class:`~cctx_research.ingest.solana.replies.Flat` of a file's bytes.

    The same as :func:`flatten_parsed` of ``data``, the same errors too
    (``UnicodeDecodeError`` for text that is not UTF-8).
    """
    data = _without_bom(data)
    if not data.isascii() and any(c in data.decode("utf-8") for c in _SEPARATORS):
        return flatten_parsed(data, source_file)
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        return flatten_parsed(data, source_file)  # a line ends at a lone \r too
    end = data.find(b"\n")
    first = data[:end] if end >= 0 else data
    if end >= 0 and _NONSPACE.search(data, end) and _parses(first):
        return _lines(data, source_file)
    replies = _whole(data)
    if replies is None:  # not a list of replies: parse it
        return flatten_parsed(data, source_file)
    reader = Reader(source_file)
    for lo in range(0, len(replies), BLOCK):
        if not reader.typed(replies[lo : lo + BLOCK]):
            return flatten_parsed(data, source_file)
    return reader.finish()


def _whole(data: bytes) -> list[Reply] | None:
    for _, whole, replies in _SHAPES:
        try:
            found = whole.decode(data)
        except msgspec.DecodeError:
            continue
        return replies(found if isinstance(found, list) else [found])
    return None


def _block(text: memoryview) -> list[Reply] | None:
    """The replies of a block of lines, or None where the structs do not fit them all."""
    for line, _, replies in _SHAPES:
        try:
            found = line.decode_lines(text)
        except msgspec.DecodeError:
            continue
        return replies(found)
    return None


def _parses(line: bytes) -> bool:
    try:
        msgspec.json.decode(line)
    except msgspec.DecodeError:
        return False
    return True


def _text(data: bytes) -> str:
    """``data`` as a text file reads (universal newlines)."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def flatten_parsed(data: bytes, source_file: str) -> Flat:
    """A :class:`~cctx_research.ingest.solana.replies.Flat` of a file's bytes, every entry
    parsed into dicts (as :func:`json.loads` reads it, whole or one value a line)."""
    reader = Reader(source_file)
    reader.documents(text_documents(_text(_without_bom(data))))
    return reader.finish()


def _without_bom(data: bytes) -> bytes:
    return data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data


def _loads(text: bytes | str) -> Any:
    """``json.loads``, by orjson where it can (a third of the time); json's error otherwise."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)  # what only json reads (NaN, huge ints), or json's own error


def text_documents(text: str) -> list[tuple[Any, str | None]]:
    """The JSON values of a file's text (whole, or one per line): (value, None) or (None, why
    not)."""
    try:
        return [(_loads(text), None)]
    except json.JSONDecodeError:
        pass
    return line_documents(text.splitlines())


def line_documents(lines: Iterable[str], first: int = 1) -> list[tuple[Any, str | None]]:
    """One JSON value a line, the first numbered ``first``; blank lines are no entry."""
    out: list[tuple[Any, str | None]] = []
    for number, line in enumerate(lines, start=first):
        if not line.strip():
            continue
        try:
            out.append((_loads(line), None))
        except json.JSONDecodeError as exc:
            out.append((None, f"line {number}: not JSON ({exc.msg}): a truncated reply?"))
    return out


def _lines(data: bytes, source_file: str) -> Flat:
    """JSON Lines, a block of lines at a time; a block the structs do not fit is parsed."""
    reader = Reader(source_file)
    view = memoryview(data)
    start, size = 0, len(data)
    while start < size:
        cut = data.find(b"\n", min(start + _LINES_BYTES, size))
        stop = size if cut < 0 else cut + 1
        replies = _block(view[start:stop])
        if replies is None or not reader.typed(replies):
            number = data.count(b"\n", 0, start) + 1
            reader.documents(line_documents(_text(data[start:stop]).splitlines(), number))
        start = stop
    return reader.finish()
