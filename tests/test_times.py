from __future__ import annotations

import datetime as dt
import itertools

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cctx_research.times import chunk_window, to_timestamp, to_unix, window

UTC = "UTC"


@pytest.mark.parametrize(
    "value",
    [
        "2024-06-01",
        "2024-06-01T00:00:00Z",
        "2024-06-01T02:00:00+02:00",
        dt.date(2024, 6, 1),
        dt.datetime(2024, 6, 1),
        pd.Timestamp("2024-06-01"),
        1717200000,
        1717200000.0,
        "1717200000",
        1717200000000,
    ],
)
def test_every_form_names_the_same_instant(value):
    assert to_timestamp(value) == pd.Timestamp("2024-06-01", tz=UTC)
    assert str(to_timestamp(value).tz) == UTC


@pytest.mark.parametrize("bad", [True, None, [2024], {"y": 2024}])
def test_wrong_types(bad):
    with pytest.raises(TypeError, match="start"):
        to_timestamp(bad, name="start")


@pytest.mark.parametrize("bad", ["", "soon", float("nan"), float("inf")])
def test_bad_values(bad):
    with pytest.raises(ValueError, match="end"):
        to_timestamp(bad, name="end")


def test_window_defaults_to_the_last_day():
    now = pd.Timestamp("2024-06-02T12:00Z")
    assert window(None, None, now=now) == (pd.Timestamp("2024-06-01T12:00Z"), now)
    assert window("2024-06-01", None, now=now)[0] == pd.Timestamp("2024-06-01", tz=UTC)


def test_reversed_or_empty_window_is_rejected():
    with pytest.raises(ValueError, match="before end"):
        window("2024-06-02", "2024-06-01")
    with pytest.raises(ValueError, match="half-open"):
        window("2024-06-01", "2024-06-01")


def test_chunk_rejects_non_positive():
    with pytest.raises(ValueError, match="positive"):
        list(chunk_window(pd.Timestamp(0, tz=UTC), pd.Timestamp(10, tz=UTC), "0s"))


@given(
    start=st.integers(1_500_000_000, 1_800_000_000),
    length=st.integers(1, 40 * 86_400),
    hours=st.sampled_from([1, 6, 24, 24 * 7]),
)
def test_chunks_cover_the_window_exactly(start, length, hours):
    s = pd.Timestamp(start, unit="s", tz=UTC)
    e = s + pd.Timedelta(seconds=length)
    parts = list(chunk_window(s, e, pd.Timedelta(hours=hours)))
    assert parts[0][0] == s
    assert parts[-1][1] == e
    for (_a0, a1), (b0, _) in itertools.pairwise(parts):
        assert a1 == b0  # no gap, no overlap
    for a, b in parts:
        assert a < b
        # inner edges are aligned so overlapping windows share chunks
        assert b == e or to_unix(b) % (hours * 3600) == 0


@pytest.mark.parametrize(
    ("text", "iso"),
    [("03/11/2026", "2026-11-03"), ("11/03/2026", "2026-03-11"), ("03.11.2026", "2026-11-03")],
)
def test_ambiguous_day_month_is_refused_with_both_iso_readings(text, iso):
    with pytest.raises(ValueError, match="ambiguous") as info:
        to_timestamp(text, name="start")
    message = str(info.value)
    assert "start=" in message
    assert iso in message
    assert "YYYY-MM-DD" in message


@pytest.mark.parametrize(
    ("text", "iso"), [("20/11/2026", "2026-11-20"), ("11/11/2026", "2026-11-11")]
)
def test_unambiguous_non_iso_is_refused_too_naming_the_iso_form(text, iso):
    # one rule for every day of the month: '20/11' read and '03/11' refused
    # would teach users a spelling that fails on the 3rd
    with pytest.raises(ValueError, match=f"'{iso}'"):
        to_timestamp(text, name="end")


@pytest.mark.parametrize("text", ["Nov 3 2026", "2026/11/03", "yesterday"])
def test_other_spellings_are_refused(text):
    with pytest.raises(ValueError, match="ISO 8601"):
        to_timestamp(text)


@pytest.mark.parametrize(
    "text",
    ["2024-06-01 12:00", "2024-06-01T12:00Z", "2024-06-01T12:00:00.5+00:00", "2024-06"],
)
def test_iso_forms_are_read(text):
    assert to_timestamp(text).year == 2024
