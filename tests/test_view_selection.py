"""``views.selection.with_main_chain``: the chain each ranked address is seen on most."""

from __future__ import annotations

import pandas as pd
import pytest

from cctx_research.views.selection import with_main_chain

PADDED = "0x" + "00" * 12 + "AB" * 20  # 0xabab... as a bytes32 wire value, upper case


def _transfers(addresses: list, chains: list[str], amounts: list[float]) -> pd.DataFrame:
    return pd.DataFrame({
        "message_sender": pd.array(addresses, dtype="string[pyarrow]"),
        "source_chain": pd.Categorical(chains),
        "amount": amounts,
    })  # fmt: skip


@pytest.mark.parametrize("dtype", ["string[pyarrow]", "str", object])
def test_a_missing_ranked_address_gets_no_chain(dtype):
    """A report's top senders can hold the rows without a depositor: no chain, no error."""
    t = _transfers(["0xa", "0xa", None, "0xb"], ["base", "polygon", "base", "base"],
                   [1.0, 5.0, 3.0, 2.0])  # fmt: skip
    ranked = pd.DataFrame({"address": pd.array(["0xa", None, "0xb"], dtype=dtype)})
    got = with_main_chain(ranked, t, role="sender")
    assert got["chain"].iloc[[0, 2]].tolist() == ["polygon", "base"]
    assert pd.isna(got["chain"].iloc[1])


def test_spellings_of_one_address_count_together_and_others_are_left_out():
    """The padded, upper-case spelling is the ranked address; an unranked address with
    more volume elsewhere changes nothing."""
    short = "0x" + "ab" * 20
    t = _transfers([PADDED, short, short, "0xc"], ["base", "base", "ethereum", "ethereum"],
                   [4.0, 3.0, 6.0, 100.0])  # fmt: skip
    got = with_main_chain(pd.DataFrame({"address": [short]}), t, role="sender")
    assert got["chain"].tolist() == ["base"]  # 7 on base against 6 on ethereum
