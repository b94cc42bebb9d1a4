"""``cctx-research sync``: CCTP events from JSON-RPC nodes into a dataset; ``--status`` shows it.

::

    cctx-research sync --chain base=$BASE_RPC --chain arbitrum=$ARB_RPC \\
        --from 2026-11-01 --out cctp/
    cctx-research sync --chain base --chain arbitrum --out cctp/   # URLs from CCTX_RPC_BASE ...
    cctx-research sync --chain base --out cctp/ --iris   # and ask Circle's attestation API
    cctx-research sync --chain solana=$SOL_RPC --chain base --from 2026-11-01 --out cctp/
    cctx-research sync --status cctp/

``--chain NAME`` alone takes the URL from ``CCTX_RPC_<NAME>`` (upper case),
which keeps a key in the URL out of the process list and the shell history.
A URL is never printed: the node is named by its host.
"""

from __future__ import annotations

import argparse


def add(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sync",
        help="pull CCTP events from JSON-RPC nodes into a dataset, and keep it current",
        description=(
            "Fetch the CCTP V1 and V2 events of EVM chains from their nodes (eth_getLogs with "
            "ranges that adapt to each provider) and Solana's CCTP transactions "
            "(getSignaturesForAddress, getTransaction), write them with the ledger of all "
            "chains, and continue from the checkpoint on every later run. --status shows what "
            "a dataset covers."
        ),
    )
    p.add_argument(
        "--chain", action="append", default=[], metavar="NAME[=URL]",
        help="a chain and its node's JSON-RPC URL (repeat); NAME alone reads CCTX_RPC_<NAME>",
    )  # fmt: skip
    p.add_argument("--from", dest="start", default=None, metavar="BLOCK|DATE",
                   help="first block (Solana: slot) or date (needed on a chain's first sync)")
    p.add_argument("--to", dest="end", default=None, metavar="BLOCK|DATE",
                   help="last block (Solana: slot) or date (default: the head)")
    p.add_argument("--out", default=None, metavar="DIR", help="the dataset directory")
    p.add_argument("--confirmations", type=int, default=None, metavar="N",
                   help="blocks behind the head fetched again next run (default 64)")  # fmt: skip
    p.add_argument("--max-workers", type=int, default=8, metavar="N",
                   help="requests in flight per chain (8)")  # fmt: skip
    p.add_argument(
        "--iris", nargs="?", const=True, default=None, metavar="URL",
        help="also ask Circle's attestation API (default its mainnet URL, or CCTX_IRIS_URL) for "
        "the attested nonces of unresolved V2 burns and snapshots of fees and the fast allowance",
    )  # fmt: skip
    p.add_argument("--status", default=None, metavar="DIR", help="show what DIR covers, and stop")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def _chains(values: list[str]) -> dict[str, str]:
    from ..config import rpc_url, rpc_variable

    chains: dict[str, str] = {}
    for value in values:
        name, sep, url = value.partition("=")
        name = name.strip()
        if not name:
            raise ValueError(f"--chain {value!r}: write NAME=URL, e.g. --chain base=https://...")
        if not sep:
            env = rpc_variable(name)
            url = rpc_url(name) or ""
            if not url:
                raise ValueError(f"--chain {name}: no URL given and {env} is not set; "
                                 f"pass --chain {name}=URL or set {env}")  # fmt: skip
        chains[name] = url
    return chains


def run(args: argparse.Namespace) -> int:
    from .. import nodes

    if args.status is not None:
        if args.chain or args.out:
            raise ValueError("--status DIR shows a dataset; it takes no --chain or --out")
        frame = nodes.status(args.status)
        print(frame.to_string(index=False))
        return 0
    if not args.chain:
        raise ValueError("pass at least one --chain NAME=URL (e.g. --chain base=https://...)")
    if not args.out:
        raise ValueError("pass --out DIR, the dataset directory (e.g. --out cctp/)")
    result = nodes.sync(
        args.out, _chains(args.chain), args.start, args.end, confirmations=args.confirmations,
        max_workers=args.max_workers, progress=not args.no_progress,
        iris=args.iris,
    )  # fmt: skip
    for chain in result.chains:
        print(chain.line())
    if result.iris is not None:
        print(result.iris.line())
    print(f"{result.transfers:,} transfers in {result.ledger or result.out}")
    return 0
