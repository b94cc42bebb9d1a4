"""Serving the app: pick the data, start its service, run Voila until Ctrl-C.

:func:`run` is what ``cctx-research dashboard`` does:

1. **The data** (:func:`data_source`). ``data=PATH``: a ledger or transfers
   file (what ``cctx-research serve --data`` accepts), served on a free
   loopback port with a key made for this run
   (:func:`cctx_research.connection.serve_on_loopback`). Otherwise, with
   ``CCTX_API_KEY`` and ``CCTX_PROJECT_ID`` set: that service, as
   configured. Otherwise: the bundled synthetic sample, built once and
   served on loopback like a file.
2. **The kernels' environment.** Each browser page runs ``app.ipynb`` in its
   own kernel, which calls :func:`cctx_research.connect`; the ``CCTX_*``
   variables set for the kernels point it at the service of step 1, name
   the source (``CCTX_SOURCE``) and mark a synthetic one (``CCTX_SYNTHETIC``).
   The key made for a run lives in the environment of this process and its
   kernels only, never in a file or a log line.
3. **Voila** serves the notebook at ``http://HOST:PORT/``, in this process.
   The URL is announced once the port is bound. Ctrl-C (SIGINT) or SIGTERM
   stops the server, shuts the kernels down and stops the service.

A page's kernel (about 250 MB) lives as long as its page. Voila shuts it
down when the browser says the page is closing (a POST on ``beforeunload``,
which needs the ``_xsrf`` cookie the page handler here sets: Voila's own
never did, so it refused every goodbye). When the browser cannot say so (it
crashed, was killed, lost the network, or a phone froze the tab), the kernel
is culled once it has had no page connected and been idle for
``kernel_timeout`` seconds (jupyter_server's ``cull_idle_timeout``, checked
every :func:`cull_interval` seconds; a kernel with its page still open is
never culled, nor a busy one). So the server's memory comes back to what it
was however many pages were opened (``benchmarks/reliability.py`` measures
it).

The page is Voila's ``lab`` template with nothing loaded from outside the app
(``page/index.html.j2``: no CDN stylesheets or fonts).

Examples
--------
>>> from cctx_research.webapp.server import run
>>> run(port=8866, on_ready=print)  # doctest: +SKIP
http://127.0.0.1:8866/
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..views.jupyter import without_iri_grammar

if TYPE_CHECKING:
    from ..connection import LoopbackService

__all__ = [
    "KERNEL_TIMEOUT",
    "NOTEBOOK",
    "PAGE_TEMPLATE",
    "DataSource",
    "check_port",
    "cull_interval",
    "culling_options",
    "data_source",
    "run",
    "url",
]

logger = logging.getLogger(__name__)

NOTEBOOK = Path(__file__).with_name("app.ipynb")
"""The notebook Voila runs for each page."""
PAGE_TEMPLATE = Path(__file__).with_name("page")
"""The page's template: Voila's ``lab`` with nothing fetched from outside the app."""
KERNEL_TIMEOUT = 120
"""Seconds a kernel whose page is gone may stay idle before it is shut down."""


@dataclass
class DataSource:
    """Where the kernels get their data, and what to stop afterwards.

    Attributes
    ----------
    description : str
        For the log: what is served.
    env : dict of str
        ``CCTX_*`` variables for the kernels (empty: the configured service).
    handle : LoopbackService or None
        The loopback service started for the run, if any.
    """

    description: str
    env: dict[str, str] = field(default_factory=dict, repr=False)
    handle: Any = None

    def close(self) -> None:
        """Stop the loopback service, if one was started (idempotent)."""
        if self.handle is not None:
            self.handle.close()


def _served(service: LoopbackService) -> DataSource:
    settings = service.settings
    env = {
        "CCTX_BASE_URL": settings.base_url,
        "CCTX_PROJECT_ID": settings.project_id,
        "CCTX_API_KEY": settings.api_key.get(),
        "CCTX_SOURCE": settings.source,
        "CCTX_SYNTHETIC": "1" if settings.synthetic else "0",
        "CCTX_PAGE_SIZE": str(settings.page_size),
    }
    return DataSource(service.description, env, service)


def data_source(data: str | Path | None = None, *, sample: bool = False) -> DataSource:
    """Resolve what the app shows and start its loopback service when it needs one.

    Parameters
    ----------
    data : path, optional
        A file :func:`cctx_research.load` reads (a ledger or transfers file), or
        a ledger dataset or ``sync`` directory (served as it lies on disk, a
        column at a time: :class:`cctx_research.service.dataset.LedgerDataset`).
    sample : bool, default False
        The bundled synthetic sample even when credentials are configured.

    Returns
    -------
    DataSource
        ``close()`` it when done.

    Raises
    ------
    DataError
        If ``data`` is missing or does not fit either kind.
    ValueError
        If both ``data`` and ``sample`` are given.
    """
    from ..connection import serve_on_loopback

    if data is not None and sample:
        raise ValueError("pass either a data file or sample=True, not both")
    if data is None and not sample and Settings.from_env().has_credentials:
        return DataSource(f"the configured service at {Settings.from_env().base_url}")
    # a key made for this run (the default); the sample is live, named as connect()
    # names it, so that the two share cached days
    path = None if data is None else Path(data).expanduser().resolve()
    source = _served(serve_on_loopback(path))
    # the ledger behind the served data, for the "Who moves the money" tab
    source.env["CCTX_LEDGER"] = "sample" if path is None else str(path)
    return source


@contextlib.contextmanager
def _environment(changes: Mapping[str, str]) -> Iterator[None]:
    """Set variables for the kernels this process starts; restore them afterwards."""
    saved = {name: os.environ.get(name) for name in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def check_port(host: str, port: int) -> None:
    """Fail early, with what to do, when ``host:port`` cannot be bound.

    Raises
    ------
    ValueError
        If ``port`` is not in 1..65535.
    OSError
        If the address is in use or cannot be bound.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"port must be 1..65535, got {port!r}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise OSError(
                exc.errno, f"cannot listen on {host}:{port} ({exc.strerror}); pass another --port"
            ) from exc


def cull_interval(kernel_timeout: int) -> int:
    """Seconds between two looks for kernels to cull: a quarter of the timeout, 1 to 30."""
    return max(1, min(30, kernel_timeout // 4))


def culling_options(kernel_timeout: int = KERNEL_TIMEOUT) -> list[str]:
    """Voila's command-line options that shut down the kernels of closed pages.

    Parameters
    ----------
    kernel_timeout : int, default 120
        Seconds a kernel with no page connected may stay idle.

    Returns
    -------
    list of str
        ``--MappingKernelManager.cull_*`` options (jupyter_server's culler).

    Raises
    ------
    ValueError
        If ``kernel_timeout`` is not a whole number of seconds, at least 1.

    Examples
    --------
    >>> culling_options(60)[:2]
    ['--MappingKernelManager.cull_idle_timeout=60', '--MappingKernelManager.cull_interval=15']
    """
    if (
        isinstance(kernel_timeout, bool)
        or not isinstance(kernel_timeout, int)
        or kernel_timeout < 1
    ):
        raise ValueError(
            "kernel_timeout must be a whole number of seconds, at least 1 "
            f"(default {KERNEL_TIMEOUT}), got {kernel_timeout!r}"
        )
    return [
        f"--MappingKernelManager.cull_idle_timeout={kernel_timeout}",
        f"--MappingKernelManager.cull_interval={cull_interval(kernel_timeout)}",
        # a kernel whose page is open is in use, however idle; a busy one is working
        "--MappingKernelManager.cull_connected=False",
        "--MappingKernelManager.cull_busy=False",
    ]


def _voila_app(on_ready: Callable[[str], None]) -> Any:
    without_iri_grammar()  # 1.4 s of CPU a start (views/jupyter.py)
    try:
        import tornado.ioloop
        from voila.app import Voila
        from voila.tornado.handler import TornadoVoilaHandler
    except ImportError as exc:
        raise ImportError(
            "the dashboard app needs voila: pip install 'cctx-research[notebooks]'"
        ) from exc

    class _Page(TornadoVoilaHandler):
        async def prepare(self, *args: Any, **kwargs: Any) -> None:
            await super().prepare(*args, **kwargs)
            # The page asks Voila to shut its kernel down on `beforeunload`, in a
            # POST that carries the `_xsrf` cookie; Voila's page never sets that
            # cookie, so every goodbye was refused (403) and the kernel lived on.
            # Reading the token sets the cookie, as Jupyter's own pages do.
            _ = self.xsrf_token

    class _Voila(Voila):
        def init_handlers(self) -> list:
            handlers = super().init_handlers()
            return [
                (h[0], _Page, *h[2:]) if h[1] is TornadoVoilaHandler else h for h in handlers
            ]

        def listen(self) -> None:
            # Voila binds the port, then runs the loop until stopped; a
            # callback queued now runs only once the port is bound.
            tornado.ioloop.IOLoop.current().add_callback(lambda: on_ready(self.display_url))
            super().listen()

        def setup_template_dirs(self) -> None:
            super().setup_template_dirs()
            # the page's own index.html.j2 first; it extends Voila's lab template
            self.template_paths.insert(0, str(PAGE_TEMPLATE))

    return _Voila()


def url(host: str, port: int) -> str:
    """The app's address."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def run(
    *,
    data: str | Path | None = None,
    sample: bool = False,
    host: str = "127.0.0.1",
    port: int = 8866,
    log_level: str = "WARN",
    kernel_timeout: int = KERNEL_TIMEOUT,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the app until Ctrl-C (SIGINT) or SIGTERM, then stop everything it started.

    Parameters
    ----------
    data : path, optional
        A ledger or transfers file to show (see :func:`data_source`).
    sample : bool, default False
        The synthetic sample even when credentials are configured.
    host : str, default "127.0.0.1"
    port : int, default 8866
    log_level : str, default "WARN"
        Voila's own log level.
    kernel_timeout : int, default 120
        Seconds a page's kernel may stay idle with no page connected before it
        is shut down (see the module's text).
    on_ready : callable, optional
        Called with the app's URL once it accepts connections.

    Raises
    ------
    ValueError
        If ``kernel_timeout`` is not a whole number of seconds, at least 1.
    OSError
        If the port cannot be bound.
    DataError
        If ``data`` cannot be read.
    ImportError
        Without the ``notebooks`` extra.
    """
    culling = culling_options(kernel_timeout)
    check_port(host, port)
    if log_level != "DEBUG":
        # one line per page request would bury what matters
        logging.getLogger("tornado.access").setLevel(logging.WARNING)
    address = url(host, port)
    voila = _voila_app(lambda _shown: (on_ready or (lambda _u: None))(address))
    source = data_source(data, sample=sample)
    try:
        logger.info("dashboard data: %s", source.description)
        with _environment(source.env):
            voila.initialize(
                [
                    str(NOTEBOOK),
                    f"--Voila.ip={host}",
                    f"--Voila.port={port}",
                    "--Voila.port_retries=0",
                    "--Voila.open_browser=False",
                    f"--Voila.log_level={log_level}",
                    # the page, not the notebook's code, is the app
                    "--VoilaConfiguration.strip_sources=True",
                    *culling,
                ]
            )
            voila.start()  # returns after Ctrl-C/SIGTERM, with the kernels shut down
    finally:
        source.close()
    logger.info("dashboard stopped")
