"""Checks of integer arguments, shared by every public function that takes one.

Examples
--------
>>> integer(5, "n", low=1)
5
>>> integer(None, "n", low=1, allow_none=True) is None
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["integer"]


def integer(
    value: Any,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
    allow_none: bool = False,
) -> int | None:
    """``value`` as an int, checked against ``[low, high]``.

    Raises
    ------
    TypeError
        If ``value`` is not an int (``bool`` is not), or ``None`` where not allowed.
    ValueError
        If it is out of range; the message gives the range.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        also = " or None" if allow_none else ""
        raise TypeError(f"{name} must be an int{also}, got {type(value).__name__}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        if high is None:
            bound = "a positive int" if low == 1 else f"an int >= {low}"
        elif low is None:
            bound = f"an int <= {high}"
        else:
            bound = f"an int between {low} and {high}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value
