"""Transient faults give the clean answer; persistent ones a typed error; odd semantics are fine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cctx_research.errors import (
    AuthError,
    CctxError,
    RateLimitError,
    ResponseSchemaError,
    ServerError,
)

from .conftest import API_KEY, PROJECT_ID, ids, mints_in
from .faults import FAULT_KINDS, FaultInjector, Semantics

START, END = "2024-06-28T03:00Z", "2024-06-30T21:00Z"


@pytest.fixture
def clean(make_client, service):
    c = make_client(service.url, cache=False, page_size=40)
    return {
        "mints": c.mints(START, END),
        "received_for": None,
        "volume": c.volume(START, END),
        "top": c.top_senders(START, END, limit=10),
        "history": c.volume_history(START, END, freq="12h"),
    }


def test_transient_faults_give_identical_results(app, serve, make_client, clean):
    faulty = FaultInjector(
        app,
        rate=0.5,
        seed=3,
        max_per_request=2,
        stall_seconds=1.0,
        kinds=[k for k in FAULT_KINDS],
    )
    handle = serve(faulty)
    client = make_client(handle.url, cache=False, page_size=40, timeout=0.5, retries=5)
    sleeps = []
    client.session.sender.sleep = sleeps.append
    pd.testing.assert_frame_equal(client.mints(START, END), clean["mints"])
    pd.testing.assert_series_equal(client.volume(START, END), clean["volume"])
    pd.testing.assert_frame_equal(client.top_senders(START, END, limit=10), clean["top"])
    pd.testing.assert_frame_equal(client.volume_history(START, END, freq="12h"), clean["history"])
    assert set(faulty.injected) == set(FAULT_KINDS), faulty.injected
    assert sum(faulty.injected.values()) >= 20
    # 429s carried Retry-After: 1, so at least one wait honoured it
    assert any(s >= 1.0 for s in sleeps)


def test_transient_faults_with_cache_give_identical_results(app, serve, make_client, clean):
    faulty = FaultInjector(
        app, rate=0.5, seed=5, kinds=["server_error", "truncate", "envelope_error", "drop"]
    )
    client = make_client(serve(faulty).url, page_size=40)
    client.session.sender.sleep = lambda s: None
    first = client.mints(START, END)
    pd.testing.assert_frame_equal(first, clean["mints"])
    faulty.enabled = False
    # nothing bad was cached: a warm pull is still the clean answer, from the cache alone
    warm = client.mints(START, END)
    pd.testing.assert_frame_equal(warm, clean["mints"])
    assert warm.attrs["cctx"]["network_requests"] == 0


def test_retry_after_http_date_is_honoured(app, serve, make_client):
    faulty = FaultInjector(
        app, rate=1.0, kinds=["rate_limit"], retry_after="date", max_per_request=1
    )
    client = make_client(serve(faulty).url, cache=False)
    sleeps = []
    client.session.sender.sleep = sleeps.append
    client.volume(START, END)
    assert sleeps
    assert all(0.0 <= s <= 2.0 for s in sleeps)
    assert max(sleeps) > 0.0


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("server_error", ServerError),
        ("rate_limit", RateLimitError),
        ("stall", ServerError),
        ("truncate", ResponseSchemaError),
        ("drop", ServerError),
        ("envelope_error", ServerError),
    ],
)
def test_persistent_faults_raise_typed_errors(app, serve, make_client, kind, error):
    faulty = FaultInjector(app, rate=1.0, kinds=[kind], max_per_request=None, stall_seconds=0.6)
    client = make_client(serve(faulty).url, timeout=0.3, retries=2)
    sleeps = []
    client.session.sender.sleep = sleeps.append
    with pytest.raises(error) as info:
        client.mints(START, END)
    exc = info.value
    assert isinstance(exc, CctxError)
    assert exc.operation == "transactions-mint"
    assert exc.hint
    assert API_KEY not in str(exc)
    assert len(sleeps) >= 2  # it did retry
    if kind == "rate_limit":
        assert exc.status == 429
        assert exc.retry_after == 1.0


def test_persistent_faults_leave_no_cache_entries(app, serve, make_client):
    faulty = FaultInjector(app, rate=1.0, kinds=["envelope_error"], max_per_request=None)
    client = make_client(serve(faulty).url, retries=1)
    client.session.sender.sleep = lambda s: None
    with pytest.raises(ServerError):
        client.volume(START, END)
    assert client.cache_info()["http_entries"] == 0


def test_http_200_with_error_envelope_is_an_error(app, serve, make_client):
    def wrong_key(environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b'{"status": 401, "body": {"error": "unauthorized", "message": "bad key"}}']

    client = make_client(serve(wrong_key).url)
    calls = []
    client.session.sender.sleep = calls.append
    with pytest.raises(AuthError) as info:
        client.volume(START, END)
    assert info.value.status == 401
    assert "bad key" in str(info.value)
    assert calls == []  # an auth error is not retried


def test_wrong_key_is_an_auth_error_without_the_key(service, tmp_path):
    from cctx_research.client import Client

    secret = "sk-wrong-0123456789abcdef"
    client = Client(
        service.url,
        "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
        secret,
        cache_dir=tmp_path,
        progress=False,
    )
    with pytest.raises(AuthError) as info:
        client.volume("2024-06-28", "2024-06-29")
    assert secret not in str(info.value)
    assert secret not in repr(info.value)
    assert info.value.hint
    assert "CCTX_API_KEY" in info.value.hint
    client.close()


def test_not_json_at_all_is_a_schema_error(serve, make_client):
    def html(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/html")])
        return [b"<html>hello</html>"]

    client = make_client(serve(html).url, retries=1)
    client.session.sender.sleep = lambda s: None
    with pytest.raises(ResponseSchemaError):
        client.volume(START, END)


@pytest.mark.parametrize(
    "options",
    [
        {"end_exclusive": True},
        {"start_exclusive": True},
        {"start_exclusive": True, "end_exclusive": True},
        {"max_limit": 30},
        {"shuffle": True},
        {"max_limit": 17, "shuffle": True, "end_exclusive": True},
    ],
    ids=lambda o: ",".join(o),
)
def test_other_service_semantics_give_the_same_answers(
    app, serve, make_client, ledger, clean, options
):
    client = make_client(serve(Semantics(app, seed=2, **options)).url, cache=False, page_size=40)
    df = client.mints(START, END)
    assert ids(df) == ids(mints_in(ledger, START, END))
    pd.testing.assert_frame_equal(df, clean["mints"])
    pd.testing.assert_series_equal(client.volume(START, END), clean["volume"])
    pd.testing.assert_frame_equal(client.top_senders(START, END, limit=10), clean["top"])


def test_capped_limit_is_learned(app, serve, make_client, clean):
    client = make_client(serve(Semantics(app, max_limit=25)).url, cache=False, page_size=100)
    small = client.mints("2024-06-29T00:00Z", "2024-06-29T05:00Z")
    assert 25 < len(small) < 100  # one short first page: the probe finds the cap
    assert client.session.page_size("transactions-mint").limit == 25
    assert ids(small) == ids(
        clean["mints"].loc[
            (clean["mints"]["timestamp"] >= "2024-06-29T00:00Z")
            & (clean["mints"]["timestamp"] < "2024-06-29T05:00Z")
        ]
    )
    pd.testing.assert_frame_equal(client.mints(START, END), clean["mints"])


@pytest.mark.parametrize(
    "options",
    [{"start_exclusive": True}, {"end_exclusive": True}, {}],
    ids=["(start, end]", "[start, end)", "[start, end]"],
)
def test_bound_semantics_are_learned_despite_neighbouring_mints(serve, make_client, options):
    """Mints on every second, 1, 2, 3, 1, 2, 3, ... a second: no probe second is alone."""
    from cctx_research.service.local import local_service
    from cctx_research.service.sample import generate

    ledger = generate("2024-07-01", days=1).head(3000).copy()
    base = pd.Timestamp("2024-06-30T12:00Z")
    seconds = np.repeat(np.arange(1500), np.tile([1, 2, 3], 500))[: len(ledger)]
    ledger["burn_timestamp"] = base + pd.to_timedelta(seconds - 600, unit="s")
    ledger["mint_timestamp"] = base + pd.to_timedelta(seconds, unit="s")
    app = local_service(ledger, as_of="2024-07-01", api_key=API_KEY, project_id=PROJECT_ID).app
    client = make_client(serve(Semantics(app, **options)).url, cache=False)
    start, end = base + pd.Timedelta(seconds=100), base + pd.Timedelta(seconds=700)
    got = client.volume(start, end)
    minted = ledger[(ledger["mint_timestamp"] >= start) & (ledger["mint_timestamp"] < end)]
    assert got["mint_count"] == len(minted)
    assert got["mint_volume_raw"] == minted["amount_raw"].sum()
