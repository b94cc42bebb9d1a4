"""Which files ``load`` reads, and reading one of them as a table.

``paths`` is a path, a glob, a directory or a list of any of them. A
directory is read file by file (every file whose name ends in a known
suffix), except a directory of Parquet files (a hive-partitioned dataset,
``year=2024/part-0.parquet`` ...), which is one table. Tables are CSV
(compressed too: ``.csv.gz`` ...), Parquet, or JSON: a list of records or
JSON Lines (one record a line).
"""

from __future__ import annotations

import glob
import json
import logging
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .. import storage
from ..errors import CoverageWarning, DataError
from ..provenance import Provenance

__all__ = ["Sniffed", "Table", "expand", "read_sidecar", "read_table", "sniff", "suffix_kind"]

logger = logging.getLogger(__name__)

_CSV = (".csv", ".tsv")
_PARQUET = (".parquet", ".pq")
_JSON = (".json", ".jsonl", ".ndjson")
_COMPRESSED = (".gz", ".bz2", ".zst", ".xz", ".zip")


@dataclass
class Table:
    """One file read as a table.

    ``first`` is the number that problem reports give the first row: its
    line (2 in a CSV, whose header is line 1; 1 in JSON Lines) or 0 where
    rows are numbered by position (Parquet, a JSON list).
    """

    path: str
    frame: pd.DataFrame
    kind: str  # "csv", "parquet" or "json"
    first: int
    provenance: Provenance | None = None


@dataclass(frozen=True)
class Sniffed:
    """What a file holds, told once from its first bytes (names can lie)."""

    kind: str
    """``"parquet"``, ``"json"``, ``"csv"`` or ``"dataset"`` (a directory of Parquet)."""
    logs: bool
    """JSON that holds event logs (``topics``) or JSON-RPC responses (``jsonrpc``)."""
    solana: bool = field(default=False, repr=False)
    """JSON of Solana ``getTransaction`` replies (``signatures``, ``innerInstructions``)."""


_HEAD = 65_536


def sniff(path: Path) -> Sniffed:
    """Tell a file's format from its content: Parquet's magic bytes, JSON's first character.

    Compressed files and files whose first bytes say nothing are told by
    their name (:func:`suffix_kind`).

    Raises
    ------
    DataError
        If the path does not exist, or neither its content nor its name tells its format.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "logs.txt"
    >>> _ = p.write_text('[{"topics": ["0x1"], "data": "0x"}]')
    >>> sniff(p)
    Sniffed(kind='json', logs=True)
    """
    if path.is_dir():
        return Sniffed("dataset", False)
    if not path.is_file():
        raise DataError(f"no such file or directory: {str(path)!r}")
    by_name = suffix_kind(path)
    if any(s.lower() in _COMPRESSED for s in path.suffixes):
        return Sniffed(by_name or "csv", False)
    with path.open("rb") as handle:
        head = handle.read(_HEAD)
    if head[:4] == b"PAR1":
        return Sniffed("parquet", False)
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] in (b"[", b"{") or (not text and by_name == "json"):
        # a getTransaction reply: keys no log has (nodes write "meta" before "transaction",
        # so a large first reply may show only its meta here; a cut one may lack it)
        solana = any(k in head for k in (b'"signatures"', b'"innerInstructions"',
                                          b'"loadedAddresses"'))
        return Sniffed("json", not solana and (b'"topics"' in head or b'"jsonrpc"' in head),
                       solana)
    if by_name is None:
        raise DataError(
            f"cannot tell the format of {path.name!r}: it is neither Parquet nor JSON, and its "
            "name says nothing",
            hint="name it .csv, .parquet or .json (.jsonl), or pass format=",
        )
    return Sniffed(by_name if by_name in ("csv", "parquet") else "csv", False)


def suffix_kind(path: Path) -> str | None:
    """``"csv"``, ``"parquet"``, ``"json"`` or ``None`` from a file name."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSED:
        suffixes = suffixes[:-1]
    if not suffixes:
        return None
    last = suffixes[-1]
    if last in _CSV:
        return "csv"
    if last in _PARQUET:
        return "parquet"
    if last in _JSON:
        return "json"
    return None


def _is_dataset(directory: Path) -> bool:
    files = [p for p in directory.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))]
    return bool(files) and all(suffix_kind(p) == "parquet" for p in files)


def _synced_ledger(root: Path) -> Path:
    """A ``cctx-research sync`` directory reads as its ledger (built from all its chains' logs):
    its ``ledger/`` dataset, or the ``ledger.parquet`` of a directory synced before."""
    ledger = storage.sync_ledger(root)
    if ledger is None:
        parts = _synced_parts(root)
        names = list(dict.fromkeys(chain for chain, _ in parts)) or ["NAME=URL"]
        chains_ = " ".join(f"--chain {name}" for name in names)
        globs = " ".join(pattern for _, pattern in parts)
        load_parts = f", or load its parts: {globs}" if parts else ""
        raise DataError(
            f"{str(root)!r} is a sync directory without a ledger yet",
            hint=f"run `cctx-research sync {chains_} --out {root}` to the end once (NAME alone "
            f"reads its node's URL from CCTX_RPC_<NAME>){load_parts}",
        )
    return ledger


def _synced_parts(root: Path) -> list[tuple[str, str]]:
    """(chain, glob) of a sync directory's raw parts that match files: EVM logs, Solana's."""
    found = []
    for chain in sorted(p for p in root.iterdir() if p.is_dir()):
        for kind, suffix in (("logs", "parquet"), ("transactions", "jsonl")):
            if any((chain / kind).glob(f"*.{suffix}")):
                found.append((chain.name, str(chain / kind / f"*.{suffix}")))
    return found


def expand(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    """The files (and Parquet dataset directories) that ``paths`` names, in order.

    A directory written by ``cctx-research sync`` (its manifest's kind is ``sync``)
    names its ledger (``ledger/``, or ``ledger.parquet``), not its raw parts, so
    that a transfer is read once.

    Raises
    ------
    TypeError
        If ``paths`` is not a path or a list of paths.
    DataError
        If a path or glob matches nothing, or a directory holds no readable file.
    """
    if isinstance(paths, (str, Path)):
        items: list[Any] = [paths]
    elif isinstance(paths, Iterable) and not isinstance(paths, (bytes, dict)):
        items = list(paths)
    else:
        raise TypeError(
            "paths must be a path, a glob, a directory or a list of them, "
            f"got {type(paths).__name__}"
        )
    if not items:
        raise ValueError("paths is empty: pass at least one file, glob or directory")
    out: list[Path] = []
    for item in items:
        if not isinstance(item, (str, Path)):
            raise TypeError(f"each path must be a str or pathlib.Path, got {type(item).__name__}")
        path = Path(item).expanduser()
        if path.is_file():
            out.append(path)
        elif path.is_dir() and storage.dataset_kind(path) == "sync":
            out.append(_synced_ledger(path))
        elif path.is_dir():
            out.extend(_directory(path))
        elif any(ch in str(item) for ch in "*?["):
            matches = sorted(Path(m) for m in glob.glob(str(path), recursive=True))
            files = [m for m in matches if m.is_file() or m.is_dir()]
            if not files:
                raise DataError(f"the glob {str(item)!r} matches no file")
            for match in files:
                out.extend([match] if match.is_file() else _directory(match))
        else:
            raise DataError(f"no such file or directory: {str(path)!r}")
    return list(dict.fromkeys(out))


def _directory(path: Path) -> list[Path]:
    if _is_dataset(path):
        return [path]
    files = sorted(
        p
        for p in path.iterdir()
        if p.is_file() and suffix_kind(p) is not None and not p.name.endswith(".meta.json")
    )
    dirs = sorted(p for p in path.iterdir() if p.is_dir() and _is_dataset(p))
    if not files and not dirs:
        raise DataError(
            f"the directory {str(path)!r} holds no CSV, Parquet or JSON file",
            hint="pass the files themselves, or name them .csv, .parquet or .json",
        )
    return files + dirs


def read_sidecar(path: Path) -> Provenance | None:
    """The provenance in ``<file>.meta.json`` next to a CSV/JSON export, if any."""
    sidecar = path.with_name(path.name + ".meta.json")
    if not sidecar.is_file():
        return None
    try:
        return Provenance.from_dict(json.loads(sidecar.read_text(encoding="utf-8")))
    except (ValueError, TypeError) as exc:
        raise DataError(
            f"cannot read the provenance sidecar {sidecar.name!r}: {exc}",
            hint="it must hold the JSON of Provenance.to_dict(); delete it to load without it",
        ) from exc


def read_table(path: Path, sniffed: Sniffed | None = None) -> Table:
    """Read one CSV, Parquet or JSON file (or a Parquet dataset directory) as text-faithful columns.

    CSV cells are read as text (so that integers beyond 2**53 stay exact);
    Parquet keeps its types; JSON is a list of records or JSON Lines.

    Raises
    ------
    DataError
        If the file cannot be read, naming it and the cause.
    """
    if path.is_dir() and (path / storage.MANIFEST).is_file():
        # a dataset cctx-research wrote (fetch/import --out DIR/): its own reader
        from ..provenance import provenance
        from . import datasets

        frame = datasets.read(path)
        return Table(str(path), frame, "parquet", 0, provenance(frame))
    found = sniffed or sniff(path)
    kind = "parquet" if found.kind == "dataset" else found.kind
    try:
        if kind == "csv":
            return _read_csv(path)
        if kind == "parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path)
            frame = table.to_pandas()
            record = _parquet_provenance(table)
            return Table(str(path), frame, "parquet", 0, record)
        return _read_json(path)
    except DataError:
        raise
    except Exception as exc:  # parser, Arrow and OS errors alike: the file is unreadable
        raise DataError(f"cannot read {path.name!r}: {type(exc).__name__}: {exc}") from exc


_DELIMITERS = {",": "commas", ";": "semicolons", "\t": "tabs"}


def _header_line(path: Path) -> str:
    """The first line of a CSV (a BOM dropped), or ``""`` when it cannot be peeked at."""
    opener: Any = open
    if path.suffix.lower() == ".gz":
        import gzip

        opener = gzip.open
    elif path.suffix.lower() in _COMPRESSED:
        return ""
    with opener(path, "rt", encoding="utf-8-sig", errors="replace", newline="") as handle:
        return handle.readline(1 << 16).rstrip("\r\n")


def csv_delimiter(path: Path) -> str:
    """The delimiter of a CSV: ``.tsv`` means tabs; else the one its header line holds most.

    Spreadsheets write ``;`` where the decimal separator is a comma (Excel in
    most of Europe) and tabs when asked; a header of one name has none, and
    reads as commas.
    """
    if ".tsv" in [s.lower() for s in path.suffixes]:
        return "\t"
    header = _header_line(path)
    counts = {sep: header.count(sep) for sep in _DELIMITERS}
    best = max(counts, key=lambda sep: (counts[sep], sep == ","))
    return best if counts[best] else ","


def _read_csv(path: Path) -> Table:
    """A CSV as text columns, in any of the dialects spreadsheets write.

    Commas, semicolons or tabs (:func:`csv_delimiter`); a UTF-8 BOM and CRLF
    line ends (Excel's export) are read through. Decimal commas (``12,5``
    beside semicolons) change nothing: every reader takes amounts from the
    exact ``*_raw`` integers and derives ``amount`` from them. A file with a
    header and no rows warns that it adds nothing.
    """
    sep = csv_delimiter(path)
    frame = _csv_text(path, sep)
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.empty:
        warnings.warn(
            CoverageWarning(
                f"{path.name!r} has a header ({len(frame.columns)} columns, delimited by "
                f"{_DELIMITERS[sep]}) and no rows: it adds nothing to the data"
            ),
            stacklevel=5,
        )
    frame = frame.replace("", None)
    return Table(str(path), frame, "csv", 2, read_sidecar(path))


def _csv_text(path: Path, sep: str) -> pd.DataFrame:
    """Every cell of a CSV as text, an empty cell as ``""``.

    Read by Arrow's CSV parser (about ten times pandas' own for a file of text columns:
    a million Dune rows, 500 MB, in 0.6 s instead of 6.3 s); a file it refuses (a row
    with more or fewer cells than the header, a line of spaces) is read by pandas'
    parser, as every CSV was before, which reads it, or raises, as it always did.
    ``tests/ingest/test_csv_dialects.py`` holds the two equal on every CSV fixture.
    """
    import pyarrow as pa

    options: dict[str, Any] = {"dtype": str, "keep_default_na": False, "sep": sep,
                               "encoding": "utf-8-sig"}  # fmt: skip
    try:
        return pd.read_csv(path, engine="pyarrow", **options)
    except (ValueError, pa.ArrowException):  # pandas' ParserError is a ValueError
        return pd.read_csv(path, **options)


def _parquet_provenance(table: Any) -> Provenance | None:
    """The record ``DataFrame.to_parquet`` wrote with the frame's ``attrs`` (if any)."""
    meta = table.schema.metadata or {}
    attrs: Any = None
    try:
        if b"PANDAS_ATTRS" in meta:  # pandas >= 2.1
            attrs = json.loads(meta[b"PANDAS_ATTRS"])
        elif b"pandas" in meta:
            attrs = json.loads(meta[b"pandas"]).get("attrs")
    except ValueError:
        return None
    record = attrs.get("cctx") if isinstance(attrs, dict) else None
    return Provenance.from_dict(record) if isinstance(record, dict) and record else None


def read_json_records(path: Path) -> tuple[Any, bool]:
    """The parsed JSON of a file: a whole document, or a list of JSON Lines values.

    Returns the value and whether it came from JSON Lines.
    """
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text), False
    except ValueError:
        values = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                values.append(json.loads(line))
            except ValueError as exc:
                raise DataError(
                    f"{path.name!r} is neither JSON nor JSON Lines: line {number}: {exc}"
                ) from exc
        return values, True


def _read_json(path: Path) -> Table:
    if any(s.lower() in _COMPRESSED for s in path.suffixes):
        raise DataError(f"{path.name!r}: compressed JSON is not supported; decompress it first")
    value, lines = read_json_records(path)
    if isinstance(value, dict):  # {"data": [...]} or one record
        for key in ("data", "rows", "records", "result"):
            if isinstance(value.get(key), list):
                value = value[key]
                break
        else:
            value = [value]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DataError(
            f"{path.name!r} is not a JSON list of records",
            hint="a table in JSON is a list of objects (orient='records') or JSON Lines",
        )
    frame = pd.DataFrame.from_records(value)
    return Table(str(path), frame, "json", 1 if lines else 0, read_sidecar(path))
