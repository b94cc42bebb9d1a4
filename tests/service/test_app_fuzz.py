"""Hypothesis throws malformed requests at the live service: never a 5xx, always the envelope."""

from __future__ import annotations

import json

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cctx_research.service.fields import OPERATIONS

from .conftest import API_KEY, CLOCK_S, PROJECT_ID

FIELDS = [*sorted({f for fields in OPERATIONS.values() for f in fields}), "foo", "", "LIMIT"]

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(
        [
            str(CLOCK_S),
            "0x" + "ab" * 32,
            "0x" + "00" * 12 + "ab" * 20,
            "0x" + "AB" * 20,
            '["0","6"]',
            "[0,6]",
            "[",
            "6",
            " 1 ",
            "1e3",
            "-1",
            "\u0663",  # an Arabic-Indic digit: not ASCII
        ]
    )
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
bodies = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=5)
raw_bodies = st.one_of(
    bodies.map(lambda b: json.dumps(b).encode()),
    st.binary(max_size=200),
    st.sampled_from(
        [
            b"",
            b"{",
            b"[1]",
            b'{"limit":1,"limit":1}',
            b'{"a": 1e999}',
            b"NaN",
            b"1" * 5000,
            b"\xef\xbb\xbf{}",
        ]
    ),
    json_values.map(lambda v: json.dumps(v).encode()),
)
header_text = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=40,
).map(str.strip)
content_types = st.one_of(
    st.sampled_from(
        [
            "application/json",
            "application/json; charset=utf-8",
            "application/json; charset=utf-16",
            "APPLICATION/JSON",
            "text/json",
            "multipart/form-data",
            "",
        ]
    ),
    header_text,
)
keys = st.one_of(st.just(API_KEY), st.none(), header_text)
operations = st.one_of(
    st.sampled_from(sorted(OPERATIONS)), st.text(alphabet="abcxyz-_.%", max_size=12)
)
methods = st.sampled_from(["POST"] * 6 + ["GET", "PUT", "DELETE", "OPTIONS", "HEAD"])


@pytest.fixture(scope="module")
def base(server) -> str:
    return server.url


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    operation=operations,
    data=raw_bodies,
    content_type=content_types,
    key=keys,
    method=methods,
    project=st.sampled_from([PROJECT_ID, PROJECT_ID.upper(), "x"]),
    extra=st.dictionaries(
        st.sampled_from(["X-Odd", "Accept", "Transfer-Encoding-X", "Origin"]),
        header_text,
        max_size=2,
    ),
)
def test_no_input_gets_a_5xx_or_a_bare_reply(
    base, http, operation, data, content_type, key, method, project, extra
):
    headers = dict(extra)
    if content_type is not None:
        headers["Content-Type"] = content_type
    if key is not None:
        headers["x-api-key"] = key
    url = f"{base}/rest/{project}/{operation}"
    response = http.request(method, url, data=data, headers=headers, timeout=10)
    assert response.status_code < 500, response.text
    if method == "HEAD":
        return
    envelope = response.json()
    assert set(envelope) == {"status", "body"}
    assert envelope["status"] == response.status_code
    if response.status_code != 200:
        assert set(envelope["body"]) == {"error", "message"}
    assert API_KEY not in response.text


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operation=st.sampled_from(sorted(OPERATIONS)), body=bodies)
def test_authorised_json_objects_get_200_400_or_404(base, http, operation, body):
    url = f"{base}/rest/{PROJECT_ID}/{operation}"
    response = http.post(url, json=body, headers={"x-api-key": API_KEY}, timeout=10)
    assert response.status_code in (200, 400, 404), response.text
    envelope = response.json()
    assert envelope["status"] == response.status_code
    if response.status_code == 404:
        assert operation == "transactions-txHash"


def test_server_survives_abrupt_clients(base):
    import socket
    from urllib.parse import urlparse

    where = urlparse(base)
    for payload in (
        b"POST /rest/x/y HTTP/1.1\r\nContent-Length: 100\r\n\r\n{",
        b"\x00\x01garbage\r\n\r\n",
    ):
        with socket.create_connection((where.hostname, where.port), timeout=5) as sock:
            sock.sendall(payload)
    r = requests.post(
        f"{base}/rest/{PROJECT_ID}/transactions-volume",
        json={},
        headers={"x-api-key": API_KEY},
        timeout=5,
    )
    assert r.status_code == 200
