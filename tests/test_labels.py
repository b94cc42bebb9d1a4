"""Labels: the bundled table's provenance, and the documented conflict rule."""

from __future__ import annotations

import pandas as pd
import pytest

from cctx_research import chains, labels

MESSENGER = "0xbd3fa81b58ba92a82136038b25adec7066af3155"  # Circle's V1 TokenMessenger, Ethereum
FAST_MCTP = "0xc1062b7c5dc8e4b1df9f200fe360cdc0ed6e7741"


def user(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows)


def test_every_bundled_row_has_a_source_and_an_open_licence():
    table = labels.bundled()
    assert table["source"].notna().all()
    assert table["licence"].notna().all()
    assert set(table["licence"]) <= {"MIT", "Apache-2.0"}
    assert not table["source"].str.contains("spellbook|etherscan|arkham", case=False).any()
    assert set(table["kind"]) <= set(labels.KINDS)
    assert (table["address"] == table["address"].str.lower()).all()


def test_circle_rows_come_from_the_registry():
    table = labels.bundled()
    circle = table[table["kind"] == "circle"]
    for domain in (0, 1, 2, 3, 6, 7, 10):
        v1 = chains.contracts(domain, 1)
        assert v1.token_messenger in set(circle["address"])
        assert v1.message_transmitter in set(circle["address"])
    assert chains.contracts(6, 2).token_messenger in set(circle["address"])
    edge = chains.contracts(28, 2)  # EDGE's own V2 contracts
    assert edge.token_messenger in set(circle["address"])
    assert labels.lookup(MESSENGER.upper().replace("0X", "0x"), "ethereum").kind == "circle"


def test_padded_and_mixed_case_addresses_are_one_address():
    padded = "0x" + "00" * 12 + FAST_MCTP[2:].upper()
    assert labels.lookup(padded, "arbitrum").label == "Mayan FastMCTP"
    assert labels.lookup(FAST_MCTP, "solana") is None  # labelled on three EVM chains only


def test_user_row_beats_bundled_even_without_a_chain():
    mine = user([{"address": MESSENGER, "label": "mine", "kind": "user"}])
    hit = labels.lookup(MESSENGER, "ethereum", user=mine)
    assert (hit.label, hit.kind, hit.origin, hit.source) == ("mine", "user", "user", "user")


def test_chain_specific_row_beats_chain_less_row_of_the_same_origin():
    mine = user(
        [
            {"address": FAST_MCTP, "label": "anywhere", "kind": "integrator"},
            {"address": FAST_MCTP, "label": "on base", "kind": "integrator", "chain": "base"},
        ]
    )
    assert labels.lookup(FAST_MCTP, "base", user=mine).label == "on base"
    assert labels.lookup(FAST_MCTP, "ethereum", user=mine).label == "anywhere"
    # no chain: the chain-less row first
    assert labels.lookup(FAST_MCTP, user=mine).label == "anywhere"


def test_no_chain_lookup_takes_the_first_chain_in_registry_order():
    mine = user(
        [
            {"address": "0x" + "ab" * 20, "label": "on base", "kind": "user", "chain": "base"},
            {"address": "0x" + "ab" * 20, "label": "on eth", "kind": "user", "chain": 0},
        ]
    )
    assert labels.lookup("0x" + "ab" * 20, user=mine).label == "on eth"


def test_disagreeing_user_rows_are_an_error():
    mine = user(
        [
            {"address": FAST_MCTP, "label": "a", "kind": "integrator", "chain": "base"},
            {
                "address": FAST_MCTP.upper().replace("0X", "0x"),
                "label": "b",
                "kind": "integrator",
                "chain": "base",
            },
        ]
    )
    with pytest.raises(ValueError, match="disagree"):
        labels.lookup(FAST_MCTP, user=mine)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"address": FAST_MCTP, "label": "x"}], "lack the column"),
        ([{"address": FAST_MCTP, "label": "x", "kind": "whale"}], "unknown kind"),
        ([{"address": FAST_MCTP, "label": "x", "kind": "user", "chain": "mars"}], "unknown chain"),
    ],
)
def test_bad_user_labels_say_what_to_pass(rows, message):
    with pytest.raises(ValueError, match=message):
        labels.labels(user(rows))


def test_user_labels_from_a_csv(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text(f"address,label,kind,chain\n{MESSENGER},desk,exchange,ethereum\n")
    assert labels.lookup(MESSENGER, 0, user=path).label == "desk"
    with pytest.raises(TypeError, match="CSV path or a DataFrame"):
        labels.labels(42)


def test_attach_looks_each_column_up_on_its_own_chain():
    frame = pd.DataFrame(
        {
            "source_domain": [0, 6],
            "destination_domain": [6, 0],
            # V1 TokenMessenger of Ethereum: labelled as sender from Ethereum only
            "message_sender": [MESSENGER, MESSENGER],
            "mint_recipient": [MESSENGER, MESSENGER],
        }
    )
    out = labels.attach(frame)
    assert out["message_sender_label"].iloc[0] == "Circle TokenMessenger"
    assert pd.isna(out["message_sender_label"].iloc[1])
    assert pd.isna(out["mint_recipient_label"].iloc[0])
    assert out["mint_recipient_kind"].iloc[1] == "circle"
    assert list(frame.columns) == [
        "source_domain",
        "destination_domain",
        "message_sender",
        "mint_recipient",
    ]  # the input is untouched
    with pytest.raises(ValueError, match="no column"):
        labels.attach(frame, ["relayer"])
