"""The client's cache directory: replies and settled chunks side by side.

Level 1, the replies
    Every successful reply, in ``<cache_dir>/http.sqlite``
    (:class:`~cctx_research.net.HttpCache`): only replies that are HTTP 200
    *and* carry a 2xx envelope are stored
    (:func:`~.envelope.cacheable`). The expiry is chosen per request by the
    client's cache policy (:mod:`.cache_policy`): forever for data that can
    no longer change, ``expire_after`` otherwise.

Level 2, the chunks (:class:`~.chunks.ChunkStore`)
    The parsed frame of one chunk, as an Arrow IPC (Feather v2) file in
    ``<cache_dir>/chunks`` followed by a 20-byte trailer (a CRC-32 and the
    length, so a damaged or truncated file is caught, not read as wrong
    values), written to a temporary file and renamed into place. IPC rather
    than Parquet because reading it is a plain copy: a 30-day pull reads 30
    chunk files, and decoding 30 Parquet files costs more than a warm pull
    may (3x one Parquet read of the same frame). The file name hashes
    everything that shapes the frame, library version included, so a new
    version or a different service never reads an old entry. A warm pull
    reads these and skips both HTTP replay and JSON parsing. Settled chunks
    (windows that ended more than the settling horizon ago) are kept
    forever; a chunk touching the recent past is used for ``expire_after``
    seconds after it was written, like its replies.

Damage and faults are told apart as :mod:`cctx_research.net.cache` says.

Read-only directories
    A directory that cannot be written but holds chunk files is opened
    read-only, with a :class:`~cctx_research.errors.CacheWarning`: the
    chunks it holds are answered from it, nothing new is stored, and the
    reply database is not used (SQLite needs to write beside a database in
    WAL mode even to read it). A read-only directory with nothing to read
    is a :class:`~cctx_research.errors.CacheError`.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

from ..errors import CacheWarning
from ..net import HttpCache
from ..net.cache import fault, writable
from . import envelope

__all__ = ["CHUNK_DIR", "open_replies"]

logger = logging.getLogger(__name__)

CHUNK_DIR = "chunks"


def open_replies(directory: Path, *, base_url: str, namespace: str, expire_after: int) -> HttpCache:
    """The reply cache of a client caching in ``directory`` (level 1).

    Raises
    ------
    CacheError
        The directory cannot be written and holds no chunk to answer from.

    Warns
    -----
    CacheWarning
        The directory cannot be written but holds chunks: it is used
        read-only.
    """
    problem = writable(directory)
    if problem is not None:
        chunks = directory / CHUNK_DIR
        try:
            readable = chunks.is_dir() and any(chunks.glob("*.arrow"))
        except OSError:
            readable = False
        if not readable:
            raise fault(directory, problem, "creating a file in it")
        message = (
            f"the cache directory {directory} cannot be written ({problem.strerror}): "
            "answering from the chunks it holds and storing nothing new. "
            "To cache, point CCTX_CACHE_DIR (or cache_dir=) at a writable directory; "
            "cache=False (--no-cache) skips the cache"
        )
        logger.warning(message)
        # at the user's line: above this, Session.__init__ and Client.__init__
        warnings.warn(CacheWarning(message), stacklevel=4)
    return HttpCache(
        directory, base_url=base_url, namespace=namespace, expire_after=expire_after,
        cacheable=envelope.cacheable, read_only=problem is not None,
    )  # fmt: skip
