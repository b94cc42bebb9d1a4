"""Scratch directories in the system temp, and those a killed process left, removed.

A load spills DuckDB's joins into a directory of its own (and past 1 GiB of logs
keeps its tables there, in a database file), a report copies a ledger dataset into a
database file, a ``load`` without ``out=`` writes its ledger there: gigabytes at the
scale of the whole history. Each is removed when its work ends, when Ctrl-C stops it
and when the process exits; a process killed outright (``kill -9``, a kernel that
died, a machine out of memory) cannot remove anything. So each such directory holds
the id of the process it belongs to (:data:`OWNER`), and making a new one of the same
kind first removes those whose process has ended.

A directory is removed only when its owner is certainly gone: a directory without
the mark (being made, or made by an older version), of another user, or whose
process id is in use (by it, or by a process that took the id again) is left alone.
On systems other than POSIX nothing is removed (there is no harmless way there to
ask whether a process id is in use).

Examples
--------
>>> import shutil
>>> path = scratch_directory("cctx-example-")
>>> (path / OWNER).read_text() == str(os.getpid())
True
>>> shutil.rmtree(path)
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["OWNER", "Scratch", "remove_ended", "scratch_directory"]

logger = logging.getLogger(__name__)

OWNER = ".cctx-owner"
"""The file in a scratch directory holding the id of the process it belongs to."""


def _checked(prefix: str) -> str:
    if not isinstance(prefix, str) or not prefix.startswith("cctx-") or os.sep in prefix:
        raise ValueError(f"a scratch directory's prefix starts with 'cctx-' and names no "
                         f"folder, got {prefix!r}")  # fmt: skip
    return prefix


def _ended(pid: int) -> bool:
    """Whether no process has the id ``pid`` (False when that cannot be known)."""
    if os.name != "posix" or pid <= 0:
        return False
    try:
        os.kill(pid, 0)  # signal 0: nothing is sent, the id is only looked up
    except ProcessLookupError:
        return True
    except OSError:  # another user's process, or something unforeseen: not ours to judge
        return False
    return False


def remove_ended(prefix: str, root: Path | None = None) -> list[Path]:
    """Remove the scratch directories named ``prefix...`` in ``root`` (the system temp) whose
    process has ended; the directories removed."""
    prefix = _checked(prefix)
    root = Path(tempfile.gettempdir() if root is None else root)
    removed: list[Path] = []
    try:
        found = [p for p in root.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return removed
    for path in found:
        try:
            pid = int((path / OWNER).read_text(encoding="ascii").strip())
        except (OSError, ValueError):  # not a directory, no mark yet, not ours
            continue
        if pid != os.getpid() and _ended(pid):
            shutil.rmtree(path, ignore_errors=True)
            if not path.exists():
                logger.info("removed %s, left by process %d, which ended", path, pid)
                removed.append(path)
    return removed


def _mark(path: Path) -> None:
    (path / OWNER).write_text(str(os.getpid()), encoding="ascii")


def scratch_directory(prefix: str) -> Path:
    """A new directory ``prefix...`` in the system temp, marked as this process's, after
    those of ended processes are removed. The caller removes it."""
    remove_ended(prefix)
    path = Path(tempfile.mkdtemp(prefix=_checked(prefix)))
    _mark(path)
    return path


class Scratch(tempfile.TemporaryDirectory):
    """:class:`tempfile.TemporaryDirectory` (removed by :meth:`cleanup`, on exit of a
    ``with`` block, or when collected), made as :func:`scratch_directory` makes one."""

    def __init__(self, prefix: str) -> None:
        remove_ended(prefix)
        super().__init__(prefix=_checked(prefix))
        _mark(Path(self.name))
