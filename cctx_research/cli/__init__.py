"""The ``cctx-research`` command.

Each command family is a module of this package with a parser block
``add(subparsers)`` and a function ``run(args) -> int``; options several
commands share are in :mod:`.options`. To add a command, write its module and
append its ``add`` to :data:`_SUBCOMMANDS`.

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
    cctx-research sync --chain base=$BASE_RPC --from 2026-11-01 --out cctp/
    cctx-research sync --status cctp/
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._version import __version__
from ..errors import CctxError, CctxWarning
from . import dashboard, fetch, importing, notebook, report, serve, sync

__all__ = ["build_parser", "log_level", "main"]

_SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    serve.add,
    report.add,
    fetch.add,
    importing.add,
    dashboard.add,
    notebook.add,
    sync.add,
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
    import logging

    if args.log_level is not None:
        return int(logging.getLevelName(args.log_level))
    base = logging.INFO if getattr(args, "func", None) is serve.run else logging.WARNING
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
    import logging  # after parsing: --help and --version need none of it

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
