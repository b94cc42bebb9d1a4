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


def test_the_cpu_log_records_each_test_and_the_processes_it_waited_for(tmp_path: Path) -> None:
    """``CCTX_TEST_CPU=FILE``: a line a test, its own CPU apart from its children's, and
    the machine's speed probed as the session starts and ends."""
    import json
    import os
    import subprocess
    import sys

    (tmp_path / "test_spin.py").write_text(
        "import subprocess, sys, time\n"
        "def spin(seconds):\n"
        "    end = time.process_time() + seconds\n"
        "    while time.process_time() < end:\n"
        "        pass\n"
        "def test_own():\n    spin(0.3)\n"
        "def test_child():\n"
        "    code = 'import time\\nend = time.process_time() + 0.3\\n'\n"
        "    code += 'while time.process_time() < end: pass'\n"
        "    subprocess.run([sys.executable, '-c', code], check=True)\n"
    )  # fmt: skip
    log = tmp_path / "cpu.jsonl"
    # no plugins but the suite's conftest: hypothesis's alone is seconds of import
    env = {**os.environ, "CCTX_TEST_CPU": str(log), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
         "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path / "test_spin.py")],
        cwd=tmp_path, env={**env, "PYTHONPATH": str(ROOT / "tests")}, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    probes = [r for r in records if "probe" in r]
    # the machine's speed, when the session starts and when it ends
    assert [p["at"] for p in probes] == ["start", "end"]
    assert all(p["probe"] > 0 for p in probes)
    lines = {r["nodeid"].split("::")[-1]: r for r in records if "nodeid" in r}
    assert set(lines) == {"test_own", "test_child"}
    assert lines["test_own"]["own"] >= 0.25
    assert lines["test_own"]["children"] < 0.1
    assert lines["test_child"]["children"] >= 0.25
    assert lines["test_child"]["own"] < 0.2


def test_property_tests_have_no_deadline_that_a_busy_machine_would_fail() -> None:
    from hypothesis import settings

    assert settings.default.deadline is None  # 200 ms by default: a timed assertion
    assert settings.default.max_examples == settings.get_profile("default").max_examples
