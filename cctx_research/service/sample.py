"""The bundled synthetic sample: deterministic CCTP V1 traffic, calibrated.

:func:`generate` builds a *ledger* frame (``schema`` kind ``"ledger"``): one
row per transfer between the six default domains with its burn side and its
mint side, in the formats the upstream indexer uses once served (raw integer
amounts, Unix seconds, bytes32-padded fields, ``<nonce>_<src>_<dst>`` ids,
32-byte tx hashes). The figures it is calibrated to, with their sources, are
in ``data/calibration.json``; ``tests/service/test_sample.py`` checks them.

Determinism: the transfers of a UTC day depend only on the seed and that
day (one random stream per day), and the address pools only on the seed. So
the sample of any past day is the same whenever it is generated, and a
cached pull of a past window stays true while the 30-day window slides.

**This is synthetic data.** Every output built on it says so.
"""

from __future__ import annotations

import datetime as dt
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import arguments, chains, schema
from ..provenance import Provenance, attach
from ..times import TimeLike, to_timestamp

__all__ = ["SAMPLE_LABEL", "calibration", "generate", "generate_day"]

SAMPLE_LABEL = "synthetic CCTP sample (cctx_research embedded default)"
_DAY = 86_400
_EPOCH_DAY = dt.date(2020, 1, 1).toordinal()


def _calibration_text() -> str:
    # A wheel ships data/ as cctx_research._data; an editable install or a
    # checkout reads data/ in place.
    try:
        packaged = resources.files("cctx_research._data") / "calibration.json"
    except ModuleNotFoundError:
        packaged = None
    if packaged is not None and packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    repo = Path(__file__).resolve().parents[2] / "data" / "calibration.json"
    return repo.read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def calibration() -> dict[str, Any]:
    """The calibration table (``data/calibration.json``), parsed once."""
    return json.loads(_calibration_text())


# --------------------------------------------------------------------------
# tables derived once from the calibration


@lru_cache(maxsize=1)
def _routes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source domains, destination domains, probabilities) of every route."""
    cal = calibration()["routes"]
    counts = {k: float(v) for k, v in cal["counts"].items()}
    main_total = sum(counts.values())
    poly = cal["polygon_weights"]
    poly_total = sum(poly.values())
    share = cal["polygon_share"]
    weights = {k: (1 - share) * v / main_total for k, v in counts.items()}
    weights.update({k: share * v / poly_total for k, v in poly.items()})
    src, dst, p = [], [], []
    for route, w in sorted(weights.items()):
        a, b = route.split("->")
        src.append(chains.domain(a))
        dst.append(chains.domain(b))
        p.append(w)
    prob = np.array(p)
    return np.array(src), np.array(dst), prob / prob.sum()


@lru_cache(maxsize=1)
def _route_params() -> tuple[np.ndarray, np.ndarray]:
    """Per route: amount tilt and median latency (seconds)."""
    src, dst, _ = _routes()
    cal = calibration()
    tilt_cfg = cal["amounts"]["tilt"]
    lat = cal["latency_seconds"]
    tilts, medians = [], []
    for s, d in zip(src, dst, strict=True):
        a, b = chains.chain_name(int(s)), chains.chain_name(int(d))
        eth = "ethereum" in (a, b)
        tilts.append(tilt_cfg["touches_ethereum"] if eth else tilt_cfg["default"])
        medians.append(lat["routes"].get(f"{a}->{b}", lat["by_source"][a]))
    return np.array(tilts), np.array(medians, dtype=float)


def _hex(raw: np.ndarray, width: int) -> np.ndarray:
    """Rows of ``width`` random bytes -> array of ``0x`` hex strings."""
    flat = raw.reshape(-1, width)
    return np.array(["0x" + row.tobytes().hex() for row in flat], dtype=object)


@lru_cache(maxsize=4)
def _pools(seed: int) -> dict[str, Any]:
    """Address pools, depending on the seed only (they recur across days)."""
    cfg = calibration()["addresses"]
    rng = np.random.default_rng([seed, 0xADD])

    def zipf_cdf(n: int, a: float) -> np.ndarray:
        w = 1.0 / np.arange(1, n + 1) ** a
        return np.cumsum(w) / w.sum()

    return {
        "routers": _hex(rng.integers(0, 256, (cfg["routers"], 20), dtype=np.uint8), 20),
        "senders": _hex(rng.integers(0, 256, (cfg["sender_pool"], 20), dtype=np.uint8), 20),
        "recipients": _hex(rng.integers(0, 256, (cfg["recipient_pool"], 20), dtype=np.uint8), 20),
        "relayers": _hex(rng.integers(0, 256, (cfg["relayer_callers"], 20), dtype=np.uint8), 20),
        "sender_cdf": zipf_cdf(cfg["sender_pool"], cfg["sender_zipf"]),
        "recipient_cdf": zipf_cdf(cfg["recipient_pool"], cfg["recipient_zipf"]),
        "router_cdf": zipf_cdf(cfg["routers"], 1.0),
    }


def _amounts_usd(u: np.ndarray) -> np.ndarray:
    knots = np.array(calibration()["amounts"]["knots"], dtype=float)
    return np.exp(np.interp(u, knots[:, 0], np.log(knots[:, 1])))


def _seconds_of_day(rng: np.random.Generator, n: int) -> np.ndarray:
    cfg = calibration()["activity"]
    minutes = np.arange(1440)
    intensity = 1 + cfg["hour_amplitude"] * np.cos(
        2 * np.pi * (minutes / 60 - cfg["hour_peak_utc"]) / 24
    )
    cdf = np.cumsum(intensity) / intensity.sum()
    minute = np.searchsorted(cdf, rng.random(n), side="right")
    return minute * 60 + rng.integers(0, 60, n)


def _blocks(domains: np.ndarray, times: np.ndarray) -> np.ndarray:
    cfg = calibration()["blocks"]
    out = np.zeros(len(times), dtype=np.int64)
    for name, spb in cfg["seconds_per_block"].items():
        mask = domains == chains.domain(name)
        out[mask] = cfg["reference_block"][name] + (
            (times[mask] - cfg["reference_time"]) / spb
        ).astype(np.int64)
    return out


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
    """
    cal = calibration()
    per_day = cal["per_day"] if per_day is None else _positive_int(per_day, "per_day")
    seed = cal["seed"] if seed is None else _positive_int(seed, "seed", allow_zero=True)
    day_ts = to_timestamp(day, name="day").floor("D")
    day_start = int(day_ts.value // 1_000_000_000)
    day_index = day_ts.date().toordinal() - _EPOCH_DAY
    rng = np.random.default_rng([seed, day_index + 1_000_000])

    weekend = day_ts.day_of_week >= 5
    wf = cal["activity"]["weekend_factor"]
    mean = per_day * (wf if weekend else 1.0) / ((5 + 2 * wf) / 7)
    n = int(rng.poisson(mean))

    # time and route
    burn_time = np.sort(day_start + _seconds_of_day(rng, n))
    r_src, r_dst, r_p = _routes()
    tilts, lat_median = _route_params()
    route = rng.choice(len(r_p), size=n, p=r_p)
    src, dst = r_src[route], r_dst[route]

    # amounts: a calibrated quantile function, tilted per route
    u = 1.0 - (1.0 - rng.random(n)) ** tilts[route]
    usd = np.minimum(_amounts_usd(u), cal["amounts"]["cap_usd"])
    amount_raw = np.maximum(np.round(usd * 1_000_000), 1).astype(np.int64)

    # latency and completion
    sigma = cal["latency_seconds"]["sigma"]
    latency = np.maximum(lat_median[route] * rng.lognormal(0.0, sigma, n), 5).astype(np.int64)
    pending = rng.random(n) < cal["pending_share"]
    mint_time = burn_time + latency

    # addresses
    pools = _pools(seed)
    acfg = cal["addresses"]
    via_router = rng.random(n) < acfg["router_share"]
    sender = np.where(
        via_router,
        pools["routers"][np.searchsorted(pools["router_cdf"], rng.random(n))],
        pools["senders"][np.searchsorted(pools["sender_cdf"], rng.random(n))],
    )
    recipient = pools["recipients"][np.searchsorted(pools["recipient_cdf"], rng.random(n))]
    self_send = ~via_router & (rng.random(n) < acfg["self_recipient_share"])
    recipient = np.where(self_send, sender, recipient)
    caller_set = rng.random(n) < acfg["destination_caller_share"]
    zero = "0x" + "00" * 20
    caller = np.where(
        caller_set, pools["relayers"][rng.integers(0, len(pools["relayers"]), n)], zero
    )

    # ids: nonces increase per source domain through the day
    order_in_src = pd.Series(src).groupby(src).cumcount().to_numpy()
    nonce = day_index * 1_000_000 + order_in_src
    chain_ids = {d: chains.chain_id(int(d)) for d in np.unique(np.concatenate([src, dst]))}
    src_cid = np.array([chain_ids[d] for d in src], dtype=object)
    dst_cid = np.array([chain_ids[d] for d in dst], dtype=object)
    transfer_id = [f"{a}_{b}_{c}" for a, b, c in zip(nonce, src_cid, dst_cid, strict=True)]

    contracts = cal["contracts"]
    usdc = {chains.domain(k): v for k, v in contracts["usdc"].items()}
    messenger = {chains.domain(k): v for k, v in contracts["token_messenger"].items()}
    hashes = _hex(rng.integers(0, 256, (2 * n, 32), dtype=np.uint8), 32)
    burn_hash, mint_hash = hashes[:n], hashes[n:]

    burn_ts = pd.to_datetime(burn_time, unit="s", utc=True)
    mint_ts = pd.to_datetime(np.where(pending, 0, mint_time), unit="s", utc=True)
    frame = pd.DataFrame(
        {
            "transfer_id": transfer_id,
            "source_domain": src.astype(np.int64),
            "destination_domain": dst.astype(np.int64),
            "amount_raw": amount_raw,
            "burn_timestamp": burn_ts,
            "mint_timestamp": mint_ts.where(~pending, pd.NaT),
            "burn_tx_hash": burn_hash,
            "mint_tx_hash": np.where(pending, None, mint_hash),
            "burn_block": _blocks(src, burn_time),
            "mint_block": np.where(pending, -1, _blocks(dst, mint_time)),
            "message_sender": sender,
            "mint_recipient": recipient,
            "burn_token": [usdc[d] for d in src],
            "destination_caller": caller,
            "destination_token_messenger": [messenger[d] for d in dst],
            "cctp_version": np.ones(n, dtype=np.int64),
            "nonce": nonce.astype(str),
        }
    )
    return _typed(schema.complete(frame, "ledger"))


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
    clock = pd.Timestamp.now(tz="UTC") if as_of is None else to_timestamp(as_of, name="as_of")
    first = (clock - pd.Timedelta(days=days)).floor("D")
    parts = [
        generate_day(day, per_day=per_day, seed=seed)
        for day in pd.date_range(first, clock.floor("D"), freq="D")
    ]
    ledger = pd.concat(parts, ignore_index=True)
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
                "seed": cal["seed"] if seed is None else seed,
            },
        ),
    )
