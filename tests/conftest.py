"""Fixtures shared across the suite, and how its tests are shared among parallel workers."""

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


# ---------------------------------------------------------------- parallel runs (pytest-xdist)

_SHARED_SCOPES = {"module", "class", "package"}


def _group(item: pytest.Item) -> str | None:
    """The worker group of a test: its module when it shares a fixture wider than itself.

    A module's browser, dashboard process or pages set up once serve all its tests only if
    they run on one worker; a test with nothing but its own and session fixtures goes to
    whichever worker is free.
    """
    info = getattr(item, "_fixtureinfo", None)
    for defs in getattr(info, "name2fixturedefs", {}).values():
        if any(str(d.scope) in _SHARED_SCOPES for d in defs):
            return item.nodeid.split("::")[0]
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a parallel worker: group tests that share fixtures, and the slow groups first.

    Under ``--dist loadgroup --no-loadscope-reorder`` the workers take the groups in this
    order, so the long tests start at once rather than end the run on one worker.
    """
    if not hasattr(config, "workerinput"):
        return  # a serial run keeps the files' order
    groups: dict[str, bool] = {}
    keys: list[str] = []
    for item in items:
        marks = list(item.iter_markers("xdist_group"))
        group = marks[0].args[0] if marks and marks[0].args else _group(item)
        if group is None:
            group = item.nodeid
        elif not marks:
            item.add_marker(pytest.mark.xdist_group(group))
        keys.append(group)
        groups[group] = groups.get(group, False) or item.get_closest_marker("slow") is not None
    order = {group: rank for rank, group in enumerate(groups)}
    ranked = sorted(
        zip(keys, items, strict=True), key=lambda pair: (not groups[pair[0]], order[pair[0]])
    )
    items[:] = [item for _, item in ranked]
