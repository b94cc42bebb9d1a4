"""``cctx-research dashboard``: the widgets as a web app."""

from __future__ import annotations

import argparse

from .options import add_data_option, add_listen_options


def add(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "dashboard",
        help="serve the dashboard, address explorer and transaction lookup as a web app",
        description=(
            "Serve the widget panels as a web app (Voila) at http://HOST:PORT/ until "
            "Ctrl-C. Data: --data FILE, else the service named by CCTX_BASE_URL when "
            "CCTX_API_KEY and CCTX_PROJECT_ID are set, else the embedded synthetic sample."
        ),
    )
    add_listen_options(p, port=8866)
    add_data_option(p, "show instead of the sample")
    p.add_argument(
        "--sample",
        action="store_true",
        help="use the embedded synthetic sample even with credentials",
    )
    p.add_argument(
        "--kernel-timeout",
        type=int,
        default=None,
        metavar="SECONDS",
        help=(
            "shut a page's kernel down once it has had no page open and been idle this "
            "long (default 120; closing a page normally shuts it down at once)"
        ),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..webapp.server import KERNEL_TIMEOUT, run

    if args.data and args.sample:
        raise ValueError("pass --data or --sample, not both")
    if args.kernel_timeout is not None and args.kernel_timeout < 1:
        raise ValueError(
            f"--kernel-timeout must be at least 1 second (default {KERNEL_TIMEOUT}), "
            f"got {args.kernel_timeout}"
        )

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
        kernel_timeout=KERNEL_TIMEOUT if args.kernel_timeout is None else args.kernel_timeout,
        on_ready=ready,
    )
    return 0
