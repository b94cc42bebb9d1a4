"""Read EVM event logs and block times from the files nodes and cryo write.

Logs come in two families:

- what a node returns for ``eth_getLogs``: a JSON list of log objects, a
  whole JSON-RPC response ``{"jsonrpc", "id", "result": [...]}``, a list of
  such responses, or JSON Lines (one log or one response per line). Numbers
  are hex quantities; some nodes add ``blockTimestamp``.
- transaction receipts (``eth_getTransactionReceipt``, ``eth_getBlockReceipts``):
  a receipt, a list of them, or responses holding them, in the same shapes.
  Their logs are read as above, each with the receipt's ``from`` (the
  transaction's sender) as ``transaction_from``, which ``eth_getLogs`` and
  cryo's ``logs`` dataset do not give.
- cryo's ``logs`` dataset as Parquet (binary columns as bytes) or CSV
  (binary columns as ``0x`` hex): ``block_number``, ``transaction_index``,
  ``log_index``, ``transaction_hash``, ``address``, ``topic0`` .. ``topic3``,
  ``data``, ``n_data_bytes``, ``chain_id``. cryo's JSON output (a list of
  such rows) reads too.

:func:`read_logs` turns any of them into the normalised log frame
(:mod:`cctx_research.ingest.evm.frame`); :func:`decode_logs` (re-exported
here from :mod:`cctx_research.ingest.evm.decoder`) decodes the CCTP events
in it. A log the reader cannot parse is kept as a row with its ``problem``
filled in, so the decoder lists it with the others, never drops it.

Examples
--------
>>> import json, tempfile, pathlib
>>> from cctx_research.ingest.evm.events import MESSAGE_SENT
>>> log = {"address": "0x" + "81" * 20, "topics": [MESSAGE_SENT.topic0], "data": "0x",
...        "blockNumber": "0x10", "transactionHash": "0x" + "ab" * 32, "logIndex": "0x3",
...        "transactionIndex": "0x0", "removed": False}
>>> path = pathlib.Path(tempfile.mkdtemp()) / "logs.json"
>>> _ = path.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "result": [log]}))
>>> frame = read_logs(path)
>>> int(frame.block_number[0]), int(frame.log_index[0]), frame.topic0[0] == MESSAGE_SENT.topic0
(16, 3, True)
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from cctx_research import schema
from cctx_research.errors import DataError
from cctx_research.ingest.evm.decoder import DecodedLogs, decode_logs
from cctx_research.ingest.evm.frame import BINARY, LOG_COLUMNS, conform_logs, is_binary
from cctx_research.ingest.files import sniff, suffix_kind
from cctx_research.ingest.hexcodec import binary_to_hex, large_binaries

__all__ = ["DecodedLogs", "decode_logs", "read_blocks", "read_logs"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike
_CRYO_LOGS = ("block_number", "log_index", "transaction_hash", "address", "topic0", "data")
_CRYO_BINARY = (
    "transaction_hash",
    "address",
    "topic0",
    "topic1",
    "topic2",
    "topic3",
    "data",
    "block_hash",
)
_INTEGERS = ("block_number", "transaction_index", "log_index", "block_timestamp", "chain_id")


class _Bad(Exception):
    """One entry the reader cannot use; the message says why."""


def _paths(path_or_paths: PathLike | Sequence[PathLike]) -> list[Path]:
    if isinstance(path_or_paths, (str, os.PathLike)):
        items = [path_or_paths]
    elif isinstance(path_or_paths, Sequence):
        items = list(path_or_paths)
    else:
        raise TypeError(
            f"pass a path or a list of paths to log files, got {type(path_or_paths).__name__}"
        )
    if not items:
        raise ValueError("no files given; pass a path or a non-empty list of paths")
    paths = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"each path must be a str or Path, got {type(item).__name__}")
        path = Path(item)
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {path}")
        paths.append(path)
    return paths


def _quantity(value: Any, name: str) -> int | None:
    """A JSON-RPC quantity (``"0x1b"``) or a plain integer; None when absent."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise _Bad(f"{name} {value!r} is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text, 16) if text[:2].lower() == "0x" else int(text)
        except ValueError:
            pass
    raise _Bad(f"{name} {str(value)[:40]!r} is not a hex quantity such as '0x1b'")


def _text(value: Any, name: str, *, required: bool = True) -> str | None:
    if value is None:
        if required:
            raise _Bad(f"missing {name}")
        return None
    if not isinstance(value, str):
        raise _Bad(f"{name} is a {type(value).__name__}, not a 0x hex string")
    return value.strip()


def _node_row(obj: dict[str, Any], sender: str | None = None) -> dict[str, Any]:
    """One log object (node's camelCase or cryo's snake_case) as a frame row; ``sender`` is
    the ``from`` of the receipt it came in."""
    if "topics" not in obj and "topic0" in obj:  # a cryo JSON row
        row = {
            k: obj.get(k)
            for k in ("chain_id", "address", "data", "topic0", "topic1", "topic2", "topic3")
        }
        row["tx_hash"] = obj.get("transaction_hash")
        row["transaction_from"] = obj.get("transaction_from", obj.get("from_address"))
        for k in ("block_number", "transaction_index", "log_index"):
            row[k] = _quantity(obj.get(k), k)
        row["chain_id"] = (
            None if row["chain_id"] is None else str(_quantity(row["chain_id"], "chain_id"))
        )
        return row
    if "blockNumber" in obj and obj["blockNumber"] is None:
        raise _Bad("pending log (blockNumber is null)")
    topics = obj.get("topics")
    if not isinstance(topics, list) or len(topics) > 4:
        raise _Bad("topics must be a list of at most 4 hex strings")
    row = {f"topic{i}": _text(t, f"topics[{i}]") for i, t in enumerate(topics)}
    row.update(
        block_number=_quantity(obj.get("blockNumber"), "blockNumber"),
        transaction_index=_quantity(obj.get("transactionIndex"), "transactionIndex"),
        log_index=_quantity(obj.get("logIndex"), "logIndex"),
        tx_hash=_text(obj.get("transactionHash"), "transactionHash"),
        address=_text(obj.get("address"), "address"),
        data=_text(obj.get("data"), "data"),
        removed=bool(obj.get("removed", False)),
        block_timestamp=_quantity(obj.get("blockTimestamp"), "blockTimestamp"),
        transaction_from=_text(sender, "from", required=False),
    )
    for name in ("block_number", "log_index"):
        if row[name] is None:
            raise _Bad(f"missing {'blockNumber' if name == 'block_number' else 'logIndex'}")
    return row


def _entries(
    doc: Any, where: str, *, line: int | None, sender: str | None = None
) -> Iterator[tuple[dict[str, Any] | None, str | None, str | None]]:
    """Log objects of one JSON document: (log, None, from) or (None, why not, None).

    ``from`` is the sender of the receipt a log came in (None for ``eth_getLogs``).
    """
    if isinstance(doc, list):
        for item in doc:
            if (
                isinstance(item, list)
                or (isinstance(item, dict) and _is_response(item))
                or _is_receipt(item)
            ):
                yield from _entries(item, where, line=line)
            elif isinstance(item, dict):
                yield item, None, sender
            else:
                yield None, "not a log object", None
    elif _is_receipt(doc):
        yield from _entries(doc["logs"], where, line=line, sender=doc.get("from"))
    elif isinstance(doc, dict) and _is_response(doc):
        result = doc.get("result")
        if doc.get("error") is not None:
            err = doc["error"]
            detail = err.get("message", err) if isinstance(err, dict) else err
            yield None, f"JSON-RPC error response: {str(detail)[:200]}", None
        elif isinstance(result, list) or _is_receipt(result):
            yield from _entries(result, where, line=line)
        else:
            yield None, "JSON-RPC result is not a list of logs or a receipt", None
    elif isinstance(doc, dict) and ("topics" in doc or "topic0" in doc):
        yield doc, None, sender
    elif line is not None:
        yield None, "not a log, a receipt or a JSON-RPC response", None
    else:
        raise DataError(
            f"{where} is not eth_getLogs output or receipts: expected a list of logs, a "
            "receipt (eth_getTransactionReceipt) or a list of them, a JSON-RPC response "
            "with a 'result' list or receipt, a list of responses, or JSON Lines of either"
        )


def _is_receipt(obj: Any) -> bool:
    """A transaction receipt: its logs, and the transaction's fields around them."""
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("logs"), list)
        and "topics" not in obj
        and ("transactionHash" in obj or "from" in obj)
    )


def _is_response(obj: dict[str, Any]) -> bool:
    return "result" in obj or "error" in obj


def _json_documents(path: Path) -> Iterator[tuple[Any, str | None, int | None]]:
    """(document, problem, line) of a JSON file, or of each line of a JSON Lines file."""
    text = path.read_text(encoding="utf-8-sig")
    try:
        yield json.loads(text), None, None
        return
    except json.JSONDecodeError:
        pass
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line), None, number
        except json.JSONDecodeError as exc:
            yield None, f"line {number}: not JSON ({exc.msg})", number


def _read_json_logs(path: Path) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for doc, problem, line in _json_documents(path):
        where = f"{path}" + (f" line {line}" if line else "")
        entries = [(None, problem, None)] if problem else _entries(doc, where, line=line)
        for obj, why, sender in entries:
            row: dict[str, Any] = {}
            if why is None:
                try:
                    row = _node_row(obj, sender)
                except _Bad as exc:
                    why = str(exc)
            if why is not None:
                row = {
                    "problem": why
                    if why.startswith("line") or line is None
                    else f"line {line}: {why}"
                }
            rows.append(row)
    frame = pd.DataFrame.from_records(
        rows, columns=[c for c in LOG_COLUMNS if c not in ("index", "source_file")]
    )
    for name in ("block_number", "transaction_index", "log_index", "block_timestamp"):
        frame[name] = pd.array(frame[name].to_numpy(dtype=object), dtype=schema.NULLABLE_INT)
    for name in ("tx_hash", "address", "topic0", "topic1", "topic2", "topic3", "data",
                 "transaction_from"):
        frame[name] = frame[name].astype(object).where(frame[name].notna(), None)
    frame["removed"] = frame["removed"].astype("boolean").fillna(False)
    return frame


def _table_frame(
    table: pa.Table, path: Path, required: Sequence[str], what: str, *, binary: bool = False
) -> pd.DataFrame:
    """A cryo table as a frame: binary columns as ``0x`` hex text, or kept as bytes
    (``binary=True``; no copy, and none of hex's twice-the-size text)."""
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise DataError(
            f"{path} lacks the columns {missing} of {what}; it has {table.column_names[:20]}"
        )
    columns = {}
    for name in table.column_names:
        col = table.column(name)
        if (
            pa.types.is_binary(col.type)
            or pa.types.is_large_binary(col.type)
            or pa.types.is_fixed_size_binary(col.type)
        ):
            col = large_binaries(col) if binary else binary_to_hex(col)
        columns[name] = col
    mapping = {pa.large_string(): schema.STRING, pa.string(): schema.STRING,
               pa.large_binary(): BINARY}  # fmt: skip
    return pa.table(columns).to_pandas(types_mapper=mapping.get)


def _integers(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Parse integer columns of a CSV; a value that is not an integer becomes a problem."""
    problem = pd.Series(pd.NA, index=frame.index, dtype=schema.STRING)
    for name in _INTEGERS:
        if name not in frame:
            continue
        raw = frame[name].astype(schema.STRING).str.strip()
        parsed = pd.to_numeric(raw, errors="coerce")
        wrong = raw.notna() & (raw != "") & (parsed.isna() | (parsed % 1 != 0))
        reason = pd.Series(f"{name} is not an integer", index=frame.index, dtype=schema.STRING)
        problem = problem.where(problem.notna() | ~wrong, reason)
        values = parsed.where(~wrong)
        frame[name] = (
            values.astype("Int64").astype(schema.STRING)
            if name == "chain_id"
            else values.astype("Int64")
        )
    frame["problem"] = problem
    return frame


def _read_table_logs(path: Path, kind: str, binary: bool) -> pd.DataFrame:
    what = "cryo's logs dataset (cryo logs ...)"
    if kind == "parquet":
        frame = _table_frame(pq.read_table(path), path, _CRYO_LOGS, what, binary=binary)
        for name in _INTEGERS:
            if name in frame:
                frame[name] = frame[name].astype("Int64")
        if "chain_id" in frame:
            frame["chain_id"] = frame["chain_id"].astype(schema.STRING)
        return frame
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    missing = [c for c in _CRYO_LOGS if c not in frame.columns]
    if missing:
        raise DataError(
            f"{path} lacks the columns {missing} of {what}; it has {list(frame.columns)[:20]}"
        )
    return _integers(frame, path)


def read_logs(
    path_or_paths: PathLike | Sequence[PathLike], *, binary: bool = False
) -> pd.DataFrame:
    """Read event logs from ``eth_getLogs`` JSON or cryo files into one frame.

    Parameters
    ----------
    path_or_paths : str, Path or list of them
        Files of any of the shapes in the module note; the format of each is
        told from its content.
    binary : bool
        Keep the binary columns of cryo's Parquet (hashes, addresses, topics,
        data) as bytes (``pandas.ArrowDtype(pyarrow.large_binary())``), not
        ``0x`` hex text: :func:`decode_logs` reads either the same, and a
        large file decodes faster and in less memory. Other formats hold
        hex text whatever this says.

    Returns
    -------
    DataFrame
        The normalised log frame (:data:`~cctx_research.ingest.evm.frame.LOG_COLUMNS`),
        one row per log, in file order; ``source_file`` and ``index`` (the
        log's position in its file) name each row.

    Raises
    ------
    FileNotFoundError
        If a path is not a file.
    DataError
        If a file is not one of these formats (the message says what was expected).
    """
    frames = []
    for path in _paths(path_or_paths):
        kind = sniff(path).kind
        frame = _read_json_logs(path) if kind == "json" else _read_table_logs(path, kind, binary)
        frames.append(conform_logs(frame, source_file=str(path)))
        logger.debug("read %d logs from %s (%s)", len(frame), path, kind)
    if len(frames) == 1:
        return frames[0]
    return pd.concat(_one_spelling(frames), ignore_index=True)


def _one_spelling(frames: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """Frames whose hex columns all hold bytes, or all text: a column that is bytes in
    one file and text in another (Parquet beside JSON) becomes hex text in all."""
    for name in LOG_COLUMNS:
        kinds = {is_binary(f[name]) for f in frames}
        if len(kinds) > 1:
            for f in frames:
                if is_binary(f[name]):
                    f[name] = pd.Series(binary_to_hex(large_binaries(f[name])),
                                        dtype=schema.STRING)  # fmt: skip
    return frames


def _block_rows(path: Path) -> pd.DataFrame:
    rows, bad = [], []
    for doc, problem, line in _json_documents(path):
        if problem:
            bad.append(problem)
            continue
        items = doc if isinstance(doc, list) else [doc]
        for item in items:
            block = item.get("result", item) if isinstance(item, dict) else None
            try:
                if not isinstance(block, dict):
                    raise _Bad("not a block object (eth_getBlockByNumber result)")
                number = _quantity(block.get("number", block.get("block_number")), "number")
                stamp = _quantity(block.get("timestamp"), "timestamp")
                if number is None or stamp is None:
                    raise _Bad("a block needs 'number' and 'timestamp'")
                rows.append({"block_number": number, "timestamp": stamp})
            except _Bad as exc:
                bad.append(
                    f"entry {len(rows) + len(bad)}"
                    + (f" (line {line})" if line else "")
                    + f": {exc}"
                )
    if bad:
        raise DataError(
            f"{path}: {len(bad)} unusable block entries, first: {bad[:3]}; pass "
            "eth_getBlockByNumber results (list, responses or JSON Lines) or "
            "cryo's blocks dataset"
        )
    return pd.DataFrame(rows, columns=["block_number", "timestamp"])


def _folder_blocks(folder: Path) -> pd.DataFrame:
    parts = sorted(p for p in folder.iterdir()
                   if p.is_file() and suffix_kind(p) is not None and not p.name.startswith("."))
    if not parts:
        raise DataError(f"the directory {str(folder)!r} holds no blocks file",
                        hint="pass cryo's blocks files (.parquet or .csv) or their directory")
    return pd.concat([read_blocks(p) for p in parts], ignore_index=True)


def read_blocks(path: PathLike) -> pd.DataFrame:
    """Read block times from cryo's blocks dataset or ``eth_getBlockByNumber`` results.

    Parameters
    ----------
    path : str or Path
        cryo ``blocks`` Parquet or CSV (``block_number``, ``timestamp``,
        optionally ``chain_id``), or JSON: a list of block objects, JSON-RPC
        responses whose ``result`` is a block, a list of those, or JSON Lines.
        A directory (cryo's ``--output-dir``) is read file by file.

    Returns
    -------
    DataFrame
        ``chain_id`` (string, only when the file has it), ``block_number``
        (int64) and ``timestamp`` (UTC), one row per block.

    Raises
    ------
    DataError
        If a file lacks the columns or holds entries that are not blocks.
    """
    if isinstance(path, (str, os.PathLike)) and Path(path).is_dir():
        return _folder_blocks(Path(path))
    (source,) = _paths(path)
    kind = sniff(source).kind
    if kind == "json":
        frame = _block_rows(source)
    else:
        what = "cryo's blocks dataset (cryo blocks ...)"
        if kind == "parquet":
            frame = _table_frame(pq.read_table(source), source, ("block_number", "timestamp"),
                                 what, binary=True)  # fmt: skip
        else:
            frame = pd.read_csv(source, dtype=str, keep_default_na=False, na_values=[""])
            frame = _integers(frame, source)
            if frame["problem"].notna().any() or not {"block_number", "timestamp"} <= set(frame):
                raise DataError(
                    f"{source} is not {what}: it needs integer block_number and "
                    f"timestamp columns; it has {list(frame.columns)[:20]}"
                )
    out = pd.DataFrame(index=range(len(frame)))
    if "chain_id" in frame:
        out["chain_id"] = frame["chain_id"].astype("Int64").astype(schema.STRING).to_numpy()
    out["block_number"] = frame["block_number"].to_numpy(dtype=np.int64)
    seconds = frame["timestamp"].to_numpy(dtype=np.int64)
    out["timestamp"] = pd.to_datetime(seconds, unit="s", utc=True).astype(schema.TIMESTAMP)
    return out
