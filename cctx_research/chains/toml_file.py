"""The user's ``chains.toml``: CCTP domains added without a release.

The file lives in the toolkit's configuration directory (``CCTX_CONFIG_DIR``,
else the platform's user configuration directory for ``cctx-research``) and
holds ``[[chain]]`` tables with the fields of :class:`cctx_research.chains.Chain`::

    [[chain]]
    domain = 40
    name = "new_chain"
    label = "New Chain"
    chain_id = "4242"
    in_v2 = true
    explorer = "https://explorer.new-chain.example"

    [chain.contracts.v2]
    token_messenger = "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d"
    message_transmitter = "0x81d40f21f12a8f0e3252bccb954d722d4c464b64"

    [chain.tokens]
    USDC = "0x00000000000000000000000000000000000000aa"

    [[chain]]          # a built-in domain: the fields given replace or extend it
    domain = 17
    tokens = { USDC = "0x00000000000000000000000000000000000000bb" }

This module only finds and parses the file; :mod:`cctx_research.chains`
validates each table (the same checks as :func:`cctx_research.chains.register`)
and reads it lazily, once, at the first registry look-up of a process, so
``load``, the client, the service and the reports all see the same domains.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .entries import Chain, chain_from_mapping, check_names

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "CONFIG_DIR_VARIABLE",
    "FILE_NAME",
    "config_dir",
    "config_file",
    "file_chains",
    "read_chain_tables",
]

CONFIG_DIR_VARIABLE = "CCTX_CONFIG_DIR"
"""The environment variable that moves the configuration directory."""

FILE_NAME = "chains.toml"

_TOP_LEVEL = frozenset({"chain"})


def config_dir() -> Path:
    """The toolkit's configuration directory (:func:`cctx_research.config.config_dir`)."""
    from ..config import config_dir as configured

    return configured()


def config_file() -> Path:
    """The path of ``chains.toml`` in :func:`config_dir` (it may not exist)."""
    return config_dir() / FILE_NAME


def read_chain_tables(path: Path) -> list[dict[str, Any]]:
    """The ``[[chain]]`` tables of a ``chains.toml``, in file order; ``[]`` without a file.

    Raises
    ------
    ConfigError
        If the file cannot be read, is not valid TOML, or holds anything but
        ``[[chain]]`` tables; the message names the file and the key.
    """
    if not path.is_file():
        return []
    try:
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid TOML: {exc}",
            hint="fix the file, or move it away to use the built-in registry only",
        ) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    unknown = sorted(set(document) - _TOP_LEVEL)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r}; the file holds only [[chain]] tables",
            hint="write each domain as a [[chain]] table (see cctx_research.chains.toml_file)",
        )
    tables = document.get("chain", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ConfigError(
            f"{path}: key 'chain' must be an array of tables, written [[chain]]",
            hint="write each domain as a [[chain]] table, not [chain] or chain = ...",
        )
    return tables


def file_chains(builtin: Iterable[Chain]) -> dict[int, Chain]:
    """The checked entries of :func:`config_file`, by domain, laid over ``builtin``.

    Raises
    ------
    ConfigError
        If the file is not valid TOML or a table fails the checks of
        :func:`cctx_research.chains.register`; the message names the file,
        the table and the key.
    """
    path = config_file()
    entries: dict[int, Chain] = {}
    base = {c.domain: c for c in builtin}
    for number, table in enumerate(read_chain_tables(path), start=1):
        try:
            chain = chain_from_mapping(table, {**base, **entries})
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"{path}: [[chain]] table {number}: {exc}",
                hint="fix or remove that table (its keys: see cctx_research.chains.toml_file)",
            ) from exc
        entries[chain.domain] = chain
    try:
        check_names([*{**base, **entries}.values()])
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return entries
