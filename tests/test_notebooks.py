"""The example notebooks: stored clean, and every one runs in a real Jupyter kernel.

Each notebook is executed with nbclient in the ``python3`` kernel (the
interpreter running the tests: jupyter_client swaps ``python`` in the
kernelspec for ``sys.executable``) against the embedded sample, with a fresh
cache directory and no credentials. A cell error fails the test.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sample_seed import seed

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
EXPECTED = [
    "01_quickstart.ipynb",
    "02_chain_flows.ipynb",
    "03_volume_trends.ipynb",
    "04_address_profiles.ipynb",
    "05_report.ipynb",
    "06_latency_and_v2.ipynb",
    "07_actors.ipynb",
]
CELL_TIMEOUT = 120  # seconds per cell


@pytest.fixture
def nbformat() -> Any:
    """nbformat, imported by the tests that read a notebook: its validator loads jsonschema
    and lark grammars (seconds of CPU), which collection of the suite need not pay."""
    return pytest.importorskip("nbformat")


@pytest.fixture
def nbclient() -> Any:
    return pytest.importorskip("nbclient")


def _read(nbformat: Any, name: str) -> Any:
    return nbformat.read(NOTEBOOKS / name, as_version=4)


def test_the_notebooks_are_there() -> None:
    assert NAMES == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_stored_clean(name: str, nbformat: Any) -> None:
    nb = _read(nbformat, name)
    nbformat.validate(nb)
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert "What this notebook shows" in first.source
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{name}: stored with outputs"
            assert cell.execution_count is None, f"{name}: stored with execution counts"
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{name}: needs exactly one cell tagged 'parameters'"
    for parameter in ("window_days", "chains", "source"):
        assert f"{parameter} =" in tagged[0].source
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "cctx.connect(" in code
    assert "widgets." in code  # a widget section
    assert "plots.plot_" in code or "report.build" in code
    text = json.dumps(nb)
    for secret in ("api_key=", "CCTX_API_KEY=", "x-api-key"):
        assert secret not in text


def _outputs_text(nb) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(json.dumps(out))
    return "\n".join(parts)


@pytest.mark.slow
@pytest.mark.parametrize("name", EXPECTED)
def test_runs_in_a_kernel(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nbformat: Any, nbclient: Any
) -> None:
    from cctx_research.config import DEMO_API_KEY

    for variable in ("CCTX_API_KEY", "CCTX_PROJECT_ID", "CCTX_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("CCTX_CACHE_DIR", str(seed(tmp_path / "cache")))  # built once a session
    nb = _read(nbformat, name)
    client = nbclient.NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError on any cell error

    text = _outputs_text(nb)
    assert DEMO_API_KEY not in text
    assert "SYNTHETIC SAMPLE" in text  # it says which source it used
    assert "image/png" in text  # plots inline
    assert "application/vnd.jupyter.widget-view+json" in text  # a widget
    # windows end at the last complete day, inside the data: no coverage
    # warning, no error of any kind in any output
    assert "CoverageWarning" not in text
    assert "KeyboardInterrupt" not in text
    assert '"output_type": "error"' not in text
    assert "Traceback" not in text
    if name == "07_actors.ipynb":
        _each_actor_row_says_it_is_synthetic(nb)


def _each_actor_row_says_it_is_synthetic(nb: Any) -> None:
    """Real labels beside synthetic volumes: every row of each actor table says so, and the
    report's cards are styled as cards in the notebook, where its stylesheet is not."""
    tables = 0
    for cell in nb.cells:
        if cell.cell_type != "code" or "marked(" not in cell.source or "def " in cell.source:
            continue
        page = "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)
        rows = re.findall(r"<tr>(.*?)</tr>", page.split("<tbody>")[1], flags=re.S)
        assert rows
        assert all(re.search(r">synthetic</td>", row) for row in rows), cell.source[:60]
        tables += 1
    assert tables == 3
    text = _outputs_text(nb)
    assert 'class=\\"card\\" style=' in text or 'class="card" style=' in text


@pytest.mark.slow
def test_export_to_html_with_nbconvert_as_documented(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nbformat: Any
) -> None:
    """The README's export command: execute a notebook and write it as HTML."""
    pytest.importorskip("nbconvert")
    for variable in ("CCTX_API_KEY", "CCTX_PROJECT_ID", "CCTX_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("CCTX_CACHE_DIR", str(seed(tmp_path / "cache")))
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "nbconvert",
        "--to",
        "html",
        "--execute",
        "--embed-images",
        str(NOTEBOOKS / "01_quickstart.ipynb"),
        "--output-dir",
        str(tmp_path / "exports"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    page = (tmp_path / "exports" / "01_quickstart.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in page  # the plots, inline
    assert "SYNTHETIC SAMPLE" in page
    stored = _read(nbformat, "01_quickstart.ipynb")
    assert stored.cells[3].outputs == []  # the stored copy stays clean
