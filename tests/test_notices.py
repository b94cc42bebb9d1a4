"""The toolkit's warnings in a real Jupyter kernel: one status line, no file path, no code line."""

from __future__ import annotations

import json
import warnings

import pytest

from cctx_research.errors import CoverageWarning, SyntheticDataWarning
from cctx_research.views import notices

CELLS = [
    # what a notebook does: import the toolkit, then something warns
    "import warnings\n"
    "import cctx_research as cctx\n"
    "from cctx_research.errors import CoverageWarning\n"
    'warnings.warn(CoverageWarning("the data covers <1 June> to 3 June"), stacklevel=1)',
    'warnings.warn("a library\'s own warning", UserWarning, stacklevel=1)',
    # the filters still work: the user asked for errors
    'warnings.simplefilter("error", CoverageWarning)\n'
    "try:\n"
    '    warnings.warn(CoverageWarning("raised, not shown"), stacklevel=1)\n'
    "except CoverageWarning as exc:\n"
    '    print("raised:", exc)',
]


def _outputs(cell) -> list[dict]:
    return [dict(o) for o in cell.get("outputs", [])]


@pytest.mark.slow
def test_a_kernel_shows_the_toolkits_warnings_as_status_lines(tmp_path):
    # imported here, not at module level: nbformat's validator costs seconds of CPU that
    # collection of the suite need not pay
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    toolkit, library, filtered = (_outputs(c) for c in nb.cells)

    (shown,) = toolkit
    assert shown["output_type"] == "display_data"
    html = shown["data"]["text/html"]
    assert 'role="status"' in html
    assert "Partial data: the data covers &lt;1 June&gt; to 3 June" in html  # escaped
    assert shown["data"]["text/plain"] == "Partial data: the data covers <1 June> to 3 June"
    text = json.dumps(toolkit)
    assert "CoverageWarning" not in text
    assert ".py:" not in text
    assert "stacklevel" not in text  # no line of code

    # every other warning as Python shows it
    (stderr,) = library
    assert stderr["name"] == "stderr"
    assert "UserWarning: a library's own warning" in stderr["text"]

    (printed,) = filtered
    assert printed["text"] == "raised: raised, not shown\n"


def test_outside_a_kernel_nothing_changes():
    before = warnings.showwarning
    assert notices.show_in_notebooks() is False
    assert warnings.showwarning is before


def test_the_words_of_each_kind():
    assert notices.text_line("x", CoverageWarning) == "Partial data: x"
    assert notices.text_line("x", SyntheticDataWarning) == "Synthetic data: x"
    assert notices.title(UserWarning) == "Warning"
    line = notices.status_line("<b>", CoverageWarning)
    assert "&lt;b&gt;" in line
    assert "<b>" not in line
