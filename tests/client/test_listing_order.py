"""A chunk's rows end sorted by (timestamp, id), whatever order the service sends."""

from __future__ import annotations

import pandas as pd

from cctx_research.client.listing import _in_order


def _frame(seconds, ids):
    return pd.DataFrame(
        {"timestamp": pd.to_datetime(seconds, unit="s", utc=True), "transfer_id": ids}
    )


def test_rows_in_order_need_no_sort():
    assert _in_order(_frame([1, 2, 2, 3], ["d", "a", "b", "c"]), "transfer_id")
    assert _in_order(_frame([5], ["x"]), "transfer_id")


def test_a_later_row_first_or_a_tie_out_of_id_order_is_not_in_order():
    assert not _in_order(_frame([2, 1], ["a", "b"]), "transfer_id")
    assert not _in_order(_frame([1, 2, 2], ["a", "c", "b"]), "transfer_id")
