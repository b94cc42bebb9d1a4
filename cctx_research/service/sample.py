"""The bundled synthetic sample: deterministic CCTP V1 and V2 traffic, calibrated.

:func:`generate` builds a *ledger* frame (``schema`` kind ``"ledger"``): one
row per transfer with its burn side and its mint side: raw integer amounts,
``<nonce>_<src>_<dst>`` ids, addresses and transaction hashes in each
chain's own format (see :mod:`cctx_research.addressing`). Transfers run
between the six default EVM domains, Solana and Noble; part of them are CCTP
V2 (a fast/standard mix where the source chain offers Fast Transfer, with
fees, finality thresholds and hook data), and a share is never minted. The
figures it is calibrated to, with their sources, are in
``data/calibration.json``; ``tests/service/test_sample.py`` checks them.

Determinism: the transfers of a UTC day depend only on the seed and that
day (one random stream per day), and the address pools only on the seed. So
the sample of any past day is the same whenever it is generated, and a
cached pull of a past window stays true while the 30-day window slides, and
each day is built once and kept in the cache (:mod:`.sample_cache`).

**This is synthetic data.** Every output built on it says so.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .. import arguments, schema
from ..provenance import Provenance, attach, provenance
from ..times import TimeLike, to_timestamp
from . import sample_actors, sample_cache, sample_forwarding
from .sample_tables import (
    addresses,
    amounts_usd,
    block_numbers,
    calibration,
    contract_addresses,
    route_params,
    route_table,
    router_addresses,
    seconds_of_day,
    transfer_ids,
    tx_hashes,
)

__all__ = [
    "GENERATOR_VERSION", "SAMPLE_LABEL", "TRUTH_COLUMNS", "calibration", "generate",
    "generate_day", "in_flight_at", "load_sample", "truth",
]  # fmt: skip

SAMPLE_LABEL = "synthetic CCTP sample (cctx_research embedded default)"
GENERATOR_VERSION = 4
"""The generator's version: bump it whenever what :func:`generate` or :func:`load_sample`
returns changes, so that days built before (kept in the cache directory by
:mod:`.sample_cache`) are never read again.

2: :func:`load_sample` holds nothing later than its clock (:func:`in_flight_at`).
3: ordinary users spread over a flatter pool, each crossing a pair of chains one way only;
the rebalancer's moves carry no hook (:func:`truth` holds what is planted).
4: a forwarder receives some mints and burns them onward to a third chain
(:mod:`.sample_forwarding`; :func:`truth`'s ``continues``).
"""
_EPOCH_DAY = dt.date(2020, 1, 1).toordinal()


# --------------------------------------------------------------------------
# generation


def generate_day(
    day: TimeLike, *, per_day: int | None = None, seed: int | None = None
) -> pd.DataFrame:
    """The sample's transfers burned on one UTC day (a ledger frame).

    Parameters
    ----------
    day : date-like
        Any time within the UTC day.
    per_day : int, optional
        Mean transfers a day (default from the calibration: 2,800).
    seed : int, optional
        Default from the calibration.

    Returns
    -------
    pandas.DataFrame
        Kind ``"ledger"``, sorted by burn time. Mints may fall on a later
        day; about 2% of burns are never minted (``mint_timestamp`` NaT).
        V1 rows have null V2 columns; V2 rows have a bytes32 ``nonce``.
    """
    return _day(day, per_day=per_day, seed=seed)[0]


def _day(
    day: TimeLike, *, per_day: int | None, seed: int | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One day's ledger (:func:`generate_day`) and its planted truth (:func:`truth`)."""
    cal = calibration()
    per_day = cal["per_day"] if per_day is None else _positive_int(per_day, "per_day")
    seed = cal["seed"] if seed is None else _positive_int(seed, "seed", allow_zero=True)
    day_ts = to_timestamp(day, name="day").floor("D")
    day_start = int(day_ts.value // 1_000_000_000)
    day_index = day_ts.date().toordinal() - _EPOCH_DAY
    # one stream per day, drawn from in a fixed order: each step below draws after the last
    rng = np.random.default_rng([seed, day_index + 1_000_000])
    n = _day_count(rng, day_ts, per_day, cal["activity"]["weekend_factor"])

    # time and route
    burn_time = np.sort(day_start + seconds_of_day(rng, n))
    r_src, r_dst, r_p = route_table()
    params = route_params()
    route = rng.choice(len(r_p), size=n, p=r_p)
    src, dst = r_src[route], r_dst[route]

    amount_raw = _amounts(rng, params["tilt"][route], cal["amounts"]["cap_usd"])
    latency, pending = _latency(rng, params["median"][route], cal)
    sender, recipient, caller = addresses(rng, seed, src, dst)
    is_v2, fast, latency = _versions(rng, route, params, cal["v2"], latency)
    mint_time = burn_time + latency
    v2 = _v2_columns(rng, n, is_v2, fast, pending, amount_raw, params["bps"][route], cal["v2"])
    nonce, transfer_id = transfer_ids(rng, day_index, src, dst, is_v2)
    burn_token, messenger = _contract_columns(src, dst, is_v2)
    burn_hash, mint_hash = tx_hashes(rng, src, dst)

    mint_ts = pd.to_datetime(np.where(pending, 0, mint_time), unit="s", utc=True)
    frame = pd.DataFrame(
        {
            "transfer_id": transfer_id,
            "source_domain": src.astype(np.int64),
            "destination_domain": dst.astype(np.int64),
            "amount_raw": amount_raw,
            "burn_timestamp": pd.to_datetime(burn_time, unit="s", utc=True),
            "mint_timestamp": mint_ts.where(~pending, pd.NaT),
            "burn_tx_hash": burn_hash,
            "mint_tx_hash": np.where(pending, None, mint_hash),
            "burn_block": block_numbers(src, burn_time),
            "mint_block": np.where(pending, -1, block_numbers(dst, mint_time)),
            "message_sender": sender,
            "mint_recipient": recipient,
            "burn_token": burn_token,
            "destination_caller": caller,
            "destination_token_messenger": messenger,
            "cctp_version": np.where(is_v2, 2, 1).astype(np.int64),
            "nonce": nonce,
            **v2,
        }
    )
    frame, planted = sample_actors.assign(
        schema.complete(frame, "ledger"), routers=router_addresses(seed), seed=seed,
        day=day_index,
    )
    facts = {**planted, "fast": fast, "never_minted": pending,
             "fee_raw": _fees(amount_raw, params["bps"][route], fast)}  # fmt: skip
    frame, facts = sample_forwarding.plant(
        frame, facts, seed=seed, day=day_index, day_end=day_start + 86_400
    )
    return _typed(frame), _truth_frame(frame, facts)


TRUTH_COLUMNS: tuple[str, ...] = (
    "transfer_id", "burn_timestamp", "end_user", "integrator", "relayer", "rebalancing",
    "fast", "never_minted", "fee_raw", "continues",
)  # fmt: skip
"""The columns of :func:`truth`, in order."""


def _truth_frame(frame: pd.DataFrame, planted: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """What the generator planted in one day's ``frame`` (see :func:`truth`)."""
    string = schema.dtypes("ledger")["message_sender"]
    return pd.DataFrame(
        {
            "transfer_id": pd.array(frame["transfer_id"].to_numpy(dtype=object), dtype=string),
            "burn_timestamp": frame["burn_timestamp"].to_numpy(),
            "end_user": pd.array(planted["end_user"], dtype=string),
            "integrator": pd.array(planted["integrator"], dtype=string),
            "relayer": pd.array(frame["relayer"].to_numpy(dtype=object), dtype=string),
            "rebalancing": np.asarray(planted["rebalancing"], dtype=bool),
            "fast": np.asarray(planted["fast"], dtype=bool),
            "never_minted": np.asarray(planted["never_minted"], dtype=bool),
            "fee_raw": np.asarray(planted["fee_raw"], dtype=np.int64),
            "continues": pd.array(planted["continues"], dtype=string),
        }
    ).astype({"burn_timestamp": schema.dtypes("ledger")["burn_timestamp"]})


def _day_count(
    rng: np.random.Generator, day_ts: pd.Timestamp, per_day: int, weekend_factor: float
) -> int:
    """How many transfers the day has: Poisson, quieter at weekends, ``per_day`` on average."""
    weekend = day_ts.day_of_week >= 5
    mean = per_day * (weekend_factor if weekend else 1.0) / ((5 + 2 * weekend_factor) / 7)
    return int(rng.poisson(mean))


def _amounts(rng: np.random.Generator, tilt: np.ndarray, cap_usd: float) -> np.ndarray:
    """Raw amounts: a calibrated quantile function, tilted per route, capped, at least 1."""
    u = 1.0 - (1.0 - rng.random(len(tilt))) ** tilt
    usd = np.minimum(amounts_usd(u), cap_usd)
    return np.maximum(np.round(usd * 1_000_000), 1).astype(np.int64)


def _latency(
    rng: np.random.Generator, median: np.ndarray, cal: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Burn-to-mint seconds of a standard transfer (at least 5), and which are never minted."""
    n = len(median)
    sigma = cal["latency_seconds"]["sigma"]
    latency = np.maximum(median * rng.lognormal(0.0, sigma, n), 5).astype(np.int64)
    pending = rng.random(n) < cal["pending_share"]
    return latency, pending


def _versions(
    rng: np.random.Generator,
    route: np.ndarray,
    params: Mapping[str, np.ndarray],
    v2cfg: dict[str, Any],
    latency: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(is V2, is fast, latency): fast transfers get the fast latency (at least 2 s)."""
    n = len(route)
    is_v2 = params["v2"][route] & (rng.random(n) < v2cfg["share"])
    fast = is_v2 & params["can_fast"][route] & (rng.random(n) < v2cfg["fast_share"])
    fast_sigma = v2cfg["fast_latency_seconds"]["sigma"]
    fast_latency = params["fast"][route] * rng.lognormal(0.0, fast_sigma, n)
    latency = np.where(fast, np.maximum(fast_latency, 2).astype(np.int64), latency)
    return is_v2, fast, latency


def _contract_columns(
    src: np.ndarray, dst: np.ndarray, is_v2: np.ndarray
) -> tuple[list[str], np.ndarray]:
    """(burn token, destination token messenger) of each transfer."""
    contracts = contract_addresses()
    messenger = np.array(
        [contracts["v2" if v else "v1"][d] for d, v in zip(dst, is_v2, strict=True)], dtype=object
    )
    return [contracts["usdc"][d] for d in src], messenger


def _v2_columns(
    rng: np.random.Generator,
    n: int,
    is_v2: np.ndarray,
    fast: np.ndarray,
    pending: np.ndarray,
    amount_raw: np.ndarray,
    bps: np.ndarray,
    v2cfg: dict[str, Any],
) -> dict[str, pd.array]:
    """The ledger's V2 columns: null on V1 rows; fees and executed finality null until minted."""
    # maxFee carries the SDK's 1 bp buffer over the fee
    fee = _fees(amount_raw, bps, fast)
    buffer = int(v2cfg["max_fee_buffer_bps"])
    max_fee = _fees(amount_raw, bps + buffer, fast)
    threshold = np.where(fast, 1000, 2000)
    minted_v2 = is_v2 & ~pending
    hooked = is_v2 & (rng.random(n) < v2cfg["hook_share"])
    lo, hi = v2cfg["hook_bytes"]
    hook = np.where(is_v2, "0x", None).astype(object)
    for row in np.flatnonzero(hooked):
        hook[row] = (
            "0x" + rng.integers(0, 256, int(rng.integers(lo, hi + 1)), np.uint8).tobytes().hex()
        )

    def nullable(values: np.ndarray, keep: np.ndarray) -> pd.arrays.IntegerArray:
        return pd.arrays.IntegerArray(values.astype(np.int64), ~keep)

    return {
        "max_fee_raw": nullable(max_fee, is_v2),
        "fee_raw": nullable(fee, minted_v2),
        "min_finality_threshold": nullable(threshold, is_v2),
        "finality_threshold_executed": nullable(threshold, minted_v2),
        "hook_data": hook,
    }


def _fees(amount_raw: np.ndarray, bps: np.ndarray, fast: np.ndarray) -> np.ndarray:
    """Fast Transfer fees: basis points of the amount, rounded up to whole base units
    (Circle's minimum is one unit); none for a standard transfer."""
    return np.where(fast, -(-amount_raw * bps.astype(np.int64) // 10_000), 0)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    types = schema.dtypes("ledger")
    out = frame.astype({c: t for c, t in types.items() if c in frame.columns})
    return schema.validate(out, "ledger")


def _positive_int(value: object, name: str, *, allow_zero: bool = False) -> int:
    return arguments.integer(value, name, low=0 if allow_zero else 1)


def generate(
    as_of: TimeLike | None = None,
    *,
    days: int | None = None,
    per_day: int | None = None,
    seed: int | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """The sample: every transfer burned in the ``days`` days up to ``as_of``.

    Parameters
    ----------
    as_of : date-like, optional
        The clock. Burns in ``(as_of - days, as_of]`` are included. Default:
        now. Mints after ``as_of`` are kept in the ledger: the service treats
        them as pending until its clock reaches them.
    days : int, optional
        Length of the window (default 30).
    per_day : int, optional
        Mean transfers a day (default 2,800; ``33_334`` gives about 1M).
    seed : int, optional
    progress : bool, optional
        A bar while days not cached yet are built (more than two). Default:
        on in a terminal or a notebook, off in CI or when stderr is redirected.

    Returns
    -------
    pandas.DataFrame
        Kind ``"ledger"``, sorted by burn time, with
        a provenance record marking it synthetic.

    Examples
    --------
    >>> ledger = generate("2024-07-01", days=1)
    >>> 2000 < len(ledger) < 3600
    True
    """
    cal = calibration()
    days = cal["days"] if days is None else _positive_int(days, "days")
    per_day = cal["per_day"] if per_day is None else _positive_int(per_day, "per_day")
    seed = cal["seed"] if seed is None else _positive_int(seed, "seed", allow_zero=True)
    clock = pd.Timestamp.now(tz="UTC") if as_of is None else to_timestamp(as_of, name="as_of")
    first = (clock - pd.Timedelta(days=days)).floor("D")
    ledger = sample_cache.ledger_days(
        pd.date_range(first, clock.floor("D"), freq="D"),
        lambda day: generate_day(day, per_day=per_day, seed=seed),
        per_day=per_day, seed=seed, what=f"the synthetic sample of {days} days",
        progress=progress,
    )  # fmt: skip
    lo = clock - pd.Timedelta(days=days)
    burns = ledger["burn_timestamp"]
    if burns.is_monotonic_increasing:  # whole days in order: the window is one slice
        first, last = burns.searchsorted(lo, side="right"), burns.searchsorted(clock, side="right")
        ledger = ledger.iloc[first:last].reset_index(drop=True)  # a mask copies every column
    else:
        ledger = ledger.loc[(burns > lo) & (burns <= clock)].reset_index(drop=True)
    return attach(
        ledger,
        Provenance(
            source=SAMPLE_LABEL,
            synthetic=True,
            operation="sample",
            window=(lo, clock),
            parameters={
                "as_of": clock.isoformat(),
                "days": days,
                "seed": seed,
            },
        ),
    )


def truth(
    as_of: TimeLike | None = None,
    *,
    days: int | None = None,
    per_day: int | None = None,
    seed: int | None = None,
) -> pd.DataFrame:
    """What the generator planted behind each transfer of :func:`generate`'s sample.

    The sample's analyses derive relayers, end users, integrators, rebalancing,
    fast or standard transfers, never-minted burns and fees from the ledger's
    columns; this table holds the truth they should recover, kept apart from
    the ledger so that no analysis can read it. One row per transfer of
    ``generate(as_of, days=days, per_day=per_day, seed=seed)`` (the same
    transfers, in the same order; join on ``transfer_id``). It is built again
    on each call (about 0.2 s a day), never cached.

    Parameters
    ----------
    as_of, days, per_day, seed
        As for :func:`generate`.

    Returns
    -------
    pandas.DataFrame
        ``transfer_id``, ``burn_timestamp``; ``end_user`` (who signed the
        burn); ``integrator`` (the depositing contract: a labelled
        integrator's, an unlabelled router's or the rebalancer's; null for a
        user burning for itself); ``relayer`` (who mints, as planted: also for
        a transfer still in flight at a clock; null if never minted);
        ``rebalancing`` (the rebalancer moving its own inventory: the only
        rebalancing the sample plants, see ``data/README.md``); ``fast``
        (a V2 Fast Transfer); ``never_minted``; ``fee_raw`` (the fee the mint
        takes, base units: 0 for standard transfers and V1, planted also where
        the burn is never minted); ``continues`` (for a forwarding leg, the
        id of the transfer whose mint it burns onward: one movement, two
        transfers, see :mod:`.sample_forwarding`; null elsewhere).

    Examples
    --------
    >>> planted = truth("2024-07-01", days=1)
    >>> planted["transfer_id"].equals(generate("2024-07-01", days=1)["transfer_id"])
    True
    """
    cal = calibration()
    days = cal["days"] if days is None else _positive_int(days, "days")
    clock = pd.Timestamp.now(tz="UTC") if as_of is None else to_timestamp(as_of, name="as_of")
    first = (clock - pd.Timedelta(days=days)).floor("D")
    parts = [
        _day(day, per_day=per_day, seed=seed)[1]
        for day in pd.date_range(first, clock.floor("D"), freq="D")
    ]
    planted = pd.concat(parts, ignore_index=True)
    lo = clock - pd.Timedelta(days=days)
    keep = (planted["burn_timestamp"] > lo) & (planted["burn_timestamp"] <= clock)
    what = {"as_of": clock.isoformat(), "days": days}
    return attach(
        planted.loc[keep].reset_index(drop=True),
        Provenance(source=SAMPLE_LABEL, synthetic=True, operation="sample truth",
                   window=(lo, clock), parameters=what),
    )  # fmt: skip


def load_sample(
    *, as_of: TimeLike | None = None, days: int = 30, progress: bool | None = None
) -> pd.DataFrame:
    """The bundled synthetic sample ledger: the embedded default's data, whole.

    Unlike the frames the interface serves, the ledger carries both sides of
    every transfer (burn and mint times, so latency) and the CCTP V2 columns
    (version, fees, finality thresholds, hook data), with addresses in each
    chain's own format. **The data is synthetic**, calibrated to published
    figures (``data/calibration.json``); its provenance says so.

    Parameters
    ----------
    as_of : date-like, optional
        The clock: burns in ``(as_of - days, as_of]``. Default: now. Nothing
        in the ledger is later than it: a transfer minted after ``as_of``
        was in flight then, and has its mint side empty (see
        :func:`in_flight_at`).
    days : int
        Length of the window in days (default 30).
    progress : bool, optional
        A bar while days not cached yet are built. Default: on in a terminal
        or a notebook, off in CI or when stderr is redirected.

    Returns
    -------
    pandas.DataFrame
        Kind ``"ledger"`` (see :mod:`cctx_research.schema`).

    Examples
    --------
    >>> import cctx_research as cctx
    >>> ledger = cctx.load_sample(as_of="2026-11-01", days=1)
    >>> cctx.provenance.is_synthetic(ledger)
    True
    >>> sorted(ledger["cctp_version"].unique().tolist())
    [1, 2]
    """
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, got {type(progress).__name__}")
    return in_flight_at(generate(as_of, days=_positive_int(days, "days"), progress=progress))


# The columns a mint writes: a transfer not yet minted at the clock has them empty.
_MINT_SIDE = ("mint_timestamp", "mint_tx_hash", "fee_raw", "finality_threshold_executed",
              "relayer")  # fmt: skip


def in_flight_at(ledger: pd.DataFrame, clock: TimeLike | None = None) -> pd.DataFrame:
    """``ledger`` as it stood at ``clock``: mints after it are not yet made.

    A transfer burned before ``clock`` but minted after it is in flight at
    ``clock``: its mint side (time, transaction, block, executed fee and
    finality, relayer) is emptied, as for a transfer never minted, so that
    nothing in the frame is later than its clock. ``clock`` defaults to the
    as-of time the sample's provenance records.
    """
    if clock is None:
        clock = provenance(ledger).window[1]
    clock = to_timestamp(clock, name="clock")
    later = (ledger["mint_timestamp"] > clock).to_numpy()
    if not later.any():
        return ledger
    out = ledger.copy()
    for column in _MINT_SIDE:
        out.loc[later, column] = pd.NA if column != "mint_timestamp" else pd.NaT
    out.loc[later, "mint_block"] = -1
    out.attrs = ledger.attrs
    return out
