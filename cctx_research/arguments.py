"""Checks of the arguments of public functions: one checker per kind of argument.

Every public function that takes an option checks it here, so that a wrong
value fails the same way everywhere, with a message that names the argument
and says what to pass instead.

Examples
--------
>>> integer(5, "n", low=1)
5
>>> integer(None, "n", low=1, allow_none=True) is None
True
>>> choice("value", "count", ["volume", "count"])
'count'
>>> positive_number("factor", 3)
3.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["check_type", "choice", "integer", "positive_int", "positive_number"]


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


def positive_int(name: str, value: Any, *, allow_none: bool = False) -> int | None:
    """Check an integer option such as ``n`` (None allowed when ``allow_none``).

    Raises
    ------
    TypeError, ValueError
        As :func:`integer` with ``low=1``.

    Examples
    --------
    >>> positive_int("top", None, allow_none=True) is None
    True
    """
    return integer(value, name, low=1, allow_none=allow_none)


def positive_number(name: str, value: Any) -> float:
    """Check a positive, finite real number option such as ``factor``.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (``bool`` is not).
    ValueError
        If it is not positive and finite.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{name} must be a positive number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive, finite number, got {value}")
    return value


def choice(name: str, value: Any, allowed: Sequence[Any]) -> Any:
    """Check that ``value`` is one of ``allowed``, else say what to pass.

    Raises
    ------
    TypeError
        If ``value`` is neither None, a str nor an int.
    ValueError
        If it is not one of ``allowed``; the message lists them.
    """
    options = ", ".join(repr(a) for a in allowed)
    if value is not None and not isinstance(value, (str, int)):
        raise TypeError(f"{name} must be one of {options}, got {type(value).__name__}")
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not supported; pass one of {options}")
    return value


def check_type(value: Any, types: type | tuple[type, ...], name: str, what: str) -> None:
    """Raise ``TypeError`` naming ``name`` unless ``value`` is one of ``types`` (bools apart).

    ``what`` says what to pass (``"an int"``, ``"a str or None"``).

    Examples
    --------
    >>> check_type(True, int, "retries", "an int")
    Traceback (most recent call last):
    ...
    TypeError: retries must be an int, not a bool
    """
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise TypeError(f"{name} must be {what}, not a bool")
    if not isinstance(value, types):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")
