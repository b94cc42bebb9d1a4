"""The synthetic sample, built once: kept by day in the cache directory, never trusted blindly."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
import warnings

import pandas as pd
import pytest

from cctx_research.errors import CacheWarning, LargeResultWarning
from cctx_research.service import sample, sample_cache

PER_DAY = 40
AS_OF = "2026-11-01 12:00"
DAYS = pd.date_range("2026-10-29", "2026-11-01", freq="D", tz="UTC")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CCTX_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


class Builds:
    """generate_day, counting the days it builds."""

    def __init__(self) -> None:
        self.days: list[str] = []

    def __call__(self, day: pd.Timestamp) -> pd.DataFrame:
        self.days.append(day.strftime("%Y-%m-%d"))
        return sample.generate_day(day, per_day=PER_DAY)


def days(build: Builds) -> pd.DataFrame:
    seed = sample.calibration()["seed"]
    return sample_cache.ledger_days(DAYS, build, per_day=PER_DAY, seed=seed)


def expected() -> pd.DataFrame:
    parts = [sample.generate_day(day, per_day=PER_DAY) for day in DAYS]
    return pd.concat(parts, ignore_index=True)


def directory():
    return sample_cache.sample_directory(PER_DAY, sample.calibration()["seed"])


def test_each_day_is_built_once_and_read_back_the_same(cache):
    first, second = Builds(), Builds()
    built = days(first)
    read = days(second)
    assert first.days == [d.strftime("%Y-%m-%d") for d in DAYS]
    assert second.days == []
    pd.testing.assert_frame_equal(built, expected())
    pd.testing.assert_frame_equal(read, expected())
    assert directory().parent.parent == cache
    names = sorted(p.name for p in directory().glob("*.arrow"))
    assert names[0] == "sample__ledger__day_2026-10-29.arrow"
    assert len(names) == 4


def test_generate_cuts_its_window_from_the_kept_days(cache):
    ledger = sample.generate(AS_OF, days=3, per_day=PER_DAY)
    again = sample.generate("2026-11-01 18:00", days=3, per_day=PER_DAY)  # later the same day
    assert len(list(directory().glob("*.arrow"))) == 4
    assert ledger["burn_timestamp"].max() <= pd.Timestamp(AS_OF, tz="UTC")
    assert ledger["burn_timestamp"].min() > pd.Timestamp("2026-10-29 12:00", tz="UTC")
    whole = expected()
    burns = whole["burn_timestamp"]
    later = (burns > pd.Timestamp("2026-10-29 18:00", tz="UTC")) & (
        burns <= pd.Timestamp("2026-11-01 18:00", tz="UTC")
    )
    assert again["transfer_id"].tolist() == whole.loc[later, "transfer_id"].tolist()
    assert again.attrs["cctx"] != ledger.attrs["cctx"]  # each says its own window


def test_a_damaged_day_is_built_again_not_trusted(cache, caplog):
    days(Builds())
    path = directory() / "sample__ledger__day_2026-10-30.arrow"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte inside a column: Arrow alone would not notice
    path.write_bytes(bytes(data))
    (directory() / "sample__ledger__day_2026-10-31.arrow").write_bytes(b"cut short")
    again = Builds()
    with caplog.at_level(logging.WARNING):
        read = days(again)
    assert again.days == ["2026-10-30", "2026-10-31"]
    assert "not trusted" in caplog.text
    pd.testing.assert_frame_equal(read, expected())


def test_a_day_written_for_another_day_is_not_read(cache):
    days(Builds())
    here = directory()
    (here / "sample__ledger__day_2026-10-29.arrow").write_bytes(
        (here / "sample__ledger__day_2026-10-30.arrow").read_bytes()
    )
    again = Builds()
    pd.testing.assert_frame_equal(days(again), expected())
    assert again.days == ["2026-10-29"]


def test_a_manifest_of_another_generator_empties_the_directory(cache, caplog):
    days(Builds())
    manifest = directory() / "_cctx.json"
    raw = json.loads(manifest.read_text())
    raw["state"]["generator_version"] = -1
    manifest.write_text(json.dumps(raw))
    again = Builds()
    with caplog.at_level(logging.WARNING):
        read = days(again)
    assert len(again.days) == 4
    assert "another generator" in caplog.text
    assert json.loads(manifest.read_text())["state"]["generator_version"] == (
        sample.GENERATOR_VERSION
    )
    pd.testing.assert_frame_equal(read, expected())


def test_an_unreadable_manifest_is_rebuilt(cache):
    days(Builds())
    (directory() / "_cctx.json").write_text("{not json")
    again = Builds()
    pd.testing.assert_frame_equal(days(again), expected())
    assert len(again.days) == 4


def test_an_unusable_cache_directory_builds_in_memory_with_a_cache_warning(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CCTX_CACHE_DIR", str(blocker / "cache"))
    build = Builds()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        read = days(build)
    pd.testing.assert_frame_equal(read, expected())
    assert len(build.days) == 4
    # one warning, not one more for each day it then failed to read
    assert [type(w.message) for w in said] == [CacheWarning]
    assert re.search("cannot be written.*built in memory", str(said[0].message))


def test_connect_refuses_a_cache_directory_that_is_a_file_before_building(tmp_path, monkeypatch):
    import cctx_research as cctx
    from cctx_research.errors import CacheError

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CCTX_CACHE_DIR", str(blocker))
    build = Builds()
    monkeypatch.setattr(sample, "generate_day", build)
    with pytest.raises(CacheError, match=r"is a file, not a directory.*--no-cache"):
        cctx.connect(sample=True, as_of=AS_OF, days=2, per_day=PER_DAY)
    assert build.days == []  # refused before any day was built


def test_a_large_request_says_its_size_before_building(cache, monkeypatch):
    monkeypatch.setattr(sample_cache, "LARGE_ROWS", 100)

    def refuse(day):
        raise RuntimeError("built before the warning")

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError):
            sample_cache.ledger_days(DAYS, refuse, per_day=PER_DAY, seed=1, what="the request")
    large = [w for w in seen if issubclass(w.category, LargeResultWarning)]
    assert len(large) == 1
    message = str(large[0].message)
    assert "about 160 transfers" in message
    assert "4 of its days are not cached" in message


def test_a_small_request_is_not_warned_about(cache):
    with warnings.catch_warnings():
        warnings.simplefilter("error", LargeResultWarning)
        days(Builds())


class Terminal(io.StringIO):
    """A stderr that says it is a terminal, where the build bar would be drawn."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """A terminal as stderr, set in the test's body (pytest's capture resets sys.stderr after
    fixtures): ``with terminal as stream``."""
    monkeypatch.delenv("CI", raising=False)
    return contextlib.redirect_stderr(Terminal())


@pytest.mark.parametrize(("progress", "drawn"), [(None, True), (True, True), (False, False)])
def test_the_build_bar_follows_the_progress_setting(cache, terminal, progress, drawn):
    seed = sample.calibration()["seed"]
    with terminal as stream:
        sample_cache.ledger_days(DAYS, Builds(), per_day=PER_DAY, seed=seed, what="the request",
                                 progress=progress)  # fmt: skip
    assert ("building the request" in stream.getvalue()) is drawn


def test_no_progress_hides_the_build_bar_of_connect_and_load_sample(cache, terminal, monkeypatch):
    import cctx_research as cctx

    built, generate_day = [], sample.generate_day

    def counted(day, **options):
        built.append(day)
        return generate_day(day, **options)

    monkeypatch.setattr(sample, "generate_day", counted)
    with terminal as stream, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cctx.connect(sample=True, as_of=AS_OF, days=3, per_day=PER_DAY, progress=False).close()
        cctx.load_sample(as_of="2026-10-20", days=3, progress=False)
        assert len(built) == 8  # both built their days, neither drew a bar
        assert "building" not in stream.getvalue()
        cctx.load_sample(as_of="2026-10-10", days=3)  # the default: a terminal gets the bar
    assert "building the synthetic sample of 3 days" in stream.getvalue()


def test_progress_must_be_a_bool(cache):
    import cctx_research as cctx

    with pytest.raises(TypeError, match="progress must be True, False or None, got str"):
        cctx.load_sample(days=1, progress="no")
