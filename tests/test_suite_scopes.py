"""How the suite is shared among parallel workers (``tests/conftest.py``) stays sound."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import INDEPENDENT, scope_of

ROOT = Path(__file__).resolve().parents[1]


def _module_scoped_fixtures(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and any(
                k.arg == "scope" and isinstance(k.value, ast.Constant)
                and k.value.value in ("module", "package", "session")
                for k in deco.keywords
            ):  # fmt: skip
                found.append(node.name)
    return found


@pytest.mark.parametrize("module", sorted(INDEPENDENT))
def test_a_module_spread_test_by_test_shares_no_fixture_wider_than_a_test(module: str) -> None:
    path = ROOT / module
    assert path.is_file(), f"{module} is listed in INDEPENDENT but does not exist"
    assert _module_scoped_fixtures(path) == []


def test_scopes_keep_a_module_together_unless_it_is_independent() -> None:
    assert scope_of("tests/test_report.py::test_cli_report") == "tests/test_report.py"
    assert scope_of("tests/client/test_cache.py::test_a[1]") == "tests/client/test_cache.py"
    spread = "tests/nodes/test_sync.py::test_a_second_run_fetches_only_new_blocks"
    assert scope_of(spread) == spread
    page = "tests/test_docs.py::test_block_runs[docs/views.md:44]"
    assert scope_of(page) == "tests/test_docs.py::docs/views.md"
