"""``cctx-research export-notebook``: a notebook as one offline HTML file."""

from __future__ import annotations

import argparse


def add(subparsers: argparse._SubParsersAction) -> None:
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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..export import export_notebook

    print(export_notebook(args.notebook, args.out, execute=not args.no_execute))
    return 0
