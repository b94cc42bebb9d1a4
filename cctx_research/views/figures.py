"""Rendered figures kept on disk, found again by what drew them: :class:`FigureCache`.

A report drawn twice on the same data draws the same pictures; drawing is
most of a warm report's time. A :class:`FigureCache` keeps each PNG under a
key made of everything that shapes it (:func:`figure_key`):

- the draw function: its module and name, and a digest of the source of the
  package that defines it (the whole toolkit for its own ``plot_*``
  functions, whose helpers and analyses live across it);
- a fingerprint of its data (:func:`fingerprint`: every value, the index,
  the columns and dtypes, the categories and ``attrs``, where results carry
  their span and provenance) and of its options (``figsize``, ``dpi``, the
  keywords); floats count to :data:`BITS` significant bits (about 11
  decimal digits) of the largest value beside them (a column, an array; a
  lone float its own), so the last bits by which two engines' sums and
  quantiles differ (the order of summation: relative differences of 1e-16
  to 1e-13) find the same picture, which no figure could tell apart;
- the versions of Python, matplotlib, numpy, pandas and networkx, and
  matplotlib's settings (``rcParams``, a style or a ``matplotlibrc``).

Data the fingerprint cannot describe (an object column of mixed values, an
object without a known shape) and draw functions it cannot name (a lambda,
a closure) are simply drawn, not kept. An entry carries its key and the
digest of its PNG: a corrupt, truncated or foreign entry is drawn again and
replaced, never served. A directory that cannot be written gives a
:class:`~cctx_research.errors.CacheWarning` once, and the figures are drawn.

Entries live in ``<cache_dir>/figures/`` (``CCTX_CACHE_DIR``), one file per
figure, ``<key>.fig``; deleting the directory is always safe. The directory is
kept under ``max_bytes`` (:data:`MAX_BYTES`, 256 MiB: some 250 reports'
pictures): after a write that passes it, the entries used longest ago (a hit
renews an entry's time) are removed until it holds three quarters of it.

Examples
--------
>>> fingerprint(pd.Series([1, 2], name="x")) == fingerprint(pd.Series([1, 2], name="x"))
True
>>> fingerprint(pd.Series([1, 2])) == fingerprint(pd.Series([1, 3]))
False
>>> fingerprint(object()) is None
True
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import hashlib
import importlib
import logging
import math
import os
import sys
import types
import warnings
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import storage
from ..errors import CacheWarning

__all__ = ["MAX_BYTES", "FigureCache", "figure_cache", "figure_key", "fingerprint", "resolve_draw"]

logger = logging.getLogger(__name__)

MAX_BYTES = 256 * 2**20
"""The most a figure cache directory holds by default, in bytes."""

BITS = 36
"""Significant bits of a float that a figure's key holds (of the largest value beside it).

A binary step, not a decimal one: amounts of six decimals would sit on a decimal step's
halves, where the last bit decides which way they round."""

_MAGIC = b"CCTXFIG1"
_PNG = b"\x89PNG\r\n\x1a\n"
_PLOTS = "cctx_research.plots"
_SCALARS = (type(None), bool, int, float, complex, str, bytes, np.generic, pd.Timestamp,
            pd.Timedelta, dt.datetime, dt.date, dt.timedelta)  # fmt: skip


def resolve_draw(draw: str | Callable[..., Any]) -> Callable[..., Any]:
    """``draw`` itself, or the function of :mod:`cctx_research.plots` it names (``"plot_volume"``).

    Naming the function lets a caller with a warm cache never import matplotlib.
    """
    if callable(draw):
        return draw
    if isinstance(draw, str) and draw.startswith("plot_"):
        function = getattr(importlib.import_module(_PLOTS), draw, None)
        if callable(function):
            return function
    raise TypeError(
        f"draw must be a plot function such as plots.plot_volume, or its name, got {draw!r}"
    )


class FigureCache:
    """PNG files of rendered figures in ``directory``, keyed by :func:`figure_key`.

    Parameters
    ----------
    directory : str or path
        Where the entries go (created on first write), e.g.
        ``config.cache_dir() / "figures"``.
    max_bytes : int, default :data:`MAX_BYTES`
        The most the directory holds: past it, the entries used longest ago
        are removed.
    """

    def __init__(self, directory: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES) -> None:
        if not isinstance(directory, (str, os.PathLike)):
            raise TypeError(f"directory must be a path, got {type(directory).__name__}")
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"max_bytes must be a positive number of bytes, got {max_bytes!r}")
        self.directory = Path(directory).expanduser()
        self.max_bytes = max_bytes
        self.hits = 0
        self.drawn = 0
        self._warned = False

    def __repr__(self) -> str:
        return f"FigureCache({str(self.directory)!r}, hits={self.hits}, drawn={self.drawn})"

    def png(self, draw: str | Callable[..., Any], data: Any, **options: Any) -> bytes:
        """The PNG of ``render_png(draw, data, **options)``: kept, or drawn and kept."""
        from .markup import render_png

        key = figure_key(draw, data, **options)
        if key is not None and (kept := self._read(key)) is not None:
            self.hits += 1
            return kept
        png = render_png(resolve_draw(draw), data, **options)
        self.drawn += 1
        logger.debug("figure cache: drew %s (%s)", getattr(draw, "__name__", draw),
                     "kept as " + key if key else "not keepable")  # fmt: skip
        if key is not None:
            self._write(key, png)
        return png

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.fig"

    def _read(self, key: str) -> bytes | None:
        try:
            blob = self._path(key).read_bytes()
        except OSError:
            return None
        head, _, png = blob.partition(b"\n")
        parts = head.split(b" ")
        if (
            len(parts) == 3
            and parts[0] == _MAGIC
            and parts[1] == key.encode("ascii")
            and parts[2] == hashlib.sha256(png).hexdigest().encode("ascii")
            and png.startswith(_PNG)
        ):
            with contextlib.suppress(OSError):  # used now: the last an eviction removes
                os.utime(self._path(key))
            return png
        logger.info("figure cache: %s is not a valid entry; drawing it again", self._path(key))
        return None

    def _write(self, key: str, png: bytes) -> None:
        head = b" ".join([_MAGIC, key.encode("ascii"), hashlib.sha256(png).hexdigest().encode()])
        try:
            storage.replace_atomically(
                self._path(key), lambda tmp: tmp.write_bytes(head + b"\n" + png)
            )
        except OSError as exc:
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"figure cache {self.directory} cannot be written ({exc.strerror or exc}): "
                    "figures are drawn, not kept",
                    CacheWarning,
                    stacklevel=3,
                )
            return
        self._evict()

    def _evict(self) -> None:
        """Past ``max_bytes``, remove the entries used longest ago down to three quarters."""
        entries = []
        with contextlib.suppress(OSError), os.scandir(self.directory) as found:
            for entry in found:
                if entry.name.endswith(".fig"):
                    with contextlib.suppress(OSError):  # removed meanwhile by another process
                        info = entry.stat()
                        entries.append((info.st_mtime_ns, info.st_size, entry.path))
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return
        removed = 0
        for _, size, path in sorted(entries):
            if total <= self.max_bytes * 3 // 4:
                break
            with contextlib.suppress(OSError):  # gone already, or not ours to remove
                os.remove(path)
                removed += 1
            total -= size
        logger.info("figure cache: %d figures used longest ago removed from %s (over %d MiB)",
                    removed, self.directory, self.max_bytes >> 20)  # fmt: skip


def figure_cache(value: bool | str | os.PathLike[str] | FigureCache | None) -> FigureCache | None:
    """The cache a ``figure_cache=`` option asks for, or None for none.

    ``True``: ``figures/`` in the toolkit's cache directory (``CCTX_CACHE_DIR``);
    a path: that directory; ``False`` or None: none (every figure drawn).

    Examples
    --------
    >>> figure_cache(False) is None
    True
    >>> figure_cache("/tmp/figs").directory.name
    'figs'
    """
    if value is None or value is False or isinstance(value, FigureCache):
        return value or None
    if value is True:
        from ..config import cache_dir

        return FigureCache(cache_dir() / "figures")
    if isinstance(value, (str, os.PathLike)) and str(value):
        return FigureCache(value)
    raise TypeError(
        "figure_cache must be True (the cache directory), False, or a directory path, "
        f"got {value!r}"
    )


def figure_key(
    draw: str | Callable[..., Any],
    data: Any,
    *,
    figsize: tuple[float, float] = (9.0, 4.5),
    dpi: int = 100,
    **kwargs: Any,
) -> str | None:
    """The hex key of a figure, or None when its draw function or data cannot be described.

    Parameters are those of :func:`~cctx_research.views.markup.render_png`
    (``draw`` may also be the name of a :mod:`cctx_research.plots` function).
    """
    who = _function_identity(draw)
    if who is None:
        return None
    digest = hashlib.sha256(b"cctx-figure/2\0")
    digest.update(who)
    digest.update(_environment())
    for part in (data, (tuple(figsize) if isinstance(figsize, list) else figsize, dpi),
                 sorted(kwargs.items())):  # fmt: skip
        printed = fingerprint(part)
        if printed is None:
            return None
        digest.update(printed)
    return digest.hexdigest()


def _function_identity(draw: str | Callable[..., Any]) -> bytes | None:
    if isinstance(draw, str):  # a plots function by name: its module need not be imported
        if not draw.startswith("plot_"):
            return None
        module, name = _PLOTS, draw
        loaded = sys.modules.get(_PLOTS)
        if loaded is not None and draw in vars(loaded):  # what the package names now
            return _function_identity(vars(loaded)[draw])
    elif isinstance(draw, types.FunctionType) and draw.__closure__ is None:
        module, name = draw.__module__ or "", draw.__qualname__
        if "<" in name:  # a lambda or a function defined in another: state the key cannot see
            return None
        if module.startswith(_PLOTS + "."):
            module = _PLOTS  # plots.volumes.plot_volume is plots.plot_volume, one key
    else:
        return None
    package = module.partition(".")[0]
    source = _source_digest(package if package == "cctx_research" else module)
    if source is None:
        return None
    return f"{module}:{name}:".encode() + source


@functools.cache
def _source_digest(module: str) -> bytes | None:
    """A digest of a module's source: every ``.py`` file of its package, or its one file."""
    found = sys.modules.get(module)
    if found is None:
        try:
            found = importlib.import_module(module)
        except ImportError:
            return None
    file = getattr(found, "__file__", None)
    if not file or not file.endswith(".py"):
        return None
    path = Path(file)
    files = sorted(path.parent.rglob("*.py")) if path.name == "__init__.py" else [path]
    digest = hashlib.sha256()
    for each in files:
        digest.update(str(each.relative_to(path.parent)).encode() + b"\0")
        digest.update(each.read_bytes() + b"\0")
    return digest.digest()


def _environment() -> bytes:
    """The libraries' versions and matplotlib's settings."""
    return _versions() + _rc_digest()


@functools.cache
def _versions() -> bytes:
    versions = [sys.version]
    for name in ("matplotlib", "numpy", "pandas", "networkx"):
        try:
            versions.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name}=-")
    return "\n".join(versions).encode()


def _rc_digest() -> bytes:
    """matplotlib's settings: its rc files, and any setting changed since they were read.

    Found without importing matplotlib (a warm page need not load it): the files
    matplotlib reads its settings from (``MATPLOTLIBRC``, ``./matplotlibrc``, the
    user's config directory; its own defaults come with its version) are read
    here. Once matplotlib is loaded, a setting changed in the process (a style,
    ``rc_context``) is added to the key.
    """
    digest = hashlib.sha256()
    for path in _rc_files():
        try:
            digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
        except OSError:
            continue
    loaded = sys.modules.get("matplotlib")
    if loaded is not None:
        rc, original = loaded.rcParams, loaded.rcParamsOrig
        changed = [
            (k, dict.__getitem__(rc, k))
            for k in sorted(rc.keys())
            # "backend" is left out: reading it may pick a GUI one; figures are drawn with Agg
            if not k.startswith("backend")
            and (k not in original or dict.__getitem__(original, k) != dict.__getitem__(rc, k))
        ]
        if changed:
            digest.update(repr(changed).encode())
    return digest.digest()


def _rc_files() -> list[Path]:
    """Every file matplotlib could take its settings from (it reads the first found)."""
    found = []
    if named := os.environ.get("MATPLOTLIBRC"):
        found += [Path(named), Path(named) / "matplotlibrc"]
    found.append(Path.cwd() / "matplotlibrc")
    config = os.environ.get("MPLCONFIGDIR") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"), "matplotlib"
    )
    found.append(Path(config) / "matplotlibrc")
    return [p for p in found if p.is_file()]


def fingerprint(value: Any) -> bytes | None:
    """Bytes that change whenever ``value`` does, or None when it cannot be described.

    Frames and series (values, index, columns, dtypes, ``attrs``), numpy
    arrays, networkx graphs, dataclasses, mappings, sequences and scalars.
    """
    parts: list[bytes] = []
    return b"".join(parts) if _print(value, parts) else None


def _print(value: Any, out: list[bytes]) -> bool:
    kind = type(value)
    out.append(f"<{kind.__module__}.{kind.__qualname__}>".encode())
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and value:
        mantissa, exponent = math.frexp(value)  # its own BITS: the last bits left out
        value = float(round(mantissa * 2.0**BITS)) * 2.0 ** (exponent - BITS)
    if isinstance(value, _SCALARS):
        text = repr(value)
        out.append(f"{len(text)}:{text}".encode())
        return True
    if isinstance(value, pd.DataFrame):
        return _print_frame(value, out)
    if isinstance(value, (pd.Series, pd.Index)):
        return _print_series(value, out)
    if isinstance(value, np.ndarray):
        return _print_array(value, out)
    if kind.__module__.startswith("networkx."):
        return _print(
            [value.graph, list(value.nodes(data=True)), list(value.edges(data=True))], out
        )
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _print([(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)], out)
    if isinstance(value, Mapping):
        return _print(list(value.items()), out)
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        out.append(f"[{len(items)}".encode())
        if not all(_print(item, out) for item in items):
            return False
        out.append(b"]")
        return True
    return False


def _print_frame(frame: pd.DataFrame, out: list[bytes]) -> bool:
    out.append(f"{frame.shape}".encode())
    if not (_print_series(frame.columns, out) and _print_series(frame.index, out)):
        return False
    for i in range(frame.shape[1]):
        if not _print_series(frame.iloc[:, i], out, with_index=False):
            return False
    return _print(dict(frame.attrs), out) and _print(frame.flags.allows_duplicate_labels, out)


def _print_series(
    values: pd.Series | pd.Index, out: list[bytes], *, with_index: bool = True
) -> bool:
    dtype = values.dtype
    out.append(f"{values.name!r}|{dtype!r}|{len(values)}".encode())
    if isinstance(values, pd.MultiIndex):
        return _print(list(values.names), out) and all(
            _print_series(values.get_level_values(i), out) for i in range(values.nlevels)
        )
    if isinstance(dtype, pd.CategoricalDtype):
        if not _print_series(dtype.categories, out):
            return False
        out.append(f"ordered={dtype.ordered}".encode())
    if isinstance(dtype, np.dtype) and dtype.kind in "biufcmM":
        _print_array(np.asarray(values), out)
    elif pd.api.types.is_float_dtype(dtype):  # Float64 and the like: where NA is, then the values
        out.append(np.asarray(pd.isna(values)).tobytes())
        _print_array(values.to_numpy(dtype="float64", na_value=np.nan), out)
    elif isinstance(dtype, np.dtype) and dtype.kind == "O" and _mixed(values):
        return False  # Python objects: their hash would not tell 1 from "1"
    else:
        out.append(np.asarray(pd.isna(values)).tobytes())
        out.append(pd.util.hash_pandas_object(values, index=False).to_numpy().tobytes())
    if isinstance(values, pd.Series):
        ok = _print(dict(values.attrs), out)
        return ok and (not with_index or _print_series(values.index, out))
    return True


def _mixed(values: pd.Series | pd.Index) -> bool:
    return pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty")


def _print_array(array: np.ndarray, out: list[bytes]) -> bool:
    if array.dtype.kind not in "biufcmM":
        return _print(array.tolist(), out)
    out.append(f"{array.dtype.str}{array.shape}".encode())
    if array.dtype.kind == "f":
        exponent, array = _rounded(array)
        out.append(f"p{exponent}".encode())  # the step: twice the values, another key
    out.append(hashlib.sha256(np.ascontiguousarray(array).tobytes()).digest())
    return True


def _rounded(array: np.ndarray) -> tuple[int, np.ndarray]:
    """``array`` in steps of :data:`BITS` significant bits of its largest finite value.

    Returns the step's power of two and the values as counts of steps (inf and NaN
    kept). Two engines' sums of the same numbers differ in their last bits; a step of
    2**-36 of the largest value is far below what a figure can show, and far above them.
    """
    values = np.asarray(array, dtype=np.float64)
    finite = np.isfinite(values)
    top = float(np.abs(values[finite]).max()) if finite.any() else 0.0
    if top == 0.0:
        return 0, values + 0.0  # -0.0 is 0.0
    exponent = math.frexp(top)[1] - BITS
    return exponent, np.where(finite, np.round(np.ldexp(values, -exponent)), values) + 0.0
