"""A package's names imported only when first asked for (PEP 562).

A package whose names live in submodules heavy to import (matplotlib behind
``plots``, the panels behind ``widgets``) lists each name's home and lets
:func:`exports` make its module ``__getattr__`` and ``__dir__``: the first
``package.name`` imports the home module and keeps the value in the package.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Collection, Mapping
from typing import Any

__all__ = ["exports"]


def exports(package: str, homes: Mapping[str, str], names: Collection[str]
            ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:  # fmt: skip
    """``(__getattr__, __dir__)`` for ``package``: ``homes`` maps a name to the submodule
    (relative to ``package``) that defines it; ``names`` is the package's ``__all__``."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)  # asked once
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
