"""The client's seams: its typed face, the cache policy, the transport, connect(data=...)."""

from __future__ import annotations

import dataclasses
import warnings

import pandas as pd
import pytest

from cctx_research import connect
from cctx_research.client import Client, ClientOptions, WSGITransport
from cctx_research.client.cache_policy import CachePolicy
from cctx_research.connection import IN_PROCESS_URL
from cctx_research.errors import CctxWarning
from cctx_research.net import NEVER_EXPIRE, Keep, MockTransport, Request, Response

from .conftest import API_KEY, AS_OF, PROJECT_ID, ids, mints_in

START, END = "2024-06-29", "2024-06-30T06:00Z"


def test_every_option_is_a_readable_property(client):
    for f in dataclasses.fields(ClientOptions):
        assert isinstance(getattr(Client, f.name), property), f.name
        if f.name != "source":  # the source resolves to the base URL when not given
            assert getattr(client, f.name) == getattr(client.options, f.name), f.name
    assert client.source == client.base_url
    assert client.timeout == 30.0  # it raised AttributeError before
    with pytest.raises(AttributeError):
        client.timeout = 5  # read-only: options are set when the client is built


def test_the_cache_policy_decides_in_one_place():
    policy = CachePolicy(
        enabled=True, offline=False, expire_after=300, settle_after=pd.Timedelta("1h")
    )
    now = pd.Timestamp("2024-07-01T12:00Z")
    assert policy.keep_for(now - pd.Timedelta("2h"), now) is Keep.FOREVER
    assert policy.keep_for(now - pd.Timedelta("10min"), now) is Keep.FRESH
    assert policy.request(Keep.FOREVER).expire_after == NEVER_EXPIRE
    assert policy.request(Keep.FRESH).expire_after == 300
    assert policy.request(Keep.SKIP).store is False
    # offline, the reply cache is all there is: even a skipped reply is looked up
    offline = dataclasses.replace(policy, offline=True)
    assert offline.request(Keep.SKIP).store is True
    assert offline.request(Keep.SKIP).only_if_cached is True
    assert offline.chunk_max_age is None
    # a settled chunk kept whole is not kept as replies too; one still changing is
    assert CachePolicy.page(settled=True, final_known=True, kept=True) is Keep.SKIP
    assert CachePolicy.page(settled=True, final_known=True, kept=False) is Keep.FOREVER
    assert CachePolicy.page(settled=True, final_known=False, kept=True) is Keep.FRESH
    assert not dataclasses.replace(policy, expire_after=0).chunk_kept(settled=False)
    assert dataclasses.replace(policy, enabled=False).request(Keep.FOREVER).expire_after is None


def test_a_wsgi_transport_gives_what_loopback_gives_and_is_cached(
    app, service, make_client, ledger
):
    over_http = make_client(service.url)
    in_process = make_client("http://any.invalid", transport=WSGITransport(app))
    a = over_http.mints(START, END)
    b = in_process.mints(START, END)
    pd.testing.assert_frame_equal(a, b)
    assert ids(b) == ids(mints_in(ledger, START, END))
    # the reply cache sits above the transport: a settled volume is asked once
    first = in_process.volume(START, END)
    again = in_process.volume(START, END)
    assert again.attrs["cctx"]["network_requests"] == 0
    assert again.attrs["cctx"]["cache_hits"] >= 1
    assert first["mint_count"] == again["mint_count"]


def test_a_custom_transport_sees_every_request(app, make_client):
    seen: list[Request] = []
    inner = WSGITransport(app)

    def recording(request: Request) -> Response:
        seen.append(request)
        return inner.handle_request(request)

    client = make_client("http://any.invalid", transport=MockTransport(recording), cache=False)
    client.volume(START, END)
    assert seen
    assert all(r.method == "POST" for r in seen)
    assert all(r.url.startswith(f"http://any.invalid/rest/{PROJECT_ID}/") for r in seen)
    assert all(r.headers["x-api-key"] == API_KEY for r in seen)


def test_transport_must_be_a_transport():
    with pytest.raises(TypeError, match="WSGITransport"):
        Client("http://127.0.0.1:1", PROJECT_ID, API_KEY, transport=object())


def test_connect_data_frame_is_served_in_process(ledger, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctxWarning)  # the sample is synthetic
        client = connect(data=ledger, as_of=AS_OF, cache_dir=tmp_path, progress=False)
    with client:
        assert client.base_url == IN_PROCESS_URL
        assert client.synthetic  # the frame's provenance says so
        assert "digest" in client.source
        got = client.mints(START, END)
        assert ids(got) == ids(mints_in(ledger, START, END))
        assert got.attrs["cctx"]["source"] == client.source
    # another frame is another source: no cache entry of one answers for the other
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctxWarning)
        other = connect(data=ledger.head(100), as_of=AS_OF, cache_dir=tmp_path, progress=False)
    with other:
        assert other.source != client.source
        assert len(other.mints(START, END)) < len(got)


def test_connect_data_path_names_the_file(ledger, tmp_path):
    path = tmp_path / "ledger.parquet"
    ledger.to_parquet(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctxWarning)
        client = connect(data=path, as_of=AS_OF, cache=False, progress=False)
    with client:
        assert client.source.startswith(f"data file {path.resolve()}")
        assert ids(client.mints(START, END)) == ids(mints_in(ledger, START, END))


def test_connect_data_refuses_what_does_not_fit(ledger):
    with pytest.raises(ValueError, match="exclude"):
        connect(data=ledger, sample=True)
    with pytest.raises(ValueError, match="sample only"):
        connect(data=ledger, days=3)
    with pytest.raises(TypeError, match="DataFrame"):
        connect(data=42)
    with pytest.raises(ValueError, match="does not apply"):
        connect(data=ledger, base_url="http://127.0.0.1:1")
    with pytest.raises(ValueError, match="does not apply"):
        connect(data=ledger, transport=WSGITransport(lambda environ, start: []))
