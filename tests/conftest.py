"""Fixtures shared across the suite."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import cctx_research as cctx_client

SAMPLE_AS_OF = "2024-07-01T12:00:00Z"


@pytest.fixture(scope="module")
def sample_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A client of the embedded sample: 3 days pinned at SAMPLE_AS_OF, own cache."""
    client = cctx_client.connect(
        sample=True,
        as_of=SAMPLE_AS_OF,
        days=3,
        cache_dir=tmp_path_factory.mktemp("cache"),
        progress=False,
    )
    yield client
    client.close()


@pytest.fixture
def no_show_and_close(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail a test whose plot calls ``plt.show()``; close every figure after it.

    Plot tests take it with ``pytestmark = pytest.mark.usefixtures("no_show_and_close")``.
    """
    import matplotlib.pyplot as plt

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("plots must never call plt.show()")

    monkeypatch.setattr(plt, "show", refuse)
    yield
    plt.close("all")
