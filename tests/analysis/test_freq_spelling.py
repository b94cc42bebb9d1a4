"""A bucket length spelled as pandas deprecates or retired it gets one clear error, no warning.

``freq="1d"`` printed three of pandas' own deprecation warnings (wherever the
value was used later) and went on; ``freq="1M"`` said it was no frequency
without naming the monthly one to use.
"""

from __future__ import annotations

import warnings

import pytest

from cctx_research.analysis import flows, latency, volumes
from cctx_research.service.sample import generate
from cctx_research.times import pandas_period


@pytest.fixture(scope="module")
def ledger():
    return generate("2024-07-01", days=2)


def _refused(call, match: str) -> None:
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match=match) as info:
            call()
    assert [str(w.message) for w in shown] == []  # no pandas warning on the way
    assert "\n" not in str(info.value)


def test_a_lowercase_day_names_the_spelling_to_pass(small, ledger):
    wanted = r"freq='1d': pandas spells this unit 'D', not 'd'; pass '1D'"
    _refused(lambda: volumes.timeseries(small, freq="1d"), wanted)
    _refused(lambda: flows.net(small, freq="1d"), wanted)
    _refused(lambda: latency.timeseries(ledger, freq="1d"), wanted)
    _refused(lambda: volumes.timeseries(small, freq="6H"), r"pass '6h'")


def test_a_month_suggests_the_monthly_frequency(small):
    _refused(lambda: volumes.timeseries(small, freq="1M"),
             r"freq='1M' is not a pandas frequency: for calendar months pass '1MS'")
    _refused(lambda: volumes.timeseries(small, freq="Q"), r"calendar quarters pass '1QS'")
    assert len(volumes.timeseries(small, freq="1MS")) >= 1  # the suggestion works


def test_a_duration_refuses_calendar_units_and_deprecated_spellings(sample_client):
    _refused(lambda: sample_client.volume_history("2024-06-27", "2024-07-01", freq="1d"),
             r"freq='1d': pandas spells this unit 'D', not 'd'; pass '1D'")
    _refused(lambda: sample_client.volume_history("2024-06-01", "2024-07-01", freq="1M"),
             r"freq='1M': calendar months are not a fixed length of time; pass one such as '1D'")


@pytest.mark.parametrize("value", ["1ms", "90min", "1 day", "2h"])
def test_durations_pandas_reads_pass_unchanged(value):
    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pandas_period(pd.Timedelta, value, name="x", fixed=True, expected="-") == (
            pd.Timedelta(value))
