"""What the browser tests share: Debian's Chromium, how to launch it, a free port."""

from __future__ import annotations

import importlib.util
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
"""Debian's Chromium (`make test` installs it; browsers cannot be downloaded)."""
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make test installs it)"
)


def launch(playwright: Any) -> Any:
    """A headless Chromium browser, launched through Playwright from Debian's binary."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def needs_module(name: str) -> None:
    """Skip the calling test module when ``name`` is not installed.

    Found, not imported: Voila and JupyterLab take seconds to import (jupyter_server builds
    a URI grammar on import), a cost every parallel worker would pay while collecting.
    """
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not installed", allow_module_level=True)


def jupyter_server(app: str) -> list[str]:
    """The command starting Jupyter's server app ``app`` (``"voila.app"``,
    ``"jupyterlab.labapp"``; its arguments follow), as the dashboard starts its own: without
    the IRI grammar jsonschema would compile on import (``cctx_research.views.jupyter``)."""
    return [sys.executable, "-c",
            "import sys; from cctx_research.views.jupyter import without_iri_grammar; "
            f"without_iri_grammar(); from {app} import main; sys.exit(main())"]  # fmt: skip
