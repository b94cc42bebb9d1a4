"""Scratch directories: each marked with its process, and those of ended processes removed.

The processes are real: one that ran and ended (its id is no one's), one still running,
and this one. The system temp is the test's own directory (``tempfile.tempdir``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cctx_research import scratch


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


@pytest.fixture(scope="module")
def ended() -> int:
    """The id of a process that has ended."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    pid = int(done.stdout)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    return pid


@pytest.fixture
def running():
    """The id of a process that runs until the test ends."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield child.pid
    child.kill()
    child.wait()


def _left(root: Path, name: str, owner: str | None) -> Path:
    path = root / name
    path.mkdir()
    if owner is not None:
        (path / scratch.OWNER).write_text(owner)
    return path


@pytest.mark.skipif(os.name != "posix", reason="process ids are asked on POSIX only")
def test_a_new_directory_removes_those_of_ended_processes_of_its_kind(temp, ended, running):
    dead = _left(temp, "cctx-duckdb-spill-dead", str(ended))
    (dead / "duckdb_temp_storage.tmp").write_bytes(b"\0" * 4096)
    alive = _left(temp, "cctx-duckdb-spill-alive", str(running))
    unmarked = _left(temp, "cctx-duckdb-spill-being-made", None)
    garbled = _left(temp, "cctx-duckdb-spill-garbled", "not a process id")
    other_kind = _left(temp, "cctx-report-dead", str(ended))
    a_file = temp / "cctx-duckdb-spill-file"
    a_file.write_text(str(ended))
    made = scratch.scratch_directory("cctx-duckdb-spill-")
    assert made.parent == temp
    assert made.name.startswith("cctx-duckdb-spill-")
    assert (made / scratch.OWNER).read_text() == str(os.getpid())
    assert not dead.exists()
    for kept in (alive, unmarked, garbled, other_kind, a_file, made):
        assert kept.exists(), kept
    # the report's kind, in its turn, removes its own
    scratch.scratch_directory("cctx-report-")
    assert not other_kind.exists()


@pytest.mark.skipif(os.name != "posix", reason="process ids are asked on POSIX only")
def test_a_temporary_directory_does_the_same_and_goes_when_cleaned_up(temp, ended):
    dead = _left(temp, "cctx-ledger-dead", str(ended))
    with scratch.Scratch("cctx-ledger-") as name:
        assert not dead.exists()
        assert (Path(name) / scratch.OWNER).read_text() == str(os.getpid())
    assert not Path(name).exists()


@pytest.mark.skipif(os.name != "posix", reason="process ids are asked on POSIX only")
def test_the_directory_of_a_killed_process_is_removed_by_the_next(temp):
    """A process killed outright (SIGKILL: no ``finally``, no exit handler) leaves its
    directory; the next directory of its kind removes it."""
    code = ("from cctx_research.scratch import Scratch\nimport time\n"
            "s = Scratch('cctx-duckdb-spill-')\nprint(s.name, flush=True)\ntime.sleep(60)\n")
    env = {**os.environ, "TMPDIR": str(temp)}
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             env=env)  # fmt: skip
    left = Path(child.stdout.readline().strip())
    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()
    assert left.parent == temp
    assert (left / scratch.OWNER).exists()
    with scratch.Scratch("cctx-duckdb-spill-"):
        assert not left.exists()


@pytest.mark.parametrize("prefix", ["tmp-", "cctx-a/b-", 3, ""])
def test_a_prefix_not_of_the_toolkit_is_refused(temp, prefix):
    for make in (scratch.scratch_directory, scratch.Scratch, scratch.remove_ended):
        with pytest.raises(ValueError, match="starts with 'cctx-'"):
            make(prefix)
    assert list(temp.iterdir()) == []
