"""Fixtures for the analysis tests (frames built by :mod:`.frames`)."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.frames import SMALL_ROWS, make_transfers, random_transfers
from cctx_research import schema


@pytest.fixture
def small() -> pd.DataFrame:
    return make_transfers(SMALL_ROWS)


@pytest.fixture
def empty() -> pd.DataFrame:
    return schema.empty("transfers")


@pytest.fixture(scope="session")
def rand() -> pd.DataFrame:
    return random_transfers(5_000)


@pytest.fixture
def make():
    """The frame builder, for tests that need their own rows."""
    return make_transfers
