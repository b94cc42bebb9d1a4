"""Fixtures shared across the suite, and how its tests are shared among parallel workers."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import cctx_research as cctx_client
from cctx_research.views.jupyter import without_iri_grammar

SAMPLE_AS_OF = "2024-07-01T12:00:00Z"

# The notebook tests import nbformat, whose jsonschema imports rfc3987_syntax when it is
# installed: 1.4 s of CPU a worker compiling IRI grammars no notebook schema uses. Skipped
# as the dashboard's server skips it.
without_iri_grammar()

# Ctrl-C as a terminal delivers it. A suite started in the background (`make test` as a
# job of a non-interactive shell, nohup, some CI runners) starts with SIGINT ignored,
# Python keeps it ignored, and the workers and every process a test starts inherit that:
# the tests that stop a `load`, a `sync` or a server with SIGINT then waited for a process
# that could not hear it, or passed because a notebook test that ran before in the same
# worker had put Python's handler back. Each worker takes Python's handler at the start.
if (
    threading.current_thread() is threading.main_thread()
    and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
):
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def _own_cache_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every test that names no cache directory uses the session's, never the user's.

    The toolkit keeps its cache where ``CCTX_CACHE_DIR`` says, else in the platform's
    (``~/.cache/cctx-research``): a test calling the CLI or ``connect()`` without a
    directory of its own wrote fetched chunks and figures into the user's. The session's
    directory is lent the sample's days (:func:`sample_seed.seed`), as a test's own is.
    """
    from sample_seed import seed

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CCTX_CACHE_DIR", str(seed(tmp_path_factory.mktemp("cctx-cache"))))
        yield


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


# ---------------------------------------------------------------- property tests (hypothesis)


def pytest_configure(config: pytest.Config) -> None:
    """Property tests have no deadline: their cases are proved, not timed.

    Hypothesis fails an example that takes over 200 ms; on a busy machine (the suite's
    own parallel workers, a CI runner) a base58 round trip took 300 ms and failed a run
    that its code passes. Speed is measured in benchmarks/, never asserted in a test.
    Tests that set ``deadline=`` themselves keep theirs.
    """
    if config.pluginmanager.has_plugin("hypothesispytest"):  # not imported when not loaded
        from hypothesis import settings

        # on the profile in force (a CI's, say), only the deadline changed
        settings.register_profile("cctx-suite", parent=settings.default, deadline=None)
        settings.load_profile("cctx-suite")


# ---------------------------------------------------------------- parallel runs (pytest-xdist)

INDEPENDENT = {
    "tests/test_benchmarks.py",
    "tests/test_notebooks.py",
    "tests/nodes/test_sync.py",  # each test its own anvil nodes
    "tests/nodes/test_sync_solana.py",
    "tests/nodes/test_sync_iris.py",
    "tests/ingest/test_datasets.py",
}
"""Modules of long tests sharing nothing wider than a test: spread test by test.

A module here has no fixture of module scope (``tests/test_suite_scopes.py`` checks): one
would be built again on every worker that runs one of its tests.
"""

_DOC_BLOCK = re.compile(r"^tests/test_docs\.py::test_block_runs\[(.+):\d+\]$")


def scope_of(nodeid: str) -> str:
    """What one parallel worker runs together: a test module, a doc page, or one test.

    A module's fixtures (a dashboard process, a browser, a client of the sample) serve all
    its tests only on one worker. A doc page's blocks build on each other, in order, so a
    page is one scope (a page, not the module, so that pages run side by side).
    """
    page = _DOC_BLOCK.match(nodeid)
    if page:
        return f"tests/test_docs.py::{page.group(1)}"
    module = nodeid.split("::")[0]
    return nodeid if module in INDEPENDENT else module


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadscope`` takes the suite's scopes (:func:`scope_of`), not xdist's."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return Scheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a parallel worker: the scopes with a slow test first, in the files' order.

    Under ``--no-loadscope-reorder`` the workers take the scopes in this order, so the long
    tests start at once rather than end the run on one worker.
    """
    if not hasattr(config, "workerinput"):
        return  # a serial run keeps the files' order
    slow: dict[str, bool] = {}
    scopes = [scope_of(item.nodeid) for item in items]
    for scope, item in zip(scopes, items, strict=True):
        slow[scope] = slow.get(scope, False) or item.get_closest_marker("slow") is not None
    order = {scope: rank for rank, scope in enumerate(slow)}
    ranked = sorted(
        zip(scopes, items, strict=True), key=lambda pair: (not slow[pair[0]], order[pair[0]])
    )
    items[:] = [item for _, item in ranked]


# ---------------------------------------------------------------- where the suite's CPU goes

CPU_LOG = "CCTX_TEST_CPU"
"""Name a file in this variable and each test's CPU is appended to it (:func:`cpu_of`)."""


def _cpu_now() -> tuple[float, float]:
    """CPU seconds so far: this process's own, and its children's that have ended."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """With ``CCTX_TEST_CPU=FILE``: one JSON line a test, the CPU its call and fixtures took.

    ``own`` is the worker's CPU, ``children`` that of the processes the test started and
    waited for (the CLI, kernels, servers, benchmark smoke runs); a module's fixtures count
    where they are set up and torn down (its first and last test). Lines from parallel
    workers are appended whole, so one file collects a whole run.
    """
    path = os.environ.get(CPU_LOG)
    if not path:
        yield
        return
    before, began = _cpu_now(), time.time()
    yield
    after = _cpu_now()
    line = {
        "nodeid": item.nodeid,
        "scope": scope_of(item.nodeid),
        "own": round(after[0] - before[0], 3),
        "children": round(after[1] - before[1], 3),
        # when and where: the run's timeline (which worker idles, what runs last)
        "began": round(began, 2),
        "ended": round(time.time(), 2),
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
    }
    _log_line(path, line)


def _log_line(path: str, line: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def _probe() -> float:
    """CPU seconds of one fixed piece of work (Python, then numpy): how fast the machine is now.

    The same code's tests take 15-25 % more or less CPU from one run to the next on a
    shared machine; a run's probes, taken when each worker starts and ends, say which.
    """
    import numpy as np

    began = time.process_time()
    sum(i * i for i in range(1_500_000))
    np.sort(np.random.default_rng(0).random(2_000_000))
    return round(time.process_time() - began, 4)


def _log_probe(at: str) -> None:
    path = os.environ.get(CPU_LOG)
    if path:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _log_line(path, {"probe": _probe(), "at": at, "worker": worker, "when": time.time()})


def pytest_sessionstart(session: pytest.Session) -> None:
    _log_probe("start")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _log_probe("end")
