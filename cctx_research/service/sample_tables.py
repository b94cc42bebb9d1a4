"""The sample's calibrated tables and draws: routes, address pools, contracts, amounts, times.

Everything here is read from the calibration table (``data/calibration.json``)
or drawn from a seed; cached tables are read-only (mapping proxies, arrays not
writeable), so no caller can change the sample for everyone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from .. import addressing, chains

__all__ = [
    "address_pools",
    "amounts_usd",
    "block_numbers",
    "calibration",
    "contract_addresses",
    "hex_strings",
    "route_params",
    "route_table",
    "seconds_of_day",
    "spell_addresses",
]


@lru_cache(maxsize=1)
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


def calibration() -> dict[str, Any]:
    """The calibration table (``data/calibration.json``): a fresh copy on every call.

    The text is read once; each caller gets its own parsed dict, which it
    may change without changing anyone else's sample.
    """
    return json.loads(_calibration_text())


def _frozen(value: Any) -> Any:
    """A cached table made read-only: dicts as mapping proxies, arrays not writeable.

    The tables below are cached for every caller in the process: one that
    could change them would change every later sample.
    """
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    return value


# --------------------------------------------------------------------------
# tables derived once from the calibration


@lru_cache(maxsize=1)
def route_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source domains, destination domains, probabilities) of every route."""
    cal = calibration()["routes"]
    counts = {k: float(v) for k, v in cal["counts"].items()}
    main_total = sum(counts.values())
    poly = cal["polygon_weights"]
    poly_total = sum(poly.values())
    share = cal["polygon_share"]
    non_evm = cal["non_evm"]
    other = non_evm["weights"]
    other_total = sum(other.values())
    evm = 1 - non_evm["share"]
    weights = {k: evm * (1 - share) * v / main_total for k, v in counts.items()}
    weights.update({k: evm * share * v / poly_total for k, v in poly.items()})
    weights.update({k: non_evm["share"] * v / other_total for k, v in other.items()})
    src, dst, p = [], [], []
    for route, w in sorted(weights.items()):
        a, b = route.split("->")
        src.append(chains.domain(a))
        dst.append(chains.domain(b))
        p.append(w)
    prob = np.array(p)
    return _frozen((np.array(src), np.array(dst), prob / prob.sum()))


@lru_cache(maxsize=1)
def route_params() -> Mapping[str, np.ndarray]:
    """Per route: amount tilt, latency medians (standard, fast), V2 and fee figures."""
    src, dst, _ = route_table()
    cal = calibration()
    tilt_cfg = cal["amounts"]["tilt"]
    lat = cal["latency_seconds"]
    v2 = cal["v2"]
    fast_lat = v2["fast_latency_seconds"]
    out: dict[str, list[Any]] = {k: [] for k in ("tilt", "median", "fast", "v2", "can_fast", "bps")}
    for s, d in zip(src, dst, strict=True):
        a, b = chains.info(int(s)), chains.info(int(d))
        eth = "ethereum" in (a.name, b.name)
        out["tilt"].append(tilt_cfg["touches_ethereum"] if eth else tilt_cfg["default"])
        out["median"].append(lat["routes"].get(f"{a.name}->{b.name}", lat["by_source"][a.name]))
        out["fast"].append(fast_lat["by_source"].get(a.name, fast_lat["default"]))
        both_v2 = a.in_v2 and b.in_v2
        out["v2"].append(both_v2)
        out["can_fast"].append(both_v2 and a.fast_source)
        out["bps"].append(v2["fast_fee_bps"].get(a.name, v2["fast_fee_bps_default"]))
    return _frozen(
        {k: np.array(v, dtype=bool if k in ("v2", "can_fast") else float) for k, v in out.items()}
    )


def hex_strings(raw: np.ndarray, width: int) -> np.ndarray:
    """Rows of ``width`` random bytes -> array of ``0x`` hex strings."""
    flat = raw.reshape(-1, width)
    return np.array(["0x" + row.tobytes().hex() for row in flat], dtype=object)


def _zipf_cdf(n: int, a: float) -> np.ndarray:
    w = 1.0 / np.arange(1, n + 1) ** a
    return np.cumsum(w) / w.sum()


@lru_cache(maxsize=4)
def address_pools(seed: int) -> Mapping[str, Any]:
    """Address pools, depending on the seed only (they recur across days).

    EVM pools are hex strings; Solana and Noble pools are raw bytes, spelled
    in the chain's format only for the addresses a day draws.
    """
    cfg = calibration()["addresses"]
    rng = np.random.default_rng([seed, 0xADD])
    def draw(size: int) -> np.ndarray:
        return hex_strings(rng.integers(0, 256, (size, 20), dtype=np.uint8), 20)

    pools: dict[str, Any] = {
        "routers": draw(cfg["routers"]),
        "senders": draw(cfg["sender_pool"]),
        "recipients": draw(cfg["recipient_pool"]),
        "relayers": draw(cfg["relayer_callers"]),
        "sender_cdf": _zipf_cdf(cfg["sender_pool"], cfg["sender_zipf"]),
        "recipient_cdf": _zipf_cdf(cfg["recipient_pool"], cfg["recipient_zipf"]),
        "router_cdf": _zipf_cdf(cfg["routers"], 1.0),
    }
    rng = np.random.default_rng([seed, 0xADD, 2])
    for name, sizes in cfg["non_evm_pools"].items():
        width = 20 if name == "noble" else 32
        pools[name] = {
            kind: rng.integers(0, 256, (size, width), dtype=np.uint8)
            for kind, size in sizes.items()
        }
        pools[name]["relayers"] = rng.integers(0, 256, (cfg["relayer_callers"], width), np.uint8)
        pools[name]["cdf"] = {
            "routers": _zipf_cdf(sizes["routers"], 1.0),
            "senders": _zipf_cdf(sizes["senders"], cfg["sender_zipf"]),
            "recipients": _zipf_cdf(sizes["recipients"], cfg["recipient_zipf"]),
        }
    return _frozen(pools)


def spell_addresses(raw_rows: np.ndarray, chain: str) -> np.ndarray:
    """Rows of raw address bytes -> the chain's own spelling (each distinct row once)."""
    uniques, inverse = np.unique(raw_rows, axis=0, return_inverse=True)
    spelled = np.array(
        [
            addressing.from_bytes32("0x" + row.tobytes().hex().rjust(64, "0"), chain)
            for row in uniques
        ],
        dtype=object,
    )
    return spelled[inverse.ravel()]


@lru_cache(maxsize=1)
def contract_addresses() -> Mapping[str, Mapping[int, str]]:
    """Burn token and token messengers (V1, V2) per domain, in each chain's format."""
    cfg = calibration()["contracts"]
    usdc = {**cfg["usdc"], **cfg["usdc_non_evm"]}
    v1 = {**cfg["token_messenger"], **cfg["token_messenger_non_evm"]}
    out: dict[str, dict[int, str]] = {"usdc": {}, "v1": {}, "v2": {}}
    for name in usdc:
        d = chains.domain(name)
        out["usdc"][d] = addressing.normalize_address(usdc[name], chain=name)
        out["v1"][d] = addressing.normalize_address(v1[name], chain=name)
        fmt = chains.address_format(name)
        v2 = cfg["token_messenger_v2"].get(name if fmt != "evm" else "evm")
        out["v2"][d] = addressing.normalize_address(v2, chain=name) if v2 else out["v1"][d]
    return _frozen(out)


def amounts_usd(u: np.ndarray) -> np.ndarray:
    knots = np.array(calibration()["amounts"]["knots"], dtype=float)
    return np.exp(np.interp(u, knots[:, 0], np.log(knots[:, 1])))


def seconds_of_day(rng: np.random.Generator, n: int) -> np.ndarray:
    cfg = calibration()["activity"]
    minutes = np.arange(1440)
    intensity = 1 + cfg["hour_amplitude"] * np.cos(
        2 * np.pi * (minutes / 60 - cfg["hour_peak_utc"]) / 24
    )
    cdf = np.cumsum(intensity) / intensity.sum()
    minute = np.searchsorted(cdf, rng.random(n), side="right")
    return minute * 60 + rng.integers(0, 60, n)


def block_numbers(domains: np.ndarray, times: np.ndarray) -> np.ndarray:
    cfg = calibration()["blocks"]
    out = np.zeros(len(times), dtype=np.int64)
    for name, spb in cfg["seconds_per_block"].items():
        mask = domains == chains.domain(name)
        out[mask] = cfg["reference_block"][name] + (
            (times[mask] - cfg["reference_time"]) / spb
        ).astype(np.int64)
    return out
