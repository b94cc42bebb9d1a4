"""The toolkit's warnings as status lines in notebooks, never a stderr box with a file path.

A :class:`~cctx_research.errors.CctxWarning` is something a reader must see:
the numbers are synthetic, a window reaches past the data, the cache is
read-only. Python prints a warning as ``.../widgets/overview.py:152:
CoverageWarning: ...`` followed by the line of code that issued it, which a
notebook shows in a pink stderr box and an exported notebook keeps.

In a Jupyter kernel, ``import cctx_research`` calls :func:`show_in_notebooks`:
from then on the toolkit's warnings are displayed as one status line
(:func:`status_line`, with :func:`text_line` for front ends that show text
only), and every other warning as before. The filters are not touched:
``warnings.simplefilter("error", CoverageWarning)`` still raises and
``"ignore"`` still hides. The widgets' panels show the warnings of what they
fetch and draw on their own status line, in the same words.

Examples
--------
>>> from cctx_research.errors import CoverageWarning
>>> text_line("the data covers 1 June to 3 June", CoverageWarning)
'Partial data: the data covers 1 June to 3 June'
>>> 'role="status"' in status_line("x < y", CoverageWarning)
True
"""

from __future__ import annotations

import html
import sys
import warnings
from typing import Any

from ..errors import (
    CacheWarning,
    CctxWarning,
    CoverageWarning,
    LargeResultWarning,
    OtherTokenWarning,
    SyntheticDataWarning,
)

__all__ = ["WARN_STYLE", "show_in_notebooks", "status_line", "text_line", "title"]

WARN_STYLE = "color:#9a6700;font-weight:600"
"""The style of a status line that needs the reader's attention (the widgets use it too)."""

_TITLES: tuple[tuple[type[Warning], str], ...] = (
    (CoverageWarning, "Partial data"),
    (SyntheticDataWarning, "Synthetic data"),
    (CacheWarning, "Cache read-only"),
    (OtherTokenWarning, "Other tokens left out"),
    (LargeResultWarning, "Large result"),
    (CctxWarning, "Note"),
)


def title(category: type[Warning]) -> str:
    """What a warning of ``category`` is about, in two or three words ("Partial data")."""
    for kind, words in _TITLES:
        if isinstance(category, type) and issubclass(category, kind):
            return words
    return "Warning"


def text_line(message: Any, category: type[Warning]) -> str:
    """The warning as one plain line: its title, then its message."""
    return f"{title(category)}: {message}"


def status_line(message: Any, category: type[Warning]) -> str:
    """The warning as one HTML status line (escaped), styled like the widgets' status line."""
    return (
        f'<div class="cctx-status" role="status" style="{WARN_STYLE}">'
        f"&#9888; {html.escape(title(category))}: {html.escape(str(message))}</div>"
    )


def _kernel_shell() -> Any:
    """The IPython shell of this Jupyter kernel, or None outside one."""
    if "ipykernel" not in sys.modules:
        return None
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipykernel depends on IPython
        return None
    shell = get_ipython()
    return shell if getattr(shell, "kernel", None) is not None else None


def show_in_notebooks() -> bool:
    """Display the toolkit's warnings as status lines in this Jupyter kernel.

    Idempotent. Outside a Jupyter kernel (a script, a terminal, the tests)
    nothing changes.

    Returns
    -------
    bool
        Whether this process is a Jupyter kernel (and the display is in place).
    """
    if _kernel_shell() is None:
        return False
    current = warnings.showwarning
    if getattr(current, "_cctx_status_lines", False):
        return True

    def show(
        message: Any,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        if file is None and issubclass(category, CctxWarning):
            from IPython.display import display

            display(
                {
                    "text/html": status_line(message, category),
                    "text/plain": text_line(message, category),
                },
                raw=True,
            )
        else:
            current(message, category, filename, lineno, file, line)

    show._cctx_status_lines = True  # type: ignore[attr-defined]
    warnings.showwarning = show
    return True
