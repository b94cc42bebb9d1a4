"""Exact keys behind linking: a fingerprint never decides alone; collisions use exact codes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cctx_research import schema
from cctx_research.ingest.ledger import keys, linking


def _strings(rng: np.random.Generator, n: int, pool: list[str | None]) -> pd.Series:
    return pd.Series(pd.array([pool[i] for i in rng.integers(0, len(pool), n)],
                              dtype=schema.STRING))


def _frame(seed: int, n: int) -> pd.DataFrame:
    """Keys with repeats, nulls, case variants and strings of many lengths."""
    rng = np.random.default_rng(seed)
    address = ["0x" + bytes(rng.integers(0, 256, 20, dtype=np.uint8)).hex() for _ in range(4)]
    pool = [*address, address[0].upper().replace("0X", "0x"), None, "", "0x", "0xab",
            "0x" + "cd" * 40, "0x" + "ef" * 200]
    return pd.DataFrame({
        "text": _strings(rng, n, pool),
        "hash": _strings(rng, n, ["0x" + "1" * 64, "0x" + "2" * 64, None]),
        "count": pd.Series(pd.array(rng.integers(0, 3, n), dtype=schema.NULLABLE_INT)).mask(
            rng.random(n) < 0.1),
        "domain": rng.integers(0, 2, n),
    })


def _expected_groups(frame: pd.DataFrame) -> np.ndarray:
    return frame.groupby(list(frame.columns), dropna=False, sort=False).ngroup().to_numpy()


@pytest.fixture(params=["fingerprints", "collisions"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run as shipped, and with every fingerprint equal (each key collides with all others)."""
    if request.param == "collisions":
        monkeypatch.setattr(keys, "fold", lambda words, seed: seed)
    return request.param


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_group_ids_are_the_exact_groups(seed: int, mode: str,
                                        caplog: pytest.LogCaptureFixture) -> None:
    frame = _frame(seed, 3000)
    columns = [[(frame[c], None)] for c in frame.columns]
    with caplog.at_level("INFO", logger=keys.__name__):
        assert keys.group_ids(columns).tolist() == _expected_groups(frame).tolist()
    assert ("fingerprint collision" in caplog.text) == (mode == "collisions")


@pytest.mark.parametrize("seed", [3, 4])
def test_group_ids_across_two_frames_and_row_subsets(seed: int, mode: str) -> None:
    left, right = _frame(seed, 2000), _frame(seed + 10, 1500)
    rows_l = np.flatnonzero(np.arange(len(left)) % 3 != 0)
    rows_r = np.arange(len(right))[::-1]
    columns = [[(left[c], rows_l), (right[c], rows_r)] for c in left.columns]
    stacked = pd.concat([left.iloc[rows_l], right.iloc[rows_r]], ignore_index=True)
    assert keys.group_ids(columns).tolist() == _expected_groups(stacked).tolist()


@pytest.mark.parametrize("seed", [5, 6])
def test_duplicated_is_exact(seed: int, mode: str) -> None:
    frame = _frame(seed, 3000)
    columns = [[(frame[c], None)] for c in frame.columns]
    assert keys.duplicated(columns).tolist() == frame.duplicated().tolist()


def test_case_and_length_keep_strings_apart() -> None:
    text = pd.Series(["0xab", "0xAB", "0xab0", None, "", "0xab"], dtype=schema.STRING)
    assert keys.group_ids([[(text, None)]]).tolist() == [0, 1, 2, 3, 4, 0]


def test_key_needs_a_column() -> None:
    with pytest.raises(ValueError, match="at least one key column"):
        keys.group_ids([])


def _sides(n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """V2 burns and their arrivals, with identical transfers and some burns already attested."""
    rng = np.random.default_rng(seed)
    hexes = lambda k, w: ["0x" + bytes(rng.integers(0, 256, w, dtype=np.uint8)).hex()  # noqa: E731
                          for _ in range(k)]
    senders, recipients = hexes(3, 20), hexes(5, 20)
    pick = lambda pool: pd.array([pool[i] for i in rng.integers(0, len(pool), n)],  # noqa: E731
                                 dtype=schema.STRING)
    start = pd.Timestamp("2026-01-01", tz="UTC").value
    burn_ns = start + rng.integers(0, 50, n) * 10**9  # shared seconds: ties broken by id
    common = {
        "source_domain": rng.choice([0, 6], n),
        "destination_domain": rng.choice([3, 2], n),
        "burn_token": pd.array(["0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"] * n,
                               dtype=schema.STRING),
        "mint_recipient": pick(recipients),
        "message_sender": pick(senders),
        "amount_raw": rng.integers(1, 4, n),
        "max_fee_raw": pd.array(rng.integers(0, 2, n), dtype=schema.NULLABLE_INT),
        "hook_data": pick(["0x", "0x", "0xbeef"]),
        "cctp_version": pd.array([2] * n, dtype=schema.NULLABLE_INT),
    }
    burns = pd.DataFrame({
        **common,
        "burn_tx_hash": pd.array(hexes(n, 32), dtype=schema.STRING),
        "burn_log_index": pd.array(rng.integers(0, 5, n), dtype=schema.NULLABLE_INT),
        "burn_timestamp": pd.to_datetime(burn_ns, utc=True),
    })
    nonces = hexes(n, 32)
    arrivals = pd.DataFrame({
        **common,
        "mint_tx_hash": pd.array(hexes(n, 32), dtype=schema.STRING),
        "mint_timestamp": pd.to_datetime(burn_ns + rng.integers(-5, 60, n) * 10**9, utc=True),
        "nonce": pd.array(nonces, dtype=schema.STRING),
    }).iloc[rng.permutation(n)].reset_index(drop=True)
    burns["nonce"] = pd.array([v if rng.random() < 0.1 else None for v in nonces],
                              dtype=schema.STRING)
    return burns, arrivals


@pytest.mark.parametrize("ambiguous", ["link", "keep"])
def test_link_does_not_depend_on_fingerprints(ambiguous: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    burns, arrivals = _sides(400, seed=7)
    repeated = [burns, burns.iloc[:20]], [arrivals, arrivals.iloc[:30]]
    ledger, counts = linking.link(*repeated, ambiguous=ambiguous)
    assert counts["duplicates"] == 50
    assert counts["content"] > 0
    assert counts["attested"] > 0
    monkeypatch.setattr(keys, "fold", lambda words, seed: seed)
    again, counts_again = linking.link(*repeated, ambiguous=ambiguous)
    pd.testing.assert_frame_equal(ledger, again, check_exact=True)
    assert counts == counts_again


def test_ledger_order_is_time_then_id() -> None:
    burns, arrivals = _sides(300, seed=8)
    ledger, _ = linking.link([burns], [arrivals])
    when = ledger["burn_timestamp"].fillna(ledger["mint_timestamp"])
    expected = (pd.DataFrame({"when": when, "id": ledger["transfer_id"]})
                .sort_values(["when", "id"], kind="stable", na_position="last"))
    assert expected.index.tolist() == list(range(len(ledger)))
    assert ledger["transfer_id"].notna().all()


def test_link_group_size_is_set_on_identical_transfers_only() -> None:
    """The schema's rule: ``link_group_size`` counts the identical transfers sharing a content
    key; a key seen once on each side (``"content"``) is no group, so it is null."""
    burns, arrivals = _sides(400, seed=9)
    ledger, counts = linking.link([burns], [arrivals])
    assert counts["content"] > 0
    assert counts["content_ambiguous"] > 0
    size = ledger["link_group_size"]
    ambiguous = ledger["pairing"] == "content_ambiguous"
    assert size[ledger["pairing"] == "content"].isna().all()
    assert (size[ambiguous] >= 2).all()
    assert (size.dropna() >= 2).all()  # a pending burn among identical transfers says so too
    key = list(linking.CONTENT_KEY)
    shared = ledger[ambiguous].groupby(key, dropna=False)["link_group_size"]
    assert (shared.transform("size") <= shared.transform("max")).all()
