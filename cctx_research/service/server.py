"""Running the service: in the foreground (``serve``) or in a background thread.

Both use waitress, a production WSGI server (a pool of worker threads behind
one event loop). :func:`serve` blocks until SIGINT or SIGTERM and then shuts
down cleanly; :func:`start_in_background` returns a :class:`ServerHandle` for
local data (:meth:`.local.LocalService.serve`) and for tests.

Examples
--------
>>> from cctx_research.service.local import local_service
>>> with local_service(as_of="2024-07-01", days=1).serve() as handle:  # doctest: +SKIP
...     handle.url
'http://127.0.0.1:54321'
"""

from __future__ import annotations

import contextlib
import errno
import logging
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import waitress
from waitress import wasyncore

from ..config import Settings

__all__ = ["ServerHandle", "serve", "start_in_background"]

logger = logging.getLogger(__name__)
# waitress warns "Task queue depth is N" whenever a request waits for a free
# worker thread: routine under concurrent clients, and it buries real warnings.
logging.getLogger("waitress.queue").setLevel(logging.ERROR)

WSGIApp = Callable[..., Any]
_POLL_SECONDS = 0.5


def _create(app: WSGIApp, host: str, port: int, threads: int) -> Any:
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive int, got {threads!r}")
    try:
        return waitress.create_server(
            app,
            host=host,
            port=port,
            threads=threads,
            ident="cctx-research",
            clear_untrusted_proxy_headers=True,
        )
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise OSError(
                exc.errno,
                f"port {port} on {host} is in use (another service listens there): pass "
                "another port, e.g. --port 8001, or --port 0 for a free one",
            ) from exc
        if exc.errno in (errno.EADDRNOTAVAIL, errno.EACCES):
            raise OSError(
                exc.errno,
                f"cannot listen on {host}:{port} ({exc.strerror}): pass --host 127.0.0.1 and "
                "a port above 1023",
            ) from exc
        raise


def _url(server: Any) -> str:
    host = server.effective_host
    if ":" in str(host):
        host = f"[{host}]"
    return f"http://{host}:{server.effective_port}"


def _run_until(server: Any, stop: threading.Event) -> None:
    """Run waitress's event loop until ``stop`` is set, then shut everything down."""
    try:
        while not stop.is_set():
            server.asyncore.loop(
                timeout=_POLL_SECONDS,
                map=server._map,
                use_poll=server.adj.asyncore_use_poll,
                count=1,
            )
    finally:
        server.task_dispatcher.shutdown(timeout=5)
        wasyncore.close_all(server._map)


class ServerHandle:
    """A service running in a daemon thread; close it (or use ``with``) to stop it.

    Attributes
    ----------
    url : str
        Base URL, e.g. ``http://127.0.0.1:54321``.
    settings : Settings or None
        Client settings to reach it, when the credentials are known
        (:func:`embedded` sets them).
    """

    def __init__(self, server: Any, *, settings: Settings | None = None) -> None:
        self._server = server
        self._stop = threading.Event()
        self.url = _url(server)
        self.settings = settings
        self._thread = threading.Thread(
            target=_run_until, args=(server, self._stop), name="cctx-service", daemon=True
        )
        self._thread.start()

    @property
    def closed(self) -> bool:
        """The server has been asked to stop."""
        return self._stop.is_set()

    def close(self, timeout: float = 10.0) -> None:
        """Stop serving, wait for the worker threads, release the port (idempotent)."""
        if not self._stop.is_set():
            self._stop.set()
            # an OSError means the trigger is closed already: the loop is ending anyway
            with contextlib.suppress(OSError):
                self._server.pull_trigger()
        self._thread.join(timeout)

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "running"
        return f"<ServerHandle {self.url} {state}>"


def start_in_background(
    app: WSGIApp, host: str = "127.0.0.1", port: int = 0, *, threads: int = 8
) -> ServerHandle:
    """Serve ``app`` with waitress in a daemon thread.

    Parameters
    ----------
    app : callable
        A WSGI application (see :func:`~cctx_research.service.app.make_app`).
    host : str, default "127.0.0.1"
    port : int, default 0
        0 picks a free port; read it from ``handle.url``.
    threads : int, default 8
        Worker threads.

    Returns
    -------
    ServerHandle
        Running already; ``close()`` it, or use it as a context manager.

    Raises
    ------
    OSError
        If the address cannot be bound.
    """
    handle = ServerHandle(_create(app, host, port, threads))
    logger.debug("service running in the background at %s", handle.url)
    return handle


def serve(app: WSGIApp, host: str = "127.0.0.1", port: int = 8000, *, threads: int = 8) -> None:
    """Serve ``app`` in the foreground until SIGINT or SIGTERM, then shut down cleanly.

    Parameters
    ----------
    app : callable
        A WSGI application.
    host : str, default "127.0.0.1"
    port : int, default 8000
    threads : int, default 8

    Raises
    ------
    OSError
        If the address cannot be bound (e.g. the port is in use).
    """
    server = _create(app, host, port, threads)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        logger.info("received %s: shutting down", signal.Signals(signum).name)
        stop.set()
        server.pull_trigger()

    previous = {}
    in_main = threading.current_thread() is threading.main_thread()
    if in_main:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)
    logger.info("serving on %s (%d threads); stop with Ctrl-C", _url(server), threads)
    try:
        _run_until(server, stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    logger.info("service stopped")
