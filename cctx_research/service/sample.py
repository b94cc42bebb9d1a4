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
cached pull of a past window stays true while the 30-day window slides.
It is also why each day is built once and kept in the cache directory
(:mod:`.sample_cache`): later starts read the days back.

**This is synthetic data.** Every output built on it says so.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .. import addressing, arguments, chains, schema
from ..provenance import Provenance, attach, provenance
from ..times import TimeLike, to_timestamp
from . import sample_actors, sample_cache
from .sample_tables import (
    address_pools,
    amounts_usd,
    block_numbers,
    calibration,
    contract_addresses,
    hex_strings,
    route_params,
    route_table,
    seconds_of_day,
    spell_addresses,
)

__all__ = [
    "GENERATOR_VERSION", "SAMPLE_LABEL", "calibration", "generate", "generate_day",
    "in_flight_at", "load_sample",
]  # fmt: skip

SAMPLE_LABEL = "synthetic CCTP sample (cctx_research embedded default)"
GENERATOR_VERSION = 2
"""The generator's version: bump it whenever what :func:`generate` or :func:`load_sample`
returns changes, so that days built before (kept in the cache directory by
:mod:`.sample_cache`) are never read again.

2: :func:`load_sample` holds nothing later than its clock (:func:`in_flight_at`).
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
    sender, recipient, caller = _addresses(rng, seed, src, dst)
    is_v2, fast, latency = _versions(rng, route, params, cal["v2"], latency)
    mint_time = burn_time + latency
    v2 = _v2_columns(rng, n, is_v2, fast, pending, amount_raw, params["bps"][route], cal["v2"])
    nonce, transfer_id = _ids(rng, day_index, src, dst, is_v2)
    burn_token, messenger = _contract_columns(src, dst, is_v2)
    burn_hash, mint_hash = _tx_hashes(rng, src, dst)

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
    frame = sample_actors.assign(
        schema.complete(frame, "ledger"), routers=address_pools(seed)["routers"], seed=seed,
        day=day_index,
    )
    return _typed(frame)


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


def _ids(
    rng: np.random.Generator, day_index: int, src: np.ndarray, dst: np.ndarray, is_v2: np.ndarray
) -> tuple[np.ndarray, list[str]]:
    """(nonce, transfer id) of each transfer.

    V1 nonces increase per source domain through the day; V2 nonces are
    bytes32 assigned by Circle at attestation.
    """
    order_in_src = pd.Series(src).groupby(src).cumcount().to_numpy()
    nonce = (day_index * 1_000_000 + order_in_src).astype(str).astype(object)
    v2_rows = np.flatnonzero(is_v2)
    nonce[v2_rows] = hex_strings(rng.integers(0, 256, (len(v2_rows), 32), dtype=np.uint8), 32)
    chain_ids = {d: chains.chain_id(int(d)) for d in np.unique(np.concatenate([src, dst]))}
    src_cid = np.array([chain_ids[d] for d in src], dtype=object)
    dst_cid = np.array([chain_ids[d] for d in dst], dtype=object)
    transfer_id = [f"{a}_{b}_{c}" for a, b, c in zip(nonce, src_cid, dst_cid, strict=True)]
    return nonce, transfer_id


def _contract_columns(
    src: np.ndarray, dst: np.ndarray, is_v2: np.ndarray
) -> tuple[list[str], np.ndarray]:
    """(burn token, destination token messenger) of each transfer."""
    contracts = contract_addresses()
    messenger = np.array(
        [contracts["v2" if v else "v1"][d] for d, v in zip(dst, is_v2, strict=True)], dtype=object
    )
    return [contracts["usdc"][d] for d in src], messenger


def _addresses(
    rng: np.random.Generator, seed: int, src: np.ndarray, dst: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(message sender, mint recipient, destination caller) of each transfer.

    Senders are spelled in the source chain's format, recipients and callers
    in the destination's. EVM users often send to themselves; across address
    formats the recipient is always a different account.
    """
    n = len(src)
    pools = address_pools(seed)
    acfg = calibration()["addresses"]
    via_router = rng.random(n) < acfg["router_share"]
    u_router, u_sender, u_recipient = rng.random(n), rng.random(n), rng.random(n)
    sender = np.where(
        via_router,
        pools["routers"][np.searchsorted(pools["router_cdf"], u_router)],
        pools["senders"][np.searchsorted(pools["sender_cdf"], u_sender)],
    )
    recipient = pools["recipients"][np.searchsorted(pools["recipient_cdf"], u_recipient)]
    fmt = {d: chains.address_format(int(d)) for d in np.unique(np.concatenate([src, dst]))}
    src_evm = np.array([fmt[d] == "evm" for d in src], dtype=bool)
    dst_evm = np.array([fmt[d] == "evm" for d in dst], dtype=bool)
    self_send = ~via_router & src_evm & dst_evm & (rng.random(n) < acfg["self_recipient_share"])
    recipient = np.where(self_send, sender, recipient)
    caller_set = rng.random(n) < acfg["destination_caller_share"]
    u_caller = rng.integers(0, len(pools["relayers"]), n)
    caller = np.where(caller_set, pools["relayers"][u_caller], "0x" + "00" * 20)
    for d in np.unique(src[~src_evm]):
        rows = np.flatnonzero(src == d)
        pool = pools[chains.chain_name(int(d))]
        kind = np.where(via_router[rows], "routers", "senders")
        raw = np.empty((len(rows), pool["senders"].shape[1]), dtype=np.uint8)
        for k in ("routers", "senders"):
            sel = kind == k
            raw[sel] = pool[k][np.searchsorted(pool["cdf"][k], u_sender[rows][sel])]
        sender[rows] = spell_addresses(raw, chains.chain_name(int(d)))
    for d in np.unique(dst[~dst_evm]):
        rows = np.flatnonzero(dst == d)
        name = chains.chain_name(int(d))
        pool = pools[name]
        raw = pool["recipients"][np.searchsorted(pool["cdf"]["recipients"], u_recipient[rows])]
        recipient[rows] = spell_addresses(raw, name)
        raw = np.where(
            caller_set[rows, None], pool["relayers"][u_caller[rows]], np.uint8(0)
        ).astype(np.uint8)
        caller[rows] = spell_addresses(raw, name)
    return sender.astype(object), recipient.astype(object), caller.astype(object)


def _tx_hashes(
    rng: np.random.Generator, src: np.ndarray, dst: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Burn and mint transaction hashes in the spelling of the chain each was sent on."""
    n = len(src)
    hashes = hex_strings(rng.integers(0, 256, (2 * n, 32), dtype=np.uint8), 32)
    burn, mint = hashes[:n], hashes[n:]
    for side, domains in ((burn, src), (mint, dst)):
        for d in np.unique(domains):
            fmt = chains.address_format(int(d))
            rows = np.flatnonzero(domains == d)
            if fmt == "solana":  # a signature: 64 bytes in base58
                raw = rng.integers(0, 256, (len(rows), 64), dtype=np.uint8)
                side[rows] = [addressing.base58_encode(r.tobytes()) for r in raw]
            elif fmt == "noble":  # a Cosmos tx hash: 64 hex digits, upper case
                side[rows] = [h[2:].upper() for h in side[rows]]
    return burn, mint


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
    # Fast fees are basis points of the amount, rounded up to whole base units
    # (Circle's minimum is one unit); maxFee carries the SDK's 1 bp buffer.
    fee = np.where(fast, -(-amount_raw * bps.astype(np.int64) // 10_000), 0)
    buffer = int(v2cfg["max_fee_buffer_bps"])
    max_fee = np.where(fast, -(-amount_raw * (bps.astype(np.int64) + buffer) // 10_000), 0)
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
    )  # fmt: skip
    lo = clock - pd.Timedelta(days=days)
    keep = (ledger["burn_timestamp"] > lo) & (ledger["burn_timestamp"] <= clock)
    ledger = ledger.loc[keep].reset_index(drop=True)
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


def load_sample(*, as_of: TimeLike | None = None, days: int = 30) -> pd.DataFrame:
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
    return in_flight_at(generate(as_of, days=_positive_int(days, "days")))


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
