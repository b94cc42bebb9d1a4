"""Everyday faults, in figures: a section of ``reliability.py`` (see there for the command).

* the service killed in the middle of a pull: a typed error within the
  retry budget, not a hang; the rerun against a live service is exact;
* the client killed (SIGKILL) while it writes the cache, then run again on
  that cache: at most a warning, frames exact;
* the disk full (``RLIMIT_FSIZE`` in a subprocess: writes past the limit
  fail with ``EFBIG``, as a full disk fails with ``ENOSPC``) while writing
  the cache and while writing an output file: a typed error, no partial
  file, the cache still valid;
* the client's and the service's clocks 10 minutes apart, either way.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from cctx_research import errors

WINDOW = ("2024-06-27T00:00Z", "2024-07-01T00:00Z")
KILL_AFTER_PAGES = 10  # of the ~77 pages the pull of WINDOW takes at 20 rows a page

_PULL = textwrap.dedent(
    """
    import resource, signal, sys
    import pandas as pd
    from cctx_research.client import Client
    from cctx_research.errors import CacheError
    url, key, project, cache_dir, limit = sys.argv[1:6]
    client = Client(url, project, key, cache_dir=cache_dir, progress=False, page_size=20,
                    chunk="3h", max_workers=1, clock=lambda: pd.Timestamp("{as_of}"))
    if int(limit):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), int(limit)))
    try:
        client.mints("{start}", "{end}")
    except CacheError as exc:
        print("CacheError:", exc)
        sys.exit(3)
    """
)


def _script(as_of: pd.Timestamp) -> str:
    return _PULL.format(as_of=as_of.isoformat(), start=WINDOW[0], end=WINDOW[1])


def _leftovers(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.name.endswith(".tmp")]


def section_everyday(
    t: Any,
    svc: Any,
    tmp: Path,
    quick: bool,
    *,
    as_of: pd.Timestamp,
    project_id: str,
    frames_equal: Any,
) -> None:
    """Add the everyday-fault figures to table ``t``."""
    with svc.client(svc.clean.url) as ref_client:
        reference = ref_client.mints(*WINDOW)

    # -- the service killed mid-pull --------------------------------------
    # killed once it has answered a few pages, not after a fixed time: a pull
    # faster than the timer would end before it (or in the coverage check,
    # whose failures never fail a pull), and the figure would test nothing
    answered = threading.Semaphore(0)

    def counted(environ: Any, start_response: Any) -> Any:
        try:
            return svc.app(environ, start_response)
        finally:
            answered.release()

    doomed = svc.serve(counted)
    client = svc.client(doomed.url, page_size=20, chunk="3h", max_workers=1, retries=2, timeout=5)

    def kill_after(pages: int) -> None:
        for _ in range(pages):
            answered.acquire()
        doomed.close()

    threading.Thread(target=kill_after, args=(KILL_AFTER_PAGES,), daemon=True).start()
    began = time.perf_counter()
    try:
        client.mints(*WINDOW)
        outcome = "no error"
    except errors.CctxError as exc:
        outcome = type(exc).__name__
    took = time.perf_counter() - began
    client.close()
    t.add(
        "everyday",
        "service killed mid-pull: error",
        outcome,
        "ServerError",
        outcome == "ServerError",
    )
    t.add(
        "everyday",
        "service killed mid-pull: seconds to the error",
        f"{took:.1f}",
        "-",
        None,
        correctness=False,
    )
    with svc.client(svc.clean.url) as again:
        t.add(
            "everyday",
            "service killed mid-pull: rerun exact",
            frames_equal(again.mints(*WINDOW), reference),
            "True",
            frames_equal(again.mints(*WINDOW), reference),
        )

    # -- the client SIGKILLed while writing its cache -----------------------
    killed_dir = tmp / "killed-cache"
    rounds = 2 if quick else 5
    exact = warned = 0
    for i in range(rounds):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _script(as_of),
                svc.clean.url,
                svc.key,
                project_id,
                str(killed_dir),
                "0",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1.0 + 0.4 * i)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            with svc.client(svc.clean.url, cache=True, cache_dir=killed_dir) as rerun:
                frame = rerun.mints(*WINDOW)
        warned += sum(issubclass(w.category, RuntimeWarning) for w in shown)
        exact += frames_equal(frame, reference)
    t.add(
        "everyday",
        "client SIGKILLed writing the cache: reruns exact",
        f"{exact}/{rounds}",
        f"{rounds}/{rounds}",
        exact == rounds,
    )
    t.add(
        "everyday", "client SIGKILLed: damaged-file warnings", warned, "-", None, correctness=False
    )

    # -- the disk full while writing the cache ------------------------------
    full_dir = tmp / "full-cache"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _script(as_of),
            svc.clean.url,
            svc.key,
            project_id,
            str(full_dir),
            "4096",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    typed = done.returncode == 3 and str(full_dir) in done.stdout
    t.add(
        "everyday",
        "disk full writing the cache: CacheError naming the directory",
        typed,
        "True",
        typed,
    )
    t.add(
        "everyday",
        "disk full writing the cache: partial files left",
        len(_leftovers(full_dir)),
        "0",
        not _leftovers(full_dir),
    )
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with svc.client(svc.clean.url, cache=True, cache_dir=full_dir) as rerun:
            same = frames_equal(rerun.mints(*WINDOW), reference)
    damaged = sum(issubclass(w.category, RuntimeWarning) for w in shown)
    t.add(
        "everyday",
        "disk full writing the cache: cache valid, rerun exact",
        f"{same}, {damaged} damaged",
        "True, 0 damaged",
        same and damaged == 0,
    )

    # -- the disk full while writing an output file -------------------------
    out_dir = tmp / "out"
    out_dir.mkdir(exist_ok=True)
    # the key file lives outside the run directory, whose every file the
    # secrets section scans for the key
    key_dir = Path(tempfile.mkdtemp(prefix="cctx-key-"))
    key_file = key_dir / "key"
    key_file.write_text(svc.key)
    out = out_dir / "mints.csv"
    fetch = textwrap.dedent(
        """
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))
        from cctx_research import cli
        sys.exit(cli.main(sys.argv[1:]))
        """
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            fetch,
            "fetch",
            "mints",
            "--start",
            WINDOW[0],
            "--end",
            WINDOW[1],
            "--no-cache",
            "--no-progress",
            "--base-url",
            svc.clean.url,
            "--project-id",
            project_id,
            "--api-key-file",
            str(key_file),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CCTX_CACHE_DIR": str(tmp / "unused")},
    )
    shutil.rmtree(key_dir, ignore_errors=True)
    one_line = done.returncode == 1 and done.stderr.count("cctx-research: error:") == 1
    t.add(
        "everyday", "disk full writing an output file: one-line error", one_line, "True", one_line
    )
    left = sorted(p.name for p in out_dir.iterdir())
    t.add("everyday", "disk full writing an output file: files left", len(left), "0", not left)

    # -- clocks 10 minutes apart ----------------------------------------------
    ten = pd.Timedelta(minutes=10)
    for label, offset in (("ahead", ten), ("behind", -ten)):
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            with svc.client(svc.clean.url, clock=lambda o=offset: as_of + o) as skewed:
                frame = skewed.mints("2024-06-30", None)
                skew = skewed.session.coverage.skew
        with svc.client(svc.clean.url) as plain:
            truth = plain.mints("2024-06-30", min(as_of, as_of + offset))
        told = sum(issubclass(w.category, errors.CoverageWarning) for w in shown)
        want = 1 if offset > pd.Timedelta(0) else 0
        ok = frames_equal(frame, truth) and told == want
        t.add(
            "everyday",
            f"client clock 10 min {label}: frame exact, coverage warnings",
            f"{frames_equal(frame, truth)}, {told}",
            f"True, {want}",
            ok,
        )
        t.add(
            "everyday",
            f"client clock 10 min {label}: skew measured (s)",
            skew,
            "-600" if offset > pd.Timedelta(0) else "600",
            skew is not None and abs(abs(skew) - 600) <= 2,
        )
