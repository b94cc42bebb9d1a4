"""Where a frame's data came from: one typed, frozen record per frame.

Every frame the toolkit returns carries a :class:`Provenance`: the client's
pulls, the sample, files read by ``load``, the analysis results built from
them. Readers go through :func:`provenance` (never through a label searched
for words); writers through :func:`attach`.

The record is stored in ``frame.attrs["cctx"]`` as its plain JSON-ready
dict (:meth:`Provenance.to_dict`), for two reasons: pandas copies ``attrs``
on most operations (a dict of strings and numbers is cheap to copy), and
``DataFrame.to_parquet`` writes ``attrs`` into the file's metadata as JSON,
so a Parquet export keeps its provenance with no extra step.

Examples
--------
>>> import pandas as pd
>>> frame = attach(pd.DataFrame({"x": [1]}), Provenance(source="file: x.csv"))
>>> provenance(frame).source
'file: x.csv'
>>> provenance(frame).synthetic
False
>>> provenance(pd.DataFrame()) is None
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pandas as pd

from ._version import __version__

__all__ = [
    "ATTR",
    "SYNTHETIC_HEADER",
    "Provenance",
    "attach",
    "combine",
    "is_synthetic",
    "provenance",
]

ATTR = "cctx"
"""The key of ``DataFrame.attrs`` that holds the record."""

SYNTHETIC_HEADER = "x-cctx-synthetic"
"""The reply header by which a service says its data is synthetic (value ``true``).

An extension of this toolkit's, not part of the interface: the local
service (``cctx-research serve``) sends it on every reply when it serves
the sample or data whose provenance is synthetic, and the client marks
what it fetched from such a service ``synthetic`` (see
``docs/interface.md``).
"""

_Frame = TypeVar("_Frame", pd.DataFrame, pd.Series)


def _frozen_mapping(value: Mapping[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    if value is None:
        return ()
    if isinstance(value, tuple):
        return tuple((str(k), v) for k, v in value)
    if not isinstance(value, Mapping):
        raise TypeError(f"expected a mapping, got {type(value).__name__}")
    return tuple((str(k), _jsonable(v)) for k, v in value.items())


def _jsonable(value: Any) -> Any:
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    return value


def _timestamp(value: Any) -> pd.Timestamp | None:
    if value is None or value == "":
        return None
    ts = pd.Timestamp(value)
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


@dataclass(frozen=True)
class Provenance:
    """Where one frame's data came from.

    Attributes
    ----------
    source : str
        The service's base URL (no credentials), ``"synthetic sample ..."``,
        or the files a frame was loaded from.
    synthetic : bool
        Whether the numbers are synthetic (the bundled sample). Reports,
        widgets and exports mark such data; they read this flag only.
    operation : str or None
        What produced the frame: a client method (``"mints"``), ``"load"``,
        ``"sample"``, an analysis function.
    window : tuple of two Timestamps, or None
        The half-open window ``[start, end)`` the frame was asked for.
    coverage : tuple of two Timestamps, or None
        The part of ``window`` the source holds data for, as the client
        found it (:mod:`cctx_research.client.coverage`): equal to ``window``
        when the data covers all of it, ``None`` when it was not checked.
        An empty span (start == end) means none of the window is covered.
    parameters : tuple of (name, value) pairs
        The other arguments that shaped the result (JSON values).
    requests, network_requests, cache_hits, retries : int
        HTTP requests made, of them sent over the network, answered from a
        cache, and retried.
    fetched_at : Timestamp or None
    project_id : str or None
    files : tuple of str
        Files read (``load``).
    format : str or None
        The format they were read as (``"evm-logs"``, ``"dune"``, ...).
    counts : tuple of (name, int) pairs
        What a load or an import counted (rows read, decoded, paired, ...).
    library_version : str
    """

    source: str
    synthetic: bool = False
    operation: str | None = None
    window: tuple[pd.Timestamp, pd.Timestamp] | None = None
    coverage: tuple[pd.Timestamp, pd.Timestamp] | None = None
    parameters: tuple[tuple[str, Any], ...] = ()
    requests: int = 0
    network_requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    fetched_at: pd.Timestamp | None = None
    project_id: str | None = None
    files: tuple[str, ...] = ()
    format: str | None = None
    counts: tuple[tuple[str, int], ...] = ()
    library_version: str = field(default=__version__)

    def __post_init__(self) -> None:
        if not isinstance(self.source, str):
            raise TypeError(f"source must be a str, got {type(self.source).__name__}")
        if not isinstance(self.synthetic, bool):
            raise TypeError(f"synthetic must be a bool, got {type(self.synthetic).__name__}")
        set_ = object.__setattr__
        set_(self, "parameters", _frozen_mapping(self.parameters))
        set_(self, "counts", tuple((str(k), int(v)) for k, v in _frozen_mapping(self.counts)))
        set_(self, "files", tuple(str(f) for f in self.files))
        set_(self, "fetched_at", _timestamp(self.fetched_at))
        for name in ("window", "coverage"):
            span = getattr(self, name)
            if span is not None:
                start, end = span
                set_(self, name, (_timestamp(start), _timestamp(end)))

    @property
    def covered(self) -> tuple[pd.Timestamp, pd.Timestamp] | None:
        """The span the data is known to cover: ``coverage``, else ``window``."""
        return self.coverage if self.coverage is not None else self.window

    @property
    def complete(self) -> bool:
        """Whether the data covers the whole window (or nobody checked)."""
        return self.coverage is None or self.coverage == self.window

    @property
    def params(self) -> dict[str, Any]:
        """``parameters`` as a dict."""
        return dict(self.parameters)

    @property
    def count(self) -> dict[str, int]:
        """``counts`` as a dict."""
        return dict(self.counts)

    def replace(self, **changes: Any) -> Provenance:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON-ready dict (what ``attrs["cctx"]`` and sidecars hold)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in ("parameters", "counts"):
                value = {k: v for k, v in value}
            elif f.name in ("window", "coverage"):
                value = None if value is None else [value[0].isoformat(), value[1].isoformat()]
            elif f.name == "files":
                value = list(value)
            out[f.name] = _jsonable(value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Provenance:
        """Rebuild a record from :meth:`to_dict` output (unknown keys are ignored)."""
        if not isinstance(data, Mapping):
            raise TypeError(f"expected a mapping, got {type(data).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in names}
        kwargs.setdefault("source", "unknown")
        for name in ("window", "coverage"):
            if kwargs.get(name) is not None:
                kwargs[name] = tuple(kwargs[name])
        if "files" in kwargs:
            kwargs["files"] = tuple(kwargs["files"] or ())
        kwargs["synthetic"] = bool(kwargs.get("synthetic", False))
        for name in ("requests", "network_requests", "cache_hits", "retries"):
            if name in kwargs:
                kwargs[name] = int(kwargs[name] or 0)
        return cls(**kwargs)


def attach(frame: _Frame, record: Provenance) -> _Frame:
    """Store ``record`` as the provenance of ``frame`` (in place) and return ``frame``."""
    if not isinstance(frame, (pd.DataFrame, pd.Series)):
        raise TypeError(f"frame must be a pandas DataFrame or Series, got {type(frame).__name__}")
    if not isinstance(record, Provenance):
        raise TypeError(f"record must be a Provenance, got {type(record).__name__}")
    frame.attrs[ATTR] = record.to_dict()
    return frame


def provenance(frame: Any) -> Provenance | None:
    """The provenance record of a frame, or ``None`` when it carries none.

    Accepts any object with pandas-style ``attrs`` (DataFrame, Series).
    """
    if isinstance(frame, Provenance):
        return frame
    attrs = getattr(frame, "attrs", None)
    if not isinstance(attrs, Mapping):
        raise TypeError(f"frame must be a pandas DataFrame or Series, got {type(frame).__name__}")
    record = attrs.get(ATTR)
    if isinstance(record, Provenance):
        return record
    if isinstance(record, Mapping) and record:
        return Provenance.from_dict(record)
    return None


def is_synthetic(*frames: Any) -> bool:
    """Whether any of ``frames`` holds synthetic data (by its record's flag)."""
    for frame in frames:
        record = provenance(frame)
        if record is not None and record.synthetic:
            return True
    return False


def combine(records: Iterable[Provenance | None], **changes: Any) -> Provenance | None:
    """One record for a result built from several frames.

    Sources are joined, counters added, ``synthetic`` is true if any input
    is synthetic; ``changes`` override fields of the result.
    """
    records = [r for r in records if r is not None]
    if not records:
        return None
    sources: list[str] = []
    for r in records:
        for part in r.source.split("; "):
            if part not in sources:
                sources.append(part)
    first = records[0]
    merged = first.replace(
        source="; ".join(sources),
        synthetic=any(r.synthetic for r in records),
        requests=sum(r.requests for r in records),
        network_requests=sum(r.network_requests for r in records),
        cache_hits=sum(r.cache_hits for r in records),
        retries=sum(r.retries for r in records),
        files=tuple(dict.fromkeys(f for r in records for f in r.files)),
    )
    return merged.replace(**changes) if changes else merged
