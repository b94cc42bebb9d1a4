"""Every third-party module the package imports is declared in pyproject.toml.

An import that works only because another dependency happens to pull its
distribution in breaks the day that dependency stops doing so. The package's
imports are read from its source (``ast``, nothing imported), mapped to the
distributions that provide them (``importlib.metadata.packages_distributions``:
``yaml`` -> ``pyyaml``), and looked up in the core dependencies and the extras a
user installs for a feature. The ``test`` and ``bench`` extras do not count:
the library must not need them.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "cctx_research"
NOT_FOR_THE_LIBRARY = {"test", "bench"}  # extras of the project's own runs


def _normal(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert found, f"cannot read the name of {requirement!r}"
    return _normal(found.group(1))


def _pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def declared() -> set[str]:
    """Distributions the library may use: core dependencies and the feature extras."""
    project = _pyproject()["project"]
    names = {_requirement_name(r) for r in project["dependencies"]}
    for extra, requirements in project["optional-dependencies"].items():
        if extra not in NOT_FOR_THE_LIBRARY:
            names |= {_requirement_name(r) for r in requirements}
    return names


def imported() -> dict[str, set[str]]:
    """Top-level third-party modules imported anywhere in the package -> the files."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top != PACKAGE.name:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


@functools.lru_cache(maxsize=1)
def _providers() -> dict[str, list[str]]:
    return packages_distributions()  # reads every installed distribution's file list: once


def distributions(module: str) -> set[str]:
    """The distributions that provide a module; its own name when none is installed
    (``tomli`` on Python 3.11+, where the code imports it only on 3.10)."""
    return {_normal(d) for d in _providers().get(module, [module])}


def test_every_imported_module_is_declared():
    allowed = declared()
    missing = {
        module: sorted(files)
        for module, files in imported().items()
        if not distributions(module) & allowed
    }
    assert not missing, (
        "imported but not declared in pyproject.toml (core dependencies or the "
        f"notebooks/engines extras): {missing}"
    )


def test_the_check_sees_imports_and_maps_names():
    # a check that cannot fail is no check: it must find the package's imports
    # and map an import name to a differently spelled distribution
    found = imported()
    assert {"pandas", "requests", "requests_cache"} <= set(found)
    assert "os" not in found
    assert PACKAGE.name not in found
    assert "requests-cache" in distributions("requests_cache")
    assert "requests-cache" in declared()
    assert "pytest" not in declared()  # test extra: not the library's
