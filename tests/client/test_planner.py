"""The page size is learned (400s, silent caps) and remembered; options are one record."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from cctx_research.client import Client, ClientOptions
from cctx_research.client.planner import LADDER, MEMO_FILE, ChunkPages, PageSize
from cctx_research.service.store import MAX_LIMIT

from .conftest import API_KEY, PROJECT_ID, ids, mints_in
from .faults import Semantics

START, END = "2024-06-28T03:00Z", "2024-06-30T21:00Z"


class Counting:
    """A WSGI wrapper that records the ``limit`` of every listing request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.limits: list[int] = []
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        size = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(size)
        body = json.loads(raw or b"{}")
        if "limit" in body and "transactions-mint" in environ["PATH_INFO"]:
            with self.lock:
                self.limits.append(int(body["limit"]))
        import io

        environ["wsgi.input"] = io.BytesIO(raw)
        return self.app(environ, start_response)


def test_the_largest_accepted_page_is_learned_and_remembered(app, serve, make_client, ledger):
    counting = Counting(app)
    url = serve(counting).url
    first = make_client(url)
    df = first.mints(START, END)
    assert ids(df) == ids(mints_in(ledger, START, END))
    # 10,000, 5,000 and 2,000 answered 400
    assert first.session.page_size("transactions-mint").limit == MAX_LIMIT
    assert [x for x in counting.limits if x > MAX_LIMIT] == [s for s in LADDER if s > MAX_LIMIT]
    memo = json.loads((Path(first.cache_dir) / MEMO_FILE).read_text())
    assert MAX_LIMIT in [entry["limit"] for entry in memo.values()]
    # a new session on the same cache starts with what was learned: no 400 again
    counting.limits.clear()
    second = make_client(url, cache=True)
    second.clear_cache()  # replies and chunks gone, the learned size kept
    again = second.mints(START, END)
    pd.testing.assert_frame_equal(again, df)
    assert counting.limits
    assert max(counting.limits) == MAX_LIMIT  # (smaller ones: checks of short pages)


def test_a_silent_cap_is_learned_with_the_default_page_size(app, serve, make_client, ledger):
    client = make_client(serve(Semantics(app, max_limit=30)).url, cache=False)
    df = client.mints(START, END)
    assert client.session.page_size("transactions-mint").limit == 30
    assert ids(df) == ids(mints_in(ledger, START, END))


def test_an_explicit_page_size_is_used_as_given(app, serve, make_client):
    counting = Counting(app)
    client = make_client(serve(counting).url, page_size=70)
    client.mints(START, END)
    assert set(counting.limits) == {70}


def test_a_checked_short_page_spares_later_checks():
    size = PageSize(100)
    first = ChunkPages(size)
    probe = first.answered(40)  # short: the end, or a cap of 40?
    assert probe is not None
    assert probe.probe
    assert first.answered(0) is None  # the end
    # a later chunk's short page of fewer than 40 cannot be a cap: no check
    later = ChunkPages(size)
    assert later.answered(39) is None
    # one of 40 or more still is checked
    again = ChunkPages(size)
    assert again.answered(40) is not None


def test_chunk_pages_report_a_cap_to_the_shared_size():
    size = PageSize(None)
    size.accepted(size.limit)
    pager = ChunkPages(size)
    assert pager.request is not None
    assert pager.request.limit == LADDER[0]
    # a short first page, then records behind it: the service caps at 25
    probe = pager.answered(25)
    assert probe is not None
    assert probe.probe
    assert probe.limit == 25
    pager.answered(25)
    assert size.snapshot()[:2] == (25, True)


def test_options_are_one_frozen_record(service, tmp_path):
    opts = ClientOptions(cache_dir=tmp_path, max_workers=3, expire_after="10min")
    assert opts.expire_after == 600
    with pytest.raises(AttributeError):
        opts.max_workers = 5  # type: ignore[misc]
    client = Client(service.url, PROJECT_ID, API_KEY, options=opts, page_size=50)
    assert client.options.max_workers == 3
    assert client.page_size == 50
    assert client.max_workers == 3
    client.close()
    with pytest.raises(TypeError, match="max_workers"):
        opts.replace(max_wrokers=2)
    with pytest.raises(TypeError, match="ClientOptions"):
        Client(service.url, PROJECT_ID, API_KEY, options={"page_size": 5})


def test_a_client_with_explicit_arguments_never_reads_the_environment(service, monkeypatch):
    monkeypatch.setenv("CCTX_CACHE_DIR", "/nonexistent/from-the-environment")
    monkeypatch.setenv("CCTX_BASE_URL", "http://127.0.0.1:1")
    client = Client(service.url, PROJECT_ID, API_KEY, cache=False)
    assert "from-the-environment" not in str(client.cache_dir)
    assert client.base_url == service.url
    client.close()


def test_the_client_package_never_imports_the_service():
    import subprocess
    import sys

    code = (
        "import sys, cctx_research.client, cctx_research\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('cctx_research.service'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
