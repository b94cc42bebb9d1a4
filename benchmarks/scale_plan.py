"""The whole-history benchmark's transfers: who sends what, where, when (no bytes yet).

:func:`plan` draws N CCTP transfers as numpy arrays, one row each, in burn
order. ``scale_data.py`` turns them into the logs Circle's contracts emit.
What is drawn, and from where:

- **versions**: 70% V2 (the share is a parameter), the rest V1;
- **chains**: eight EVM chains with each one's domain, chain id, USDC and
  CCTP contracts from :mod:`cctx_research.chains` (Circle's published
  addresses: V1 per chain, V2 one address on every chain); sources and
  destinations weighted like the published route counts (Base and Arbitrum
  busiest); Linea has no V1, so V1 routes leave it out;
- **times**: burns uniform from CCTP V2's launch (2025-03-11) to 2025-11-14,
  when Circle counted 5.3 M transfers; each chain's blocks from its
  (approximate) height at the start and its block time, a block's time
  from its number, so every log of a block has that block's time;
- **finality**: V2 fast (1000) where the source offers it, 40% of V2
  transfers, 2% of them executed standard (2000) when the fast allowance ran
  out; the rest standard; mints follow the attestation times Circle
  publishes (fast about 8 s, 20 s from Ethereum; standard 13-19 min from
  Ethereum and the rollups, 8 s from Avalanche, 75-120 s from Polygon on V1,
  6-32 h from Linea), plus a relayer's delay, and 2% claimed hours later;
- **amounts**: log-normal around USD 150 (the published median), heavy
  tailed (sigma 2.8), 20% rounded to whole USDC, capped at USD 1 M (V1's
  burn limit) and USD 10 M (V2);
- **fees**: fast transfers pay 1 basis point at mint (14 from Linea), within
  a max fee a little above it; standard ones pay nothing, and 30% of them
  still set a max fee;
- **never minted**: ``unminted`` of the transfers (3% by default) have no
  mint, and so do those whose mint would fall after the window's end;
- **identical transfers**: 1% of the V2 transfers without hook data repeat
  the content of the one before (an app paying a fixed amount to one
  recipient), so the content link's ambiguous path runs too; 4% of the
  V2 burns carry hook data (36 or 164 bytes).

Senders and recipients are indexes into pools (about one sender per 30
transfers, one recipient per 4, a few of each far busier than the rest);
``scale_data.random_bytes`` turns an index into its address.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from cctx_research import chains

__all__ = ["CHAINS", "END", "HOOK_LENGTHS", "START", "ChainSpec", "Plan", "block_time", "plan"]

START = 1_741_651_200
"""2025-03-11T00:00:00Z: CCTP V2's launch, the window's start (Unix seconds)."""
END = 1_763_078_400
"""2025-11-14T00:00:00Z: Circle's count of 5.3 M transfers, the window's end (excluded)."""

HOOK_LENGTHS = (0, 36, 164)
"""Hook data lengths of V2 burns, by class (0: none)."""

V2_SHARE = 0.70
FAST_SHARE = 0.40  # of V2 transfers whose source offers Fast Transfer
FAST_FALLBACK = 0.02  # fast transfers executed standard (the allowance ran out)
IDENTICAL = 0.01
HOOK_SHARE = 0.04
LATE_CLAIM = 0.02  # mints claimed hours after the attestation


@dataclass(frozen=True)
class ChainSpec:
    """One chain of the dataset: the registry's facts and the benchmark's cadence."""

    name: str
    weight: float
    """Share of the transfers it sends (and receives)."""
    block_ms: int
    first_block: int
    """Its block at :data:`START` (approximate, from public explorers)."""
    domain: int
    chain_id: int
    usdc: bytes
    messenger: tuple[bytes, bytes]
    """TokenMessenger of V1 (20 zero bytes where the chain has none) and V2."""
    transmitter: tuple[bytes, bytes]
    """MessageTransmitter of V1 (zeros where none) and V2."""


_CADENCE = (  # name, weight, block time (ms), block at START
    ("ethereum", 0.13, 12_000, 22_020_000),
    ("arbitrum", 0.22, 250, 314_500_000),
    ("base", 0.26, 2_000, 27_420_000),
    ("optimism", 0.12, 2_000, 133_000_000),
    ("avalanche", 0.07, 2_000, 58_400_000),
    ("polygon", 0.07, 2_000, 68_900_000),
    ("unichain", 0.07, 1_000, 11_100_000),
    ("linea", 0.06, 2_000, 17_000_000),
)


def _address(text: str | None) -> bytes:
    return bytes(20) if text is None else bytes.fromhex(text[2:])


def _spec(name: str, weight: float, block_ms: int, first_block: int) -> ChainSpec:
    domain = chains.domain(name)
    v1, v2 = chains.contracts(domain, 1), chains.contracts(domain, 2)
    assert v2 is not None, name
    return ChainSpec(
        name, weight, block_ms, first_block, domain, int(chains.chain_id(domain)),
        _address(chains.tokens(domain)["USDC"]),
        (_address(v1 and v1.token_messenger), _address(v2.token_messenger)),
        (_address(v1 and v1.message_transmitter), _address(v2.message_transmitter)),
    )  # fmt: skip


CHAINS: tuple[ChainSpec, ...] = tuple(_spec(*row) for row in _CADENCE)
"""The dataset's chains; a transfer's ``src`` and ``dst`` index this tuple."""

_BLOCK_MS = np.array([c.block_ms for c in CHAINS], dtype=np.int64)
_FIRST_BLOCK = np.array([c.first_block for c in CHAINS], dtype=np.int64)


@dataclass
class Plan:
    """N transfers, one row each, in burn order."""

    seed: int
    version: np.ndarray  # int8, 1 or 2
    src: np.ndarray  # int8, index into CHAINS
    dst: np.ndarray  # int8
    amount: np.ndarray  # int64, USDC base units (6 decimals)
    max_fee: np.ndarray  # int64 (V1: 0)
    fee: np.ndarray  # int64, taken at mint (V1: 0)
    min_finality: np.ndarray  # int16, 1000 or 2000 (V1: 0)
    executed: np.ndarray  # int16, the finality the attestation met (V1: 0)
    hook: np.ndarray  # int8, index into HOOK_LENGTHS
    sender: np.ndarray  # int64, index into the sender pool
    recipient: np.ndarray  # int64, index into the recipient pool
    relayer: np.ndarray  # int64, who called receiveMessage (index into a pool of 24)
    named_caller: np.ndarray  # bool: the burn names its relayer as destinationCaller
    nonce: np.ndarray  # int64, V1 nonce (per source domain), else 0
    burn_block: np.ndarray  # int64
    mint_block: np.ndarray  # int64 (-1 where never minted)
    minted: np.ndarray  # bool
    end: int = END  # the window's end (Unix seconds, excluded): END, or sooner (``days=``)

    @property
    def n(self) -> int:
        return len(self.version)

    def nbytes(self) -> int:
        return sum(getattr(self, f.name).nbytes for f in fields(self)
                   if f.name not in ("seed", "end"))  # fmt: skip


def block_of(chain: np.ndarray, t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The block of ``chain`` that holds time ``t``: the first whose time is >= ``t``.

    Chains faster than a block a second put several blocks in one second:
    one of them at random.
    """
    ms = _BLOCK_MS[chain]
    elapsed = (t - START) * 1000
    slow = _FIRST_BLOCK[chain] + (elapsed + ms - 1) // ms
    per_second = np.maximum(1000 // ms, 1)
    fast = _FIRST_BLOCK[chain] + elapsed // ms + rng.integers(0, per_second)
    return np.where(ms >= 1000, slow, fast)


def block_time(chain: np.ndarray | int, block: np.ndarray) -> np.ndarray:
    """The Unix time of ``block`` of ``chain``."""
    return START + (block - _FIRST_BLOCK[chain]) * _BLOCK_MS[chain] // 1000


def _routes(rng: np.random.Generator, version: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Source and destination of each transfer, by the chains' weights; V1 avoids V2-only chains."""
    n = len(version)
    weight = np.array([c.weight for c in CHAINS])
    v1_ok = np.array([c.messenger[0] != bytes(20) for c in CHAINS])
    src = np.empty(n, dtype=np.int8)
    dst = np.empty(n, dtype=np.int8)
    for v, allowed in ((1, v1_ok), (2, np.ones(len(CHAINS), dtype=bool))):
        rows = np.flatnonzero(version == v)
        w = np.where(allowed, weight, 0.0)
        src[rows] = rng.choice(len(CHAINS), size=len(rows), p=w / w.sum())
        # the destination by weight among the other chains: draw, then redraw any repeat
        d = rng.choice(len(CHAINS), size=len(rows), p=w / w.sum())
        while (same := d == src[rows]).any():
            d[same] = rng.choice(len(CHAINS), size=int(same.sum()), p=w / w.sum())
        dst[rows] = d
    return src, dst


def _amounts(rng: np.random.Generator, version: np.ndarray) -> np.ndarray:
    usd = np.exp(rng.normal(np.log(150.0), 2.8, len(version)))
    usd = np.where(rng.random(len(version)) < 0.2, np.maximum(np.round(usd), 1.0), usd)
    cap = np.where(version == 1, 1e6, 1e7)
    return np.maximum(np.minimum(usd, cap) * 1e6, 1).astype(np.int64)


def _finality(rng: np.random.Generator, p: Plan) -> None:
    """Fast or standard, the fee and max fee, the finality executed (V2 only)."""
    n = p.n
    v2 = p.version == 2
    fast_src = np.isin([c.domain for c in CHAINS], chains.fast_source_domains())
    fast = v2 & fast_src[p.src] & (rng.random(n) < FAST_SHARE)
    p.min_finality[:] = np.where(v2, np.where(fast, 1000, 2000), 0)
    fallback = fast & (rng.random(n) < FAST_FALLBACK)
    p.executed[:] = np.where(fast & ~fallback, 1000, p.min_finality)
    bps = np.where(p.src == _index("linea"), 14, 1)
    fee = -(-p.amount * bps // 10_000)  # rounded up, as Circle's minimum fee is
    standard_max = np.where(rng.random(n) < 0.3, p.amount // 20_000 + 1, 0)
    p.max_fee[:] = np.where(fast, fee + fee // 2 + 1, np.where(v2, standard_max, 0))
    p.fee[:] = np.where(fast & ~fallback, fee, 0)


def _index(name: str) -> int:
    return next(i for i, c in enumerate(CHAINS) if c.name == name)


def _delays(rng: np.random.Generator, p: Plan) -> np.ndarray:
    """Seconds from a burn's block to its mint: attestation, relaying, a late claim now and then."""
    n = p.n
    name = np.array([c.name for c in CHAINS])[p.src]
    rollup = np.isin(name, ["ethereum", "arbitrum", "base", "optimism", "unichain"])
    standard = np.select(
        [rollup, name == "avalanche", (name == "polygon") & (p.version == 1), name == "linea"],
        [rng.uniform(13 * 60, 19 * 60, n), np.full(n, 8.0), rng.uniform(75, 120, n),
         rng.uniform(6 * 3600, 32 * 3600, n)],
        default=8.0,
    )  # fmt: skip
    fast = np.where(name == "ethereum", 20.0, 8.0)
    attest = np.where(p.executed == 1000, fast, standard)
    relay = rng.exponential(12.0, n) + 2
    late = np.where(rng.random(n) < LATE_CLAIM, rng.exponential(6 * 3600, n), 0.0)
    return (attest + relay + late).astype(np.int64)


def _identical(rng: np.random.Generator, p: Plan) -> None:
    """1% of the V2 transfers without hook data repeat the content of the one before."""
    rows = np.flatnonzero((p.version == 2) & (p.hook == 0))
    copy = rows[1:][rng.random(len(rows) - 1) < IDENTICAL] if len(rows) > 1 else rows[:0]
    before = rows[np.searchsorted(rows, copy) - 1]
    for name in ("src", "dst", "sender", "recipient", "amount", "max_fee", "fee", "min_finality",
                 "executed"):
        getattr(p, name)[copy] = getattr(p, name)[before]


def _nonces(p: Plan) -> None:
    """V1 nonces: one counter per source domain, in burn order, from a realistic height."""
    rows = np.flatnonzero(p.version == 1)
    src = p.src[rows]
    order = np.argsort(src, kind="stable")
    counts = np.bincount(src, minlength=len(CHAINS))
    first = np.repeat(np.cumsum(counts) - counts, counts)
    rank = np.empty(len(rows), dtype=np.int64)
    rank[order] = np.arange(len(rows)) - first
    start = 150_000 + 37_000 * np.arange(len(CHAINS), dtype=np.int64)
    p.nonce[rows] = start[src] + rank


def _times(rng: np.random.Generator, p: Plan, unminted: float) -> None:
    burn_time = np.sort(rng.integers(START, p.end - 60, p.n))
    p.burn_block[:] = block_of(p.src.astype(np.int64), burn_time, rng)
    mint_time = block_time(p.src.astype(np.int64), p.burn_block) + _delays(rng, p)
    mint_block = block_of(p.dst.astype(np.int64), mint_time, rng)
    in_window = block_time(p.dst.astype(np.int64), mint_block) < p.end
    p.minted[:] = in_window & (rng.random(p.n) >= unminted)
    p.mint_block[:] = np.where(p.minted, mint_block, -1)


def plan(n: int, *, seed: int, unminted: float = 0.03, v2_share: float = V2_SHARE,
         days: int | None = None) -> Plan:  # fmt: skip
    """N transfers drawn as the module says, reproducibly from ``seed``.

    ``days``: over the window's first ``days`` days rather than all of it (a dataset
    is a file a day and chain: the tests' 20k transfers in 240 files, not 1,973)."""
    if n < 1:
        raise ValueError(f"n must be a positive number of transfers, got {n}")
    whole = (END - START) // 86_400
    if days is not None and (isinstance(days, bool) or not isinstance(days, int)
                             or not 1 <= days <= whole):  # fmt: skip
        raise ValueError(f"days must be a whole number of days from 1 to {whole}, got {days!r}")
    rng = np.random.default_rng(seed)
    version = np.where(rng.random(n) < v2_share, 2, 1).astype(np.int8)
    src, dst = _routes(rng, version)
    hook = np.where((version == 2) & (rng.random(n) < HOOK_SHARE),
                    rng.integers(1, len(HOOK_LENGTHS), n), 0).astype(np.int8)  # fmt: skip
    senders, recipients = max(n // 30, 16), max(n // 4, 16)
    p = Plan(
        seed=seed, version=version, src=src, dst=dst, amount=_amounts(rng, version),
        max_fee=np.zeros(n, np.int64), fee=np.zeros(n, np.int64),
        min_finality=np.zeros(n, np.int16), executed=np.zeros(n, np.int16), hook=hook,
        sender=(senders * rng.random(n) ** 3).astype(np.int64),
        recipient=(recipients * rng.random(n) ** 2).astype(np.int64),
        relayer=(24 * rng.random(n) ** 2).astype(np.int64),
        named_caller=rng.random(n) < 0.1, nonce=np.zeros(n, np.int64),
        burn_block=np.zeros(n, np.int64), mint_block=np.zeros(n, np.int64),
        minted=np.zeros(n, bool), end=END if days is None else START + days * 86_400,
    )  # fmt: skip
    _finality(rng, p)
    _identical(rng, p)
    _nonces(p)
    _times(rng, p, unminted)
    return p
