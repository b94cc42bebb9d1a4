"""The ``cctx-research`` command.

Each subcommand is a parser block (``_add_<name>(subparsers)``, registered
in :data:`_SUBCOMMANDS`) and a function ``_run_<name>(args) -> int``. To add
one, write both and append the block to :data:`_SUBCOMMANDS`.

Errors the user can fix (bad options, a bad data file, a busy port) end the
command with a one-line message on stderr and a non-zero exit status, never a
traceback. What the user must see (synthetic data, a window the data does
not cover, a read-only cache) is a ``cctx-research: warning:`` line.

Quiet by default: commands log at WARNING (``serve``, a server whose log is
its output, at INFO); ``-v`` gives INFO, ``-vv`` DEBUG (every request), and
``--log-level`` sets a level outright.

``fetch`` and ``report`` reach a service with ``--base-url`` and
``--project-id`` (else ``CCTX_BASE_URL`` / ``CCTX_PROJECT_ID``); the key
comes from ``CCTX_API_KEY`` or ``--api-key-file`` (a file holding it), never
from the command line, where other users could read it in the process list.

Examples
--------
::

    cctx-research serve                       # the synthetic sample, demo credentials
    cctx-research serve --data ledger.parquet --port 8080 --api-key KEY
    cctx-research import eth.json base.json --chain eth.json=ethereum \\
        --chain base.json=base --out ledger.parquet
    cctx-research report --data ledger.parquet --out report.html
    cctx-research dashboard                   # the widgets as a web app, on the sample
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import config
from ._version import __version__
from .errors import CctxError, CctxWarning

__all__ = ["build_parser", "log_level", "main"]

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------
# reaching a service


def _add_service_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--base-url", default=None, help="the service's address (default: CCTX_BASE_URL)"
    )
    p.add_argument(
        "--project-id", default=None, help="the project path segment (default: CCTX_PROJECT_ID)"
    )
    p.add_argument(
        "--api-key-file",
        default=None,
        metavar="PATH",
        help="a file holding the API key (default: CCTX_API_KEY); never pass the key itself",
    )


def _read_key(path: str) -> str:
    """The API key from a file: its first non-empty line, stripped."""
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise config.ConfigError(
            f"--api-key-file {path}: cannot read it ({exc.strerror or exc})"
        ) from None
    except UnicodeDecodeError:
        raise config.ConfigError(f"--api-key-file {path}: not a text file") from None
    key = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if not key:
        raise config.ConfigError(f"--api-key-file {path} is empty; put the API key in it")
    return key


def _service(args: argparse.Namespace) -> dict[str, Any]:
    """``connect()`` options from --base-url, --project-id and --api-key-file."""
    options: dict[str, Any] = {}
    if args.base_url:
        options["base_url"] = config.validate_base_url(args.base_url)
    if args.project_id:
        options["project_id"] = config.validate_project_id(args.project_id)
    if args.api_key_file:
        options["api_key"] = config.Secret(_read_key(args.api_key_file))
    if options and args.sample:
        raise ValueError(
            "--sample uses the embedded sample: drop --base-url/--project-id/--api-key-file"
        )
    if options:
        settings = config.Settings.from_env()
        options.setdefault("api_key", settings.api_key)
        options.setdefault("project_id", settings.project_id)
        if options["api_key"] is None or options["project_id"] is None:
            raise config.ConfigError(
                "to reach a service, give its project id (--project-id or CCTX_PROJECT_ID) "
                "and its key (--api-key-file or CCTX_API_KEY)"
            )
    return options


# --------------------------------------------------------------------------
# serve


def _add_listen_options(p: argparse.ArgumentParser, *, port: int) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=port, help=f"port to listen on ({port})")


def _add_data_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--data",
        default=None,
        metavar="PATH",
        help=f"files to {what}: anything `import` reads (an imported ledger, transfers, "
        "event logs, Dune or XChainDataGen exports, a dataset directory; format detected)",
    )


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
    _add_listen_options(p, port=8000)
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
    _add_data_option(p, "serve instead of the sample")
    p.add_argument(
        "--floor-times",
        action="store_true",
        help="serve --data times with a fraction of a second to the second (with a warning); "
        "by default such times are refused, naming their rows: the interface carries "
        "whole seconds",
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

    if args.floor_times and not args.data:
        raise ValueError("--floor-times applies to --data only")
    if args.data and args.per_day is not None:
        raise ValueError("--per-day applies to the synthetic sample only, not to --data")
    if args.data:
        store = Store.from_file(
            args.data, clock=as_of, fractions="floor" if args.floor_times else "refuse"
        )
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
        allow_abbrev=False,  # "--api-key KEY" must not be read as --api-key-file
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
    p.add_argument(
        "--data",
        default=None,
        metavar="PATH",
        help="report on these files (anything `import` reads) through a local service; "
        "default window: the data's whole span",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_service_options(p)
    p.set_defaults(func=_run_report)


def _run_report(args: argparse.Namespace) -> int:
    from . import report
    from .connection import connect

    progress = not args.no_progress
    options = {} if args.title is None else {"title": args.title}
    if args.data:
        if args.sample:
            raise ValueError("--data and --sample exclude each other: pick one source")
        built = _report_on_data(args, progress, options)
    else:
        service = _service(args)
        sample = True if args.sample else (False if service else None)
        with connect(sample=sample, progress=progress, **service) as client:
            built = report.build(
                client,
                args.start,
                args.end,
                chains=args.chains,
                progress=progress,
                ledger=None if service else _embedded_ledger(args),
                **options,
            )
    path = built.save(args.out)
    print(path)
    return 0


def _embedded_ledger(args: argparse.Namespace) -> Any:
    """The embedded sample's ledger when the report runs on it (else None).

    It is the data the embedded service serves (the last 30 days up to now),
    with both sides of each transfer: it feeds the report's latency, pending
    and V2 sections. The rule is connect()'s: the sample with ``--sample`` or
    without credentials.
    """
    if not (args.sample or not config.Settings.from_env().has_credentials):
        return None
    from .service.sample import load_sample

    return load_sample()


def _report_on_data(args: argparse.Namespace, progress: bool, options: dict) -> object:
    """Build the report over ``--data``, joined to a client by ``connect(data=...)``."""
    import pandas as pd

    from . import report
    from .connection import connect
    from .provenance import provenance
    from .service.loading import load_ledger

    ledger = load_ledger(args.data, fractions="floor")
    if not len(ledger):
        raise ValueError(f"--data {args.data!r} holds no transfers to report on")
    times = pd.concat([ledger["burn_timestamp"], ledger["mint_timestamp"]]).dropna()
    first, last = times.min(), times.max()
    start = args.start if args.start is not None else first.floor("D")
    end = args.end if args.end is not None else last.floor("D") + pd.Timedelta(days=1)
    clock = last + pd.Timedelta(seconds=1)
    record = provenance(ledger)
    source = record.source if record else str(args.data)
    with connect(
        data=ledger, as_of=clock, cache=False, progress=progress, source=source
    ) as client:
        return report.build(
            client, start, end, chains=args.chains, progress=progress, ledger=ledger, **options
        )


# --------------------------------------------------------------------------
# import


def _add_import(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "import",
        help="read event logs, Dune or XChainDataGen exports into one ledger file",
        description=(
            "Read CCTP data of any supported format (event logs, Dune, XChainDataGen, the "
            "toolkit's own frames; detected from each file) from files, globs or "
            "directories, pair burns with mints, and write one ledger (Parquet, or CSV). "
            "Prints a summary: rows read, decoded, paired, unpaired, skipped and why."
        ),
    )
    p.add_argument("sources", nargs="+", metavar="SRC", help="files, globs or directories")
    p.add_argument(
        "--format",
        default=None,
        choices=["evm-logs", "dune", "xchaindatagen", "cctx"],
        help="the format of every SRC (default: detected per file)",
    )
    p.add_argument(
        "--chain",
        action="append",
        default=None,
        metavar="CHAIN|PATH=CHAIN",
        help="the chain of files whose rows do not say it; repeat PATH=CHAIN per file",
    )
    p.add_argument("--blocks", default=None, metavar="FILE", help="block times for event logs")
    p.add_argument(
        "--errors",
        default="raise",
        choices=["raise", "report"],
        help="malformed rows: stop (raise, default) or keep the good rows and list the "
        "bad ones next to the output (report)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE|DIR/",
        help="output .parquet or .csv; or DIR/ for a partitioned dataset",
    )
    p.set_defaults(func=_run_import)


def _chain_option(values: list[str] | None) -> object:
    if not values:
        return None
    pairs = [v for v in values if "=" in v]
    if pairs and len(pairs) != len(values):
        raise ValueError("--chain takes either one CHAIN for all files or PATH=CHAIN for each")
    if not pairs:
        if len(values) > 1:
            raise ValueError("give one --chain CHAIN, or PATH=CHAIN per file")
        return values[0]
    return dict(v.rsplit("=", 1) for v in pairs)


def _run_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .ingest import bad_rows, load
    from .ingest.output import summary, write_atomically

    out = Path(args.out)
    to_dataset = args.out.endswith(("/", os.sep)) or out.is_dir()
    if not to_dataset and out.suffix.lower() not in (".parquet", ".csv"):
        raise ValueError(
            f"--out must end in .parquet or .csv, or be a directory (DIR/) for a partitioned "
            f"dataset, got {args.out!r}"
        )
    bar = None
    if not args.no_progress:
        from tqdm.auto import tqdm

        bar = tqdm(unit="file", desc="import", leave=False)

    def step(path: Path) -> None:
        if bar is not None:
            bar.set_postfix_str(path.name[:40])
            bar.update(1)

    try:
        ledger = load(
            args.sources,
            format=args.format,
            chain=_chain_option(args.chain),
            blocks=args.blocks,
            errors=args.errors,
            progress=step,
        )
    except CctxError as exc:  # the whole message: it lists formats and missing columns
        sys.stderr.write(f"cctx-research: error: {exc}\n")
        return 1
    finally:
        if bar is not None:
            bar.close()
    if to_dataset:
        from . import datasets

        datasets.write(ledger, out)
    else:
        write_atomically(ledger, out)
    bad = bad_rows(ledger)
    if len(bad):
        write_atomically(bad, out.with_name(out.name + ".bad.csv"))
    sys.stdout.write(summary(ledger, out, bad_file=len(bad) > 0) + "\n")
    return 0


# --------------------------------------------------------------------------
# fetch

_FETCH_WHAT = ("mints", "received", "volume", "volume-history", "top-senders", "transaction")


def _add_fetch(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "fetch",
        allow_abbrev=False,  # "--api-key KEY" must not be read as --api-key-file
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
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE|DIR/",
        help="output .parquet, .csv or .json; or DIR/ for a partitioned dataset (mints)",
    )
    _add_service_options(p)
    p.set_defaults(func=_run_fetch)


def _run_fetch(args: argparse.Namespace) -> int:
    from pathlib import Path

    import pandas as pd

    from .client.parse import coerce
    from .connection import connect
    from .export import write

    out = Path(args.out)
    suffix = out.suffix.lower()
    to_dataset = args.out.endswith(("/", os.sep)) or out.is_dir()
    if to_dataset and args.what != "mints":
        raise ValueError(
            f"--out {args.out!r} is a directory: a partitioned dataset holds mints; "
            "for this frame pass a .parquet, .csv or .json file"
        )
    if not to_dataset and suffix not in (".parquet", ".csv", ".json"):
        raise ValueError(
            f"--out must end in .parquet, .csv or .json, or be a directory (DIR/) for a "
            f"partitioned dataset, got {args.out!r}"
        )
    needs = {"received": "address", "transaction": "tx_hash"}
    if args.what in needs and not getattr(args, needs[args.what]):
        raise ValueError(f"fetch {args.what} needs --{needs[args.what].replace('_', '-')}")
    if args.what == "volume-history" and (args.start is None or args.end is None):
        raise ValueError("fetch volume-history needs --start and --end")
    service = _service(args)
    with connect(
        sample=True if args.sample else (False if service else None),
        as_of=args.as_of,
        **service,
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
    if to_dataset:
        from . import datasets

        written = datasets.write(frame, out)
        logger.info(
            "dataset %s: %d rows over %d days (%d replaced)",
            out, written.rows, len(written.days), written.replaced_rows,
        )
        return 0
    write(frame, out)
    logger.info("wrote %d rows to %s", len(frame), out)
    return 0


# --------------------------------------------------------------------------
# dashboard


def _add_dashboard(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "dashboard",
        help="serve the dashboard, address explorer and transaction lookup as a web app",
        description=(
            "Serve the widget panels as a web app (Voila) at http://HOST:PORT/ until "
            "Ctrl-C. Data: --data FILE, else the service named by CCTX_BASE_URL when "
            "CCTX_API_KEY and CCTX_PROJECT_ID are set, else the embedded synthetic sample."
        ),
    )
    _add_listen_options(p, port=8866)
    _add_data_option(p, "show instead of the sample")
    p.add_argument(
        "--sample",
        action="store_true",
        help="use the embedded synthetic sample even with credentials",
    )
    p.set_defaults(func=_run_dashboard)


def _run_dashboard(args: argparse.Namespace) -> int:
    from .webapp.server import run

    if args.data and args.sample:
        raise ValueError("pass --data or --sample, not both")

    def ready(url: str) -> None:
        print(f"dashboard running at {url} (Ctrl-C to stop)", flush=True)

    # Voila logs every kernel it starts at INFO; keep it for --log-level DEBUG
    voila_level = "DEBUG" if args.log_level == "DEBUG" else "WARN"
    run(
        data=args.data,
        sample=args.sample,
        host=args.host,
        port=args.port,
        log_level=voila_level,
        on_ready=ready,
    )
    return 0


# --------------------------------------------------------------------------
# the command

# --------------------------------------------------------------------------
# export-notebook


def _add_export_notebook(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "export-notebook",
        help="run a notebook and write it as one HTML file whose widgets work offline",
        description=(
            "Execute NOTEBOOK in a Jupyter kernel and write it as one self-contained HTML "
            "file: figures embedded, the widget manager inline, nothing fetched when it "
            "is opened."
        ),
    )
    p.add_argument("notebook", metavar="NOTEBOOK", help="the .ipynb file")
    p.add_argument("--out", required=True, metavar="FILE", help="the .html file to write")
    p.add_argument("--no-execute", action="store_true", help="export the notebook as stored")
    p.set_defaults(func=_run_export_notebook)


def _run_export_notebook(args: argparse.Namespace) -> int:
    from .notebook_export import export_notebook

    print(export_notebook(args.notebook, args.out, execute=not args.no_execute))
    return 0


_SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_serve,
    _add_report,
    _add_fetch,
    _add_import,
    _add_dashboard,
    _add_export_notebook,
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
        default=None,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="logging level (default WARNING; serve INFO)",
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="-v: INFO, -vv: DEBUG (every request)"
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
            help="logging level (default WARNING; serve INFO)",
        )
        sub.add_argument(
            "-v",
            "--verbose",
            action="count",
            default=argparse.SUPPRESS,
            help="-v: INFO, -vv: DEBUG (every request)",
        )
    return parser


def log_level(args: argparse.Namespace) -> int:
    """The logging level: --log-level as given, else WARNING (serve INFO) lowered by -v."""
    if args.log_level is not None:
        return int(logging.getLevelName(args.log_level))
    base = logging.INFO if getattr(args, "func", None) is _run_serve else logging.WARNING
    return max(logging.DEBUG, base - 10 * int(getattr(args, "verbose", 0) or 0))


def _show_warning(message: Any, category: type, filename: str, lineno: int, *rest: Any) -> None:
    if issubclass(category, CctxWarning):
        sys.stderr.write(f"cctx-research: warning: {message}\n")
    else:
        _default_showwarning(message, category, filename, lineno, *rest)


_default_showwarning = warnings.showwarning


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
            level=log_level(args), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return int(args.func(args) or 0)
    except (CctxError, ValueError, TypeError, OSError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"cctx-research: error: {message}\n")
        return 1
    except KeyboardInterrupt:
        # the pull has stopped (its threads and requests too): one line, no traceback
        sys.stderr.write("cctx-research: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
