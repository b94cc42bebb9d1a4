"""The public face: explicit, sorted exports that all resolve."""

from __future__ import annotations

import importlib

import pytest

import cctx_research

MODULES = [
    "cctx_research",
    "cctx_research.chains",
    "cctx_research.client",
    "cctx_research.config",
    "cctx_research.errors",
    "cctx_research.addressing",
    "cctx_research.schema",
    "cctx_research.times",
    "cctx_research.arguments",
    "cctx_research.analysis",
    "cctx_research.analysis.flows",
    "cctx_research.analysis.volumes",
    "cctx_research.analysis.addresses",
    "cctx_research.analysis.latency",
    "cctx_research.analysis.pending",
    "cctx_research.analysis.v2",
    "cctx_research.service.sample",
    "cctx_research.service.store",
    "cctx_research.service.app",
    "cctx_research.service.server",
]


def isort_key(name: str) -> tuple[int, str]:
    """CONSTANTS, then Classes, then functions (ruff's RUF022 order)."""
    bare = name.lstrip("_")
    if bare.isupper():
        return 0, name
    return (1 if bare[:1].isupper() else 2), name


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_resolves(name):
    module = importlib.import_module(name)
    exported = module.__all__
    assert exported == sorted(exported, key=isort_key), f"{name}.__all__ is not sorted"
    assert len(set(exported)) == len(exported)
    for attr in exported:
        assert hasattr(module, attr), f"{name}.__all__ names missing {attr}"


def test_top_level_surface():
    assert set(cctx_research.__all__) >= {"Client", "connect", "CctxError", "__version__"}
    assert cctx_research.__version__.count(".") == 2


def test_every_error_derives_from_cctx_error():
    from cctx_research import errors

    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.CctxError)
