"""``cctx-research serve``: the local service, on the synthetic sample or your data."""

from __future__ import annotations

import argparse
from typing import Any

from .options import add_data_option, add_listen_options


def add(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="run the local service (the synthetic sample, or your data)",
        description=(
            "Serve the interface's five operations at "
            "http://HOST:PORT/rest/<project-id>/<operation>. Without --data it serves "
            "the bundled synthetic sample."
        ),
    )
    add_listen_options(p, port=8000)
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
    add_data_option(p, "serve instead of the sample")
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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import logging

    from .. import config
    from ..service.app import make_app
    from ..service.server import serve
    from ..service.store import Store
    from ..times import to_timestamp

    logger = logging.getLogger(__name__)
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
        fractions = "floor" if args.floor_times else "refuse"
        store, synthetic, counts = _own_data(args.data, fractions, as_of)
        logger.info(
            "serving %d transfers from %s: paired %d, pending %d, mint only %d%s",
            len(store), args.data, counts.get("paired", 0), counts.get("pending", 0),
            counts.get("mint_only", 0), "; synthetic, as its provenance says" if synthetic else "",
        )  # fmt: skip
    else:
        from ..service.sample import generate

        store = Store(generate(as_of, per_day=args.per_day), clock=as_of, trusted=True)
        synthetic = True
        logger.info("serving the synthetic sample: %d transfers", len(store))
    # replies say the data is synthetic (x-cctx-synthetic: true): clients mark it
    app = make_app(store, api_key=api_key, project_id=project_id, synthetic=synthetic)
    logger.info("clock: %s", "now (live)" if as_of is None else as_of.isoformat())
    serve(app, args.host, args.port, threads=args.threads)
    return 0


def _own_data(data: str, fractions: str, as_of: Any) -> tuple[Any, bool, dict[str, int]]:
    """The store over ``--data``, whether it is synthetic, and its link counts.

    A ledger dataset (or a sync directory's) is indexed as it lies on disk, a
    column at a time; other files are loaded into a ledger frame first.
    """
    from ..provenance import is_synthetic, provenance
    from ..service.dataset import LedgerDataset, ledger_dataset
    from ..service.loading import load_ledger
    from ..service.store import Store

    found = ledger_dataset(data)
    if found is not None:
        dataset = LedgerDataset(found, fractions=fractions)
        return Store(dataset, clock=as_of), dataset.synthetic, dataset.counts
    ledger = load_ledger(data, fractions=fractions)
    record = provenance(ledger)
    counts = record.count if record is not None else {}
    return Store(ledger, clock=as_of), is_synthetic(ledger), counts
