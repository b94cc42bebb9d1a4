"""Pagination generators, and window chunking end to end (hypothesis)."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cctx_research.client.paging import PageRequest, pages

from .conftest import ids, mints_in


def simulate(total: int, limit: int, cap: int | None, verified: bool = False) -> list[int]:
    """Page through ``total`` records on a service that caps limit at ``cap``."""
    seen: list[int] = []
    pager = pages(limit, verified=verified)
    request = next(pager)
    for _ in range(10_000):
        size = min(request.limit, cap) if cap else request.limit
        offset = (request.page - 1) * size
        page = list(range(offset, min(offset + size, total)))
        seen.extend(page)
        try:
            request = pager.send(len(page))
        except StopIteration:
            return seen
    raise AssertionError("pager did not stop")


def test_short_or_empty_page_stops():
    pager = pages(10)
    assert next(pager) == PageRequest(1, 10)
    assert pager.send(10) == PageRequest(2, 10)
    with pytest.raises(StopIteration):
        pager.send(3)
    pager = pages(10)
    next(pager)
    with pytest.raises(StopIteration):
        pager.send(0)


def test_short_first_page_is_checked_once():
    pager = pages(100)
    next(pager)
    probe = pager.send(40)
    assert probe == PageRequest(2, 40, probe=True)
    with pytest.raises(StopIteration):
        pager.send(0)
    verified = pages(100, verified=True)
    next(verified)
    with pytest.raises(StopIteration):
        verified.send(40)


@given(
    total=st.integers(0, 2000),
    limit=st.integers(1, 300),
    cap=st.one_of(st.none(), st.integers(1, 300)),
)
def test_paging_yields_every_record_once(total, limit, cap):
    seen = simulate(total, limit, cap)
    assert sorted(seen) == list(range(total))
    assert len(seen) == len(set(seen)) or (cap is not None and cap < limit)


@given(total=st.integers(0, 2000), limit=st.integers(1, 300), cap=st.integers(1, 300))
def test_paging_with_a_cap_covers_everything(total, limit, cap):
    assert set(simulate(total, limit, cap)) == set(range(total))


def test_bad_limit():
    with pytest.raises(ValueError, match="limit"):
        next(pages(0))


# ---------------------------------------------------------------------------
# chunking covers the window exactly, against the real service

_BASE = pd.Timestamp("2024-06-26T12:00Z").value // 10**9
_SPAN = 5 * 86_400


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    a=st.integers(0, _SPAN),
    length=st.integers(1, 2 * 86_400),
    chunk=st.sampled_from(["1D", "6h", "17min", "2h30min", "3D"]),
    frac=st.integers(0, 999),
    page_size=st.integers(5, 200),
)
def test_chunked_pulls_cover_the_window_exactly(
    make_client, service, ledger, a, length, chunk, frac, page_size
):
    start = pd.Timestamp((_BASE + a) * 10**9 + frac * 10**6, tz="UTC")
    end = start + pd.Timedelta(seconds=length)
    client = make_client(service.url, cache=False, chunk=chunk, page_size=page_size)
    df = client.mints(start, end)
    assert ids(df) == ids(mints_in(ledger, start, end))
    assert df["transfer_id"].is_unique
