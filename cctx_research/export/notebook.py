"""Notebooks as one self-contained HTML file whose widgets work with no network.

``nbconvert --to html`` loads the widget manager (the script that draws saved
widget state) from a CDN, so an exported notebook opened offline shows "Loading
widget..." forever. :func:`export_notebook` executes the notebook in a real
kernel (saving the widgets' state), then writes HTML with the widget manager
inline and figures embedded: nothing is fetched when the file is opened.

Examples
--------
>>> export_notebook("notebooks/02_chain_flows.ipynb", "exports/02.html")  # doctest: +SKIP
PosixPath('exports/02.html')
"""

from __future__ import annotations

import base64
import logging
import os
from importlib import resources
from pathlib import Path

from ..views.jupyter import without_iri_grammar

__all__ = ["export_notebook"]

logger = logging.getLogger(__name__)

_TEMPLATE = "cctx_offline"


def _templates() -> Path:
    return Path(str(resources.files(__package__) / "_nbconvert"))


def export_notebook(
    notebook: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    execute: bool = True,
    timeout: int = 600,
) -> Path:
    """Write ``notebook`` as one HTML file that shows its widgets offline.

    Parameters
    ----------
    notebook : str or Path
        An ``.ipynb`` file.
    out : str or Path
        The ``.html`` file to write (its directory is created).
    execute : bool, default True
        Run the notebook top to bottom first (in the directory it lives in),
        so outputs and widget state are fresh; ``False`` exports it as stored.
    timeout : int, default 600
        Seconds a cell may run.

    Returns
    -------
    pathlib.Path
        ``out``.

    Raises
    ------
    FileNotFoundError
        If ``notebook`` does not exist.
    ValueError
        If the paths do not end in ``.ipynb`` and ``.html``.
    ImportError
        Without the ``notebooks`` extra (``pip install 'cctx-research[notebooks]'``).
    """
    for name, value in (("notebook", notebook), ("out", out)):
        if not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"{name} must be a str or Path, got {type(value).__name__}")
    if not isinstance(execute, bool):
        raise TypeError(f"execute must be True or False, got {type(execute).__name__}")
    source, target = Path(notebook), Path(out)
    if source.suffix != ".ipynb":
        raise ValueError(f"notebook must be an .ipynb file, got {str(source)!r}")
    if target.suffix not in (".html", ".htm"):
        raise ValueError(f"out must be an .html file, got {str(target)!r}")
    if not source.is_file():
        raise FileNotFoundError(f"no such notebook: {str(source)!r}")
    without_iri_grammar()  # nbformat's jsonschema: 1.4-2 s of CPU spared (views/jupyter.py)
    try:
        import nbformat
        from nbconvert import HTMLExporter
    except ImportError as exc:
        raise ImportError(
            "exporting notebooks needs nbconvert: pip install 'cctx-research[notebooks]'"
        ) from exc

    nb = nbformat.read(source, as_version=4)
    if execute:
        from nbclient import NotebookClient

        NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(source.parent.resolve())}},
            store_widget_state=True,
        ).execute()
    exporter = HTMLExporter(
        template_name=_TEMPLATE,
        extra_template_basedirs=[str(_templates())],
        embed_images=True,
    )
    manager = (_templates() / "assets" / "html-manager-embed.js").read_bytes()
    body, _ = exporter.from_notebook_node(
        nb, resources={"cctx_widget_manager_b64": base64.b64encode(manager).decode("ascii")}
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.part")
    try:
        partial.write_text(body, encoding="utf-8")
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    logger.info("exported %s to %s (%d bytes)", source, target, len(body))
    return target
