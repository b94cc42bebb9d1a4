"""A service of synthetic data says so in its replies; the client marks what it fetched.

The header ``x-cctx-synthetic: true`` is this toolkit's extension to the
interface (docs/interface.md). Every test talks to the real local service
over loopback: the pinned sample of conftest, the same transfers served as
someone's own data (no synthetic provenance), and ``cctx-research serve``
run as a command.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
import requests

from cctx_research import connect
from cctx_research.provenance import SYNTHETIC_HEADER, provenance
from cctx_research.service.local import local_service
from cctx_research.service.server import ServerHandle

from .conftest import API_KEY, AS_OF, PROJECT_ID, ids, mints_in

START, END = "2024-06-29", "2024-06-30T06:00Z"  # settled by the pinned clock


def _post(url: str, operation: str, key: str = API_KEY) -> requests.Response:
    return requests.post(
        f"{url}/rest/{PROJECT_ID}/{operation}",
        json={"startDate": "1719619200", "endDate": "1719727200"},
        headers={"x-api-key": key},
        timeout=10,
    )


@pytest.fixture(scope="module")
def own_data(ledger: pd.DataFrame) -> Iterator[ServerHandle]:
    """The same transfers served as a researcher's own data: no synthetic provenance."""
    plain = ledger.copy()
    plain.attrs = {}
    local = local_service(plain, as_of=AS_OF, api_key=API_KEY, project_id=PROJECT_ID)
    assert not local.synthetic
    with local.serve() as handle:
        yield handle


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> pytest.MonkeyPatch:
    for name in ("CCTX_API_KEY", "CCTX_PROJECT_ID", "CCTX_BASE_URL", "CCTX_SOURCE",
                 "CCTX_SYNTHETIC", "CCTX_PAGE_SIZE"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CCTX_CACHE_DIR", str(tmp_path / "envcache"))
    monkeypatch.setenv("CCTX_API_KEY", API_KEY)
    monkeypatch.setenv("CCTX_PROJECT_ID", PROJECT_ID)
    return monkeypatch


def test_every_reply_of_the_sample_carries_the_header(service):
    assert _post(service.url, "transactions-volume").headers[SYNTHETIC_HEADER] == "true"
    refused = _post(service.url, "transactions-volume", key="wrong-key")
    assert refused.status_code == 401
    assert refused.headers[SYNTHETIC_HEADER] == "true"


def test_own_data_is_not_announced(own_data):
    reply = _post(own_data.url, "transactions-volume")
    assert reply.status_code == 200
    assert SYNTHETIC_HEADER not in reply.headers


def test_frames_from_a_synthetic_service_are_marked_without_a_setting(service, make_client, ledger):
    client = make_client(service.url)
    assert client.options.synthetic is False
    assert client.synthetic is False  # nothing said yet
    mints = client.mints(START, END)
    assert ids(mints) == ids(mints_in(ledger, START, END))
    assert provenance(mints).synthetic
    assert client.synthetic
    volume = client.volume(START, END)
    assert provenance(volume).synthetic


def test_a_pull_answered_by_the_cache_alone_is_marked_as_the_first_was(service, make_client):
    first = make_client(service.url).mints(START, END)
    assert provenance(first).synthetic
    again = make_client(service.url, offline=True)  # the same cache directory, no network
    second = again.mints(START, END)
    record = provenance(second)
    assert record.network_requests == 0  # settled chunks, read from the chunk cache
    assert record.cache_hits > 0
    assert record.synthetic
    assert ids(second) == ids(first)


def test_own_data_is_not_marked_and_the_setting_still_marks_it(own_data, make_client):
    plain = make_client(own_data.url, cache=False)
    assert not provenance(plain.mints(START, END)).synthetic
    assert not plain.synthetic
    told = make_client(own_data.url, cache=False, synthetic=True)
    assert provenance(told.mints(START, END)).synthetic


def test_connect_marks_a_configured_synthetic_service_without_CCTX_SYNTHETIC(env, service):
    env.setenv("CCTX_BASE_URL", service.url)
    with connect(progress=False) as client:
        assert provenance(client.mints(START, END)).synthetic


def test_CCTX_SYNTHETIC_still_marks_a_service_that_does_not_say_so(env, own_data):
    env.setenv("CCTX_BASE_URL", own_data.url)
    with connect(progress=False, cache=False) as client:
        assert not provenance(client.mints(START, END)).synthetic
    env.setenv("CCTX_SYNTHETIC", "1")
    with connect(progress=False, cache=False) as client:
        assert provenance(client.mints(START, END)).synthetic


def test_the_serve_command_announces_the_sample(env):
    day = "2024-07-01T00:00:00Z"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cctx_research.cli", "serve", "--port", "0", "--per-day", "40",
         "--as-of", day, "--threads", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        url = None
        assert proc.stderr is not None
        for line in proc.stderr:  # ends when the command exits
            found = re.search(r"serving on (http://\S+)", line)
            if found:
                url = found.group(1)
                break
        assert url is not None, f"serve exited {proc.poll()} without listening"
        env.setenv("CCTX_BASE_URL", url)
        with connect(progress=False, cache=False, clock=lambda: pd.Timestamp(day)) as client:
            frame = client.mints("2024-06-30", "2024-06-30T12:00Z")
        assert len(frame) > 0
        assert provenance(frame).synthetic
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
