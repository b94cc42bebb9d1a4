"""The ``cctx-research`` command.

Each subcommand is a parser block (``_add_<name>(subparsers)``, registered
in :data:`_SUBCOMMANDS`) and a function ``_run_<name>(args) -> int``. To add
one, write both and append the block to :data:`_SUBCOMMANDS`.

Errors the user can fix (bad options, a bad data file, a busy port) end the
command with a one-line message on stderr and a non-zero exit status, never a
traceback.

Examples
--------
::

    cctx-research serve                       # the synthetic sample, demo credentials
    cctx-research serve --data ledger.parquet --port 8080 --api-key KEY
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

from . import config
from ._version import __version__
from .errors import CctxError

__all__ = ["main"]

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------
# serve


def _add_serve(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="run the local service (the synthetic sample, or your data)",
        description=(
            "Serve the interface's five operations at "
            "http://HOST:PORT/rest/<project-id>/<operation>. Without --data it serves "
            "the bundled synthetic sample."
        ),
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (8000)")
    p.add_argument(
        "--api-key",
        default=None,
        help="the key clients must send as x-api-key (default: CCTX_API_KEY, else the demo key)",
    )
    p.add_argument(
        "--project-id",
        default=None,
        help="the project path segment (default: CCTX_PROJECT_ID, else the demo project id)",
    )
    p.add_argument(
        "--data",
        default=None,
        metavar="PATH",
        help="Parquet or CSV file of kind 'ledger' or 'transfers' to serve instead of the sample",
    )
    p.add_argument(
        "--as-of",
        default=None,
        metavar="DATE",
        help="pin the service's clock (e.g. 2024-07-01T12:00Z); default: now, live",
    )
    p.add_argument(
        "--per-day",
        type=int,
        default=None,
        metavar="N",
        help="sample only: mean transfers a day (default 2,800; 33334 gives about 1M)",
    )
    p.add_argument("--threads", type=int, default=8, help="worker threads (8)")
    p.set_defaults(func=_run_serve)


def _run_serve(args: argparse.Namespace) -> int:
    from .service.app import make_app
    from .service.server import serve
    from .service.store import Store
    from .times import to_timestamp

    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be 0..65535, got {args.port}")
    if args.threads < 1:
        raise ValueError(f"--threads must be at least 1, got {args.threads}")
    settings = config.Settings.from_env()
    api_key = args.api_key or (settings.api_key.get() if settings.api_key else None)
    if not api_key:
        api_key = config.DEMO_API_KEY
        logger.info("no --api-key or CCTX_API_KEY: using the demo API key (not a secret)")
    project_id = args.project_id or settings.project_id
    if not project_id:
        project_id = config.DEMO_PROJECT_ID
        logger.info("no --project-id or CCTX_PROJECT_ID: using the demo project id %s", project_id)
    config.validate_project_id(project_id)
    as_of = None if args.as_of is None else to_timestamp(args.as_of, name="--as-of")

    if args.data and args.per_day is not None:
        raise ValueError("--per-day applies to the synthetic sample only, not to --data")
    if args.data:
        store = Store.from_file(args.data, clock=as_of)
        logger.info("serving %d transfers from %s", len(store), args.data)
    else:
        from .service.sample import generate

        store = Store(generate(as_of, per_day=args.per_day), clock=as_of)
        logger.info("serving the synthetic sample: %d transfers", len(store))
    app = make_app(store, api_key=api_key, project_id=project_id)
    logger.info("clock: %s", "now (live)" if as_of is None else as_of.isoformat())
    serve(app, args.host, args.port, threads=args.threads)
    return 0


# --------------------------------------------------------------------------
# report


def _add_report(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="write a self-contained HTML report (the embedded sample without credentials)",
        description=(
            "Fetch a window, analyse it and write one self-contained HTML file (figures "
            "embedded, no external assets). Default window: the last 30 days up to now. "
            "Without CCTX_API_KEY/CCTX_PROJECT_ID it reports on the embedded synthetic "
            "sample, and says so in the report."
        ),
    )
    p.add_argument("--start", default=None, metavar="DATE", help="window start (UTC)")
    p.add_argument("--end", default=None, metavar="DATE", help="window end, excluded (UTC)")
    p.add_argument(
        "--chains",
        nargs="+",
        default=None,
        metavar="CHAIN",
        help="keep transfers touching any of these chains (names or domain ids)",
    )
    p.add_argument("--title", default=None, help="the report's heading")
    p.add_argument("--out", default="report.html", metavar="PATH", help="output file (report.html)")
    p.add_argument(
        "--sample",
        action="store_true",
        help="use the embedded synthetic sample even with credentials",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run_report)


def _run_report(args: argparse.Namespace) -> int:
    from . import report
    from .client import connect

    progress = not args.no_progress
    if progress and args.log_level == "INFO":
        # One INFO line per request would bury the progress bar; the bar says
        # the same. --log-level DEBUG (or WARNING) is honoured as given.
        for name in ("cctx_research.client.http", "cctx_research.service.app"):
            logging.getLogger(name).setLevel(logging.WARNING)
    options = {} if args.title is None else {"title": args.title}
    with connect(sample=True if args.sample else None, progress=progress) as client:
        built = report.build(
            client, args.start, args.end, chains=args.chains, progress=progress, **options
        )
    path = built.save(args.out)
    print(path)
    return 0


# --------------------------------------------------------------------------
# fetch

_FETCH_WHAT = ("mints", "received", "volume", "volume-history", "top-senders", "transaction")


def _add_fetch(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "fetch",
        help="fetch one of the client's frames and write it to a file",
        description=(
            "Fetch a frame and write it as Parquet, CSV or JSON (chosen by the --out "
            "extension). Uses CCTX_API_KEY/CCTX_PROJECT_ID/CCTX_BASE_URL when set, else "
            "the embedded synthetic sample."
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
    p.add_argument("--out", required=True, metavar="FILE", help="output .parquet, .csv or .json")
    p.set_defaults(func=_run_fetch)


def _run_fetch(args: argparse.Namespace) -> int:
    from pathlib import Path

    import pandas as pd

    from .client import connect
    from .client.parse import coerce

    out = Path(args.out)
    suffix = out.suffix.lower()
    if suffix not in (".parquet", ".csv", ".json"):
        raise ValueError(f"--out must end in .parquet, .csv or .json, got {args.out!r}")
    needs = {"received": "address", "transaction": "tx_hash"}
    if args.what in needs and not getattr(args, needs[args.what]):
        raise ValueError(f"fetch {args.what} needs --{needs[args.what].replace('_', '-')}")
    if args.what == "volume-history" and (args.start is None or args.end is None):
        raise ValueError("fetch volume-history needs --start and --end")
    with connect(
        sample=True if args.sample else None,
        as_of=args.as_of,
        cache=not args.no_cache,
        offline=args.offline,
        progress=False if args.no_progress else None,
    ) as client:
        if args.what == "mints":
            frame = client.mints(
                args.start, args.end, source=args.source, destination=args.destination
            )
        elif args.what == "received":
            frame = client.received(args.address, args.start, args.end)
        elif args.what == "volume-history":
            frame = client.volume_history(args.start, args.end, freq=args.freq)
        elif args.what == "top-senders":
            frame = client.top_senders(args.start, args.end, limit=args.limit)
        else:  # one-row answers: a typed one-row frame
            row = (
                client.volume(args.start, args.end)
                if args.what == "volume"
                else client.transaction(args.tx_hash)
            )
            kind = "volume" if args.what == "volume" else "transaction"
            frame = coerce(pd.DataFrame([row.to_dict()]), kind)
            frame.attrs = dict(row.attrs)
    out.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".parquet":
        frame.to_parquet(out, index=False)
    elif suffix == ".csv":
        frame.to_csv(out, index=False)
    else:
        frame.to_json(out, orient="records", date_format="iso", date_unit="s", indent=1)
    logger.info("wrote %d rows to %s", len(frame), out)
    return 0


# --------------------------------------------------------------------------
# the command

_SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_serve,
    _add_report,
    _add_fetch,
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="cctx-research",
        description="Research toolkit for Circle CCTP cross-chain USDC transfers.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="logging level (INFO)",
    )
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for add in _SUBCOMMANDS:
        add(subparsers)
    # accepted after the subcommand too; SUPPRESS keeps the top-level value
    # when it is not given there
    for sub in subparsers.choices.values():
        sub.add_argument(
            "--log-level",
            default=argparse.SUPPRESS,
            choices=["DEBUG", "INFO", "WARNING", "ERROR"],
            help="logging level (INFO)",
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``cctx-research`` command; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help(sys.stderr)
        return 2
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
    try:
        return int(args.func(args) or 0)
    except (CctxError, ValueError, TypeError, OSError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"cctx-research: error: {message}\n")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
