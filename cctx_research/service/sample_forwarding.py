"""The sample's forwarder: one user movement made of two CCTP transfers (synthetic).

A router or market maker that receives a mint on chain B and burns what
arrived onward to a third chain C shortly after turns one user movement into
two CCTP transfers. The sample plants one such actor, so that "counted once
per movement" (:func:`.analysis.movements.dedupe`) and the flow analyses have
a continuation to recover. Its figures are the calibration's
(``data/calibration.json``, ``actors.forward_*``), all assumed: no share of
forwarded CCTP transfers is published.

On each day's frame, drawn from its own random stream (no other draw of the
day changes):

- a share of the minted transfers to an EVM chain with V2 contracts (not the
  rebalancer's) is sent to the *forwarder* instead of its recipient: one
  contract address on every EVM chain (unlabelled, drawn from the seed), set
  as the transfer's destination caller, so it relays its own mint (the
  transfer is *wrapped*);
- the forwarder burns what arrived (less its own fee, ``forward_fee_bps``)
  on B, ``forward_delay_seconds`` after the mint, toward a third EVM chain
  with V2 contracts (drawn by the calibrated routes from B, never back to
  the first leg's source), for the first leg's recipient, by Fast Transfer
  where B offers it. Its burn is signed by the forwarder's keeper on B (one
  account per chain, so no keeper makes a round trip). A leg whose burn
  would fall on the next UTC day is not planted, so a day's transfers stay
  that day's.

:func:`plant` returns the day with the forwarding legs added (in burn-time
order) and, for :func:`.sample.truth`, which transfer each leg continues.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from .. import chains
from .sample_actors import pooled_relayers
from .sample_tables import (
    block_numbers,
    calibration,
    contract_addresses,
    hex_strings,
    route_params,
    route_table,
)

__all__ = ["forwarder", "plant"]


@lru_cache(maxsize=4)
def _cast(seed: int) -> Mapping[str, Any]:
    """The forwarder (one address on every EVM chain) and its keeper per chain (per seed)."""
    rng = np.random.default_rng([seed, 0xF0D])
    evm = sorted({int(d) for d in route_table()[0] if chains.address_format(int(d)) == "evm"})
    keepers = hex_strings(rng.integers(0, 256, (len(evm) + 1, 20), dtype=np.uint8), 20)
    return {
        "forwarder": str(keepers[0]),
        "keepers": dict(zip(evm, keepers[1:].tolist(), strict=True)),
    }


def forwarder(seed: int | None = None) -> str:
    """The address of the sample's forwarder (the same on every EVM chain)."""
    return str(_cast(calibration()["seed"] if seed is None else seed)["forwarder"])


def _onward(rng: np.random.Generator, first_src: np.ndarray, via: np.ndarray) -> np.ndarray:
    """The forwarding leg's route index from each ``via`` chain: the calibrated routes from
    it to EVM chains with V2 contracts, never back to ``first_src``; -1 where there is none."""
    r_src, r_dst, r_p = route_table()
    params = route_params()
    evm = np.array([chains.address_format(int(d)) == "evm" for d in r_dst])
    usable = params["v2"] & evm
    out = np.full(len(via), -1, dtype=np.int64)
    u = rng.random(len(via))
    for k, (a, b) in enumerate(zip(first_src, via, strict=True)):
        routes = np.flatnonzero(usable & (r_src == b) & (r_dst != a))
        if len(routes):
            cdf = np.cumsum(r_p[routes]) / r_p[routes].sum()
            out[k] = routes[min(int(np.searchsorted(cdf, u[k])), len(routes) - 1)]
    return out


def _first_legs(frame: pd.DataFrame, facts: Mapping[str, np.ndarray],
                rng: np.random.Generator, share: float) -> np.ndarray:  # fmt: skip
    """Which transfers of the day the forwarder receives (positions)."""
    dst = frame["destination_domain"].to_numpy()
    v2_evm = [d for d in np.unique(dst)
              if chains.address_format(int(d)) == "evm" and chains.info(int(d)).in_v2]  # fmt: skip
    to_v2_evm = np.isin(dst, v2_evm)
    minted = frame["mint_timestamp"].notna().to_numpy()
    own = np.asarray(facts["rebalancing"], dtype=bool)
    return np.flatnonzero(to_v2_evm & minted & ~own & (rng.random(len(frame)) < share))


def plant(
    frame: pd.DataFrame, facts: Mapping[str, np.ndarray], *, seed: int, day: int, day_end: int
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """``frame`` (one day, after :func:`.sample_actors.assign`) with the forwarder's legs.

    ``facts`` are the day's planted arrays (one value per row: ``end_user``,
    ``integrator``, ``rebalancing``, ``fast``, ``never_minted``, ``fee_raw``);
    they are returned for the new frame's rows, in its order, with
    ``continues``: the transfer id a forwarding leg continues (None elsewhere).
    ``day_end`` is the end of the day, Unix seconds.
    """
    cfg = calibration()["actors"]
    cast = _cast(seed)
    rng = np.random.default_rng([seed, day + 1_000_000, 0xF0D])
    first = _first_legs(frame, facts, rng, cfg["forward_share"])
    delay_cfg = cfg["forward_delay_seconds"]
    drawn = delay_cfg["median"] * rng.lognormal(0.0, delay_cfg["sigma"], len(first))
    delay = np.clip(drawn, 1, delay_cfg["max"]).astype(np.int64)  # after the mint, never at it
    mint_ns = frame["mint_timestamp"].to_numpy(dtype="datetime64[ns]").view(np.int64)
    mint_s = mint_ns[first] // 1_000_000_000
    route = _onward(rng, frame["source_domain"].to_numpy()[first],
                    frame["destination_domain"].to_numpy()[first])  # fmt: skip
    keep = (route >= 0) & (mint_s + delay < day_end)
    first, route, burn_s = first[keep], route[keep], (mint_s + delay)[keep]
    legs, leg_facts = _legs(frame, first, route, burn_s, rng, seed, cfg["forward_fee_bps"])

    out = frame.copy()
    at = out.columns.get_indexer(["mint_recipient", "destination_caller", "relayer"])
    out.iloc[first, at] = cast["forwarder"]
    out = pd.concat([out, legs], ignore_index=True)
    ids = frame["transfer_id"].to_numpy(dtype=object)
    continues = np.concatenate([np.full(len(frame), None, dtype=object), ids[first]])
    merged = {k: np.concatenate([np.asarray(v, dtype=object if k in _TEXT else None),
                                 leg_facts[k]]) for k, v in facts.items()}  # fmt: skip
    merged["continues"] = continues
    order = np.argsort(out["burn_timestamp"].to_numpy(), kind="stable")
    out = out.iloc[order].reset_index(drop=True)
    return out, {k: v[order] for k, v in merged.items()}


_TEXT = frozenset({"end_user", "integrator"})


def _legs(frame: pd.DataFrame, first: np.ndarray, route: np.ndarray, burn_s: np.ndarray,
          rng: np.random.Generator, seed: int,
          fee_bps: float) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:  # fmt: skip
    """The forwarding legs (ledger rows, V2) of the ``first`` legs, and their planted facts."""
    n = len(first)
    cast = _cast(seed)
    r_src, r_dst, _ = route_table()
    params = route_params()
    cal = calibration()
    src, dst = r_src[route], r_dst[route]
    fee_in = frame["fee_raw"].to_numpy(dtype="float64", na_value=0.0)[first].astype(np.int64)
    arrived = frame["amount_raw"].to_numpy(dtype=np.int64)[first] - fee_in
    amount = np.maximum(arrived - (-(-arrived * int(fee_bps) // 10_000)), 1)
    fast = params["can_fast"][route]
    fast_sigma = cal["v2"]["fast_latency_seconds"]["sigma"]
    fast_s = params["fast"][route] * rng.lognormal(0.0, fast_sigma, n)
    std_s = params["median"][route] * rng.lognormal(0.0, cal["latency_seconds"]["sigma"], n)
    mint_s = burn_s + np.where(fast, np.maximum(fast_s, 2), np.maximum(std_s, 5)).astype(np.int64)
    fee = np.where(fast, -(-amount * params["bps"][route].astype(np.int64) // 10_000), 0)
    max_fee = np.where(
        fast, -(-amount * (params["bps"][route] + cal["v2"]["max_fee_buffer_bps"]).astype(np.int64)
                // 10_000), 0)  # fmt: skip
    nonce = hex_strings(rng.integers(0, 256, (n, 32), dtype=np.uint8), 32)
    hashes = hex_strings(rng.integers(0, 256, (2 * n, 32), dtype=np.uint8), 32)
    relayers = pooled_relayers(seed, rng.random(n))
    contracts = contract_addresses()
    threshold = np.where(fast, 1000, 2000)

    legs = frame.iloc[first].copy().reset_index(drop=True)
    legs["transfer_id"] = [f"{x}_{chains.chain_id(int(a))}_{chains.chain_id(int(b))}"
                           for x, a, b in zip(nonce, src, dst, strict=True)]  # fmt: skip
    legs["source_domain"], legs["destination_domain"] = src, dst
    legs["amount_raw"] = amount
    legs["burn_timestamp"] = pd.to_datetime(burn_s, unit="s", utc=True)
    legs["mint_timestamp"] = pd.to_datetime(mint_s, unit="s", utc=True)
    legs["burn_tx_hash"], legs["mint_tx_hash"] = hashes[:n], hashes[n:]
    legs["burn_block"] = block_numbers(src, burn_s)
    legs["mint_block"] = block_numbers(dst, mint_s)
    legs["message_sender"] = cast["forwarder"]
    # the user's own address on C: the first leg's recipient, spelled alike on every EVM chain
    legs["mint_recipient"] = frame["mint_recipient"].to_numpy(dtype=object)[first]
    legs["burn_token"] = [contracts["usdc"][int(d)] for d in src]
    legs["destination_caller"] = "0x" + "00" * 20
    legs["destination_token_messenger"] = [contracts["v2"][int(d)] for d in dst]
    legs["cctp_version"] = 2
    legs["nonce"] = nonce
    legs["max_fee_raw"] = pd.array(max_fee, dtype=frame["max_fee_raw"].dtype)
    legs["fee_raw"] = pd.array(fee, dtype=frame["fee_raw"].dtype)
    for column in ("min_finality_threshold", "finality_threshold_executed"):
        legs[column] = pd.array(threshold, dtype=frame[column].dtype)
    legs["hook_data"] = "0x"
    legs["burn_tx_from"] = [cast["keepers"][int(d)] for d in src]
    legs["relayer"] = relayers
    facts = {
        "end_user": legs["burn_tx_from"].to_numpy(dtype=object),
        "integrator": np.full(n, cast["forwarder"], dtype=object),
        "rebalancing": np.zeros(n, dtype=bool),
        "fast": fast.astype(bool),
        "never_minted": np.zeros(n, dtype=bool),
        "fee_raw": fee.astype(np.int64),
    }
    return legs, facts
