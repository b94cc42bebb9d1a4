"""The embedded sample's days, built once a session and lent to the tests' own caches.

Tests that run the toolkit as a user meets it (a doc page's commands, a notebook in a
kernel, the dashboard, the report command) each get a cache directory of their own. Left
empty, every one of them would build the live 30-day sample again (seconds of CPU each).
:func:`seed` puts the days built once into such a directory, as hard links (copies across
file systems), so the toolkit finds them where it keeps its own (``<cache>/sample/``).

This is safe to share: the toolkit never writes a kept day in place (a day is written to a
temporary file and renamed), and it checks each file it reads (a checksum and the day's
name), so a damaged file is built again under a new name, never trusted nor spread. A
day the seed lacks (the run crossed midnight) is built by whoever needs it, as always.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import warnings
from pathlib import Path

__all__ = ["seed"]


@functools.cache
def _built() -> Path:
    """The live sample's directory in the toolkit's own cache, its days built (once)."""
    from cctx_research.config import cache_dir
    from cctx_research.service.sample import generate
    from cctx_research.service.sample_cache import sample_directory
    from cctx_research.service.sample_tables import calibration

    root = cache_dir({})  # the platform's, as a user's first connect() would use
    saved = os.environ.get("CCTX_CACHE_DIR")
    os.environ["CCTX_CACHE_DIR"] = str(root)
    try:
        with warnings.catch_warnings():  # a cache that cannot be written: nothing to lend
            warnings.simplefilter("ignore")
            generate()  # the default live sample: the days connect(sample=True) serves
    finally:
        if saved is None:
            os.environ.pop("CCTX_CACHE_DIR", None)
        else:
            os.environ["CCTX_CACHE_DIR"] = saved
    cal = calibration()
    return sample_directory(cal["per_day"], cal["seed"], root=root)


def seed(cache: Path) -> Path:
    """Lend the session's built sample to the cache directory ``cache``; return ``cache``."""
    built = _built()
    if not built.is_dir():
        return Path(cache)  # the toolkit's cache could not keep them: each test builds its own
    target = Path(cache) / built.parent.name / built.name
    target.mkdir(parents=True, exist_ok=True)
    for path in built.iterdir():
        if not path.is_file() or path.name.startswith("."):
            continue  # a writer's temporary file
        with contextlib.suppress(FileExistsError):
            try:
                os.link(path, target / path.name)
            except OSError:
                shutil.copy2(path, target / path.name)
    return Path(cache)
