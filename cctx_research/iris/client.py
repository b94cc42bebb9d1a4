"""The Iris client: Circle's attestation API, on the toolkit's network floor.

:class:`IrisClient` asks three things of Iris (``https://iris-api.circle.com``,
or the sandbox), over the same machinery as every request of the toolkit
(:mod:`cctx_research.net`): the :class:`~cctx_research.net.Sender` (pooled
sessions, retries with backoff honouring ``Retry-After``, typed errors, the
``transport`` seam tests plug a WSGI app into), Iris's REST GET
(:func:`~cctx_research.net.rest_get`) and the reply cache
(:class:`~cctx_research.net.HttpCache`, SQLite). No API key: Iris needs
none, and none is sent. Its options are one record,
:class:`~cctx_research.iris.options.IrisOptions`.

Rate. Iris allows 35 requests a second and blocks a client above that for
five minutes (HTTP 429). Every request that goes over the wire first takes
a slot of one :class:`~cctx_research.net.TokenBucket` shared by
all threads using this client (``rate=30`` a second by default); cache hits
take none. A 429 whose ``Retry-After`` is longer than ``max_backoff``
(60 s) is raised at once as :class:`~cctx_research.errors.RateLimitError`
(its ``retry_after`` says how long to wait) rather than waited out.

Cache. A reply whose messages are all ``complete`` can never change: it is
kept forever (in ``<cache_dir>/iris``). A reply with any message still
pending is never stored, so asking again asks Iris again. Fees and the
allowance are snapshots of "now" and are never cached.

Not found. Iris answers 404 for a transaction it has not seen (yet: a burn
is indexed some seconds after its block). :meth:`IrisClient.messages` then
returns an empty frame whose provenance counts ``not_found=1``; it does not
raise.

Examples
--------
>>> iris = IrisClient(cache=False)
>>> iris
IrisClient('https://iris-api.circle.com', rate=30/s)
>>> iris.messages("base", "0x1234")
Traceback (most recent call last):
ValueError: tx_hash must be '0x' + 64 hex digits on 'base'; got '0x1234'
>>> iris.close()
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import Any

import pandas as pd
import requests

from .. import addressing, chains, errors
from ..net import (
    NEVER_EXPIRE,
    Answer,
    BaseTransport,
    HttpCache,
    Keep,
    ReplyPolicy,
    RequestStats,
    Sender,
    SenderOptions,
    TokenBucket,
    decoded,
    rest_get,
    sessions_from_environment,
)
from ..provenance import Provenance, attach
from ..times import to_timestamp
from . import frames
from .options import DEFAULT_RATE, IrisOptions

__all__ = ["DEFAULT_RATE", "MAINNET_URL", "SANDBOX_URL", "IrisClient"]

logger = logging.getLogger(__name__)

MAINNET_URL = "https://iris-api.circle.com"
SANDBOX_URL = "https://iris-api-sandbox.circle.com"
CACHE_SUBDIR = "iris"

_V1_NONCE = re.compile(r"[0-9]{1,20}")
_V2_NONCE = re.compile(r"0x[0-9a-fA-F]{64}")


def _cacheable(response: requests.Response) -> bool:
    """Keep a reply only when it is final: HTTP 200 and every message complete."""
    if response.status_code != 200 or response.request.method != "GET":
        return False
    return frames.complete_reply(decoded.peek(response.content))


class IrisClient:
    """Circle's attestation API: messages of a burn, Fast Transfer fees and allowance.

    Parameters
    ----------
    base_url : str, optional
        Default :data:`MAINNET_URL`; ``sandbox=True`` picks :data:`SANDBOX_URL`
        (testnets).
    sandbox : bool, default False
    options : IrisOptions, optional
        Every other option, as one record (see
        :class:`~cctx_research.iris.options.IrisOptions` for each field and
        its default: ``rate``, ``cache``, ``cache_dir``, ``timeout``,
        ``retries``, ``backoff``, ``max_backoff``, ``clock``).
    transport : BaseTransport, optional
        The wire (default: sockets); e.g. a
        :class:`~cctx_research.net.WSGITransport` around a stand-in.
    **keywords
        The same options as keywords (``rate=10, cache=False``); with
        ``options=`` they replace those fields of it.
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        sandbox: bool = False,
        options: IrisOptions | None = None,
        transport: BaseTransport | None = None,
        **keywords: Any,
    ) -> None:
        if not isinstance(sandbox, bool):
            raise TypeError(f"sandbox must be True or False, got {type(sandbox).__name__}")
        if base_url is None:
            base_url = SANDBOX_URL if sandbox else MAINNET_URL
        elif sandbox:
            raise ValueError("pass base_url or sandbox=True, not both")
        if not isinstance(base_url, str) or not re.match(r"https?://[^/\s]+", base_url):
            raise ValueError(
                f"base_url must be an http(s) URL such as {MAINNET_URL!r}, got {base_url!r}"
            )
        if options is not None and not isinstance(options, IrisOptions):
            raise TypeError(f"options must be an IrisOptions, got {type(options).__name__}")
        self.options = (options or IrisOptions()).replace(**keywords)
        if transport is not None and not isinstance(transport, BaseTransport):
            raise TypeError(
                f"transport must be a BaseTransport, got {type(transport).__name__}"
            )
        self.base_url = base_url.rstrip("/")
        self.bucket = TokenBucket(self.options.rate)
        self.policy = ReplyPolicy(enabled=self.options.cache, offline=False, expire_after=0)
        self.http_cache: HttpCache | None = None
        make: Callable[[], requests.Session] = requests.Session
        if self.options.cache:
            assert self.options.cache_dir is not None  # resolved by IrisOptions
            self.http_cache = HttpCache(
                self.options.cache_dir / CACHE_SUBDIR, base_url=self.base_url,
                expire_after=NEVER_EXPIRE, methods=("GET",), cacheable=_cacheable,
            )  # fmt: skip
            make = self.http_cache.session
        self.transport = transport
        self.sender = Sender(
            self.base_url,
            SenderOptions(
                timeout=self.options.timeout, retries=self.options.retries,
                backoff=self.options.backoff, max_backoff=self.options.max_backoff,
                transport=transport, pace=self.bucket.acquire,
                session_factory=sessions_from_environment(self.base_url, make, transport=transport),
            ),
        )  # fmt: skip
        self._closed = threading.Event()

    # ------------------------------------------------------------------ public calls

    def messages(
        self, source_domain: int | str, tx_hash: str | None = None, *, nonce: str | None = None
    ) -> pd.DataFrame:
        """The messages of one burn transaction (or of one nonce), as Iris knows them now.

        Parameters
        ----------
        source_domain : int or str
            The domain the burn was sent from: an id (``6``) or a chain name (``"base"``).
        tx_hash : str
            The burn's transaction hash, in its chain's spelling (EVM: ``0x`` + 64 hex).
        nonce : str, optional
            Instead of ``tx_hash``: a V2 nonce (``0x`` + 64 hex) or a V1 nonce (decimal).

        Returns
        -------
        DataFrame
            One row per message, in the order of their logs
            (:data:`~cctx_research.iris.frames.MESSAGE_COLUMNS`). A pending
            message has ``attestation`` and ``message`` null and
            ``status="pending_confirmations"``, with ``delay_reason`` when Circle
            gives one. Not known to Iris (HTTP 404): an empty frame whose
            provenance counts ``not_found=1``.

        Raises
        ------
        ValueError, TypeError
            A bad domain, hash or nonce (nothing is sent).
        RateLimitError
            Iris keeps answering 429 (or asks to wait longer than ``max_backoff``).
        ServerError, ResponseSchemaError, BadRequestError
            Iris failed, answered what is not its schema, or refused the question.
        """
        domain = chains.domain(source_domain)
        if (tx_hash is None) == (nonce is None):
            raise TypeError("pass one of tx_hash= or nonce= (exactly one)")
        if tx_hash is not None:
            chain = chains.chain_name(domain) if domain in chains.all_domains() else None
            tx_hash = addressing.normalize_hash(tx_hash, chain)
            params = {"transactionHash": tx_hash}
        else:
            nonce = self._check_nonce(nonce)
            params = {"nonce": nonce}
        as_of = self._now()
        stats = RequestStats()
        request = rest_get(
            self.base_url, f"v2/messages/{domain}", params, operation="iris.messages",
            caching=self.policy.request(Keep.FOREVER), validate=frames.check_messages,
        )  # fmt: skip
        not_found = False
        try:
            answer = self.sender.send(request, stats=stats)
            frame = frames.messages_frame(
                answer.body, source_domain=domain, tx_hash=tx_hash, as_of=as_of
            )
        except errors.NotFoundError:
            # Iris does not know the transaction (yet): an answer, not a failure
            not_found = True
            frame = frames.empty_messages()
        logger.info(
            "iris messages of domain %d %s: %s (%d requests, %d cache hits)",
            domain, tx_hash or nonce, "not found" if not_found else f"{len(frame)} messages",
            stats.requests, stats.cache_hits,
        )  # fmt: skip
        return self._record(
            frame, "iris.messages", stats, as_of,
            {"source_domain": domain, "tx_hash": tx_hash, "nonce": nonce},
            counts={"messages": len(frame), "not_found": int(not_found)},
        )  # fmt: skip

    def fees(self, source_domain: int | str, destination_domain: int | str) -> pd.DataFrame:
        """The USDC transfer fees of a route now, one row per finality threshold.

        ``minimum_fee_bps`` is in basis points (1 = 0.01 %) and may be
        fractional; 1000 is a Fast Transfer, 2000 a Standard one. Iris keeps
        no history: each call is a snapshot, stamped ``as_of``.

        Raises
        ------
        ValueError, TypeError
            A bad domain, or the same domain twice.
        """
        src, dst = chains.domain(source_domain), chains.domain(destination_domain)
        if src == dst:
            raise ValueError(
                f"source_domain and destination_domain are both {src}; a route joins two domains"
            )
        as_of = self._now()
        stats = RequestStats()
        answer = self._snapshot(f"v2/burn/USDC/fees/{src}/{dst}", "iris.fees", frames.check_fees,
                                stats)  # fmt: skip
        frame = frames.fees_frame(answer.body, source=src, destination=dst, as_of=as_of)
        return self._record(
            frame, "iris.fees", stats, as_of,
            {"source_domain": src, "destination_domain": dst}, counts={"rows": len(frame)},
        )  # fmt: skip

    def fast_allowance(self) -> pd.DataFrame:
        """The Fast Transfer allowance left now (one row; global across chains).

        ``allowance`` is in USDC as Iris gives it; ``allowance_raw`` the
        same in base units (exact, or null if Iris gave more than 6
        decimals); ``last_updated`` when Circle last changed it; ``as_of``
        when it was asked.
        """
        as_of = self._now()
        stats = RequestStats()
        answer = self._snapshot(
            "v2/fastBurn/USDC/allowance", "iris.fast_allowance", frames.check_allowance, stats
        )
        frame = frames.allowance_frame(answer.body, as_of=as_of)
        return self._record(frame, "iris.fast_allowance", stats, as_of, {}, counts={"rows": 1})

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Close the HTTP sessions, the reply cache and the transport."""
        if self._closed.is_set():
            return
        self._closed.set()
        self.sender.close()
        if self.http_cache is not None:
            self.http_cache.close()
        if self.transport is not None:
            self.transport.close()

    def __enter__(self) -> IrisClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"IrisClient({self.base_url!r}, rate={self.bucket.rate:g}/s)"

    # ------------------------------------------------------------------ helpers

    def _now(self) -> pd.Timestamp:
        if self.options.clock is None:
            return pd.Timestamp.now(tz="UTC")
        return to_timestamp(self.options.clock(), name="clock()")

    @staticmethod
    def _check_nonce(nonce: Any) -> str:
        if not isinstance(nonce, str):
            raise TypeError(f"nonce must be a str, got {type(nonce).__name__}")
        text = nonce.strip()
        if _V2_NONCE.fullmatch(text):
            return text.lower()
        if _V1_NONCE.fullmatch(text):
            return str(int(text))
        raise ValueError(
            f"nonce must be a V2 nonce (0x + 64 hex digits) or a V1 nonce (decimal); got {nonce!r}"
        )

    def _snapshot(
        self, path: str, operation: str, check: Callable[[Any], None], stats: RequestStats
    ) -> Answer:
        request = rest_get(
            self.base_url, path, operation=operation, validate=check,
            caching=self.policy.request(Keep.SKIP),  # a snapshot of now: never stored
        )  # fmt: skip
        return self.sender.send(request, stats=stats)

    def _record(
        self,
        frame: pd.DataFrame,
        operation: str,
        stats: RequestStats,
        as_of: pd.Timestamp,
        parameters: dict[str, Any],
        *,
        counts: dict[str, int],
    ) -> pd.DataFrame:
        record = Provenance(
            source=self.base_url,
            operation=operation,
            parameters={k: v for k, v in parameters.items() if v is not None},
            requests=stats.requests,
            network_requests=stats.network,
            cache_hits=stats.cache_hits,
            retries=stats.retries,
            fetched_at=as_of,
            counts=counts,
        )
        return attach(frame, record)
