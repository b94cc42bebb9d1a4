"""Cache faults that are not damage: a typed error naming the directory, healthy files kept.

Read-only directories are made for real. Tests run as root in CI, where a
``chmod 0555`` does not stop writes; there the directory gets the immutable
attribute (``chattr +i``: even root cannot create files in it), and the
test is skipped on file systems without it. As another user, ``chmod`` is
enough. A full disk is a subprocess under ``RLIMIT_FSIZE`` (writes past the
limit fail with ``EFBIG``, as ``ENOSPC`` would on a full disk).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from cctx_research.errors import CacheError, CacheMissError, CacheWarning

from .conftest import API_KEY, AS_OF, PROJECT_ID, ids

WINDOW = ("2024-06-28", "2024-06-30")


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make ``path`` really unwritable for this process, whoever it runs as."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode:
        pytest.skip("running as root and the file system has no immutable attribute")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)


def _hint(error: CacheError, directory: Path) -> None:
    text = str(error)
    assert str(directory) in text
    assert "cache=False" in text
    assert "--no-cache" in text
    assert "CCTX_CACHE_DIR" in text


def test_an_empty_read_only_directory_is_a_cache_error(make_client, service, tmp_path):
    directory = tmp_path / "empty"
    directory.mkdir()
    with read_only(directory), pytest.raises(CacheError) as info:
        make_client(service.url, cache_dir=directory)
    _hint(info.value, directory)
    assert info.value.directory == directory


def test_a_read_only_cache_answers_what_it_holds(make_client, service, tmp_path, ledger):
    directory = tmp_path / "cache"
    first = make_client(service.url, cache_dir=directory)
    truth = first.mints(*WINDOW)
    first.close()
    before = {p.name: p.stat().st_size for p in directory.rglob("*") if p.is_file()}
    with read_only(directory), read_only(directory / "chunks"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            again = make_client(service.url, cache_dir=directory, offline=True)
        assert any(issubclass(w.category, CacheWarning) for w in caught)
        message = str(next(w for w in caught if issubclass(w.category, CacheWarning)).message)
        assert str(directory) in message
        assert "CCTX_CACHE_DIR" in message
        # what it holds: exact, without a request
        frame = again.mints(*WINDOW)
        assert ids(frame) == ids(truth)
        # what it does not hold: a clear miss offline, fetched (not stored) online
        with pytest.raises(CacheMissError):
            again.mints("2024-06-27", "2024-06-28")
        with pytest.warns(CacheWarning):
            online = make_client(service.url, cache_dir=directory)
        assert len(online.mints("2024-06-27", "2024-06-28")) > 0
    after = {p.name: p.stat().st_size for p in directory.rglob("*") if p.is_file()}
    assert after == before  # nothing moved aside, nothing added
    assert not list(directory.rglob("*.corrupt-*"))


def test_a_locked_database_is_a_cache_error_and_keeps_the_file(make_client, service, tmp_path):
    import sqlite3

    directory = tmp_path / "cache"
    client = make_client(service.url, cache_dir=directory)
    client.session.http_cache.busy_timeout_ms = 200  # not 30 s
    holder = sqlite3.connect(directory / "http.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, and never done
    try:
        # a window about the recent past: its replies are stored, so it must write
        with pytest.raises(CacheError, match="locked") as info:
            client.mints("2024-07-01T06:00", "2024-07-01T12:00")
    finally:
        holder.rollback()
        holder.close()
    _hint(info.value, directory)
    assert not list(directory.glob("*.corrupt-*"))
    # once the other writer is done, the same client works
    assert len(client.mints("2024-07-01T06:00", "2024-07-01T12:00")) > 0


_FULL = textwrap.dedent(
    """
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    from cctx_research.client import Client
    from cctx_research.errors import CacheError
    import pandas as pd
    client = Client(sys.argv[1], {project!r}, {key!r}, cache_dir=sys.argv[2], progress=False,
                    clock=lambda: pd.Timestamp({as_of!r}))
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    try:
        client.mints("2024-06-26T12:00", "2024-07-01")
    except CacheError as exc:
        print("CacheError:", exc)
        sys.exit(3)
    """
).format(project=PROJECT_ID, key=API_KEY, as_of=AS_OF.isoformat())


def test_a_full_disk_is_a_cache_error_and_the_cache_stays_valid(
    make_client, service, tmp_path, ledger
):
    directory = tmp_path / "cache"
    done = subprocess.run(
        [sys.executable, "-c", _FULL, service.url, str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr[-2000:]
    assert str(directory) in done.stdout
    assert "CCTX_CACHE_DIR" in done.stdout
    assert API_KEY not in done.stdout + done.stderr
    # no partial chunk file; every file left is whole, and a rerun is exact
    assert not list((directory / "chunks").glob(".*.tmp"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no file was damaged
        rerun = make_client(service.url, cache_dir=directory)
        frame = rerun.mints("2024-06-26T12:00", "2024-07-01")
    from .conftest import mints_in

    assert ids(frame) == ids(mints_in(ledger, "2024-06-26T12:00", "2024-07-01"))
