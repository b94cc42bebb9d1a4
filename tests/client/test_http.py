"""Retry-After parsing, status -> error mapping, the cache filter."""

from __future__ import annotations

import email.utils

import pytest

from cctx_research import errors
from cctx_research.client.envelope import envelope_ok
from cctx_research.net.statuses import error_for_status, parse_retry_after


@pytest.mark.parametrize(
    ("value", "expected"),
    [("3", 3.0), (" 0.5 ", 0.5), ("-4", 0.0), ("", None), (None, None), ("soon", None)],
)
def test_retry_after_seconds(value, expected):
    assert parse_retry_after(value) == expected


def test_retry_after_http_date():
    now = 1_700_000_000.0
    header = email.utils.formatdate(now + 7, usegmt=True)
    assert parse_retry_after(header, now=now) == pytest.approx(7.0)
    past = email.utils.formatdate(now - 100, usegmt=True)
    assert parse_retry_after(past, now=now) == 0.0


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, errors.BadRequestError),
        (401, errors.AuthError),
        (403, errors.AuthError),
        (404, errors.NotFoundError),
        (413, errors.BadRequestError),
        (415, errors.BadRequestError),
        (418, errors.BadRequestError),
        (429, errors.RateLimitError),
        (500, errors.ServerError),
        (503, errors.ServerError),
        (302, errors.ResponseSchemaError),
    ],
)
def test_status_maps_to_typed_errors(status, cls):
    exc = error_for_status(status, "boom", operation="op", retry_after=2.0)
    assert type(exc) is cls
    assert isinstance(exc, errors.CctxError)
    assert exc.status == status
    assert exc.operation == "op"
    assert exc.hint
    assert "[op]" in str(exc)
    assert f"status {status}" in str(exc)
    if cls is errors.RateLimitError:
        assert exc.retry_after == 2.0


@pytest.mark.parametrize(
    ("content", "ok"),
    [
        (b'{"status": 200, "body": []}', True),
        (b'{"status": "200", "body": {}}', True),
        (b'{"status": 503, "body": {}}', False),
        (b'{"status": 200}', False),
        (b'{"status": 200, "body": [', False),
        (b"<html>", False),
        (b"[1, 2]", False),
    ],
)
def test_only_good_envelopes_are_cacheable(content, ok):
    assert envelope_ok(content) is ok


def test_numbers_past_64_bits_in_a_reply_are_an_error_never_a_wrong_value():
    import pandas as pd

    from cctx_research.client import parse
    from cctx_research.errors import ResponseSchemaError
    from cctx_research.net.replies import UNREADABLE as _UNREADABLE
    from cctx_research.net.replies import Decoded as _Decoded

    when = pd.Timestamp("2024-06-01", tz="UTC")
    for field in ("mintVolume", "mintCount"):
        body = {"mintVolume": "1", "burnVolume": "2", "mintCount": 1, "burnCount": 2}
        text = str(body).replace("'", '"').replace(f'"{field}": ', f'"{field}": 1{"0" * 29}, "x": ')
        decoded = _Decoded._decode(text.encode())
        with pytest.raises(ResponseSchemaError):
            parse.volume(decoded, start=when, end=when)
    assert _Decoded._decode(b'{"x": NaN}')["x"] != _Decoded._decode(b'{"x": NaN}')["x"]
    assert _Decoded._decode(b'{"status": 200, "bo') is _UNREADABLE
    assert _Decoded._decode(b"\xff\xfe") is _UNREADABLE
