"""Writing frames to files with their provenance (what ``cctx-research fetch`` uses).

=========  ==============================================================
format     where the provenance goes
=========  ==============================================================
Parquet    the file's own metadata: pandas writes ``DataFrame.attrs``
           (which holds the record, see :mod:`cctx_research.provenance`)
           into it, and ``pandas.read_parquet`` restores it
CSV, JSON  a sidecar ``<file>.meta.json`` beside the file, holding
           :meth:`Provenance.to_dict() <cctx_research.provenance.Provenance.to_dict>`;
           :func:`read_sidecar` reads it back
=========  ==============================================================

Synthetic data is marked in both (``"synthetic": true``). JSON times are
written to the nanosecond, so nothing is rounded away. Each file is
written to a temporary name and renamed into place
(:func:`~cctx_research.storage.replace_atomically`, as ``import``
writes its ledger): a full disk or a killed process leaves the previous
file (or none), never a partial one, and the file gets the permissions
of any new file under the umask (0644 under the usual 022).

Examples
--------
>>> import pandas as pd, tempfile, pathlib
>>> from cctx_research.provenance import Provenance, attach
>>> frame = attach(pd.DataFrame({"x": [1]}), Provenance(source="sample", synthetic=True))
>>> path = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
>>> _ = write(frame, path)
>>> read_sidecar(path).synthetic
True
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pandas as pd

from ..errors import DataError
from ..provenance import Provenance, provenance
from ..storage import replace_atomically

__all__ = ["FORMATS", "read_sidecar", "sidecar_path", "write"]

FORMATS = (".parquet", ".csv", ".json")


def sidecar_path(path: str | Path) -> Path:
    """``<file>.meta.json`` beside ``path``."""
    path = Path(path)
    return path.with_name(path.name + ".meta.json")


def read_sidecar(path: str | Path) -> Provenance | None:
    """The provenance in ``path``'s sidecar, or ``None`` when it has none.

    Raises
    ------
    DataError
        If the sidecar exists but is not a provenance record.
    """
    meta = sidecar_path(path)
    if not meta.is_file():
        return None
    try:
        return Provenance.from_dict(json.loads(meta.read_text(encoding="utf-8")))
    except (ValueError, TypeError) as exc:
        raise DataError(f"{meta.name} is not a provenance record: {exc}") from exc


def write(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` as Parquet, CSV or JSON (by suffix), keeping its provenance.

    Parameters
    ----------
    frame : pandas.DataFrame
    path : str or Path
        Ends in ``.parquet``, ``.csv`` or ``.json``.

    Returns
    -------
    Path
        The file written (CSV and JSON also get ``<file>.meta.json``).

    Raises
    ------
    ValueError
        For another suffix.
    OSError
        When the file cannot be written (no partial file is left).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"the file must end in .parquet, .csv or .json, got {path.name!r}")
    record = provenance(frame)
    if suffix == ".parquet":
        replace_atomically(path, lambda tmp: frame.to_parquet(tmp, index=False))
        return path
    if suffix == ".csv":
        replace_atomically(path, lambda tmp: frame.to_csv(tmp, index=False))
    else:
        replace_atomically(
            path,
            lambda tmp: frame.to_json(
                tmp, orient="records", date_format="iso", date_unit="ns", indent=1
            ),
        )
    meta = sidecar_path(path)
    if record is None:
        with contextlib.suppress(FileNotFoundError):
            meta.unlink()  # a stale sidecar would describe other data
        return path
    text = json.dumps(record.to_dict(), indent=1, sort_keys=True)
    replace_atomically(meta, lambda tmp: tmp.write_text(text + "\n", encoding="utf-8"))
    return path
