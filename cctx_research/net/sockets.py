"""Knowing the sockets of requests in flight, so that a cancelled call can abandon them.

A thread blocked reading a slow reply cannot be stopped from outside, but
its socket can be shut down: the read then returns at once and the request
fails. Every session of a :class:`~.sender.Sender` mounts a
:class:`TrackingAdapter`, whose connections register their socket in the
sender's :class:`Sockets` when they connect; ``Sender.abort()`` shuts
them all down. Sockets are held weakly: a closed connection drops out.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import weakref
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from .bodies import WholeBody

__all__ = ["Sockets", "TrackingAdapter"]


class Sockets:
    """The sockets of one transport's connections (weakly held, guarded by a lock)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._holding = 0

    def add(self, sock: socket.socket | None) -> None:
        """Register a connected socket; shut it down at once while a shutdown holds."""
        if sock is None:
            return
        with self._lock:
            if not self._holding:
                self._open.add(sock)
                return
        # a connection that was still being made when the call was abandoned
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def shutdown(self) -> int:
        """Shut every known socket down (a blocked read returns at once) and hold.

        Until :meth:`release`, sockets that finish connecting are shut down
        too: a request that was connecting at the moment of the shutdown
        would otherwise register afterwards and block its thread.
        """
        with self._lock:
            socks = list(self._open)
            self._open = weakref.WeakSet()
            self._holding += 1
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        return len(socks)

    def release(self) -> None:
        """End the hold of one :meth:`shutdown` (once its call's threads are gone)."""
        with self._lock:
            self._holding = max(0, self._holding - 1)


def _tracked(pool: type[HTTPConnectionPool], conn: type[HTTPConnection], sockets: Sockets) -> type:
    class Connection(conn):  # type: ignore[misc, valid-type]
        def connect(self) -> None:
            super().connect()
            sockets.add(getattr(self, "sock", None))

    return type(f"Tracked{pool.__name__}", (pool,), {"ConnectionCls": Connection})


class TrackingAdapter(HTTPAdapter):
    """An :class:`~requests.adapters.HTTPAdapter` that registers each socket it opens.

    One per session; a session serves one request at a time, so its pool
    holds a single connection. Its replies are read whole, in one call
    (:class:`~.bodies.WholeBody`).
    """

    def __init__(self, sockets: Sockets, **kwargs: Any) -> None:
        self._sockets = sockets
        kwargs.setdefault("pool_connections", 1)
        kwargs.setdefault("pool_maxsize", 1)
        super().__init__(**kwargs)

    def build_response(self, req: requests.PreparedRequest, resp: Any) -> requests.Response:
        return super().build_response(req, WholeBody(resp))

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": _tracked(HTTPConnectionPool, HTTPConnection, self._sockets),
            "https": _tracked(HTTPSConnectionPool, HTTPSConnection, self._sockets),
        }
