"""Distinct values and codes of integer columns, without sorting when the values are small.

Chain ids (CCTP domains) are small non-negative integers: counting them is
linear, where :func:`numpy.unique` sorts every row.

Examples
--------
>>> import numpy as np
>>> uniques, codes = unique_ints(np.array([6, 0, 6, 3]))
>>> uniques.tolist(), codes.tolist()
([0, 3, 6], [2, 0, 2, 1])
"""

from __future__ import annotations

import numpy as np

__all__ = ["unique_ints"]

_SMALL = 1 << 16


def unique_ints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and each row's index into them (as :func:`numpy.unique`)."""
    values = np.asarray(values)
    if len(values) and values.dtype.kind in "iu" and values.min() >= 0 and values.max() < _SMALL:
        present = np.bincount(values, minlength=1) > 0
        uniques = np.flatnonzero(present)
        position = np.cumsum(present) - 1
        return uniques.astype(values.dtype), position[values]
    return np.unique(values, return_inverse=True)
