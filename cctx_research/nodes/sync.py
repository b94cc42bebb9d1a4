"""The sync body: CCTP from JSON-RPC nodes into a dataset, one chain kind at a time.

:func:`sync` checks its arguments into a :class:`SyncOptions` record, then
runs each chain through the step of its kind (:data:`CHAIN_KINDS`: EVM
chains by their logs, Solana by its programs' transactions), builds the
ledger of every chain, and, with ``iris``, asks Circle's attestation API
what the chains leave unresolved. :func:`status` says what a dataset holds.
The package's docstring (:mod:`cctx_research.nodes`) tells the story.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .. import chains, errors
from ..config import cache_dir, iris_url
from ..errors import DataError
from ..times import to_timestamp
from . import attestations, blocks
from .attestations import IrisRun
from .engine import DEFAULT_CONFIRMATIONS, ChainSync, check_domain, domain_calls, sync_chain
from .ledger import build_ledger, ledger_path, read_for_iris
from .options import SyncOptions
from .ranges import Sizer
from .rpc import Rpc, RpcError
from .store import Dataset

__all__ = ["CHAIN_KINDS", "ChainStep", "SyncOptions", "SyncResult", "build_ledger", "status",
           "sync"]  # fmt: skip

logger = logging.getLogger(__name__)


@dataclass
class SyncResult:
    """What a run did: one :class:`ChainSync` per chain, the ledger's size and path, the dataset."""

    out: str
    chains: list[ChainSync] = field(default_factory=list)
    transfers: int = 0
    ledger: str | None = None
    seconds: float = 0.0
    iris: IrisRun | None = None

    def __repr__(self) -> str:
        lines = [c.line() for c in self.chains] + ([self.iris.line()] if self.iris else [])
        return f"SyncResult({self.out!r}, {self.transfers:,} transfers)\n  " + "\n  ".join(lines)


ChainStep = Callable[[Dataset, dict[str, Any], str, str, SyncOptions], ChainSync]
"""One chain's sync: ``(dataset, state, chain, url, options) -> ChainSync``; it saves the state."""


def sync(
    out: Any,
    chains_: Mapping[str, str],
    start: Any = None,
    end: Any = None,
    *,
    iris: Any = None,
    **options: Any,
) -> SyncResult:
    """Sync the CCTP events of ``chains_`` (name -> node URL) into ``out``.

    Parameters
    ----------
    out : path
        The dataset directory (created).
    chains_ : mapping
        Chain name -> JSON-RPC URL, e.g. ``{"base": "https://mainnet.base.org"}``
        (``"solana"``: a Solana mainnet-beta node).
    start, end : int, str or Timestamp, optional
        Blocks (Solana: slots) or dates. ``start`` is needed on a chain's
        first sync; later runs continue from the checkpoint. ``end``
        defaults to the head.
    iris : bool, str or IrisClient, optional
        Also ask Circle's attestation API (``True``: ``CCTX_IRIS_URL``, else
        Circle's mainnet API;
        a URL; or a client): the attested messages of the V2 burns the
        chains leave unresolved, and the fees and Fast Transfer allowance,
        kept with their time under ``out/iris/`` on every run (see
        :mod:`~cctx_research.nodes.attestations`). The ledger then links on
        the attested nonces.
    **options
        The keywords of :class:`SyncOptions`, each optional:

        confirmations : int or mapping
            Blocks behind the head that a reorg may still change (default
            :data:`~cctx_research.nodes.engine.DEFAULT_CONFIRMATIONS`; a dict
            chain -> blocks sets it per chain).
        max_workers : int, default 8
            Most requests in flight per chain (``eth_getLogs``; Solana's
            ``getSignaturesForAddress`` and ``getTransaction`` batches).
        range_blocks : int, default 10000
            Blocks asked at first in one ``eth_getLogs``; adapts to the node.
        progress : bool, default True
            A progress bar per chain.
        transport : BaseTransport, optional
            The wire for every node (tests).
        timeout, retries : float, int, default 30.0, 5
            Seconds per request; retries of a transient failure (429, 5xx, a
            dropped connection), with backoff honouring ``Retry-After``.

    Returns
    -------
    SyncResult
    """
    SyncOptions.check_keywords("sync", options)  # first, as a signature would
    if not isinstance(chains_, Mapping) or not chains_:
        raise ValueError("pass chains as a dict of chain name -> node URL, e.g. "
                         "{'base': 'https://mainnet.base.org'}")  # fmt: skip
    asked = SyncOptions(start=start, end=end, **options)
    named = {_check_chain(k): v for k, v in chains_.items()}
    client, own_client = _iris_client(iris)
    dataset = Dataset(out)
    state = dataset.state()  # refuses another format before any request
    result = SyncResult(str(dataset.root))
    started = time.perf_counter()
    for chain, url in named.items():
        step = CHAIN_KINDS["solana" if chain == "solana" else "evm"]
        result.chains.append(step(dataset, state, chain, url, asked))
        logger.info("%s", result.chains[-1].line())
    shown = asked.progress or None  # the ledger's stages, as the chains' bars show
    try:
        result.transfers = build_ledger(dataset, progress=shown)
        if client is not None and result.transfers:
            result.iris = _ask_iris(dataset, client)
            if result.iris.messages:
                result.transfers = build_ledger(dataset, progress=shown)
    finally:
        if own_client and client is not None:
            client.close()
    built = ledger_path(dataset.root)
    result.ledger = None if built is None else str(built)
    result.seconds = time.perf_counter() - started
    return result


def _check_chain(name: Any) -> str:
    """The canonical name of an EVM chain (or Solana); the registry says what is wrong."""
    domain = chains.domain(name)
    canonical = chains.chain_name(domain)
    if chains.chain_id(domain) is None and canonical != "solana":
        raise ValueError(f"{canonical} is not an EVM chain; sync reads EVM nodes (and Solana)")
    return canonical


def _iris_client(iris: Any) -> tuple[Any, bool]:
    """The Iris client ``iris`` asks for (and whether this run made it), checked up front."""
    if iris is None or iris is False:
        return None, False
    from ..iris import IrisClient

    if isinstance(iris, IrisClient):
        return iris, False
    if iris is True or isinstance(iris, str):  # True: CCTX_IRIS_URL, else Circle's mainnet API
        # made here, it keeps Iris's replies where the toolkit keeps its cache
        # (CCTX_CACHE_DIR, else the platform's), as connect() does the analytics client's
        return IrisClient(iris_url() if iris is True else iris, cache_dir=cache_dir()), True
    raise TypeError(
        "iris must be True (Circle's API), an Iris URL, or an IrisClient; "
        f"got {type(iris).__name__}"
    )


def _ask_iris(dataset: Dataset, client: Any) -> IrisRun:
    """Ask Iris of the ledger's unresolved burns; what it says is kept under ``iris/``."""
    ledger = read_for_iris(dataset.root)
    with dataset.writing(attestations.messages_path(dataset.root).parent):
        return attestations.ask(dataset.root, client, ledger)


# -- EVM chains: their logs ----------------------------------------------------------------


def _confirmations(value: Any, chain: str) -> int:
    depth = value.get(chain, DEFAULT_CONFIRMATIONS) if isinstance(value, Mapping) else value
    if depth is None:
        depth = DEFAULT_CONFIRMATIONS
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise ValueError(
            f"confirmations must be a whole number of blocks >= 0 (or a dict chain -> blocks), "
            f"got {depth!r} for {chain}"
        )
    return depth


def _resolve(rpc: Rpc, value: Any, head: int, what: str) -> int:
    """A block number from a block or a date (a date: its first block at or after it)."""
    if isinstance(value, int) or (isinstance(value, str) and value.strip().lower()[:2] == "0x"):
        return blocks.as_block(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    try:
        when = to_timestamp(value, name=what)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{what} must be a block number or a date (e.g. 2026-11-01), got {value!r}"
        ) from exc
    return blocks.block_at(rpc, when, head)


def _check_node(rpc: Rpc, chain: str, expected: int) -> int:
    """The node's head, once it has shown it serves ``chain`` (chain id, ``localDomain()``)."""
    # one round trip for the chain id, the head and the transmitters' localDomain() (a
    # node that takes no batch is asked one call at a time)
    checks = [call for *_, call in domain_calls(chain)]
    try:
        replies = rpc.batch([("eth_chainId", []), ("eth_blockNumber", []), *checks],
                            errors_as_results=True)  # fmt: skip
        for reply in replies[:2]:
            if isinstance(reply, Exception):
                raise reply
    except errors.CctxError as exc:
        raise _not_an_evm_node(rpc, chain, exc) from exc
    served_id, head_hex = replies[:2]
    served = int(served_id, 16)
    if served != expected:
        raise ValueError(
            f"the node for {chain} ({rpc.host}) serves chain id {served}, not {chain}'s "
            f"{expected}; pass {chain}'s node URL"
        )
    if not check_domain(rpc, chain, answers=replies[2:]):
        logger.info("%s: no MessageTransmitter answered localDomain() on %s; chain id "
                    "checked only", chain, rpc.host)  # fmt: skip
    return blocks.as_block(head_hex)


_NOT_RPC_STATUS = (404, 405, 415, 501)
"""HTTP answers of a server that takes no JSON-RPC POST at that path (a web page, a proxy)."""


def _not_an_evm_node(rpc: Rpc, chain: str, exc: errors.CctxError) -> Exception:
    """What the first call's failure says about the URL: not a node, a Solana node, or ``exc``."""
    if getattr(exc, "status", None) in _NOT_RPC_STATUS or isinstance(
        exc, errors.ResponseSchemaError
    ):
        said = f"HTTP {exc.status}" if exc.status is not None else "a reply that is not JSON-RPC"
        return ValueError(
            f"{rpc.host} answered eth_chainId with {said}: it is not a JSON-RPC node; pass "
            f"{chain}'s node URL (--chain {chain}=https://...)"
        )
    if not (isinstance(exc, RpcError) and (exc.code == -32601 or "not found" in str(exc).lower())):
        return exc
    try:
        slot = rpc.call("getSlot")
    except errors.CctxError:
        slot = None
    if isinstance(slot, int) and not isinstance(slot, bool):
        return ValueError(
            f"{rpc.host} looks like a Solana node (it answers getSlot, not eth_chainId), not "
            f"a node of {chain}; pass it as solana (--chain solana=URL), and {chain}'s own "
            f"node as {chain}"
        )
    return ValueError(
        f"{rpc.host} does not know eth_chainId: it is not an EVM node; pass {chain}'s node URL "
        f"(--chain {chain}=https://...)"
    )


def _first_block(dataset: Dataset, entry: dict[str, Any], rpc: Rpc, chain: str, start: Any,
                 head: int) -> int:  # fmt: skip
    """Where this run starts: after the checkpoint, or at ``start`` on the first sync."""
    if entry.get("first") is not None:
        # after the last final block (or from the start, when every block was tip)
        first = entry["first"] if entry.get("safe") is None else entry["safe"] + 1
        if start is not None:
            asked = _resolve(rpc, start, head, "start")
            if asked < entry["first"]:
                raise ValueError(
                    f"{chain} in {dataset.root} starts at block {entry['first']:,}; "
                    f"start={start!r} (block {asked:,}) is earlier. Sync earlier blocks "
                    "into a new directory"
                )
        return first
    if start is None:
        raise ValueError(
            f"the first sync of {chain} needs start= (a block number or a date, e.g. "
            "--from 2026-11-01)"
        )
    entry["first"] = _resolve(rpc, start, head, "start")
    return entry["first"]


def _sync_evm(dataset: Dataset, state: dict[str, Any], chain: str, url: str,
              options: SyncOptions) -> ChainSync:  # fmt: skip
    rpc = options.rpc(url)
    try:
        expected = int(chains.chain_id(chains.domain(chain)))
        head = _check_node(rpc, chain, expected)
        depth = _confirmations(options.confirmations, chain)
        entry = state["chains"].setdefault(chain, {"chain_id": expected})
        entry.update(host=rpc.host, confirmations=depth)
        first = _first_block(dataset, entry, rpc, chain, options.start, head)
        end = options.end
        end_block = head if end is None else _resolve(rpc, end, head, "end")
        last = min(head, end_block)
        if options.mixed_bounds() and _resolve(rpc, options.start, head, "start") > end_block:
            raise ValueError(f"{chain}: start={options.start!r} is after end={end!r}; pass "
                             "the earlier bound as start (--from), the later as end (--to)")
        sizer = Sizer(int(entry.get("range") or options.range_blocks),
                      ceiling=options.range_blocks)  # fmt: skip
        if first > last:
            entry["tip"] = max(entry.get("tip") or last, last)
            dataset.save_state(state)
            return ChainSync(chain, rpc.host, first, last, up_to_date=True)
        # the parts past the checkpoint (tip, or left by a stopped run) are fetched again now
        dataset.drop_unsafe(chain, entry.get("safe"))
        bar = _bar(options.progress, chain, last - first + 1)
        try:
            done = sync_chain(dataset, state, chain, rpc, first, last, head - depth,
                              sizer=sizer, max_workers=options.max_workers, bar=bar)  # fmt: skip
        finally:
            if bar is not None:
                bar.close()
        entry["synced_at"] = int(time.time())
        dataset.save_state(state)
        return done
    finally:
        rpc.close()


def _bar(progress: bool, chain: str, total: int) -> Any:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="block", unit_scale=True, desc=chain, leave=False)


# -- Solana: its programs' transactions ------------------------------------------------------


def _sync_solana(dataset: Dataset, state: dict[str, Any], chain: str, url: str,
                 options: SyncOptions) -> ChainSync:  # fmt: skip
    from .solana import sync_solana

    entry = state["chains"].setdefault(chain, {})
    try:
        return sync_solana(url, dataset.root, options, state=entry,
                           save=lambda: dataset.save_state(state))  # fmt: skip
    finally:
        if entry:
            dataset.save_state(state)


CHAIN_KINDS: dict[str, ChainStep] = {"evm": _sync_evm, "solana": _sync_solana}
"""Each kind of chain's step: EVM chains by their logs, Solana by its programs' transactions."""


# -- what a dataset holds -------------------------------------------------------------------


def status(out: Any) -> pd.DataFrame:
    """Per chain: blocks and times synced, confirmations, gaps, parts, logs (``sync --status``)."""
    dataset = Dataset(out)
    if not dataset.state_path.is_file():
        raise DataError(
            f"{dataset.root} is not a sync directory (no _cctx.json)",
            hint="run `cctx-research sync --chain base=URL --from 2026-11-01 --out DIR` first",
        )
    return dataset.coverage()


