"""Local data made ready to serve: the one way to turn data into a running local service.

:func:`local_service` takes what a researcher holds (a ledger or a
transfers frame, a path :func:`cctx_research.load` reads, or nothing for
the bundled synthetic sample) and returns a :class:`LocalService`: the
WSGI application over it, the credentials it accepts, and what to call it
(the ``source`` of provenance and of every cache key, and whether it is
synthetic). :func:`cctx_research.connect` joins a client to it in-process
(through :class:`~cctx_research.client.WSGITransport`, or on loopback);
the web app serves it on loopback for its kernels (:meth:`LocalService.serve`).

Examples
--------
>>> local = local_service(as_of="2024-07-01", days=1, per_day=100)  # doctest: +SKIP
>>> local.source  # doctest: +SKIP
'embedded synthetic sample (pinned 2024-07-01T00:00:00+00:00, days=1, per_day=100)'
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..config import DEMO_API_KEY, DEMO_PROJECT_ID, Secret, Settings
from ..times import TimeLike, to_timestamp

if TYPE_CHECKING:  # waitress is imported when a service is served on a port, not in-process
    from .server import ServerHandle

__all__ = ["PAGE_SIZE", "LocalService", "local_service"]

logger = logging.getLogger(__name__)

PAGE_SIZE = 1000
"""The largest page the local service answers (the interface's default is 100)."""


@dataclass(frozen=True)
class LocalService:
    """Data ready to be served: the application, its credentials and its name.

    Attributes
    ----------
    app : callable
        The WSGI application (:func:`~cctx_research.service.app.make_app`).
    project_id : str
    api_key : Secret
        The key the application accepts.
    source : str
        What the data is, for provenance and cache keys: it changes when
        the data does (a file's size and modification time, a frame's
        content digest, the sample's parameters).
    synthetic : bool
        The data is synthetic (the sample, or a frame whose provenance says so).
    transfers : int
        How many transfers it holds.
    clock : Timestamp or None
        The pinned clock (``None``: now, live).
    page_size : int
        The largest page it answers.
    domains : tuple of int
        The CCTP domains its transfers leave or reach.
    """

    app: Callable[..., Any]
    project_id: str
    api_key: Secret
    source: str
    synthetic: bool
    transfers: int
    clock: pd.Timestamp | None = None
    page_size: int = PAGE_SIZE
    domains: tuple[int, ...] = ()

    def serve(self, host: str = "127.0.0.1", port: int = 0) -> ServerHandle:
        """Serve it in a background thread (default: a free loopback port).

        Returns
        -------
        ServerHandle
            Running, with ``settings`` holding the URL, project id and key;
            ``close()`` it (or use ``with``).
        """
        from .server import start_in_background

        handle = start_in_background(self.app, host, port)
        handle.settings = Settings(
            base_url=handle.url, project_id=self.project_id, api_key=self.api_key
        )
        logger.debug("%s (%d transfers) served at %s", self.source, self.transfers, handle.url)
        return handle

    @property
    def description(self) -> str:
        """One line for a log: what is served."""
        return f"{self.source}: {self.transfers:,} transfers"


def _sample_source(pinned: pd.Timestamp | None, options: dict[str, Any]) -> str:
    # The label is part of every cache key. A live sample's settled days
    # depend only on the seed and the day, so "live" is stable across
    # processes and a re-run reuses them; a pinned clock is its own source.
    label = "pinned " + pinned.isoformat() if pinned is not None else "live"
    shown = ", ".join(f"{k}={v}" for k, v in sorted(options.items()))
    return f"embedded synthetic sample ({label}{', ' + shown if shown else ''})"


def _file_source(path: Path) -> str:
    stat = path.stat()
    # size and modification time in the name: every cache key includes it,
    # so an edited file is never answered from an older one's cache
    modified = dt.datetime.fromtimestamp(stat.st_mtime_ns / 1e9, dt.timezone.utc)
    return f"data file {path} ({stat.st_size} bytes, modified {modified:%Y-%m-%d %H:%M:%S.%f} UTC)"


def _digest(ledger: pd.DataFrame) -> str:
    """A digest of a ledger's content: a frame has no name that changes with it."""
    hashed = pd.util.hash_pandas_object(ledger, index=False).to_numpy()
    return f"{int(hashed.sum(dtype='uint64')) ^ len(ledger):016x}"


def local_service(
    data: Any = None,
    *,
    as_of: TimeLike | None = None,
    days: int | None = None,
    per_day: int | None = None,
    seed: int | None = None,
    api_key: str | Secret = DEMO_API_KEY,
    project_id: str = DEMO_PROJECT_ID,
    fractions: str = "refuse",
    progress: bool | None = None,
) -> LocalService:
    """Make data ready to serve as the interface: the one way from data to a local service.

    Parameters
    ----------
    data : DataFrame, path or list of paths, optional
        A ``ledger`` or ``transfers`` frame, or files :func:`cctx_research.load`
        reads. Default: the bundled synthetic sample.
    as_of : date-like, optional
        Pin the service's clock (and, for the sample, its last day).
        Default: now, live.
    days, per_day, seed : int, optional
        The sample's size and seed (see :func:`~.sample.generate`); only
        without ``data``.
    api_key, project_id : str
        The credentials the service accepts (default: the demo ones).
    fractions : {"refuse", "floor"}
        Times with a fraction of a second in ``data``: an error, or served
        to the second with a warning (see :func:`~.loading.for_service`).
    progress : bool, optional
        A bar while the sample's days not cached yet are built (see
        :func:`~.sample.generate`). Default: by where output goes.

    Returns
    -------
    LocalService

    Raises
    ------
    DataError
        ``data`` is missing, unreadable or does not fit a ledger or transfers frame.
    ValueError, TypeError
        Sample options given with ``data``, or an argument of the wrong kind.
    """
    from ..provenance import is_synthetic, provenance
    from .app import make_app
    from .dataset import LedgerDataset, ledger_dataset
    from .loading import for_service, load_ledger, to_ledger
    from .store import Store

    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, got {type(progress).__name__}")
    if isinstance(api_key, str):
        api_key = Secret(api_key)
    if not isinstance(api_key, Secret):
        raise TypeError(f"api_key must be a str, got {type(api_key).__name__}")
    pinned = None if as_of is None else to_timestamp(as_of, name="as_of")
    sample_options = {
        k: v for k, v in (("days", days), ("per_day", per_day), ("seed", seed)) if v is not None
    }
    if data is None:
        from .sample import generate

        ledger = generate(pinned, days=days, per_day=per_day, seed=seed, progress=progress)
        source, synthetic = _sample_source(pinned, sample_options), True
    else:
        if sample_options:
            raise ValueError(
                f"{', '.join(sample_options)} apply to the sample only; drop them with data="
            )
        if isinstance(data, pd.DataFrame):
            record = provenance(data)
            ledger = for_service(to_ledger(data), fractions=fractions)
            named = record.source if record is not None else "in-memory data"
            source = f"{named} (frame of {len(data)} rows, digest {_digest(ledger)})"
            synthetic = is_synthetic(data)
        elif isinstance(data, (str, Path)) and (found := ledger_dataset(data)) is not None:
            # served as it lies on disk, a column at a time: no frame of the whole ledger
            ledger = LedgerDataset(found, fractions=fractions)
            source = f"data {data!s} (ledger dataset, digest {ledger.digest()})"
            synthetic = ledger.synthetic
        elif isinstance(data, (str, Path, list, tuple)):
            ledger = load_ledger(data, fractions=fractions)
            path = Path(data).expanduser() if isinstance(data, (str, Path)) else None
            if path is not None and path.is_file():
                source = _file_source(path.resolve())
            else:
                source = f"data {data!s} (digest {_digest(ledger)})"
            synthetic = is_synthetic(ledger)
        else:
            raise TypeError(
                "data must be a ledger or transfers DataFrame, or a path (or list of paths) "
                f"that cctx_research.load reads; got {type(data).__name__}"
            )
    # the sample is the generator's own (valid by construction): indexed on first query
    store = Store(ledger, clock=pinned, trusted=data is None)
    app = make_app(
        store, api_key=api_key.get(), project_id=project_id, log_level=logging.DEBUG,
        synthetic=synthetic,
    )  # fmt: skip
    if isinstance(ledger, LedgerDataset):
        domains = store.domains()
    else:
        held = pd.concat([ledger["source_domain"], ledger["destination_domain"]]).dropna()
        domains = tuple(sorted(int(d) for d in held.unique()))
    return LocalService(
        app, project_id, api_key, source, synthetic, len(store), pinned, domains=domains
    )
