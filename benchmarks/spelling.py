"""Figure 14: spelling a loaded ledger's addresses in their chains' formats, against linking it.

Run::

    .venv/bin/python benchmarks/spelling.py            # 1M transfers
    .venv/bin/python benchmarks/spelling.py --quick    # 100k transfers

``load`` spells every address of the ledger once, at the end of its
assembly (:func:`cctx_research.addressing.as_chain_format`): the readers
keep the messages' hex, which linking compares. This figure is that last
step's cost on a linked ledger, as a ratio of the linking that precedes it
(``linking.link`` on the same burns and arrivals, timed in the same run).

The data: the V2 transfers of ``linking.py`` (eight EVM domains), of which
a share (``--solana``, 10 % by default) is moved to Solana, each with its
own 32-byte mint recipient and destination caller as the readers give them
(``0x`` + 64 hex), so the base58 path runs on as many distinct addresses
as there are such transfers (its worst case: no address repeats).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from linking import _hex, generate  # noqa: E402
from run import Row, machine, table  # noqa: E402

from cctx_research.addressing import as_chain_format  # noqa: E402
from cctx_research.ingest.ledger import linking  # noqa: E402

TARGET = 0.25


def _with_solana(ledger: pd.DataFrame, share: float, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = np.flatnonzero(rng.random(len(ledger)) < share)
    out = ledger.copy()
    domain = out["destination_domain"].to_numpy().copy()
    domain[rows] = 5
    out["destination_domain"] = domain
    for column in ("mint_recipient", "destination_caller"):
        values = out[column].to_numpy(dtype=object, na_value=None).copy()
        values[rows] = _hex(rng, len(rows), 32).to_numpy(dtype=object)
        out[column] = pd.array(values, dtype=ledger["mint_recipient"].dtype)
    return out


def _best(run, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k transfers instead of 1M")
    parser.add_argument("--transfers", type=int, default=None, help="how many transfers")
    parser.add_argument("--solana", type=float, default=0.1, help="share sent to Solana")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each (best)")
    args = parser.parse_args(argv)
    n = args.transfers or (100_000 if args.quick else 1_000_000)
    burns, arrivals = generate(n)
    link_s, (ledger, _) = _best(lambda: linking.link([burns], [arrivals]), args.repeat)
    ledger = _with_solana(ledger, args.solana)
    solana = int((ledger["destination_domain"] == 5).sum())
    spell_s, spelled = _best(lambda: as_chain_format(ledger), args.repeat)
    sample = spelled.loc[ledger["destination_domain"] == 5, "mint_recipient"]
    assert not sample.str.startswith("0x").any(), "Solana rows were not spelled in base58"
    row = Row(
        "14 spell a ledger's addresses vs link it",
        spell_s,
        link_s,
        "s",
        f"<= {TARGET:.2f}",
        spell_s / link_s <= TARGET,
        f"{len(ledger):,} ledger rows, {solana:,} to Solana (2 x {solana:,} distinct base58 "
        f"addresses); best of {args.repeat}",
    )
    print(table([row]))
    print(f"\n{machine()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
