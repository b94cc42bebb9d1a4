"""``cctx-research fetch``: one frame from a service, written with its provenance."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from .options import add_service_options, service_options

if TYPE_CHECKING:  # the command line parses first and imports heavy things when it runs
    from pathlib import Path

    import pandas as pd

_FETCH_WHAT = ("mints", "received", "volume", "volume-history", "top-senders", "transaction")
_NOUNS = {  # what one row of each frame is, for the line fetch prints
    "mints": "mint",
    "received": "received transaction",
    "volume": "volume row",
    "volume-history": "volume bucket",
    "top-senders": "top sender",
    "transaction": "transaction",
}


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def add(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "fetch",
        allow_abbrev=False,  # "--api-key KEY" must not be read as --api-key-file
        help="fetch one of the client's frames and write it to a file",
        description=(
            "Fetch a frame and write it as Parquet, CSV or JSON (chosen by the --out "
            "extension); prints one line saying what it wrote where. Uses "
            "CCTX_API_KEY/CCTX_PROJECT_ID/CCTX_BASE_URL when set, else the embedded "
            "synthetic sample."
        ),
    )
    p.add_argument("what", choices=_FETCH_WHAT, help="which frame")
    p.add_argument("--start", default=None, metavar="DATE", help="window start (UTC)")
    p.add_argument("--end", default=None, metavar="DATE", help="window end, excluded (UTC)")
    p.add_argument(
        "--source", nargs="+", default=None, metavar="CHAIN", help="mints: source chains"
    )
    p.add_argument(
        "--destination", nargs="+", default=None, metavar="CHAIN", help="mints: destination chains"
    )
    p.add_argument(
        "--address",
        default=None,
        help="received: the recipient address, in its chain's own format "
        "(0x hex, Solana base58, noble1...)",
    )
    p.add_argument("--tx-hash", default=None, help="transaction: the transaction hash")
    p.add_argument("--freq", default="1D", help="volume-history: bucket length (1D)")
    p.add_argument("--limit", type=int, default=100, help="top-senders: how many (100)")
    p.add_argument("--sample", action="store_true", help="use the embedded synthetic sample")
    p.add_argument("--as-of", default=None, metavar="DATE", help="pin the sample's clock")
    p.add_argument("--no-cache", action="store_true", help="do not use the on-disk cache")
    p.add_argument("--offline", action="store_true", help="answer from the cache alone")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE|DIR/",
        help="output .parquet, .csv or .json; or DIR/ for a partitioned dataset (mints)",
    )
    add_service_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..connection import connect
    from ..provenance import is_synthetic

    out = Path(args.out)
    to_dataset = args.out.endswith(("/", os.sep)) or out.is_dir()
    _check(args, out, to_dataset)
    service = service_options(args)
    with connect(
        sample=True if args.sample else (False if service else None),
        as_of=args.as_of,
        **service,
        cache=not args.no_cache,
        offline=args.offline,
        progress=False if args.no_progress else None,
    ) as client:
        frame = _fetch(client, args)
    where = _write(frame, out, to_dataset)
    synthetic = ", synthetic data" if is_synthetic(frame) else ""
    sys.stdout.write(f"wrote {_count(len(frame), _NOUNS[args.what])} to {where}{synthetic}\n")
    return 0


def _check(args: argparse.Namespace, out: Path, to_dataset: bool) -> None:
    """Refuse, before connecting, an output the frame cannot go to or a missing option."""
    if to_dataset and args.what != "mints":
        raise ValueError(
            f"--out {args.out!r} is a directory: a partitioned dataset holds mints; "
            "for this frame pass a .parquet, .csv or .json file"
        )
    if not to_dataset and out.suffix.lower() not in (".parquet", ".csv", ".json"):
        raise ValueError(
            f"--out must end in .parquet, .csv or .json, or be a directory (DIR/) for a "
            f"partitioned dataset, got {args.out!r}"
        )
    needs = {"received": "address", "transaction": "tx_hash"}
    if args.what in needs and not getattr(args, needs[args.what]):
        raise ValueError(f"fetch {args.what} needs --{needs[args.what].replace('_', '-')}")
    if args.what == "volume-history" and (args.start is None or args.end is None):
        raise ValueError("fetch volume-history needs --start and --end")


def _fetch(client: Any, args: argparse.Namespace) -> pd.DataFrame:
    """The frame ``args.what`` names, from the client."""
    if args.what == "mints":
        return client.mints(args.start, args.end, source=args.source, destination=args.destination)
    if args.what == "received":
        return client.received(args.address, args.start, args.end)
    if args.what == "volume-history":
        return client.volume_history(args.start, args.end, freq=args.freq)
    if args.what == "top-senders":
        return client.top_senders(args.start, args.end, limit=args.limit)
    import pandas as pd

    from ..client.parse import coerce

    # one-row answers: a typed one-row frame
    if args.what == "volume":
        row, kind = client.volume(args.start, args.end), "volume"
    else:
        row, kind = client.transaction(args.tx_hash), "transaction"
    frame = coerce(pd.DataFrame([row.to_dict()]), kind)
    frame.attrs = dict(row.attrs)
    return frame


def _write(frame: pd.DataFrame, out: Path, to_dataset: bool) -> str:
    """Write the frame to a file or a partitioned dataset; where it went, for the line printed."""
    if to_dataset:
        from .. import datasets

        written = datasets.write(frame, out)
        return (
            f"the dataset {out}{os.sep}: {_count(len(written.days), 'day')}, "
            f"{_count(written.replaced_rows, 'row')} replaced"
        )
    from ..export import sidecar_path, write

    write(frame, out)
    return f"{out} (provenance in " + (
        "the file's metadata)" if out.suffix.lower() == ".parquet" else f"{sidecar_path(out).name})"
    )
