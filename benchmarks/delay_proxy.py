"""A TCP proxy on loopback that adds a round-trip time: the service as users reach it.

Every byte going either way is held ``rtt / 2`` before it is passed on
(a delay line per direction, so pipelined data is not serialised: the
link has latency but no bandwidth limit). The TCP handshake with the proxy
itself is local, so a new connection costs no extra round trip: that
favours clients that open a connection per request, such as the naive loop.

Run alone::

    .venv/bin/python benchmarks/delay_proxy.py http://127.0.0.1:8000 --rtt-ms 50
"""

from __future__ import annotations

import argparse
import contextlib
import queue
import socket
import threading
import time
from urllib.parse import urlsplit

__all__ = ["DelayProxy"]


class DelayProxy:
    """Forward ``127.0.0.1:<port>`` to ``upstream``, adding ``rtt`` seconds per round trip.

    Use as a context manager; :attr:`url` is the proxied base URL.
    """

    def __init__(self, upstream: str, *, rtt: float = 0.050) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.delay = rtt / 2
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"{parts.scheme}://127.0.0.1:{self.port}"
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="delay-proxy", daemon=True)

    def __enter__(self) -> DelayProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            socks, self._sockets = self._sockets, []
        for s in socks:
            with contextlib.suppress(OSError):
                s.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets += [client, upstream]
            self._pipe(client, upstream)
            self._pipe(upstream, client)

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        line: queue.SimpleQueue[tuple[float, bytes]] = queue.SimpleQueue()

        def read() -> None:
            while True:
                try:
                    data = src.recv(1 << 16)
                except OSError:
                    data = b""
                line.put((time.monotonic() + self.delay, data))
                if not data:
                    return

        def write() -> None:
            while True:
                due, data = line.get()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                try:
                    if not data:
                        dst.shutdown(socket.SHUT_WR)
                        return
                    dst.sendall(data)
                except OSError:
                    return

        for fn in (read, write):
            threading.Thread(target=fn, name="delay-proxy-pipe", daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("upstream", help="the service's base URL")
    parser.add_argument("--rtt-ms", type=float, default=50.0, help="round-trip time added (50)")
    args = parser.parse_args()
    with DelayProxy(args.upstream, rtt=args.rtt_ms / 1000) as proxy:
        print(proxy.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
