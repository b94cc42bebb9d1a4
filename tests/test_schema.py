from __future__ import annotations

import pandas as pd
import pytest

from cctx_research import schema
from cctx_research.errors import CctxError, DataError

TRANSFER_COLUMNS = [
    "transfer_id", "timestamp", "amount", "amount_raw", "is_completed", "source_domain",
    "destination_domain", "source_chain", "destination_chain", "mint_recipient",
    "message_sender", "burn_token", "destination_caller", "destination_token_messenger",
]


def test_transfers_has_exactly_the_documented_columns():
    assert schema.columns("transfers") == TRANSFER_COLUMNS


@pytest.mark.parametrize("kind", sorted(schema.KINDS))
def test_empty_frames_validate(kind):
    frame = schema.empty(kind)
    assert len(frame) == 0
    schema.validate(frame, kind, extra=False)


def test_missing_and_mistyped_columns_are_named():
    frame = schema.empty("transfers").drop(columns=["amount_raw"])
    frame["timestamp"] = frame["timestamp"].dt.tz_localize(None)
    with pytest.raises(DataError) as info:
        schema.validate(frame, "transfers")
    text = str(info.value)
    assert "missing columns: amount_raw" in text
    assert "timestamp is datetime64" in text
    assert "expected datetime64[ns, UTC]" in text
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, CctxError)


def test_extra_columns_allowed_unless_strict():
    frame = schema.empty("top_addresses").assign(note=pd.Series([], dtype="string"))
    schema.validate(frame, "top_addresses")
    with pytest.raises(DataError, match="unexpected columns: note"):
        schema.validate(frame, "top_addresses", extra=False)


def test_bad_kind_and_bad_frame():
    with pytest.raises(ValueError, match="unknown frame kind"):
        schema.validate(schema.empty("transfers"), "transfer")
    with pytest.raises(TypeError, match="DataFrame"):
        schema.validate({"a": 1}, "transfers")


def test_chain_categorical_keeps_unknowns():
    cat = schema.chain_categorical(["base", "domain-42", "ethereum"])
    assert list(cat) == ["base", "domain-42", "ethereum"]
    assert cat.categories[0] == "ethereum"
    assert "domain-42" in cat.categories
