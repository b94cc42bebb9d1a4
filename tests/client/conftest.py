"""A pinned sample served on loopback, the truth computed from its ledger, and clients.

The sample becomes a service the one public way (:func:`local_service`);
fault-injecting wrappers of its app are served with ``serve``.

The sample is small (5 days, ~300 transfers a day) so that the whole suite
talks to a real server quickly; ``page_size`` is lowered where a test needs
many pages. ``API_KEY`` is distinctive so that the leak test can search raw
bytes for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from cctx_research.client import Client
from cctx_research.client.parse import addresses
from cctx_research.service.local import LocalService, local_service
from cctx_research.service.sample import generate
from cctx_research.service.server import ServerHandle, start_in_background
from cctx_research.times import to_timestamp

AS_OF = pd.Timestamp("2024-07-01T12:00:00Z")
API_KEY = "sk-live-CCTXLEAKCANARY-7f3a9c2e5b1d"
PROJECT_ID = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
DEFAULT_DOMAINS = (0, 1, 2, 3, 6, 7)


@pytest.fixture(scope="session")
def ledger() -> pd.DataFrame:
    return generate(AS_OF, days=5, per_day=300, seed=11)


@pytest.fixture(scope="session")
def local(ledger: pd.DataFrame) -> LocalService:
    """The ledger as a local service on the pinned clock, with the test credentials."""
    return local_service(ledger, as_of=AS_OF, api_key=API_KEY, project_id=PROJECT_ID)


@pytest.fixture(scope="session")
def app(local: LocalService) -> Any:
    return local.app


@pytest.fixture(scope="session")
def service(local: LocalService) -> Iterator[ServerHandle]:
    with local.serve() as handle:
        yield handle


@pytest.fixture
def serve() -> Iterator[Callable[[Any], ServerHandle]]:
    """Start a wrapped app for one test."""
    handles: list[ServerHandle] = []

    def start(wsgi: Any) -> ServerHandle:
        handle = start_in_background(wsgi)
        handles.append(handle)
        return handle

    yield start
    for handle in handles:
        handle.close()


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., Client]]:
    """Clients on the pinned clock, caching under tmp_path, quiet, with fast backoff."""
    clients: list[Client] = []

    def make(url: str, **kwargs: Any) -> Client:
        options: dict[str, Any] = {
            "cache_dir": tmp_path / "cache",
            "progress": False,
            "clock": lambda: AS_OF,
            "backoff": 0.001,
        }
        options.update(kwargs)
        client = Client(url, PROJECT_ID, API_KEY, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def client(service: ServerHandle, make_client: Callable[..., Client]) -> Client:
    return make_client(service.url)


# ---------------------------------------------------------------------------
# truth from the ledger


def minted(ledger: pd.DataFrame, *, every_domain: bool = True) -> pd.DataFrame:
    """Transfers minted by the clock, from and to any domain (the client's default), or only
    the interface's six default domains (``every_domain=False``: what a bare request lists)."""
    ok = ledger["mint_timestamp"].notna() & (ledger["mint_timestamp"] <= AS_OF)
    if not every_domain:
        ok &= ledger["source_domain"].isin(DEFAULT_DOMAINS)
        ok &= ledger["destination_domain"].isin(DEFAULT_DOMAINS)
    return ledger.loc[ok]


def mints_in(
    ledger: pd.DataFrame, start: Any, end: Any, *, every_domain: bool = True
) -> pd.DataFrame:
    m = minted(ledger, every_domain=every_domain)
    ts = m["mint_timestamp"]
    return m.loc[(ts >= to_timestamp(start)) & (ts < to_timestamp(end))]


def burns_in(ledger: pd.DataFrame, start: Any, end: Any) -> pd.DataFrame:
    ts = ledger["burn_timestamp"]
    ok = (ts >= to_timestamp(start)) & (ts < to_timestamp(end)) & (ts <= AS_OF)
    return ledger.loc[ok]


def received_in(ledger: pd.DataFrame, address: str, start: Any, end: Any) -> pd.DataFrame:
    """Completed transfers by mint time, pending ones by burn time."""
    rec = ledger.loc[addresses(ledger["mint_recipient"]).to_numpy() == address]
    done = rec["mint_timestamp"].notna() & (rec["mint_timestamp"] <= AS_OF)
    when = rec["mint_timestamp"].where(done, rec["burn_timestamp"])
    ok = (when >= to_timestamp(start)) & (when < to_timestamp(end)) & (when <= AS_OF)
    return rec.loc[ok]


def ids(frame: pd.DataFrame) -> list[str]:
    return sorted(frame["transfer_id"].astype(str))


def raw_sum(frame: pd.DataFrame) -> int:
    return int(np.asarray(frame["amount_raw"], dtype=np.int64).sum())
