"""The reply cache (requests-cache, SQLite), and the faults of a cache directory.

:class:`HttpCache`
    Every reply worth keeping, in ``<directory>/http.sqlite`` via
    requests-cache. SQLite runs in WAL mode with a busy timeout, and each
    worker thread gets its own connection, so several threads and a second
    process can share the file without "database is locked".

    The key is the method, the address and the body bytes, nothing else: no
    header is matched, and ``x-api-key`` is listed in ``ignored_parameters``
    in the exact lowercase spelling the analytics client sends. That
    matters because requests-cache redacts headers *case-sensitively*: its
    default list holds ``X-API-KEY``, which does not match the lowercase
    header, so without this the key would be written into every stored
    request.

    Which replies are stored is the caller's filter (``cacheable``): the
    analytics client keeps HTTP 200 replies with a 2xx envelope, Iris its
    complete messages; errors, 404s, 429s and truncated replies never are.
    The expiry is chosen per request (:mod:`.policy`).

Damage and faults are told apart
    A cache file that is not a readable database is damaged: it is moved
    aside (to ``<name>.corrupt-<time>``, :func:`move_aside`) and rebuilt,
    with a warning. Everything else is a fault of the directory, not of the
    files, and the files are left alone: a directory that cannot be written
    (read-only, another user's, a full disk) or a database another process
    keeps locked raises :class:`~cctx_research.errors.CacheError`
    (:func:`fault`), naming the directory and the two ways out
    (``cache=False`` / ``--no-cache``, or ``CCTX_CACHE_DIR``).

Read-only
    ``HttpCache(..., read_only=True)`` reads and stores nothing (SQLite
    needs to write beside a database in WAL mode even to read it): its
    sessions are plain ones. Whether a directory that cannot be written is
    still worth using is its owner's decision (the analytics client answers
    from the chunks such a directory holds).
"""

from __future__ import annotations

import errno
import hashlib
import io
import logging
import os
import sqlite3
import tempfile
import time
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import requests

if TYPE_CHECKING:
    from requests_cache import SQLiteCache

from ..errors import CacheError
from ..times import pandas_period

__all__ = ["HttpCache", "default_cache_dir", "fault", "move_aside", "parse_age", "writable"]

logger = logging.getLogger(__name__)

HTTP_FILE = "http.sqlite"

# Headers and fields never stored or matched. The lowercase spelling is the
# one the analytics client sends; the others cover requests-cache's defaults.
IGNORED = ("x-api-key", "X-API-KEY", "X-Api-Key", "Authorization", "api_key", "access_token")


def default_cache_dir() -> Path:
    """The platform's user cache directory for cctx-research (:func:`cctx_research.config.cache_dir`
    without ``CCTX_CACHE_DIR``)."""
    from ..config import cache_dir

    return cache_dir({})


def parse_age(value: Any, *, name: str) -> pd.Timedelta:
    """A duration from a Timedelta, timedelta, string (``"1h"``) or seconds.

    A string in a spelling pandas deprecates (``"1d"``) or that is no fixed
    length (``"1M"``) is refused naming what to pass
    (:func:`~cctx_research.times.pandas_period`).
    """
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a duration ('1h', seconds or a timedelta), not a bool")
    wanted = "duration; pass e.g. '1h', '5min', 300 or a timedelta"
    if isinstance(value, str):
        age = pandas_period(pd.Timedelta, value, name=name, fixed=True, expected=wanted)
    else:
        try:
            age = pd.Timedelta(seconds=value) if isinstance(value, (int, float)) else (
                pd.Timedelta(value))  # fmt: skip
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}={value!r} is not a {wanted}") from exc
    if pd.isna(age) or age < pd.Timedelta(0):
        raise ValueError(f"{name} must be a non-negative duration, got {value!r}")
    return age


_WHY = {
    errno.EROFS: "is on a read-only file system",
    errno.EACCES: "is not writable by this user",
    errno.EPERM: "may not be written (permissions or an immutable attribute)",
    errno.ENOSPC: "is on a full disk",
    errno.EDQUOT: "is over its disk quota",
    errno.EFBIG: "hit the file size limit",
}


def fault(directory: Path, exc: BaseException, doing: str) -> CacheError:
    """A :class:`CacheError` for an OS or SQLite failure that is not damage."""
    if isinstance(exc, OSError) and exc.errno in (errno.EEXIST, errno.ENOTDIR):
        # mkdir of a path that is a file (or lies under one): say so, and what to do, in
        # the line the command prints (its hint is not shown there)
        blocker = next((p for p in (directory, *directory.parents) if p.is_file()), None)
        what = ("is a file, not a directory" if blocker in (None, directory)
                else f"cannot be made: {blocker} is a file")  # fmt: skip
        error = CacheError(
            f"the cache directory {directory} {what}: point CCTX_CACHE_DIR "
            "(or cache_dir=) at a directory, or pass --no-cache (cache=False)",
            directory=directory,
        )
        error.__cause__ = exc
        return error
    if isinstance(exc, OSError) and exc.errno in _WHY:
        why = _WHY[exc.errno]
    elif isinstance(exc, OSError):
        why = f"failed: {exc.strerror or exc}"
    else:
        text = str(exc)
        if "locked" in text:
            why = "holds a database another process keeps locked"
        elif "full" in text:
            why = "is on a full disk"
        elif "readonly" in text or "read-only" in text or "unable to open" in text:
            why = "is not writable"
        else:
            why = f"failed: {text}"
    error = CacheError(f"the cache directory {directory} {why} ({doing})", directory=directory)
    error.__cause__ = exc
    return error


def writable(directory: Path) -> OSError | None:
    """``None`` when files can be created in ``directory`` (made if missing), else the error."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".probe-", suffix=".tmp")
        try:
            os.write(fd, b"x")
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        return exc
    return None


def move_aside(path: Path, reason: str) -> Path:
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
    for suffix in ("", "-wal", "-shm"):
        src = path.with_name(path.name + suffix)
        if src.exists():
            os.replace(src, aside.with_name(aside.name + suffix))
    message = (
        f"the cache file {path} was unreadable ({reason}); "
        f"moved it to {aside} and started a new one"
    )
    logger.warning(message)
    warnings.warn(message, RuntimeWarning, stacklevel=4)
    return aside


def _check_sqlite(path: Path) -> None:
    """Move ``path`` aside when it is damaged; :class:`CacheError` when it cannot be opened.

    ``OperationalError`` ("unable to open", "locked", "readonly", "disk is
    full") is a fault of the directory, not damage: the file is left alone.
    """
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        con = sqlite3.connect(path, timeout=30)
        try:
            con.execute("PRAGMA schema_version").fetchone()
            tables = [
                r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            for table in tables:
                con.execute(f'SELECT key FROM "{table}" LIMIT 1').fetchall()
            # A damaged page deep in the file passes the reads above and would
            # surface mid-pull as a raw sqlite3 error; quick_check walks every
            # page (about 0.1 s per 200 MB).
            problems = [r[0] for r in con.execute("PRAGMA quick_check(3)")]
        finally:
            con.close()
    except sqlite3.OperationalError as exc:
        raise fault(path.parent, exc, "opening the reply database") from exc
    except sqlite3.DatabaseError as exc:
        _aside_or_fail(path, str(exc))
        return
    if problems != ["ok"]:
        _aside_or_fail(path, "; ".join(str(p) for p in problems)[:200])


def _aside_or_fail(path: Path, reason: str) -> None:
    try:
        move_aside(path, reason)
    except OSError as exc:
        raise fault(path.parent, exc, f"moving the damaged {path.name} aside") from exc


def _ensure_wal(path: Path, *, deadline: float = 30.0) -> None:
    """Put the database in WAL mode once, retrying while another writer holds it.

    Switching the journal mode does not wait on SQLite's busy handler: a
    connection that asks for it while another thread or process writes
    fails at once with "database is locked". The mode is stored in the
    file, so it is set here, once per client, and never by the per-thread
    connections.
    """
    give_up = time.monotonic() + deadline
    delay = 0.01
    while True:
        try:
            con = sqlite3.connect(path, timeout=deadline)
            try:
                mode = con.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    con.execute("PRAGMA journal_mode=WAL")
                return
            finally:
                con.close()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > give_up:
                raise fault(path.parent, exc, "setting up the reply database") from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


class HttpCache:
    """Replies in SQLite via requests-cache.

    A write waits up to :attr:`busy_timeout_ms` for another writer, then
    fails with :class:`~cctx_research.errors.CacheError` ("locked").

    Parameters
    ----------
    directory : Path
        The cache directory (created if missing).
    base_url : str
        The service's base URL.
    cacheable : callable
        ``cacheable(response) -> bool``: which replies are kept (the
        protocol's: an analytics reply with a 2xx envelope, an Iris reply
        whose messages are all complete).
    namespace : str, optional
        Replaces ``base_url`` in the cache key, so that the same service
        reached at a different address (the embedded sample on a random
        loopback port) shares entries. Default: ``base_url``.
    expire_after : int
        Default expiry in seconds (senders pass one per request).
    methods : tuple of str, default ("POST",)
        The methods whose replies are kept.
    read_only : bool, default False
        Read and store nothing (the directory cannot be written, and its
        owner chose to go on without the reply cache). Otherwise a
        directory that cannot be written is a
        :class:`~cctx_research.errors.CacheError`.
    """

    def __init__(
        self,
        directory: Path,
        *,
        base_url: str,
        cacheable: Callable[[requests.Response], bool],
        namespace: str | None = None,
        expire_after: int = 300,
        methods: tuple[str, ...] = ("POST",),
        read_only: bool = False,
    ) -> None:
        self.directory = Path(directory)
        self.path = self.directory / HTTP_FILE
        self.base_url = base_url
        self.namespace = namespace or base_url
        self.expire_after = expire_after
        self.methods = methods
        self.cacheable = cacheable
        self._admin: SQLiteCache | None = None
        self.busy_timeout_ms = 30_000
        self.read_only = read_only
        if read_only:
            return
        problem = writable(self.directory)
        if problem is not None:
            raise fault(self.directory, problem, "creating a file in it")
        _check_sqlite(self.path)
        _ensure_wal(self.path)

    def _key_fn(self, request: requests.PreparedRequest, **kwargs: Any) -> str:
        # The request paths that are cached serialise a body canonically (the
        # interface's: sorted keys, no spaces) and sort a GET's query string
        # (rest_get), so the method, the address and the body bytes identify a
        # request. Hashing them directly costs a
        # tenth of requests-cache's create_key, which normalises URLs, bodies
        # and headers for the general case (a seventh of a cold pull's time).
        url = request.url or ""
        if self.namespace != self.base_url and url.startswith(self.base_url):
            url = "http://cctx.cache/" + _slug(self.namespace) + url[len(self.base_url) :]
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode()
        return hashlib.sha256(f"{request.method} {url}\n".encode() + body).hexdigest()[:32]

    def backend(self) -> SQLiteCache:
        """A new backend with its own SQLite connections (one per thread or process)."""
        from requests_cache import SQLiteCache  # imported when a reply is first stored or read

        return SQLiteCache(
            str(self.path),
            wal=False,  # set once by _ensure_wal: the mode lives in the file
            busy_timeout=self.busy_timeout_ms,
            timeout=30,
            factory=_Connection,
        )

    def session(self) -> requests.Session:
        """A cached session over a backend of its own (a plain one when read-only)."""
        if self.read_only:
            return _UncachedSession()
        # requests-cache retries a locked database for ever (BEGIN IMMEDIATE in
        # a loop) when a backend opens: take the write lock once here, with
        # the busy timeout, so that a database another process keeps locked
        # is a CacheError rather than a hang.
        try:
            con = sqlite3.connect(self.path, timeout=self.busy_timeout_ms / 1000)
            try:
                con.execute("BEGIN IMMEDIATE")
                con.rollback()
            finally:
                con.close()
        except sqlite3.OperationalError as exc:
            raise fault(self.directory, exc, "opening the reply database") from exc
        return _cached_session_class()(
            self.directory,
            backend=self.backend(),
            expire_after=self.expire_after,
            allowable_methods=self.methods,
            allowable_codes=(200,),
            cache_control=False,
            match_headers=False,
            ignored_parameters=IGNORED,
            key_fn=self._key_fn,
            filter_fn=self.cacheable,
            stale_if_error=False,
        )

    @property
    def admin(self) -> SQLiteCache:
        if self.read_only:
            raise CacheError(
                f"the cache directory {self.directory} is read-only: its replies cannot "
                "be changed",
                directory=self.directory,
            )
        if self._admin is None:
            self._admin = self.backend()
        return self._admin

    def keep_forever(self, cache_key: str) -> None:
        """Mark a stored reply as never expiring (a completed transaction)."""
        if self.read_only:
            return
        responses = self.admin.responses
        try:
            cached = responses[cache_key]
        except KeyError:
            return
        cached.expires = None
        responses[cache_key] = cached

    def count(self) -> int:
        if self.read_only:
            return 0
        try:
            return self.admin.responses.count(expired=True)
        except sqlite3.DatabaseError:
            return 0

    def clear(self, older_than: pd.Timedelta | None) -> int:
        before = self.count()
        if older_than is None:
            self.admin.clear()
        else:
            self.admin.delete(older_than=older_than.to_pytimedelta())
        return before - self.count()

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None


@cache
def _cached_session_class() -> type[requests.Session]:
    """The cached session class, made on first use.

    requests-cache costs more to import than the rest of the client's HTTP
    stack (about 1.4 s of a first ``connect()``): it is imported when a
    client first makes a session on a reply cache, not when this module is.
    """
    from requests_cache import CachedSession

    class _Session(CachedSession):
        """A cached session whose SQLite faults surface as :class:`CacheError`."""

        def __init__(self, directory: Path, **kwargs: Any) -> None:
            self._cache_directory = directory
            super().__init__(**kwargs)

        def request(self, *args: Any, **kwargs: Any) -> Any:
            try:
                return super().request(*args, **kwargs)
            except sqlite3.OperationalError as exc:
                raise fault(self._cache_directory, exc, "reading or storing a reply") from exc

    return _Session


class _UncachedSession(requests.Session):
    """A plain session taking requests-cache's per-request options (read-only caches)."""

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("expire_after", None)
        if kwargs.pop("only_if_cached", False):
            # what requests-cache answers for an only-if-cached miss: a bodiless 504
            response = requests.Response()
            response.status_code = 504
            response.raw = io.BytesIO(b"")
            response.url = url
            return response
        return super().request(method, url, *args, **kwargs)


class _Connection(sqlite3.Connection):
    """A connection with ``synchronous=NORMAL``.

    In WAL mode that is still safe from corruption on a crash or power loss
    (a power loss may drop the last commits); the default, FULL, waits for
    an fsync on every commit, which was a third of the cache's cost in a
    cold pull (one commit per page).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.execute("PRAGMA synchronous=NORMAL")


def _slug(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]
