"""Which token a frame's transfers move, and the USDC-only default of the analyses.

CCTP's TokenMessengers burn more than USDC: Circle lists USYC (BNB Smart
Chain burns USYC only) and EURC on some chains. A ledger's ``token`` column
names each transfer's token from the registry
(:func:`cctx_research.chains.token_symbol`), null where the registry does not
know the burned token's address.

Volumes, latencies and flows of different tokens do not add up, so the
analyses count :data:`DEFAULT_TOKEN` and say what they left out, with an
:class:`~cctx_research.errors.OtherTokenWarning`. Rows whose token is
unknown are kept. A frame with no USDC at all (one a user selected, such as
``ledger[ledger["token"] == "USYC"]``) is analysed as it is.

Examples
--------
>>> import pandas as pd
>>> frame = pd.DataFrame({"token": ["USDC", "USYC", None], "amount_raw": [1, 2, 3]})
>>> import warnings
>>> with warnings.catch_warnings(record=True) as seen:
...     warnings.simplefilter("always")
...     kept = default_token_rows(frame, what="volumes")
>>> kept["amount_raw"].tolist(), str(seen[0].message)[:40]
([1, 3], 'volumes counts USDC and left out 1 trans')
"""

from __future__ import annotations

import warnings

import pandas as pd

from .errors import OtherTokenWarning

__all__ = ["DEFAULT_TOKEN", "default_token_rows"]

DEFAULT_TOKEN = "USDC"
"""The token the analyses count unless a frame holds none of it."""


def default_token_rows(frame: pd.DataFrame, *, what: str) -> pd.DataFrame:
    """``frame`` without the transfers of tokens other than USDC, when it holds USDC.

    Parameters
    ----------
    frame : pandas.DataFrame
        Any frame; only one with a ``token`` column is filtered.
    what : str
        The analysis, named in the warning.

    Returns
    -------
    pandas.DataFrame
        ``frame`` itself when nothing is left out, else the kept rows.
    """
    if not isinstance(frame, pd.DataFrame) or "token" not in frame.columns or not len(frame):
        return frame
    token = frame["token"]
    usdc = (token == DEFAULT_TOKEN).fillna(False).to_numpy(dtype=bool)
    other = token.notna().to_numpy(dtype=bool) & ~usdc
    if not other.any() or not usdc.any():
        return frame
    left = token[other].value_counts().sort_index()
    listed = ", ".join(f"{name} {int(n):,}" for name, n in left.items())
    warnings.warn(
        f"{what} counts {DEFAULT_TOKEN} and left out {int(other.sum()):,} transfers of other "
        f"tokens ({listed}); to study them, select their rows by the 'token' column and pass "
        "those alone",
        OtherTokenWarning,
        stacklevel=3,
    )
    return frame[~other]
