"""What ``sync --iris`` asks Circle's attestation API, and how the dataset keeps the answers.

Three files under ``<out>/iris/``, each appended to on every run (rows carry
``as_of``, when Iris was asked), so facts Circle keeps no history of gain one:

``messages.parquet``
    The messages of each V2 burn the chains leave unresolved (pending, or
    one of several identical transfers). A burn whose messages Iris gave as
    complete is not asked again (an attested message never changes).
``fees.parquet``
    The Fast and Standard Transfer fees of every route the synced burns use.
``allowance.parquet``
    The Fast Transfer allowance.

The ledger is then built with the attested nonces
(:func:`cctx_research.ingest.load`'s ``attested=``), and
:func:`cctx_research.analysis.pending.stuck` reads the messages to say why
a transfer waits. Each file is replaced atomically: a crash keeps the last
complete one (``docs/datasets.md``: these are whole tables of the sync
dataset, not parts).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .. import addressing, errors
from ..storage import write_atomically

__all__ = ["UNRESOLVED", "IrisRun", "ask", "messages_path"]

logger = logging.getLogger(__name__)

UNRESOLVED: tuple[str, ...] = ("pending", "content_ambiguous", "unpaired")
"""Pairings of a V2 burn that Iris's nonce or status can resolve or explain."""

WORKERS = 8  # requests in flight; the client's token bucket keeps the rate below Iris's limit


@dataclass
class IrisRun:
    """What one run asked Iris: burns asked, messages got, routes priced, failures."""

    burns_asked: int = 0
    messages: int = 0
    not_found: int = 0
    routes: int = 0
    failed: int = 0

    def line(self) -> str:
        return (
            f"iris: {self.burns_asked:,} burns asked ({self.messages:,} messages, "
            f"{self.not_found:,} not known yet), fees of {self.routes:,} routes, allowance"
            + (f"; {self.failed:,} requests failed (asked again next run)" if self.failed else "")
        )


def messages_path(root: Path) -> Path:
    return Path(root) / "iris" / "messages.parquet"


def _append(path: Path, new: pd.DataFrame) -> None:
    if not len(new):
        return
    old = pd.read_parquet(path) if path.is_file() else None
    frame = new if old is None or not len(old) else pd.concat([old, new], ignore_index=True)
    frame.attrs.clear()
    write_atomically(frame, path)


def _answered(root: Path) -> set[tuple[int, str]]:
    """``(source_domain, tx hash)`` of burns whose every message Iris gave as complete."""
    path = messages_path(root)
    if not path.is_file():
        return set()
    seen = pd.read_parquet(path, columns=["source_domain", "tx_hash", "status"])
    done = seen.groupby(["source_domain", "tx_hash"])["status"].agg(
        lambda s: bool((s == "complete").all())
    )
    return {_burn(d, t) for (d, t), ok in done.items() if ok}


def _burn(domain: Any, tx_hash: Any) -> tuple[int, str]:
    """``(domain, hash)`` with the hash in its chain's spelling: EVM hex in lower case, a
    Solana signature as it is (base58 is case-sensitive: Iris finds no lowered one)."""
    try:
        return int(domain), addressing.normalize_hash(str(tx_hash), int(domain))
    except ValueError:
        return int(domain), str(tx_hash)


def ask(root: Path, client: Any, ledger: pd.DataFrame) -> IrisRun:
    """Ask ``client`` (an :class:`~cctx_research.iris.IrisClient`) and append to ``root/iris``.

    A request that fails (Iris down, rate-limited past the client's
    retries) is counted and logged, never fatal: the chains' data stands,
    and the next run asks again.
    """
    run = IrisRun()
    root = Path(root)
    v2 = ledger[(ledger["cctp_version"] == 2).fillna(False) & ledger["burn_tx_hash"].notna()]
    open_ = v2[v2["pairing"].isin(UNRESOLVED)] if "pairing" in v2.columns else v2.iloc[:0]
    answered = _answered(root)
    pairs = zip(open_["source_domain"], open_["burn_tx_hash"], strict=True)
    wanted = sorted({_burn(d, t) for d, t in pairs} - answered)

    def one(key: tuple[int, str]) -> pd.DataFrame | None:
        try:
            return client.messages(key[0], key[1])
        except errors.CctxError as exc:
            logger.warning("iris: messages of %s on domain %d failed: %s", key[1], key[0], exc)
            return None

    got: list[pd.DataFrame] = []
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for frame in pool.map(one, wanted):
            run.burns_asked += 1
            if frame is None:
                run.failed += 1
            elif not len(frame):
                run.not_found += 1
            else:
                got.append(frame)
    if got:
        new = pd.concat(got, ignore_index=True)
        run.messages = len(new)
        _append(messages_path(root), new)
    legs = zip(v2["source_domain"], v2["destination_domain"], strict=True)
    routes = sorted({(int(s), int(d)) for s, d in legs})
    fees: list[pd.DataFrame] = []
    for source, destination in routes:
        try:
            fees.append(client.fees(source, destination))
            run.routes += 1
        except errors.NotFoundError:
            logger.info("iris: no fees for route %d -> %d", source, destination)
        except errors.CctxError as exc:
            run.failed += 1
            logger.warning("iris: fees of %d -> %d failed: %s", source, destination, exc)
    if fees:
        _append(root / "iris" / "fees.parquet", pd.concat(fees, ignore_index=True))
    try:
        _append(root / "iris" / "allowance.parquet", client.fast_allowance())
    except errors.CctxError as exc:
        run.failed += 1
        logger.warning("iris: the fast allowance failed: %s", exc)
    logger.info("%s", run.line())
    return run
