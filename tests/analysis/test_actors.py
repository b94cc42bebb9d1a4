"""Actors and movements: properties, a plain-pandas cross-check on the sample, every engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cctx_research as cctx
from cctx_research import schema
from cctx_research.analysis import actors, actors_lazy, movements, round_trips, volumes
from cctx_research.errors import DataError

FAST_MCTP = "0xc1062b7c5dc8e4b1df9f200fe360cdc0ed6e7741"  # a labelled integrator on base/eth/arb
POOL = [FAST_MCTP, "0x" + "a1" * 20, "0x" + "b2" * 20, "0x" + "c3" * 20]
RELAYERS = [None, "0x" + "d4" * 20, "0x" + "e5" * 20]
DOMAINS = [0, 3, 6]
T0 = pd.Timestamp("2025-01-01", tz="UTC")


def build(rows: list[dict]) -> pd.DataFrame:
    n = len(rows)
    burn = T0 + pd.to_timedelta([r["burn"] for r in rows], unit="min")
    mint = [
        None if r["delay"] is None else b + pd.Timedelta(minutes=r["delay"])
        for r, b in zip(rows, burn, strict=True)
    ]
    frame = pd.DataFrame(
        {
            "transfer_id": [f"t{i}" for i in range(n)],
            "source_domain": [r["src"] for r in rows],
            "destination_domain": [r["dst"] for r in rows],
            "amount_raw": [r["amount"] for r in rows],
            "burn_timestamp": burn,
            "mint_timestamp": pd.to_datetime(mint, utc=True),
            "burn_tx_hash": [f"0x{i + 1:064x}" for i in range(n)],
            "mint_tx_hash": [
                None if r["delay"] is None else f"0x{i + 1:063x}f" for i, r in enumerate(rows)
            ],
            "burn_block": np.arange(n) + 1,
            "mint_block": [-1 if r["delay"] is None else 100 + i for i, r in enumerate(rows)],
            "message_sender": [r["sender"] for r in rows],
            "mint_recipient": [r["recipient"] for r in rows],
            "burn_token": ["0x" + "ee" * 20] * n,
            "destination_caller": [
                r["recipient"] if r["self_relay"] else "0x" + "00" * 20 for r in rows
            ],
            "destination_token_messenger": ["0x" + "ff" * 20] * n,
            "cctp_version": [r["version"] for r in rows],
            "hook_data": [r["hook"] if r["version"] == 2 else None for r in rows],
            "fee_raw": [0 if r["version"] == 2 else None for r in rows],
            "relayer": [None if r["delay"] is None else r["relayer"] for r in rows],
        }
    )
    types = schema.dtypes("ledger")
    frame = frame.astype({c: types[c] for c in frame.columns})
    return schema.complete(frame, "ledger")[schema.columns("ledger")]


transfer = st.fixed_dictionaries(
    {
        "src": st.sampled_from(DOMAINS),
        "dst": st.sampled_from(DOMAINS),
        "amount": st.integers(1, 10**12),
        "burn": st.integers(0, 3 * 24 * 60),
        "delay": st.one_of(st.none(), st.integers(0, 90)),
        "sender": st.sampled_from(POOL),
        "recipient": st.sampled_from(POOL),
        "self_relay": st.booleans(),
        "version": st.sampled_from([1, 2]),
        "hook": st.sampled_from(["0x", "0x01020304"]),
        "relayer": st.sampled_from(RELAYERS),
    }
).filter(lambda r: r["src"] != r["dst"])
ledgers = st.lists(transfer, min_size=1, max_size=40).map(build)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(ledgers)
def test_relayer_shares_sum_to_one_per_group(ledger):
    table = actors.relayers(ledger, by="route", labels=False)
    for _, group in table.groupby(["source_chain", "destination_chain"], observed=True):
        assert group["mint_share"].sum() == pytest.approx(1.0)
        assert group["volume_share"].sum() == pytest.approx(1.0)
    assert table["mints"].sum() == ledger["mint_timestamp"].notna().sum()
    concentration = actors.hhi(table)
    assert ((concentration["hhi"] > 0) & (concentration["hhi"] <= 1 + 1e-12)).all()


@SETTINGS
@given(ledgers)
def test_integrator_shares_sum_to_one(ledger):
    table = actors.integrators(ledger)
    assert table["volume_share"].sum() == pytest.approx(1.0)
    assert table["transfer_share"].sum() == pytest.approx(1.0)
    assert table["volume_raw"].sum() == ledger["amount_raw"].sum()
    halves = table["volume_first_half"] + table["volume_second_half"]
    np.testing.assert_allclose(halves, table["volume"], rtol=1e-9)


@SETTINGS
@given(ledgers, st.sampled_from(["10min", "1h", "1D"]))
def test_dedupe_never_increases_volume(ledger, window):
    kept = movements.dedupe(ledger, window=window)
    assert set(kept["transfer_id"]) <= set(ledger["transfer_id"])
    assert kept["amount_raw"].sum() <= ledger["amount_raw"].sum()
    legs = movements.continuations(ledger, window=window)
    assert len(kept) == len(ledger) - len(legs)
    assert not set(legs["transfer_id"]) & set(kept["transfer_id"])
    share = movements.rebalancing_share(ledger, window=window)
    assert (share["rebalancing_volume"] <= share["volume"] * (1 + 1e-12)).all()


def test_forwarded_leg_is_counted_once():
    # USDC minted to Mayan's FastMCTP on Base, burned by it toward Arbitrum 5 minutes later
    rows = [
        dict(
            src=0,
            dst=6,
            amount=1_000,
            burn=0,
            delay=10,
            sender=POOL[1],
            recipient=FAST_MCTP,
            self_relay=False,
            version=2,
            hook="0x",
            relayer=None,
        ),
        dict(
            src=6,
            dst=3,
            amount=990,
            burn=15,
            delay=10,
            sender=FAST_MCTP,
            recipient=POOL[2],
            self_relay=False,
            version=2,
            hook="0x",
            relayer=None,
        ),
    ]
    ledger = build(rows)
    assert movements.continuations(ledger)[["transfer_id", "continues"]].values.tolist() == [
        ["t1", "t0"]
    ]
    assert movements.dedupe(ledger)["transfer_id"].tolist() == ["t0"]
    # more out than came in, or past the window: two movements
    assert len(movements.dedupe(build([rows[0], {**rows[1], "amount": 1_001}]))) == 2
    assert len(movements.dedupe(ledger, window="4min")) == 2
    # an unlabelled plain address re-bridging its own money: two movements
    plain = build([{**rows[0], "recipient": POOL[3]}, {**rows[1], "sender": POOL[3]}])
    kept = movements.dedupe(plain)
    # nothing dropped: the ledger's rows, as a frame of their own
    pd.testing.assert_frame_equal(kept, plain)
    assert kept is not plain
    kept.loc[kept.index[0], "amount_raw"] = 0
    assert plain["amount_raw"].iloc[0] == 1_000


def test_bad_arguments_say_what_to_pass():
    ledger = build(
        [
            dict(
                src=0,
                dst=6,
                amount=1,
                burn=0,
                delay=1,
                sender=POOL[1],
                recipient=POOL[1],
                self_relay=False,
                version=1,
                hook="0x",
                relayer=None,
            )
        ]
    )
    with pytest.raises(ValueError, match="pass one of"):
        actors.integrators(ledger, by="owner")
    with pytest.raises(ValueError, match="by="):
        actors.relayers(ledger, by="token")
    with pytest.raises(ValueError, match="positive duration"):
        movements.rebalancing(ledger, window="-1h")
    with pytest.raises(ValueError, match="rules must name"):
        movements.rebalancing(ledger, rules=["vibes"])
    with pytest.raises(DataError, match="lacks"):
        actors.relayers(ledger.drop(columns=["amount_raw"]))
    with pytest.raises(TypeError, match="ledger"):
        actors.relayers([1, 2])


# --- cross-check on the synthetic sample, with plain pandas -------------------------------------


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    ledger = cctx.load_sample(as_of="2024-07-01", days=2)
    minted = ledger["mint_timestamp"].notna()
    assert ledger.loc[minted, "relayer"].notna().all()  # the sample names every relayer
    return ledger


def test_relayer_shares_match_plain_pandas(sample):
    got = actors.relayers(sample, by="route", labels=False)
    minted = sample[sample["mint_timestamp"].notna()]
    key = [minted["source_domain"], minted["destination_domain"], minted["relayer"]]
    plain = minted.groupby(key)["amount_raw"].agg(["size", "sum"])
    route_sum = plain.groupby(level=[0, 1])["sum"].transform("sum")
    route_n = plain.groupby(level=[0, 1])["size"].transform("sum")
    want = pd.DataFrame(
        {"mint_share": plain["size"] / route_n, "volume_share": plain["sum"] / route_sum}
    )
    got = got.assign(
        s=[cctx.chains.domain(c) for c in got["source_chain"].astype(str)],
        d=[cctx.chains.domain(c) for c in got["destination_chain"].astype(str)],
    ).set_index(["s", "d", "relayer"])
    want = want.reindex(got.index)
    np.testing.assert_allclose(got["mint_share"], want["mint_share"], rtol=1e-12)
    np.testing.assert_allclose(got["volume_share"], want["volume_share"], rtol=1e-12)


def plain_round_trips(
    ledger: pd.DataFrame, window: pd.Timedelta, *, labels: bool = False
) -> set[str]:
    """The round-trip rule, written as a loop over each end user's burns.

    The end user is the signer, else the depositor; with ``labels``, a depositor
    standing in that is a labelled integrator on the burn's chain is no end user.
    """
    flagged: set[str] = set()
    signer = ledger.get("burn_tx_from", pd.Series(pd.NA, index=ledger.index, dtype="string"))
    rows = ledger.assign(user=signer.fillna(ledger["message_sender"]), signer=signer)
    if labels:

        def stands_in(r) -> bool:
            if pd.notna(r.signer) or pd.isna(r.message_sender):
                return False
            found = cctx.labels.lookup(r.message_sender, int(r.source_domain))
            return found is not None and found.kind == "integrator"

        rows = rows[[not stands_in(r) for r in rows.itertuples()]]
    rows = rows[rows["user"].notna() & rows["burn_timestamp"].notna()]
    rows = rows[rows["source_domain"] != rows["destination_domain"]]
    # legs at one time in transfer_id order: the tie order every engine shares
    rows = rows.sort_values(["burn_timestamp", "transfer_id"], kind="stable")
    by_user: dict[str, list[tuple]] = {}  # one pass of itertuples, not one per user's group
    for r in rows.itertuples():
        by_user.setdefault(r.user, []).append(r)
    for mine in by_user.values():
        used: set[str] = set()
        seen: list[tuple] = []
        for r in mine:
            # the nearest earlier leg back: the user's legs looked at from the latest, as far
            # as the window reaches (they are in time order, so none further back can match)
            nearest = None
            for s in reversed(seen):
                if r.burn_timestamp - s.burn_timestamp > window:
                    break
                if (
                    s.source_domain == r.destination_domain
                    and s.destination_domain == r.source_domain
                    and s.burn_timestamp < r.burn_timestamp
                ):
                    nearest = s
                    break
            if nearest is not None and nearest.transfer_id not in used:
                used.add(nearest.transfer_id)
                flagged |= {nearest.transfer_id, r.transfer_id}
            seen.append(r)
    return flagged


@pytest.mark.parametrize("signers", [True, False], ids=["signers", "no-signers"])
@pytest.mark.parametrize("labels", [False, True])
def test_round_trips_match_a_plain_loop(sample, labels, signers):
    ledger = sample if signers else sample.assign(burn_tx_from=None)  # as eth_getLogs gives it
    got = movements.rebalancing(ledger, window="6h", rules=["round_trip"], labels=labels)
    want = plain_round_trips(ledger, pd.Timedelta("6h"), labels=labels)
    assert want  # the sample's address pools make round trips common
    assert set(got["transfer_id"]) == want
    if labels and not signers:  # integrator contracts stand in and burn both ways: no trip
        assert len(want) < len(plain_round_trips(ledger, pd.Timedelta("6h")))
    # each leg points at a leg of the same end user on the reverse route (a leg that both
    # closes one trip and opens the next points at one of the two)
    legs = got.set_index("transfer_id")
    other = legs.loc[legs["counterpart"].to_numpy()]
    assert (other["end_user"].to_numpy() == legs["end_user"].to_numpy()).all()
    assert (
        other["source_chain"].astype(str).to_numpy()
        == legs["destination_chain"].astype(str).to_numpy()
    ).all()


# --- every engine ---------------------------------------------------------------------------


ENGINES = ["polars", "polars-lazy", "duckdb", "dask"]
CASES = {
    "relayers": lambda t: actors.relayers(t, by=["route", "cctp_version"], labels=False),
    "relayers daily": lambda t: actors.relayers(t, freq="1D"),
    "integrators": lambda t: actors.integrators(t),
    "rebalancing": lambda t: movements.rebalancing(t, rules=movements.ALL_RULES),
    "rebalancing_share": lambda t: movements.rebalancing_share(t),
    "continuations": lambda t: movements.continuations(t, window="1D"),
}


def as_engine(frame: pd.DataFrame, engine: str):
    pl = pytest.importorskip("polars")
    if engine == "polars":
        return pl.from_pandas(frame)
    if engine == "polars-lazy":
        return pl.from_pandas(frame).lazy()
    if engine == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        return duckdb.from_df(frame)
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(frame, npartitions=3)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", list(CASES))
def test_engines_give_pandas_numbers(sample, engine, case):
    want = CASES[case](sample)
    got = CASES[case](as_engine(sample, engine))
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want)
    for col in want.columns:
        if pd.api.types.is_float_dtype(want[col]):
            np.testing.assert_allclose(
                got[col].to_numpy(float), want[col].to_numpy(float), rtol=1e-9
            )
        else:
            assert got[col].astype(str).tolist() == want[col].astype(str).tolist(), col


# --- the vectorised rewrites, against plain pandas and plain loops --------------------------


tied = st.fixed_dictionaries(
    {
        "src": st.sampled_from(DOMAINS),
        "dst": st.sampled_from(DOMAINS),
        "amount": st.integers(1, 10**6),
        "burn": st.integers(0, 12),  # a few minutes: many legs at the same time
        "delay": st.just(1),
        "sender": st.sampled_from(POOL[1:3]),
        "recipient": st.sampled_from(POOL),
        "self_relay": st.just(False),
        "version": st.sampled_from([1, 2]),
        "hook": st.just("0x"),
        "relayer": st.sampled_from(RELAYERS),
    }
).filter(lambda r: r["src"] != r["dst"])


@SETTINGS
@given(st.lists(tied, min_size=1, max_size=30).map(build), st.sampled_from(["1min", "5min"]))
def test_round_trips_with_ties_match_a_plain_loop(ledger, window):
    # legs at the same minute: strictly earlier outbound legs only, the nearest (the greatest
    # transfer_id among equal times) taken, each closed once, by the first return leg
    got = movements.rebalancing(ledger, window=window, rules=["round_trip"], labels=False)
    want = plain_round_trips(ledger, pd.Timedelta(window))
    assert set(got["transfer_id"]) == want
    # the rows' order (a Dask partitioning, the files a relation scans) changes nothing
    shuffled = ledger.sample(frac=1.0, random_state=len(ledger)).reset_index(drop=True)
    again = movements.rebalancing(shuffled, window=window, rules=["round_trip"], labels=False)
    assert set(again["transfer_id"]) == want
    pairs = dict(zip(got["transfer_id"], got["counterpart"], strict=True))
    assert dict(zip(again["transfer_id"], again["counterpart"], strict=True)) == pairs


def tied_legs() -> pd.DataFrame:
    """Two outbound legs at one minute ("b" 10, "a" 990 base units) and one return leg ("c")."""
    leg = dict(amount=10, delay=1, sender=POOL[1], recipient=POOL[2], self_relay=False)
    leg.update(version=1, hook="0x", relayer=None)
    ledger = build([dict(leg, src=0, dst=3, burn=0), dict(leg, src=0, dst=3, burn=0, amount=990),
                    dict(leg, src=3, dst=0, burn=5)])  # fmt: skip
    ledger["transfer_id"] = pd.array(["b", "a", "c"], dtype=schema.STRING)
    return ledger


def test_tied_legs_pair_by_transfer_id_not_by_row_order():
    # the nearest outbound leg is the greater id, wherever the rows sit; the other
    # outbound leg ("a", 990 base units) stays unpaired
    ledger = tied_legs()
    for order in ([0, 1, 2], [1, 0, 2], [2, 1, 0]):
        rows = ledger.iloc[order].reset_index(drop=True)
        got = movements.rebalancing(rows, rules=["round_trip"], labels=False)
        assert sorted(got["transfer_id"]) == ["b", "c"], order
        for engine in ENGINES:
            share = movements.rebalancing_share(as_engine(rows, engine), labels=False)
            assert share["round_trip_volume"].sum() == pytest.approx(20 / 1e6), (order, engine)


def test_integrator_sums_match_plain_pandas(sample):
    got = actors.integrators(sample, labels=False).set_index("integrator")
    burned = sample[sample["burn_timestamp"].notna()]
    stamps = burned["burn_timestamp"]
    late = stamps >= stamps.min() + (stamps.max() - stamps.min()) / 2
    raw = burned["amount_raw"]
    plain = pd.DataFrame(
        {
            "transfers": raw.groupby(burned["message_sender"]).size(),
            "volume_raw": raw.groupby(burned["message_sender"]).sum(),
            "routes": (burned["source_domain"] * 100 + burned["destination_domain"])
            .groupby(burned["message_sender"])
            .nunique(),
            "volume_second_half": raw.where(late, 0).groupby(burned["message_sender"]).sum() / 1e6,
            "v2_volume": raw.where(burned["cctp_version"] == 2, 0)
            .groupby(burned["message_sender"])
            .sum()
            / 1e6,
        }
    )
    # a depositor signing every one of its burns is a user, not an integrator
    own = (burned["burn_tx_from"] == burned["message_sender"]).fillna(False)
    alone = own.groupby(burned["message_sender"]).all()
    assert alone.any()
    assert not set(alone.index[alone.to_numpy()]) & set(got.index)
    plain = plain.loc[~alone.reindex(plain.index).to_numpy(bool)]
    assert set(got.index) == set(plain.index)
    got = got.loc[plain.index]
    for col in ("transfers", "volume_raw", "routes"):
        assert got[col].tolist() == plain[col].tolist(), col
    for col in ("volume_second_half", "v2_volume"):
        np.testing.assert_allclose(got[col], plain[col], rtol=1e-12)


def test_relayer_medians_match_plain_pandas(sample):
    got = actors.relayers(sample, by="cctp_version", labels=False)
    minted = sample[sample["mint_timestamp"].notna()]
    latency = (minted["mint_timestamp"] - minted["burn_timestamp"]).dt.total_seconds()
    plain = latency.groupby([minted["cctp_version"], minted["relayer"]]).median()
    got = got.set_index(["cctp_version", "relayer"])["median_relay_s"]
    assert len(got) == len(plain)
    np.testing.assert_allclose(got.loc[plain.index], plain, rtol=0)


# --- the end user: who signed the burn transaction ----------------------------------------


def _via_contract(users: list[str | None]) -> pd.DataFrame:
    """Two burns through Mayan's FastMCTP, A -> B then B -> A, with the given signers."""
    leg = dict(amount=1_000, delay=5, sender=FAST_MCTP, self_relay=False, version=2)
    leg.update(hook="0x", relayer=None)
    there = dict(leg, src=0, dst=6, burn=0, recipient=POOL[1])
    back = dict(leg, src=6, dst=0, burn=20, recipient=POOL[2])
    ledger = build([there, back])
    ledger["burn_tx_from"] = pd.array(users, dtype=schema.STRING)
    return ledger


def test_round_trips_are_by_the_end_user_where_the_source_gives_it():
    # without signers the depositor stands in; a labelled integrator's contract burning
    # both ways is its users' transfers, not a trip
    unknown = movements.rebalancing(_via_contract([None, None]), rules=["round_trip"])
    assert unknown.empty
    # without labels nothing says it is a contract: the depositor goes there and back
    blind = movements.rebalancing(_via_contract([None, None]), rules=["round_trip"], labels=False)
    assert blind["transfer_id"].tolist() == ["t0", "t1"]
    # two users of one contract going opposite ways are not a round trip
    two = movements.rebalancing(_via_contract([POOL[1], POOL[2]]), rules=["round_trip"])
    assert two.empty
    one = movements.rebalancing(_via_contract([POOL[3], POOL[3]]), rules=["round_trip"])
    assert one["transfer_id"].tolist() == ["t0", "t1"]
    assert set(one["end_user"]) == {POOL[3]}
    assert set(one["message_sender"]) == {FAST_MCTP}


def test_an_integrators_contract_is_no_round_trip_but_a_plain_address_is():
    # the same two burns, A -> B then B -> A within the window, with no signer known
    contract = _via_contract([None, None])
    plain = contract.assign(message_sender=pd.array([POOL[3]] * 2, dtype=schema.STRING))
    for rules in (["round_trip"], movements.RULES):
        assert movements.rebalancing(contract, rules=rules).empty
        caught = movements.rebalancing(plain, rules=rules)
        assert caught["rule"].tolist() == ["round_trip", "round_trip"]
        assert caught["counterpart"].tolist() == ["t1", "t0"]
    assert movements.rebalancing_share(contract)["rebalancing_volume"].sum() == 0.0
    assert movements.rebalancing_share(plain)["round_trip_volume"].sum() == pytest.approx(2e-3)


def test_a_signers_round_trip_through_an_integrators_contract_is_caught():
    # the signer is known: the round trip is theirs, wherever the contract deposits for them
    both = _via_contract([POOL[3], POOL[3]])
    caught = movements.rebalancing(both)
    assert caught["rule"].tolist() == ["round_trip", "round_trip"]
    assert set(caught["end_user"]) == {POOL[3]}
    assert set(caught["message_sender"]) == {FAST_MCTP}
    # one leg through the contract, the other signed and deposited by the user: one trip
    mixed = both.assign(message_sender=pd.array([FAST_MCTP, POOL[3]], dtype=schema.STRING))
    assert movements.rebalancing(mixed)["counterpart"].tolist() == ["t1", "t0"]
    # the return leg's signer unknown: the contract stands in for it, and is no end user
    half = _via_contract([POOL[3], None])
    assert movements.rebalancing(half).empty


def test_integrators_count_the_end_users_behind_a_contract():
    table = actors.integrators(_via_contract([POOL[1], POOL[2]])).set_index("integrator")
    assert table.loc[FAST_MCTP, "end_users"] == 2
    assert table.loc[FAST_MCTP, "integrator_label"] == "Mayan FastMCTP"
    half = actors.integrators(_via_contract([POOL[1], None])).set_index("integrator")
    assert half.loc[FAST_MCTP, "end_users"] == 1  # the known one; the other is not guessed
    none = actors.integrators(_via_contract([None, None]))
    assert none["end_users"].isna().all()


def _depositors(signers: list[tuple[str, str | None]]) -> pd.DataFrame:
    """One burn per (depositor, signer), base -> arbitrum."""
    rows = [
        dict(src=6, dst=3, amount=1_000 * (k + 1), burn=k, delay=5, sender=sender,
             recipient=POOL[1], self_relay=False, version=2, hook="0x", relayer=None)
        for k, (sender, _) in enumerate(signers)
    ]  # fmt: skip
    ledger = build(rows)
    ledger["burn_tx_from"] = pd.array([s for _, s in signers], dtype=schema.STRING)
    return ledger


@pytest.mark.parametrize("engine", ["pandas", *ENGINES])
def test_a_depositor_signing_only_its_own_burns_is_no_integrator(engine):
    eoa, router, unknown = POOL[2], POOL[3], "0x" + "f6" * 20
    ledger = _depositors([
        (eoa, eoa), (eoa, eoa),  # a user burning for itself
        (router, POOL[1]), (router, router),  # burns signed by others: an integrator
        (FAST_MCTP, FAST_MCTP),  # labelled one: stays, whoever signs
        (unknown, None),  # nothing tells: stays
    ])  # fmt: skip
    frame = ledger if engine == "pandas" else as_engine(ledger, engine)
    table = actors.integrators(frame).set_index("integrator")
    assert set(table.index) == {router, FAST_MCTP, unknown}
    assert table.loc[router, "transfers"] == 2
    # shares stay of every burn: the user's own burns are the rest
    total = ledger["amount_raw"].sum()
    assert table["volume_share"].sum() == pytest.approx(1 - 3_000 / total)
    blind = actors.integrators(frame, labels=False).set_index("integrator")
    assert set(blind.index) == {router, unknown}  # without labels, the contract signing
    # itself is no different from a user


def _with_signers(ledger: pd.DataFrame, *, seed: int, people: int, unnamed: float) -> pd.DataFrame:
    """``ledger`` whose burns are signed by a few ``people``, a share ``unnamed`` unsaid."""
    rng = np.random.default_rng(seed)
    who = np.array([f"0x{k:040x}" for k in range(100, 100 + people)], dtype=object)
    signer = who[rng.integers(0, len(who), len(ledger))]
    signer[rng.random(len(ledger)) < unnamed] = None
    return ledger.assign(burn_tx_from=pd.array(signer, dtype=schema.STRING))


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_count_end_users_as_pandas_does(sample, engine):
    ledger = _with_signers(sample, seed=8, people=40, unnamed=0.2)  # some sources do not say
    want = actors.integrators(ledger, labels=False)
    got = actors.integrators(as_engine(ledger, engine), labels=False)
    assert got["integrator"].tolist() == want["integrator"].tolist()
    assert got["end_users"].tolist() == want["end_users"].tolist()
    assert want["end_users"].notna().any()


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_find_round_trips_by_signer_as_pandas_does(sample, engine):
    # a few signers behind many burns, some unnamed: round trips by signer, the depositor
    # standing in (integrators' contracts excepted) where the source does not say
    ledger = _with_signers(sample, seed=9, people=10, unnamed=0.3)
    want = movements.rebalancing_share(ledger, window="6h")
    got = movements.rebalancing_share(as_engine(ledger, engine), window="6h")
    assert want["round_trip_volume"].sum() > 0
    assert want["round_trip_volume"].sum() != movements.rebalancing_share(
        sample, window="6h"
    )["round_trip_volume"].sum()
    for col in want.columns:
        assert got[col].astype(str).tolist() == want[col].astype(str).tolist(), col


def test_addresses_encoded_in_parts_give_the_numbers_of_one_pass(sample, monkeypatch):
    # a long column is encoded on threads, a part each, and the parts' codes merged
    ledger = _with_signers(sample, seed=3, people=20, unnamed=0.5)
    want = [movements.rebalancing(ledger), movements.rebalancing_share(ledger)]
    monkeypatch.setattr(round_trips, "_PART", 1_000)
    monkeypatch.setattr(round_trips.os, "cpu_count", lambda: 4)
    got = [movements.rebalancing(ledger), movements.rebalancing_share(ledger)]
    for a, b in zip(got, want, strict=True):
        pd.testing.assert_frame_equal(a, b)
    assert len(want[0])
    assert len(sample) > 4 * 1_000  # four parts


def test_hashes_coded_as_one_dictionary_encode_with_null_as_minus_one():
    # DuckDB's address hashes: 64-bit, any bit pattern, nulls where no address, in chunks
    pa = pytest.importorskip("pyarrow")
    values = [2**64 - 1, None, 0, 7, 2**64 - 1, 2**63, 0, None, 7, 5]
    hashes = pa.chunked_array([values[:4], values[4:]], pa.uint64())
    want = hashes.combine_chunks().dictionary_encode().indices.fill_null(-1).to_pylist()
    got = round_trips._hash_codes(hashes)
    assert got.tolist() == want == [0, -1, 1, 2, 0, 3, 1, -1, 2, 4]
    # a null first takes no code: the codes stay dense
    late = round_trips._hash_codes(pa.chunked_array([[None, 5, None, 5, 6]]))
    assert late.tolist() == [-1, 0, -1, 0, 1]
    assert round_trips._hash_codes(pa.chunked_array([], pa.uint64())).tolist() == []


def test_duckdb_without_exact_codes_runs_the_rules_in_sql(sample, monkeypatch):
    # two addresses sharing a hash: the codes would not be exact, so the rules run in SQL
    duckdb = pytest.importorskip("duckdb")
    want = movements.rebalancing_share(sample)
    monkeypatch.setattr(actors_lazy, "hashed_values", lambda lf, expr: None)
    got = movements.rebalancing_share(duckdb.from_df(sample))
    pd.testing.assert_frame_equal(got, want)


# --- volume counted once (volumes' dedupe=) ---------------------------------------------------


@SETTINGS
@given(ledgers, st.sampled_from(["10min", "1h", "1D"]))
def test_volumes_counted_once_never_more_and_shares_sum_to_one(ledger, window):
    transfers = cctx.transfers_from_ledger(ledger)
    legs = movements.continuations(ledger, window=window)
    every = volumes.timeseries(transfers, freq="1h")
    once = volumes.timeseries(transfers, freq="1h", dedupe=legs)
    both = every.merge(once, on="timestamp", how="left", suffixes=("", "_once")).fillna(0)
    assert (both["volume_once"] <= both["volume"] * (1 + 1e-12)).all()
    assert (both["count_once"] <= both["count"]).all()
    dropped = transfers["transfer_id"].isin(legs["transfer_id"])
    assert once["count"].sum() == len(transfers) - dropped.sum()
    assert once["volume"].sum() == pytest.approx(transfers["amount"][~dropped].sum(), rel=1e-12)
    sizes = volumes.size_buckets(transfers, dedupe=legs)
    assert sizes.count == once["count"].sum()
    if sizes.count:
        assert sizes.classes["count_share"].sum() == pytest.approx(1.0)
        assert sizes.classes["volume_share"].sum() == pytest.approx(1.0)


def test_volumes_counted_once_take_the_ledger_or_its_continuations(sample):
    transfers = cctx.transfers_from_ledger(sample)
    legs = movements.continuations(sample)
    assert len(legs)  # the sample's forwarding contracts make some
    by_ledger = volumes.timeseries(transfers, dedupe=sample)
    pd.testing.assert_frame_equal(by_ledger, volumes.timeseries(transfers, dedupe=legs))
    every = volumes.timeseries(transfers)
    assert by_ledger["volume"].sum() < every["volume"].sum()
    polars = pytest.importorskip("polars")
    lazy = volumes.timeseries(polars.from_pandas(transfers).lazy(), dedupe=sample)
    np.testing.assert_allclose(lazy["volume"], by_ledger["volume"], rtol=1e-12)
    kpis = volumes.kpis(transfers, dedupe=sample)
    assert (
        kpis.loc[("24h", "transfers"), "current"]
        <= volumes.kpis(transfers).loc[("24h", "transfers"), "current"]
    )
    with pytest.raises(TypeError, match="pass dedupe=ledger"):
        volumes.timeseries(transfers, dedupe=True)
    with pytest.raises(TypeError, match="continuations"):
        volumes.timeseries(transfers, dedupe="ledger.parquet")
