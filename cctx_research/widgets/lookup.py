"""The transaction lookup: one transaction by its hash."""

from __future__ import annotations

from typing import Any

import ipywidgets as w
import pandas as pd

from ..errors import NotFoundError
from ..views.markup import escape, field_table
from ._panel import Panel

INTERNAL_FIELDS = ("record_id", "entity_id", "instance_id")
"""Fields of the ``transaction`` frame that say where the service keeps a record, not what
happened: kept in ``lookup.transaction``, never shown."""


class TransactionLookup(Panel):
    """Look up one transaction by hash (see :func:`transaction_lookup`).

    Attributes
    ----------
    tx_hash : ipywidgets.Text
        ``0x`` + 64 hex digits; acts on Enter.
    transaction : pandas.Series or None
        The last transaction fetched (every field of the ``transaction`` frame).
    details : ipywidgets.HTML
        Its fields under headers for reading, the interface's bookkeeping
        (``record_id``, ``entity_id``, ``instance_id``) left out.
    status, output, error, fetches
        As for :class:`Dashboard`.
    """

    def __init__(self, client: Any, *, tx_hash: str = "") -> None:
        super().__init__()
        self.tx_hash = w.Text(
            value="",
            placeholder="0x followed by 64 hex digits",
            description="Tx hash",
            continuous_update=False,
            layout=w.Layout(width="48em"),
        )
        self._setup(client, [self.tx_hash])
        self.transaction: pd.Series | None = None
        self.details = w.HTML(value="")
        self.children = [
            self.style,
            self.banner,
            self.tx_hash,
            self.status,
            self.details,
            self.output,
        ]
        self.tx_hash.observe(self._on_change, names="value")
        self._say("Enter a transaction hash and press Enter.")
        if tx_hash:
            self.tx_hash.value = tx_hash

    def _on_change(self, change: dict[str, Any]) -> None:
        self._run(self._lookup)

    def _lookup(self) -> None:
        text = self.tx_hash.value.strip()
        self.transaction = None
        self.details.value = ""
        if not text:
            self._say("Enter a transaction hash and press Enter.")
            return
        try:
            row = self._fetch(f"looking up {text[:12]}", lambda: self.client.transaction(text))
        except NotFoundError as exc:
            raise NotFoundError(
                f"no transaction has the hash {text}; check it, or look for it on the "
                "other chain of the transfer",
                operation=exc.operation,
                status=exc.status,
            ) from exc
        self.transaction = row
        kind = row.get("transaction_type", "transaction")
        shown = row.drop([f for f in INTERNAL_FIELDS if f in row.index])
        self.details.value = field_table(shown, links=_transaction_links(shown))
        self.draws += 1
        self._say_result(f"{escape(kind)} found")


def _transaction_links(row: pd.Series) -> dict[str, tuple[str, str]]:
    """Explorer links of a transaction's hash and addresses: each on the chain it lives on."""
    fields = {str(i) for i in row.index}
    tx_chain = "destination_chain" if row.get("transaction_type") == "mint" else "source_chain"
    wanted = {
        "tx_hash": ("tx", tx_chain),
        "mint_recipient": ("address", "destination_chain"),
        "message_sender": ("address", "source_chain"),
    }
    return {k: v for k, v in wanted.items() if k in fields and v[1] in fields}


def transaction_lookup(client: Any, *, tx_hash: str = "") -> TransactionLookup:
    """A text box for a transaction hash, showing the burn or mint it names.

    Parameters
    ----------
    client : cctx_research.Client
        ``client.transaction`` is called once per hash (and cached).
    tx_hash : str, optional
        A hash to show at once.

    Returns
    -------
    TransactionLookup

    Examples
    --------
    >>> tx = transaction_lookup(client)  # doctest: +SKIP
    >>> tx.tx_hash.value = "0x" + "ab" * 32  # doctest: +SKIP
    """
    return TransactionLookup(client, tx_hash=tx_hash)
