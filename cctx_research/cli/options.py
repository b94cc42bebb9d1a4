"""Options several commands share: reaching a service, listening, the data to use."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = [
    "add_data_option",
    "add_listen_options",
    "add_service_options",
    "read_key",
    "service_options",
]


def add_service_options(p: argparse.ArgumentParser) -> None:
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


def read_key(path: str) -> str:
    """The API key from a file: its first non-empty line, stripped."""
    from pathlib import Path

    from .. import config

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


def service_options(args: argparse.Namespace) -> dict[str, Any]:
    """``connect()`` options from --base-url, --project-id and --api-key-file."""
    from .. import config

    options: dict[str, Any] = {}
    if args.base_url:
        options["base_url"] = config.validate_base_url(args.base_url)
    if args.project_id:
        options["project_id"] = config.validate_project_id(args.project_id)
    if args.api_key_file:
        options["api_key"] = config.Secret(read_key(args.api_key_file))
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


def add_listen_options(p: argparse.ArgumentParser, *, port: int) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=port, help=f"port to listen on ({port})")


def add_data_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--data",
        default=None,
        metavar="PATH",
        help=f"files to {what}: anything `import` reads (an imported ledger, transfers, "
        "event logs, Dune or XChainDataGen exports, a dataset directory; format detected)",
    )
