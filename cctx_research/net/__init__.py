"""The network floor: one request core, the wire under it, pacing, the reply cache.

Every part of the toolkit that talks HTTP does it here: the analytics
client (:mod:`cctx_research.client`), JSON-RPC sync
(:mod:`cctx_research.nodes`) and Circle's attestation API
(:mod:`cctx_research.iris`). This package knows no API and no data format:
each of those brings its addresses, its reply reader and its cache filter.

The modules:

- :mod:`.sender`: the core, :meth:`Sender.send` (attempts, backoff with
  full jitter, ``Retry-After``, cancelling, pacing, counters, secrets
  scrubbed), with its options record (:mod:`.options`);
- :mod:`.protocols`: what one request is (:class:`Outgoing`) and the plain
  JSON request paths, :func:`rest_get` and :func:`json_post`;
- :mod:`.replies`: reading a reply (:class:`JsonReader`, the
  :class:`Answer`); :mod:`.statuses`: what a status means;
- :mod:`.transports`: the wire (sockets, or a :class:`BaseTransport` such
  as :class:`WSGITransport` or :class:`MockTransport`); :mod:`.sockets`:
  abandoning requests in flight; :mod:`.bodies`: a body read in one piece;
- :mod:`.pacing`: a rate shared by threads; :mod:`.runner`: tasks on
  worker threads with adaptive concurrency; :mod:`.progress`: the bar;
  :mod:`.stats`: a call's counters;
- :mod:`.cache`: the reply cache (requests-cache, SQLite) and the faults
  of a cache directory; :mod:`.policy`: what the reply cache does with
  each request.

It imports the contract (settings, errors, provenance, argument checks)
and nothing else of the toolkit.

Examples
--------
>>> from cctx_research.net import MockTransport, Response, Sender, SenderOptions, rest_get
>>> service = MockTransport(lambda request: Response(200, {}, b'{"answer": 42}'))
>>> sender = Sender("http://api.invalid", SenderOptions(transport=service))
>>> sender.send(rest_get(sender.base_url, "v1/question")).body
{'answer': 42}
>>> sender.close()
"""

from __future__ import annotations

from .cache import HttpCache, default_cache_dir, parse_age
from .options import SenderOptions
from .pacing import TokenBucket
from .policy import DEFAULT_CACHING, NEVER_EXPIRE, NO_CACHING, Keep, ReplyPolicy, RequestCaching
from .progress import Progress
from .protocols import Outgoing, json_post, rest_get
from .replies import PLAIN, Answer, JsonReader, decoded, error_message
from .runner import Concurrency, Task, run
from .sender import Sender, sessions_from_environment
from .stats import Cancelled, RequestStats
from .transports import BaseTransport, MockTransport, Request, Response, WSGITransport

__all__ = [
    "DEFAULT_CACHING",
    "NEVER_EXPIRE",
    "NO_CACHING",
    "PLAIN",
    "Answer",
    "BaseTransport",
    "Cancelled",
    "Concurrency",
    "HttpCache",
    "JsonReader",
    "Keep",
    "MockTransport",
    "Outgoing",
    "Progress",
    "ReplyPolicy",
    "Request",
    "RequestCaching",
    "RequestStats",
    "Response",
    "Sender",
    "SenderOptions",
    "Task",
    "TokenBucket",
    "WSGITransport",
    "decoded",
    "default_cache_dir",
    "error_message",
    "json_post",
    "parse_age",
    "rest_get",
    "run",
    "sessions_from_environment",
]
