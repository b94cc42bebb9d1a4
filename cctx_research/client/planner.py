"""The page planner: which page size to ask for, and each chunk's pages.

Page size. The interface's maximum ``limit`` is not documented, and every
request costs a round trip, so by default (``page_size=None``) the client
learns the largest page the service accepts: it asks for the first page
with the largest size of :data:`LADDER` and steps down the ladder on each
``400``. A service that silently caps ``limit`` instead is caught by the
pager (:mod:`.paging`: a short first page is checked once). What was
learned is kept per service and operation in ``<cache_dir>/page-size.json``,
so the next session starts with it. An explicit ``page_size`` is used as
given (a silent cap still lowers it).

Pages. :class:`ChunkPages` drives the pure pager for one chunk and reports
what it saw (a full page, a cap) to the shared :class:`PageSize`.

Examples
--------
>>> size = PageSize(None)
>>> size.limit, size.known
(10000, False)
>>> size.rejected(10000)
True
>>> size.limit
5000
>>> size.accepted(5000)
>>> size.known
True
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import threading
from pathlib import Path

from .paging import PageRequest, pages

__all__ = ["LADDER", "ChunkPages", "PageSize"]

logger = logging.getLogger(__name__)

LADDER = (10_000, 5_000, 2_000, 1_000, 500, 200, 100)
"""Page sizes tried, largest first, until the service accepts one (100: the interface's default)."""

MEMO_FILE = "page-size.json"


class PageSize:
    """The page size of one service and operation, learned once (thread-safe).

    Parameters
    ----------
    page_size : int, optional
        An explicit size (used as given); ``None`` learns it.
    memo : Path, optional
        The file that remembers learned sizes (none without a cache).
    key : str
        What the memo entry is for (service, project, operation).
    """

    def __init__(self, page_size: int | None, *, memo: Path | None = None, key: str = "") -> None:
        self._lock = threading.Lock()
        self._memo = memo
        self._key = key
        self.explicit = page_size is not None
        self._ladder = [page_size] if page_size is not None else list(LADDER)
        self.limit = self._ladder[0]
        self.verified = False
        """The service was seen honouring ``limit`` (a full page, or a found cap)."""
        self.known = self.explicit
        """``limit`` is accepted by the service (no ``400`` for it)."""
        self.complete_below = 0
        """A short page with fewer records than this is the last (see :func:`.paging.pages`)."""
        entry = _read_memo(memo).get(key) if memo is not None else None
        if isinstance(entry, dict):
            # what is known of the service's cap holds whatever size is asked
            if isinstance(entry.get("complete_below"), int):
                self.complete_below = entry["complete_below"]
            if not self.explicit and isinstance(entry.get("limit"), int):
                self.limit = max(1, entry["limit"])
                self.verified = bool(entry.get("verified"))
                self.known = True

    def snapshot(self) -> tuple[int, bool, int]:
        """``(limit, verified, complete_below)`` to start a chunk's pager with."""
        with self._lock:
            return self.limit, self.verified, self.complete_below

    def complete(self, count: int) -> None:
        """A short page of ``count`` records was checked and found to be the last."""
        with self._lock:
            if count <= self.complete_below:
                return
            self.complete_below = count
        self._save()

    def rejected(self, limit: int) -> bool:
        """The service answered ``400`` to ``limit``; True when a smaller size is left to try."""
        with self._lock:
            if self.explicit:
                return False
            if limit != self.limit:
                return True  # another chunk stepped down already
            smaller = [s for s in self._ladder if s < limit]
            if not smaller:
                return False
            self.limit = smaller[0]
            self.known = self.verified = False
            logger.debug("page size %d rejected; trying %d", limit, self.limit)
            return True

    def accepted(self, limit: int) -> None:
        """The service answered a page of ``limit`` records without error."""
        with self._lock:
            if self.known or limit != self.limit:
                return
            self.known = True
            logger.debug("page size %d accepted", limit)
        self._save()

    def honoured(self, limit: int) -> None:
        """A full page of ``limit`` records came back."""
        with self._lock:
            if self.verified or limit != self.limit:
                return
            self.verified = True
        self._save()

    def capped(self, limit: int) -> None:
        """The service returns at most ``limit`` records a page, whatever is asked."""
        with self._lock:
            if limit >= self.limit and self.verified:
                return
            logger.info("the service caps limit at %d; paging with that", limit)
            self.limit = min(self.limit, limit)
            self.verified = True
            self.known = True
        self._save()

    def _save(self) -> None:
        if self._memo is None:
            return
        with self._lock:
            entry: dict[str, object] = {"complete_below": self.complete_below}
            if not self.explicit:
                entry.update(limit=self.limit, verified=self.verified)
        with contextlib.suppress(OSError):
            data = _read_memo(self._memo)
            old = data.get(self._key)
            data[self._key] = {**(old if isinstance(old, dict) else {}), **entry}
            self._memo.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self._memo.parent, prefix=".page-size-")
            try:
                with os.fdopen(fd, "w") as fh:
                    json.dump(data, fh, indent=1, sort_keys=True)
                os.replace(tmp, self._memo)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise


def _read_memo(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class ChunkPages:
    """The pages of one chunk: the pure pager, reporting to the shared :class:`PageSize`.

    Examples
    --------
    >>> size = PageSize(100)
    >>> p = ChunkPages(size)
    >>> p.request
    PageRequest(page=1, limit=100, probe=False)
    >>> p.answered(100)
    PageRequest(page=2, limit=100, probe=False)
    >>> p.answered(7) is None
    True
    >>> size.verified
    True
    """

    def __init__(self, size: PageSize) -> None:
        self._size = size
        limit, verified, complete_below = size.snapshot()
        self._pager = pages(limit, verified=verified, complete_below=complete_below)
        self.request: PageRequest | None = next(self._pager)

    def answered(self, count: int) -> PageRequest | None:
        """The page asked for held ``count`` records: the next request, or None when done."""
        request = self.request
        if request is None:
            raise RuntimeError("this chunk's pages are done")
        if request.page == 1 and not request.probe:
            self._size.accepted(request.limit)
        if request.probe and count == 0:
            self._size.complete(request.limit)
        elif request.probe and count > 0:
            self._size.capped(request.limit)
        elif count >= request.limit:
            self._size.honoured(request.limit)
        try:
            self.request = self._pager.send(count)
        except StopIteration:
            self.request = None
        return self.request
