"""A reply's body, read in one piece.

``requests`` reads a body in pieces of 10 kB, each with its own overhead:
about 40 for a page of mints, a measurable share of a cold pull's CPU (0.5
ms a page of 320 kB over loopback). :class:`WholeBody` wraps the urllib3
response an adapter builds its reply from, so that requests reads the body
in one call, through the ``stream`` hook it reads every body with. The read
happens where requests expects it, so its faults (a dropped connection, a
socket shut down by ``Sender.abort``) become requests' own exceptions, and
everything else (status, headers, releasing the connection, the reply
cache's copy) is the wrapped response's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["WholeBody"]


class WholeBody:
    """A urllib3 response whose body ``requests`` reads whole, in one call.

    Parameters
    ----------
    response : urllib3.HTTPResponse
        The response an adapter hands to ``build_response``.
    decode : bool, default True
        Undo a ``Content-Encoding`` (gzip...) when requests asks to, as it
        does for a reply from a socket; ``False`` hands the body on as it
        is (a transport's reply is already what the application sent).
    """

    def __init__(self, response: Any, *, decode: bool = True) -> None:
        self.response = response
        self.decode = decode

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        """The whole body, in one piece (``amt`` is ignored: the body fits in memory)."""
        data = self.response.read(decode_content=bool(decode_content) and self.decode)
        if data:
            yield data

    def __getattr__(self, name: str) -> Any:
        # everything but the read is the wrapped response's (status, headers,
        # release_conn, what requests-cache copies)
        return getattr(self.response, name)
