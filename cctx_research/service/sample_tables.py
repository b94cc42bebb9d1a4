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
import pandas as pd

from .. import addressing, chains

__all__ = [
    "address_pools",
    "addresses",
    "amounts_usd",
    "block_numbers",
    "calibration",
    "contract_addresses",
    "hex_strings",
    "one_way",
    "route_params",
    "route_table",
    "router_addresses",
    "seconds_of_day",
    "spell_addresses",
    "transfer_ids",
    "tx_hashes",
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


def _zipf_cdf(n: int, a: float, offset: float = 0.0) -> np.ndarray:
    """Cumulative Zipf-Mandelbrot weights ``1 / (rank + offset) ** a`` of ranks 1..n."""
    w = 1.0 / (np.arange(1, n + 1) + offset) ** a
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
        "sender_cdf": _zipf_cdf(cfg["sender_pool"], cfg["sender_zipf"], cfg["sender_offset"]),
        "recipient_cdf": _zipf_cdf(cfg["recipient_pool"], cfg["recipient_zipf"]),
        "router_cdf": _zipf_cdf(cfg["routers"], cfg["router_zipf"]),
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
            "routers": _zipf_cdf(sizes["routers"], cfg["router_zipf"]),
            "senders": _zipf_cdf(sizes["senders"], cfg["sender_zipf"], cfg["sender_offset"]),
            "recipients": _zipf_cdf(sizes["recipients"], cfg["recipient_zipf"]),
        }
    return _frozen(pools)


def one_way(index: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Pool indexes moved to the neighbour (``index ^ 1``) that crosses ``src`` -> ``dst``.

    Each pair of chains is crossed one way only by a given pool address: of
    two neighbours in a pool (``2k``, ``2k + 1``), one goes A -> B, the other
    B -> A, whichever way each pair of chains is assigned. So an ordinary
    user never brings money back over the way it came, and the sample's
    round trips are only those it plants (the calibration's ``actors``
    notes). A pool of even size keeps every index in it.
    """
    lo, hi = np.minimum(src, dst).astype(np.int64), np.maximum(src, dst).astype(np.int64)
    want = (lo * 7 + hi * 3 + (src < dst)) & 1
    return (np.asarray(index, dtype=np.int64) & ~1) | want


@lru_cache(maxsize=4)
def router_addresses(seed: int) -> frozenset[str]:
    """Every router of the pools (EVM, Solana, Noble), as each chain spells it."""
    pools = address_pools(seed)
    spelled = set(pools["routers"].tolist())
    for name in calibration()["addresses"]["non_evm_pools"]:
        spelled |= set(spell_addresses(pools[name]["routers"], name).tolist())
    return frozenset(spelled)


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


def transfer_ids(
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


def addresses(
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
    # an ordinary user crosses each pair of chains one way only (see :func:`.one_way`)
    own = one_way(np.searchsorted(pools["sender_cdf"], u_sender), src, dst)
    sender = np.where(
        via_router,
        pools["routers"][np.searchsorted(pools["router_cdf"], u_router)],
        pools["senders"][own],
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


def tx_hashes(
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
