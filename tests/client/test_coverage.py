"""Coverage: a window past the clock or outside the data warns once, saying what is covered.

Against the real local service (a pinned sample of 5 days to 2024-07-01 12:00).
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from cctx_research.client import coverage
from cctx_research.errors import CoverageWarning
from cctx_research.provenance import provenance
from cctx_research.times import to_timestamp

from .conftest import AS_OF, ids, mints_in


def _pull(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = call()
    return frame, [w for w in caught if issubclass(w.category, CoverageWarning)]


def test_a_covered_window_is_silent_and_recorded_as_complete(client):
    frame, caught = _pull(lambda: client.mints("2024-06-28", "2024-06-30"))
    assert caught == []
    record = provenance(frame)
    assert record.coverage == record.window
    assert record.complete


def test_a_window_past_the_clock_warns_once_with_what_is_covered(client, ledger):
    frame, caught = _pull(lambda: client.mints("2024-06-30", "2024-07-02"))
    assert len(caught) == 1
    assert caught[0].filename == __file__  # points at the caller's line, not the client's
    message = str(caught[0].message)
    assert "past the service's clock (2024-07-01 12:00 UTC)" in message
    assert "the data covers 2024-06-30 00:00 UTC to 2024-07-01 12:00 UTC" in message
    # the rows it does hold are all there
    assert ids(frame) == ids(mints_in(ledger, "2024-06-30", "2024-07-02"))
    record = provenance(frame)
    assert not record.complete
    assert record.coverage[1] == AS_OF


def test_a_window_before_the_data_says_where_the_data_begins(client):
    frame, caught = _pull(lambda: client.mints("2024-06-01", "2024-06-08"))
    assert frame.empty
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "lies before the first record the service holds (2024-06-26" in message
    assert "none of it is covered" in message
    record = provenance(frame)
    assert record.coverage[0] == record.coverage[1]


def test_a_window_half_before_the_data_names_the_covered_part(client):
    frame, caught = _pull(lambda: client.volume("2024-06-20", "2024-06-28"))
    assert len(caught) == 1
    assert "starts before the first record" in str(caught[0].message)
    start, end = provenance(frame).coverage
    assert pd.Timestamp("2024-06-26T11:00Z") <= start <= pd.Timestamp("2024-06-26T13:00Z")
    assert end == pd.Timestamp("2024-06-28", tz="UTC")


def test_every_aggregate_warns_too(client):
    for call in (
        lambda: client.volume_history("2024-06-30", "2024-07-03"),
        lambda: client.top_senders("2024-06-30", "2024-07-03"),
        lambda: client.received("0x" + "ab" * 20, "2024-06-30", "2024-07-03"),
    ):
        _, caught = _pull(call)
        assert len(caught) == 1


def test_what_was_learned_is_remembered(client):
    client.mints("2024-06-28", "2024-06-29")
    first = provenance(client.mints("2024-06-28T06:00", "2024-06-29")).requests
    again = provenance(client.mints("2024-06-28T06:00", "2024-06-29")).requests
    # the second identical pull needs no coverage request at all
    assert again <= first


def test_the_first_record_once_found_is_not_sought_again(client):
    """A window starting before the data bisects for its first record once per client."""
    _, first = _pull(lambda: client.mints("2024-06-20", "2024-06-28"))
    _, again = _pull(lambda: client.mints("2024-06-20", "2024-06-28"))
    counted = []
    probe = client.session.coverage
    count = probe._count
    probe._count = lambda *a: counted.append(a[:2]) or count(*a)
    _, later = _pull(lambda: client.mints("2024-06-22", "2024-06-28"))
    # each says where the data begins, the later one without a bisection (no count starting at 0,
    # none inside the window)
    assert len(first) == len(again) == len(later) == 1
    assert "starts before the first record the service holds (2024-06-26" in str(later[0].message)
    assert all(a != 0 for a, _ in counted)
    assert len(counted) <= 1


def test_assess_uses_a_known_first_record():
    data = list(range(5_000, 40_001, 30))
    asked = []

    def run(gen):
        try:
            window = next(gen)
            while True:
                asked.append(window)
                window = gen.send(sum(window[0] <= t < window[1] for t in data))
        except StopIteration as stop:
            return stop.value

    found = run(coverage.assess(0, 20_000, 100_000)).first
    asked.clear()
    verdict = run(coverage.assess(0, 20_000, 100_000, first=found))
    assert verdict.first == found
    assert asked == [(20_000, 100_000)]  # only "is there data after the window?"
    # a start after the known first record ignores it: data lies before the window
    asked.clear()
    assert run(coverage.assess(10_000, 20_000, 100_000, first=found)).first is None


def test_a_clock_ahead_of_the_service_is_measured(service, make_client):
    ahead = make_client(service.url, clock=lambda: AS_OF + pd.Timedelta(minutes=10))
    frame, caught = _pull(lambda: ahead.mints("2024-06-30", None))
    assert ahead.session.coverage.skew == pytest.approx(-600, abs=2)
    assert len(caught) == 1
    assert "10 min past the service's clock" in str(caught[0].message)
    assert frame["timestamp"].max() <= AS_OF


def test_offline_checks_against_the_clients_clock(client, make_client, service, tmp_path):
    client.mints("2024-06-30", "2024-07-01")
    offline = make_client(service.url, offline=True)
    _, caught = _pull(lambda: offline.mints("2024-06-30", "2024-07-01"))
    assert caught == []


def test_coverage_warning_is_a_user_warning_that_scripts_can_make_an_error(client):
    assert issubclass(CoverageWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoverageWarning)
        with pytest.raises(CoverageWarning, match="past the service's clock"):
            client.mints("2024-07-01", "2024-07-03")


def _run(gen, data):
    try:
        window = next(gen)
        while True:
            window = gen.send(sum(window[0] <= t < window[1] for t in data))
    except StopIteration as stop:
        return stop.value


@pytest.mark.parametrize(
    ("start", "end", "first", "last", "empty"),
    [
        (10_000, 20_000, None, None, False),  # inside
        (0, 20_000, 5_000, None, False),  # starts before
        (30_000, 45_000, None, 40_000, False),  # ends after
        (42_000, 45_000, None, 40_000, False),  # wholly after
    ],
)
def test_assess_finds_the_ends_within_a_minute(start, end, first, last, empty):
    data = list(range(5_000, 40_001, 30))
    verdict = _run(coverage.assess(start, end, 100_000), data)
    assert verdict.empty is empty
    for found, truth in ((verdict.first, first), (verdict.last, last)):
        if truth is None:
            assert found is None
        else:
            assert truth - 60 <= found <= truth


def test_assess_on_a_service_with_no_data():
    assert _run(coverage.assess(10, 20, 100), []).empty


def _events(ledger):
    """Every burn and mint time the service holds (its clock: AS_OF), as the counts see them."""
    stamps = pd.concat([ledger["burn_timestamp"], ledger["mint_timestamp"]]).dropna()
    return stamps[stamps <= AS_OF]


@pytest.mark.parametrize("before", [None, "2024-06-28T06:00Z", "2024-06-27"])
def test_the_last_record_is_found_within_a_minute(client, ledger, before):
    stamps = _events(ledger)
    if before is not None:
        stamps = stamps[stamps < to_timestamp(before)]
    found = client.last_record(before=before)
    assert found.tz is not None
    assert str(found.tz) == "UTC"
    assert found <= stamps.max() < found + pd.Timedelta(minutes=1)


def test_no_record_before_the_data_and_a_bad_time_refused(client, ledger):
    assert _events(ledger).min() > pd.Timestamp("2024-06-20", tz="UTC")
    assert client.last_record(before="2024-06-20") is None
    with pytest.raises(ValueError, match="not after 1970-01-01"):
        client.last_record(before="1969-12-31")
    with pytest.raises(ValueError, match="before"):
        client.last_record(before="not a time")


def test_the_last_record_asks_the_settled_windows_once(client):
    """Its bisection's windows, all in the past of a service whose clock stands still, are
    cached like any volume reply: asked again, nothing goes over the network."""
    first = client.last_record(before="2024-06-29")
    sent = []
    sender = client.session.sender
    send = sender.send
    sender.send = lambda request, **kw: sent.append(kw["stats"]) or send(request, **kw)
    again = client.last_record(before="2024-06-29")
    assert again == first
    assert sent
    assert sum(stats.network for stats in sent) == 0
