"""The public face: explicit, sorted exports that all resolve."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import cctx_research

MODULES = [
    "cctx_research",
    "cctx_research.chains",
    "cctx_research.ingest.datasets",
    "cctx_research.client",
    "cctx_research.net",
    "cctx_research.config",
    "cctx_research.errors",
    "cctx_research.addressing",
    "cctx_research.views.explorers",
    "cctx_research.views.markup",
    "cctx_research.views.selection",
    "cctx_research.export",
    "cctx_research.export.frames",
    "cctx_research.export.notebook",
    "cctx_research.schema",
    "cctx_research.storage",
    "cctx_research.times",
    "cctx_research.arguments",
    "cctx_research.analysis",
    "cctx_research.analysis.flows",
    "cctx_research.analysis.volumes",
    "cctx_research.analysis.addresses",
    "cctx_research.analysis.latency",
    "cctx_research.analysis.pending",
    "cctx_research.analysis.v2",
    "cctx_research.analysis.results",
    "cctx_research.analysis.inputs",
    "cctx_research.analysis.history",
    "cctx_research.report.sources",
    "cctx_research.plots",
    "cctx_research.plots.flows",
    "cctx_research.plots.volumes",
    "cctx_research.plots.addresses",
    "cctx_research.plots.ledger",
    "cctx_research.report",
    "cctx_research.report.building",
    "cctx_research.report.inputs",
    "cctx_research.report.progress",
    "cctx_research.report.document",
    "cctx_research.report.ledger_sections",
    "cctx_research.report.link_sections",
    "cctx_research.report.registry",
    "cctx_research.report.sections",
    "cctx_research.service.sample",
    "cctx_research.service.store",
    "cctx_research.service.app",
    "cctx_research.service.handlers",
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
        # the exceptions, and the warnings users must see
        assert issubclass(getattr(errors, name), (errors.CctxError, errors.CctxWarning))


def test_subpackages_load_on_first_use():
    # a fresh interpreter: this one has imported everything already
    probe = """
import sys
import cctx_research as cctx
assert "cctx_research.plots" not in sys.modules
assert "matplotlib" not in sys.modules
assert "plots" in dir(cctx) and "analysis" in dir(cctx)
from cctx_research.analysis import flows
assert cctx.analysis.flows is flows
assert callable(cctx.plots.plot_flow_matrix)
assert cctx.plots is sys.modules["cctx_research.plots"]
assert "cctx_research.ingest.datasets" not in sys.modules and "datasets" in dir(cctx)
from cctx_research import datasets  # the face serves the module that lives in ingest/
assert datasets is cctx.datasets is sys.modules["cctx_research.ingest.datasets"]
# a ledger dataset is read without the readers (a report on one never loads logs)
assert "cctx_research.ingest.loader" not in sys.modules
assert "cctx_research.ingest.solana" not in sys.modules
from cctx_research import ingest
assert "load" in dir(ingest) and ingest.load is sys.modules["cctx_research.ingest.loader"].load
assert cctx.selection is sys.modules["cctx_research.views.selection"]
assert callable(cctx.export.write) and callable(cctx.export.export_notebook)
try:
    cctx.no_such_thing
except AttributeError as exc:
    assert "no_such_thing" in str(exc)
else:
    raise SystemExit("an unknown name must raise AttributeError")
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


HEAVY = (
    "pandas",
    "numpy",
    "pyarrow",
    "requests",
    "requests_cache",
    "matplotlib",
    "polars",
    "duckdb",
    "dask",
    "cctx_research.ingest",
    "cctx_research.client",
    "cctx_research.service",
)


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["report", "--help"]])
def test_the_command_line_parses_before_importing_anything_heavy(argv):
    probe = f"""
import sys
from cctx_research.cli import main
try:
    main({argv!r})
except SystemExit as exc:
    assert exc.code == 0, exc.code
heavy = [name for name in {HEAVY!r} if name in sys.modules]
assert not heavy, heavy
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# what a parser needs beyond argparse: the toolkit's command modules and annotations' typing
PARSER_EXTRAS = ("cctx_research", "typing", "collections.abc")


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_help_imports_nothing_beyond_argparse_and_the_commands(argv):
    # logging, dataclasses (and inspect), pathlib are each milliseconds a `--help` pays for
    # nothing: they load when a command runs, not to print its options
    probe = f"""
import sys
import argparse
bare = argparse.ArgumentParser()
bare.add_argument("--version", action="version", version="0")
try:
    bare.parse_args({argv!r})  # what argparse itself loads to print help or a version
except SystemExit:
    pass
base = set(sys.modules)
from cctx_research.cli import main
try:
    main({argv!r})
except SystemExit as exc:
    assert exc.code == 0, exc.code
extra = sorted(name for name in set(sys.modules) - base
               if not name.startswith({PARSER_EXTRAS!r}) and not name.startswith("_"))
assert not extra, extra
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_importing_the_face_loads_no_engine_until_a_name_is_reached():
    probe = f"""
import sys
import cctx_research as cctx
heavy = [name for name in {HEAVY!r} if name in sys.modules]
assert not heavy, heavy
assert {{"connect", "Client", "load", "chains", "schema"}} <= set(dir(cctx))
from cctx_research import connect, schema
assert connect is cctx.connect and callable(connect)
assert schema is sys.modules["cctx_research.schema"]
assert "pandas" in sys.modules  # reached now, not before
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
