"""Who moves the sample's money: relayers, integrators and a rebalancer (synthetic).

No share of CCTP relayers or integrators is published (Circle publishes
none; the open trackers give volumes per chain and route, not per actor), so
every figure here is the sample's own choice, in ``data/calibration.json``
under ``actors``, and the sample stays marked synthetic. What is real is the
cast: the integrators and the rebalancer are the labelled contracts of
:mod:`cctx_research.labels` (Mayan, Across, Hyperlane's CCTP routes and
rebalancer), so the actor analyses name them as they would on real data.

On each day's frame, drawn from its own random stream (the other columns do
not change):

- *integrators*: a share of the transfers sent through a router (an
  aggregator) is sent instead by a labelled integrator contract of the
  source chain, where the chain has one;
- *rebalancer*: a share of the EVM-to-EVM transfers is the Hyperlane
  rebalancer (one address on every chain) moving its own inventory: it is
  both the depositor and the recipient (``rebalancing``'s ``same_address``),
  with no hook. It is the only rebalancing the sample plants: ordinary
  users cross each pair of chains one way only (:func:`.sample_tables.one_way`),
  so they make no round trip;
- *relayers*: every minted transfer gets its ``relayer`` (``MessageReceived``'s
  caller): the ``destination_caller`` when one is set (only it may relay),
  else the recipient relaying itself for a share, else one of a few
  relayers with Zipf-like shares (a handful of operators relay most
  messages);
- *end users*: every burn gets its signer, ``burn_tx_from`` (what receipts
  and cryo give): the depositor when it sends for itself; behind a router or
  an integrator's contract, the user it burns for (one of the sample's
  senders, drawn evenly); the rebalancer's operator account for its
  own moves. So the actor analyses can follow the user behind a contract.

:func:`assign` also returns what it planted (the depositing contract, the
end user, the rebalancer's rows): :func:`.sample.truth` keeps it apart from
the ledger.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from .. import chains
from .. import labels as labels_
from .sample_tables import address_pools, calibration, hex_strings, one_way, spell_addresses

__all__ = ["assign", "pooled_relayers"]

_ZERO = "0x" + "00" * 20


@lru_cache(maxsize=4)
def _cast(seed: int) -> Mapping[str, Any]:
    """The integrators per source chain, the rebalancer, and the relayer pools (per seed)."""
    cfg = calibration()["actors"]
    table = labels_.bundled()
    integrators = table[(table["kind"] == "integrator") & table["chain"].notna()]
    per_chain = {
        str(chain): np.array(sorted(set(rows["address"])), dtype=object)
        for chain, rows in integrators.groupby("chain")
    }
    rebalancer = table[table["label"] == cfg["rebalancer_label"]]["address"]
    rng = np.random.default_rng([seed, 0xAC7])
    n = cfg["relayers"]
    weights = 1.0 / np.arange(1, n + 1) ** cfg["relayer_zipf"]
    return {
        "integrators": per_chain,
        "rebalancer": str(rebalancer.iloc[0]),
        "evm_relayers": hex_strings(rng.integers(0, 256, (n, 20), dtype=np.uint8), 20),
        "raw_relayers": {w: rng.integers(0, 256, (n, w), dtype=np.uint8) for w in (20, 32)},
        "relayer_cdf": np.cumsum(weights) / weights.sum(),
        "operator": str(hex_strings(rng.integers(0, 256, (1, 20), dtype=np.uint8), 20)[0]),
    }


def assign(
    frame: pd.DataFrame, *, routers: frozenset[str], seed: int, day: int
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """``frame`` (one day of the sample) with its integrators, rebalancer and relayers, and
    what was planted: per row the depositing contract (``integrator``: a labelled
    integrator's, a router's or the rebalancer's; None for a user burning for itself), the
    ``end_user`` (who signed the burn) and whether the row is the rebalancer's
    (``rebalancing``).

    ``routers`` are the router addresses of the sample's pools, on every
    chain (the transfers an integrator may have sent, and whose burns the
    users behind them sign).
    """
    cfg = calibration()["actors"]
    cast = _cast(seed)
    rng = np.random.default_rng([seed, day + 1_000_000, 0xAC7])
    n = len(frame)
    src = frame["source_domain"].to_numpy()
    dst = frame["destination_domain"].to_numpy()
    domains = np.unique(np.concatenate([src, dst]))
    names = {d: chains.chain_name(int(d)) for d in domains}
    evm = {d: chains.address_format(int(d)) == "evm" for d in domains}
    evm_domains = [d for d in domains if evm[d]]
    src_evm, dst_evm = np.isin(src, evm_domains), np.isin(dst, evm_domains)
    sender = frame["message_sender"].astype(object).to_numpy(copy=True)
    recipient = frame["mint_recipient"].astype(object).to_numpy(copy=True)

    routed = pd.Series(sender).isin(routers).to_numpy(bool)
    take = routed & (rng.random(n) < cfg["integrator_share"])
    pick = rng.random(n)
    for d in domains:
        contracts = cast["integrators"].get(names[d])
        if contracts is None:
            continue
        rows = np.flatnonzero(take & (src == d))
        sender[rows] = contracts[(pick[rows] * len(contracts)).astype(int)]

    moving = src_evm & dst_evm & ~take & (rng.random(n) < cfg["rebalance_share"])
    sender[moving] = cast["rebalancer"]
    recipient[moving] = cast["rebalancer"]

    minted = frame["mint_timestamp"].notna().to_numpy()
    caller = frame["destination_caller"].astype(object).to_numpy()
    zeros = {_ZERO} | {_zero(names[d]) for d in names if not evm[d]}
    named = (pd.Series(caller).notna() & ~pd.Series(caller).isin(zeros)).to_numpy(bool)
    self_relay = ~named & dst_evm & (rng.random(n) < cfg["self_relay_share"])
    which = np.searchsorted(cast["relayer_cdf"], rng.random(n))
    relayer = np.full(n, None, dtype=object)
    relayer[named] = caller[named]
    relayer[self_relay] = recipient[self_relay]
    pooled = ~named & ~self_relay
    relayer[pooled & dst_evm] = cast["evm_relayers"][which[pooled & dst_evm]]
    for d in np.unique(dst[pooled & ~dst_evm]):
        rows = np.flatnonzero(pooled & (dst == d))
        width = 20 if names[d] == "noble" else 32
        relayer[rows] = spell_addresses(cast["raw_relayers"][width][which[rows]], names[d])
    relayer[~minted] = None

    signer = _signers(sender, src, dst, routed | take | moving, rng, seed)
    signer[moving] = cast["operator"]

    out = frame.copy()
    # the rebalancer moves its own inventory: no hook for a receiver to act on
    out["hook_data"] = out["hook_data"].mask(moving & out["hook_data"].notna().to_numpy(), "0x")
    out["burn_tx_from"] = pd.array(signer, dtype=frame["message_sender"].dtype)
    out["message_sender"] = pd.array(sender, dtype=frame["message_sender"].dtype)
    out["mint_recipient"] = pd.array(recipient, dtype=frame["mint_recipient"].dtype)
    out["relayer"] = pd.array(relayer, dtype=frame["relayer"].dtype)
    planted = {
        "integrator": np.where(routed | take | moving, sender, None).astype(object),
        "end_user": signer.astype(object),
        "rebalancing": moving,
    }
    return out, planted


def pooled_relayers(seed: int, u: np.ndarray) -> np.ndarray:
    """The pooled EVM relayers at uniform draws ``u`` (the few operators' Zipf-like shares)."""
    cast = _cast(seed)
    return cast["evm_relayers"][np.searchsorted(cast["relayer_cdf"], u)]


def _signers(sender: np.ndarray, src: np.ndarray, dst: np.ndarray, contract: np.ndarray,
             rng: np.random.Generator, seed: int) -> np.ndarray:  # fmt: skip
    """Who signed each burn: the depositor, or for a ``contract`` depositor one of the
    sample's senders on the source chain, drawn evenly (a contract's users are many and
    small, not the heavy senders who send for themselves), each crossing a pair of EVM
    chains one way only (:func:`.sample_tables.one_way`)."""
    pools = address_pools(seed)
    signer = sender.copy()
    u = rng.random(len(sender))
    for d in np.unique(src[contract]):
        rows = np.flatnonzero(contract & (src == d))
        name = chains.chain_name(int(d))
        if chains.address_format(int(d)) == "evm":
            drawn = (u[rows] * len(pools["senders"])).astype(int)
            signer[rows] = pools["senders"][one_way(drawn, src[rows], dst[rows])]
        elif name in pools:
            pool = pools[name]
            raw = pool["senders"][(u[rows] * len(pool["senders"])).astype(int)]
            signer[rows] = spell_addresses(raw, name)
    return signer


def _zero(chain: str) -> str:
    """The all-zero address as ``chain`` spells it (no destination caller: anyone may relay)."""
    width = 20 if chain == "noble" else 32
    return str(spell_addresses(np.zeros((1, width), dtype=np.uint8), chain)[0])
