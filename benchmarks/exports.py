"""Figure 16: a large Dune export loaded, against reading the same CSV with pandas.

Run::

    .venv/bin/python benchmarks/exports.py              # 1M rows (about 500 MB of CSV)
    .venv/bin/python benchmarks/exports.py --rows 250k
    .venv/bin/python benchmarks/exports.py --quick      # 20k rows

Dune's ``bridges_evms.flows`` spell is the one export that holds the whole
history as paired transfers (CCTP had carried 5.3 M by November 2025), so it is
the large file a researcher brings. The rows are the three rows of
``tests/fixtures/dune/bridges_evms_flows.csv`` (two CCTP transfers and a row of
another bridge, which the reader leaves out) repeated, each with its own
transaction hashes, transfer id, block numbers and times (a row every 20
seconds, minted 1 to 16 minutes later), written as Dune writes them. Each step
runs in a fresh process; its time (after its imports) and peak RSS (``ru_maxrss``, imports
included) are its own:

- the baseline: ``pandas.read_csv`` of the file, the read a researcher writes
  (types inferred, no checks);
- ``cctx.load`` of the file: read as text, every value checked, the rows
  made transfers and linked, the ledger's addresses spelled.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import Row, machine, table  # noqa: E402

TEMPLATE = HERE.parent / "tests" / "fixtures" / "dune" / "bridges_evms_flows.csv"
QUICK = 20_000

_CHILD = """
import json, resource, sys, time, warnings
import pandas as pd
what, path = sys.argv[1], sys.argv[2]
if what == "load":  # the imports before the clock, as for pandas
    import cctx_research as cctx
    from cctx_research.ingest import loader
began = time.perf_counter()
if what == "load":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the synthetic rows' coverage notes
        rows = len(cctx.load(path))
else:
    rows = len(pd.read_csv(path))
seconds = time.perf_counter() - began
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": seconds, "rows": rows, "peak": peak}))
"""


def generate(n: int, out: Path) -> None:
    """``n`` rows of the template, each a transfer of its own (see the module note)."""
    template = pd.read_csv(TEMPLATE, dtype=str, keep_default_na=False)
    rows = template.iloc[np.arange(n) % len(template)].reset_index(drop=True)
    i = np.arange(n)
    burned = pd.Timestamp("2024-01-01") + pd.to_timedelta(i * 20, unit="s")
    minted = burned + pd.to_timedelta(60 + i % 900, unit="s")
    for side, when in (("deposit", burned), ("withdrawal", minted)):
        rows[f"{side}_block_time"] = when.strftime("%Y-%m-%d %H:%M:%S.000 UTC")
        rows[f"{side}_block_date"] = when.strftime("%Y-%m-%d")
        rows[f"{side}_block_number"] = (rows[f"{side}_block_number"].astype(np.int64) + i
                                        ).astype(str)  # fmt: skip
    rows["deposit_tx_hash"] = [f"0x{k + 1:064x}" for k in i]
    rows["withdrawal_tx_hash"] = [f"0x{k + 1 + 2 * n:064x}" for k in i]
    rows["bridge_transfer_id"] = (i + 1).astype(str)
    rows.to_csv(out, index=False)


def _child(what: str, path: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, what, str(path)], capture_output=True,
                          text=True, check=False)  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"{what} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _count(text: str) -> int:
    text = text.lower().replace(",", "").replace("_", "")
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1M", help="rows of the export (1M, 250k, 20000)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK:,} rows")
    args = parser.parse_args(argv)
    try:
        n = QUICK if args.quick else _count(args.rows)
    except ValueError:
        parser.error(f"--rows must be a count such as 1M, 250k or 20000, got {args.rows!r}")
    if n < 3:
        parser.error(f"--rows must be at least 3 (the template's rows), got {n}")
    with tempfile.TemporaryDirectory(prefix="cctx-exports-") as tmp:
        path = Path(tmp) / "flows.csv"
        generate(n, path)
        size = path.stat().st_size
        read = _child("read", path)
        loaded = _child("load", path)
    tag = f"{n:,} rows"
    gib = 2**30
    rows = [
        Row(f"16 Dune flows, {tag}: load vs pandas.read_csv, time", loaded["seconds"],
            read["seconds"], "s", "-", None,
            f"{size / 1e6:,.0f} MB of CSV; {loaded['rows']:,} transfers loaded"),
        Row(f"16 Dune flows, {tag}: load vs pandas.read_csv, peak RSS", loaded["peak"] / gib,
            read["peak"] / gib, "GiB", "-", None,
            f"{loaded['peak'] / n:,.0f} bytes a row at the peak, imports included"),
    ]  # fmt: skip
    print(machine())
    print()
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
