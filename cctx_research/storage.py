"""The one convention of every dataset the toolkit writes: part names, the manifest, atomic writes.

The sync dataset (:mod:`cctx_research.nodes.store`), the partitioned Parquet
datasets (:mod:`cctx_research.ingest.datasets`) and the client's chunk cache
(:mod:`cctx_research.client.chunks`) are all laid out by this module; the
convention itself (names, partitions, manifest fields, format versions,
atomicity and what a crash leaves) is described once, in ``docs/datasets.md``.

- A part is named by what it covers: ``{network}__{datatype}__{chunk}.{suffix}``
  (:class:`Part`, :func:`parse_part`), with an optional label between the
  datatype and the chunk (``solana__transactions__v2-messenger__page_...``).
  A chunk is a block or slot range, a UTC day or a key (:class:`Chunk`).
- A part is done when its file exists: every file is written to a temporary
  name in its directory and renamed (:func:`replace_atomically`,
  :func:`replace_directory_atomically`).
- Each dataset has one manifest, ``_cctx.json`` (:class:`Manifest`): the
  format version, the kind, the library version that wrote it, whether the
  data is synthetic, and a free ``state`` section for the kind's own state.
  A manifest of a format or kind this version does not know is refused with
  a :class:`~cctx_research.errors.DataError` that says what to do.

Examples
--------
>>> part = Part("base", "logs", Chunk.blocks(100, 199))
>>> part.name
'base__logs__blocks_0000000100_to_0000000199.parquet'
>>> parse_part(part.name) == part
True
>>> parse_part("notes.txt") is None
True
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ._version import __version__
from .errors import DataError
from .provenance import provenance

__all__ = [
    "FORMAT",
    "LEGACY_FORMAT",
    "MANIFEST",
    "SYNC_LEDGERS",
    "Chunk",
    "Manifest",
    "Part",
    "dataset_kind",
    "manifest_path",
    "parse_part",
    "read_manifest",
    "replace_atomically",
    "replace_directory_atomically",
    "slug",
    "sync_ledger",
    "write_atomically",
    "write_manifest",
]

logger = logging.getLogger(__name__)

MANIFEST = "_cctx.json"
"""The manifest's file name, the same in every dataset (engines skip ``_`` files)."""

FORMAT = 2
"""The version of the convention this library writes and reads."""

LEGACY_FORMAT = 1
"""The layouts before one convention (each dataset its own); read, and upgraded when written."""

_LEGACY_MANIFESTS = {"sync.json": "sync"}
"""Manifest files of format 1 under another name -> the kind they describe."""

_TOKEN = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")
_SUFFIX = re.compile(r"[a-z0-9]+")
_RANGE = re.compile(r"(?:page_(\d+)_)?(blocks|slots)_(\d+)_to_(\d+)(_tip)?")
_DAY = re.compile(r"day_(\d{4}-\d{2}-\d{2})")
_KEY = re.compile(r"key_([0-9a-f]+)")
_WIDTH = 10  # digits of a block or slot number: names sort by number up to 10**10


@dataclass(frozen=True)
class Chunk:
    """What one part covers: blocks or slots ``first..last`` (inclusive), a UTC day, or a key.

    ``page`` numbers a part among the parts of its label (a Solana program's
    pages, counted by its checkpoint); ``tip`` marks blocks within the
    confirmation depth, which a reorg may still change.
    """

    unit: str
    first: int | None = None
    last: int | None = None
    value: str | None = None
    page: int | None = None
    tip: bool = False

    def __post_init__(self) -> None:
        if self.unit in ("blocks", "slots"):
            for bound in (self.first, self.last, *([self.page] if self.page is not None else [])):
                if isinstance(bound, bool) or not isinstance(bound, int) or bound < 0:
                    raise ValueError(f"a {self.unit} chunk needs whole numbers >= 0, got {bound!r}")
        elif self.unit == "day":
            if not isinstance(self.value, str) or not _DAY.fullmatch(f"day_{self.value}"):
                raise ValueError(f"a day chunk needs a day as YYYY-MM-DD, got {self.value!r}")
        elif self.unit == "key":
            if not isinstance(self.value, str) or not _KEY.fullmatch(f"key_{self.value}"):
                raise ValueError(f"a key chunk needs a lower-case hex key, got {self.value!r}")
        else:
            raise ValueError(f"unit must be blocks, slots, day or key, got {self.unit!r}")
        if (self.page is not None or self.tip) and self.unit not in ("blocks", "slots"):
            raise ValueError("only a block or slot range has a page or a tip")

    @classmethod
    def blocks(cls, first: int, last: int, *, tip: bool = False) -> Chunk:
        """Blocks ``first..last``; ``tip``: within the confirmation depth."""
        return cls("blocks", first, last, tip=tip)

    @classmethod
    def slots(cls, first: int, last: int, *, page: int | None = None) -> Chunk:
        """Slots ``first..last``, optionally the ``page``-th part of its label."""
        return cls("slots", first, last, page=page)

    @classmethod
    def day(cls, day: str) -> Chunk:
        """One UTC day, ``YYYY-MM-DD``."""
        return cls("day", value=day)

    @classmethod
    def key(cls, key: str) -> Chunk:
        """Whatever a hash key names (a cached chunk of a request)."""
        return cls("key", value=key)

    @property
    def text(self) -> str:
        """The chunk as it stands in a part's name."""
        if self.unit in ("day", "key"):
            return f"{self.unit}_{self.value}"
        page = "" if self.page is None else f"page_{self.page:06d}_"
        tip = "_tip" if self.tip else ""
        return f"{page}{self.unit}_{self.first:0{_WIDTH}d}_to_{self.last:0{_WIDTH}d}{tip}"

    @classmethod
    def parse(cls, text: str) -> Chunk | None:
        """The chunk a name's last field spells, or ``None``."""
        if found := _RANGE.fullmatch(text):
            page = None if found.group(1) is None else int(found.group(1))
            unit, first, last = found.group(2), int(found.group(3)), int(found.group(4))
            return cls(unit, first, last, page=page, tip=found.group(5) is not None)
        if found := _DAY.fullmatch(text):
            return cls.day(found.group(1))
        if found := _KEY.fullmatch(text):
            return cls.key(found.group(1))
        return None


@dataclass(frozen=True)
class Part:
    """One file of a dataset, named by what it covers.

    ``network`` is the chain (or ``"interface"`` for the interface's
    replies), ``datatype`` what the rows are (``logs``, ``transactions``,
    ``transfers``), ``label`` an optional narrower source inside the network
    (a Solana program), ``chunk`` the span covered.
    """

    network: str
    datatype: str
    chunk: Chunk
    label: str | None = None
    suffix: str = "parquet"

    def __post_init__(self) -> None:
        fields = {"network": self.network, "datatype": self.datatype}
        if self.label is not None:
            fields["label"] = self.label
        for what, value in fields.items():
            if not isinstance(value, str) or not _TOKEN.fullmatch(value):
                raise ValueError(
                    f"a part's {what} is lower-case letters and digits joined by single '-' or "
                    f"'_', got {value!r} (see slug())"
                )
        if not isinstance(self.suffix, str) or not _SUFFIX.fullmatch(self.suffix):
            raise ValueError(f"a part's suffix is lower-case letters and digits: {self.suffix!r}")

    @property
    def name(self) -> str:
        """``{network}__{datatype}[__{label}]__{chunk}.{suffix}``."""
        fields = [self.network, self.datatype, *([self.label] if self.label else []),
                  self.chunk.text]  # fmt: skip
        return "__".join(fields) + "." + self.suffix


def parse_part(name: str) -> Part | None:
    """The part a file name spells, or ``None`` for any other file (temporary, foreign)."""
    stem, dot, suffix = name.rpartition(".")
    if not dot or not _SUFFIX.fullmatch(suffix):
        return None
    fields = stem.split("__")
    if len(fields) not in (3, 4) or not all(_TOKEN.fullmatch(f) for f in fields[:-1]):
        return None
    chunk = Chunk.parse(fields[-1])
    if chunk is None:
        return None
    label = fields[2] if len(fields) == 4 else None
    return Part(fields[0], fields[1], chunk, label=label, suffix=suffix)


def slug(text: str) -> str:
    """``text`` as a name field: lower case, each run of other characters one ``-``.

    >>> slug("Domain 42"), slug("world_chain"), slug("")
    ('domain-42', 'world_chain', 'unknown')
    """
    # a run of underscores alone stays one underscore (``world_chain``); any other run is "-"
    out = re.sub(r"[^a-z0-9]+", lambda m: "_" if set(m.group()) == {"_"} else "-",
                 str(text).lower()).strip("-_")  # fmt: skip
    return out or "unknown"


# --------------------------------------------------------------------------- manifest


@dataclass(frozen=True)
class Manifest:
    """A dataset's ``_cctx.json``: what it is, who wrote it, and the kind's own state.

    ``format`` is :data:`LEGACY_FORMAT` for a dataset read in its old layout
    (upgraded when it is next written); ``library_version`` is ``None`` then.
    """

    kind: str
    state: dict[str, Any] = field(default_factory=dict)
    synthetic: bool = False
    format: int = FORMAT
    library_version: str | None = __version__

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.format, "kind": self.kind,
                "library_version": self.library_version, "synthetic": self.synthetic,
                "state": self.state}  # fmt: skip


def manifest_path(directory: str | os.PathLike[str]) -> Path:
    """The file that holds the dataset's manifest: ``_cctx.json``, or the old layout's
    file while a format-1 dataset is not upgraded yet."""
    root = Path(directory)
    if not (root / MANIFEST).is_file():
        for name in _LEGACY_MANIFESTS:
            if (root / name).is_file():
                return root / name
    return root / MANIFEST


def dataset_kind(directory: str | os.PathLike[str]) -> str | None:
    """The kind a directory's manifest names (old layouts too), or ``None`` without one.

    Raises
    ------
    DataError
        If the manifest cannot be read.
    """
    root = Path(directory)
    path = root / MANIFEST
    if path.is_file():
        raw = _load(path, "restore it, or use a new directory")
        return raw.get("kind") if isinstance(raw.get("kind"), str) else None
    return next((k for name, k in _LEGACY_MANIFESTS.items() if (root / name).is_file()), None)


SYNC_LEDGERS = ("ledger", "ledger.parquet")
"""Where a sync directory keeps its ledger: a ``ledger`` dataset, or one Parquet file."""


def sync_ledger(directory: str | os.PathLike[str]) -> Path | None:
    """The ledger a sync directory holds (``ledger/``, or ``ledger.parquet`` as older syncs
    wrote it; the newer of the two if a stopped build left both), or ``None`` before any."""
    found = [p for p in (Path(directory) / name for name in SYNC_LEDGERS)
             if p.is_file() or (p.is_dir() and dataset_kind(p) == "ledger")]  # fmt: skip
    return max(found, key=lambda p: manifest_path(p).stat().st_mtime if p.is_dir()
               else p.stat().st_mtime, default=None)  # fmt: skip


def read_manifest(
    directory: str | os.PathLike[str], *, kinds: Collection[str], instead: str
) -> Manifest | None:
    """The manifest of the dataset at ``directory``, or ``None`` when it has none.

    A format-1 dataset (its manifest ``sync.json``, or a ``_cctx.json``
    without a format) is read as it is, with ``format`` 1: reading never
    writes, so a read-only dataset still answers.

    Parameters
    ----------
    directory : str or Path
    kinds : collection of str
        The kinds the caller reads; another kind is refused.
    instead : str
        What the user can do instead, ending each refusal (e.g. ``"sync
        into a new directory"``).

    Raises
    ------
    DataError
        If the manifest cannot be read, or is of a format or kind this version
        does not read; the message says what to do.
    """
    root = Path(directory)
    path = root / MANIFEST
    if path.is_file():
        raw = _load(path, f"restore it, or {instead}")
        kind = raw.get("kind")
        if "format" not in raw and isinstance(kind, str) and isinstance(raw.get("writes", []),
                                                                          list):  # fmt: skip
            return _checked(root, _legacy_partitioned(raw), kinds, instead)
        found = raw.get("format")
        if found != FORMAT or isinstance(found, bool):
            raise DataError(_format_message(root, kind, found, instead))
        if not isinstance(raw.get("state"), dict) or not isinstance(kind, str):
            raise DataError(
                f"{path} holds no kind or state (it was not written by cctx-research, or was "
                f"edited): restore it, or {instead}"
            )
        manifest = Manifest(kind, raw["state"], synthetic=bool(raw.get("synthetic")),
                            library_version=raw.get("library_version"))  # fmt: skip
        return _checked(root, manifest, kinds, instead)
    for name, kind in _LEGACY_MANIFESTS.items():
        if (root / name).is_file():
            raw = _load(root / name, f"restore it, or {instead}")
            found = raw.get("format")
            if found != LEGACY_FORMAT or isinstance(found, bool):
                raise DataError(_format_message(root, kind, found, instead, legacy=True))
            state = {k: v for k, v in raw.items() if k != "format"}
            return _checked(root, Manifest(kind, state, format=LEGACY_FORMAT,
                                           library_version=None), kinds, instead)  # fmt: skip
    return None


def write_manifest(directory: str | os.PathLike[str], manifest: Manifest) -> Path:
    """Write ``manifest`` as the dataset's ``_cctx.json`` (atomically); returns its path.

    A format-1 manifest of the same kind under its old name is removed
    afterwards: a crash in between leaves both, and the new one is read.
    """
    root = Path(directory)
    text = json.dumps(manifest.to_dict(), indent=2, sort_keys=True, default=str)
    path = replace_atomically(root / MANIFEST, lambda tmp: tmp.write_text(text + "\n"))
    for name, kind in _LEGACY_MANIFESTS.items():
        if kind == manifest.kind:
            (root / name).unlink(missing_ok=True)
    return path


def _load(path: Path, what_to_do: str) -> dict[str, Any]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path} cannot be read ({type(exc).__name__}): {what_to_do}") from None
    if not isinstance(raw, dict):
        raise DataError(f"{path} is not a manifest (not a JSON object): {what_to_do}")
    return raw


def _legacy_partitioned(raw: dict[str, Any]) -> Manifest:
    """A format-1 ``_cctx.json``: ``{"kind": ..., "writes": [provenance, ...]}``."""
    writes = list(raw.get("writes", []))
    synthetic = any(isinstance(w, dict) and bool(w.get("synthetic")) for w in writes)
    return Manifest(raw["kind"], {"writes": writes}, synthetic=synthetic, format=LEGACY_FORMAT,
                    library_version=None)  # fmt: skip


def _checked(root: Path, manifest: Manifest, kinds: Collection[str], instead: str) -> Manifest:
    if manifest.kind not in kinds:
        wanted = " or ".join(repr(k) for k in kinds)
        raise DataError(
            f"{root} holds a cctx-research dataset of kind {manifest.kind!r}, not {wanted}: "
            f"{instead}"
        )
    return manifest


def _format_message(root: Path, kind: Any, found: Any, instead: str, *,
                    legacy: bool = False) -> str:  # fmt: skip
    """What a dataset of another format is, and what to do (in one line: the CLI shows one)."""
    number = isinstance(found, int) and not isinstance(found, bool)
    if number and found > FORMAT and not legacy:
        return (
            f"{root} was written by a newer cctx-research ({kind} format {found}; this version "
            f"reads format {FORMAT}): upgrade (pip install -U cctx-research) to use it, or "
            f"{instead}"
        )
    what = (
        f"an older cctx-research ({kind} format {found})"
        if number and found < LEGACY_FORMAT
        else f"no version this one knows ({kind} format {found!r})"
    )
    return (
        f"{root} was written by {what}; this version reads formats {LEGACY_FORMAT} and {FORMAT} "
        f"only and does not convert it: {instead}"
    )


# --------------------------------------------------------------------------- atomic writes


def replace_atomically(path: str | os.PathLike[str], write: Callable[[Path], object]) -> Path:
    """``write(tmp)`` into a temporary file beside ``path``, then rename it onto ``path``.

    A failure (or Ctrl-C) leaves no partial file. The file gets the
    permissions a new file gets under the umask (``mkstemp``'s 0600 is for
    the temporary file only).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):  # the first error is the one to tell
            Path(tmp).unlink(missing_ok=True)
        raise
    return path


def replace_directory_atomically(
    path: str | os.PathLike[str], write: Callable[[Path], object]
) -> Path:
    """``write(tmp)`` fills a temporary directory beside ``path``, which then takes its place.

    A failure while writing leaves the old ``path`` as it was. When ``write``
    leaves the directory empty, ``path`` is removed. The old directory is
    moved aside (``.<name>.<random>.old``) before the new one is renamed in,
    and put back if that rename fails; only a crash between the two renames
    leaves ``path`` missing, its old content under that name.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        write(tmp)
        os.chmod(tmp, 0o777 & ~_umask())
        old = tmp.with_name(tmp.name.removesuffix(".tmp") + ".old")
        moved = path.exists()
        if moved:
            os.replace(path, old)
        try:
            if any(tmp.iterdir()):
                os.replace(tmp, path)
        except BaseException:
            if moved:
                os.replace(old, path)
            raise
        if moved:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def write_atomically(frame: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write ``frame`` as Parquet or CSV through a temporary file, then rename.

    A failure leaves no partial file. A CSV gets a provenance sidecar
    ``<file>.meta.json`` (Parquet keeps provenance in its metadata).
    """
    path = Path(path)

    def write(tmp: Path) -> None:
        if path.suffix.lower() == ".parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False)
            record = provenance(frame)
            if record is not None:
                sidecar = path.with_name(path.name + ".meta.json")
                sidecar.write_text(json.dumps(record.to_dict(), indent=1), encoding="utf-8")

    return replace_atomically(path, write)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask
