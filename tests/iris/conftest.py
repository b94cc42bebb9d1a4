"""The Iris stand-in, served over loopback HTTP or through the WSGI transport, and clients."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from cctx_research.iris import IrisClient
from cctx_research.net import WSGITransport
from cctx_research.service.server import start_in_background

from .standin import IrisStandin

AS_OF = pd.Timestamp("2026-11-20T12:00:00Z")


@pytest.fixture
def standin() -> IrisStandin:
    return IrisStandin()


@pytest.fixture(params=["loopback", "wsgi"])
def wire(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_iris(
    tmp_path: Path, standin: IrisStandin, wire: str
) -> Iterator[Callable[..., IrisClient]]:
    """Clients of the stand-in over the wire of the test, caching under tmp_path, fast backoff."""
    made: list[IrisClient] = []
    handles: dict[int, Any] = {}  # one server per app: clients of one app share its address

    def make(app: Any = None, **kwargs: Any) -> IrisClient:
        app = standin if app is None else app
        options: dict[str, Any] = {
            "cache_dir": tmp_path / "cache", "backoff": 0.01, "clock": lambda: AS_OF,
        }  # fmt: skip
        options.update(kwargs)
        if wire == "loopback":
            if id(app) not in handles:
                handles[id(app)] = start_in_background(app)
            client = IrisClient(handles[id(app)].url, **options)
        else:
            client = IrisClient("http://iris.invalid", transport=WSGITransport(app), **options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()
    for handle in handles.values():
        handle.close()
