"""The local implementation of the interface (``cctx-research serve``).

It serves ``POST {base_url}/rest/<project_id>/<operation>`` for the five
operations of the interface over a :class:`~cctx_research.service.store.Store`
built from a *ledger* frame (``schema`` kind ``"ledger"``): the bundled
synthetic sample by default, or the user's own data (``--data``).

Where the interface says "not shown", this implementation decides as
follows (a client must not rely on any of it; ours does not):

Clock
    The service has a clock: the current time, or ``as_of`` when pinned. It
    shows only what had happened by then: burns with burn time <= clock and
    mints with mint time <= clock. A burn whose mint lies after the clock is
    pending (``isCompleted`` false). Window defaults: ``endDate`` = clock,
    ``startDate`` = ``endDate`` - 86,400 s.
Bounds
    ``startDate`` and ``endDate`` are Unix seconds and both bounds are
    **inclusive**: ``startDate <= t <= endDate``. ``startDate > endDate``
    is a 400; equal bounds select one second.
Ordering
    Every listing is ordered by ``(timestamp, id)`` ascending; pages are
    stable for a fixed window.
Paging
    ``page`` >= 1 (at most 1,000,000,000), ``limit`` 1..1000 (default 100).
    For the mint listing, ``page``/``limit`` cut the flat, ordered list of
    mint records; the records of that page are then grouped by chain pair.
Mint listing (``transactions-mint``)
    Lists *mint* records (completed transfers, mint time in the window, by
    mint time), so ``isCompleted`` is always true there; pending burns show
    in the hash lookup, the recipient listing and the volume report. A
    group's ``sourceChain``/``destinationChain`` are interface chain ids
    (``"8453"``), ``chain`` is the chain the mints were indexed on (the
    destination chain id), and ``totalAmount`` is the sum of the amounts of
    that group's transactions **on this page**. Groups are ordered by
    (source domain, destination domain).
    ``sourceDomain``/``destinationDomain`` take a JSON-array-like string
    (``'["0","6"]'`` or ``'[0,6]'``), a single domain (``"6"`` or ``6``) or a
    JSON array; the default is ``'["0","1","2","3","6","7"]'``.
Hash lookup (``transactions-txHash``)
    Finds burn and mint transactions alike. ``transactionType`` is
    ``"burn"`` or ``"mint"``; ``timestamp``, ``blockNumber`` and ``chainId``
    are those of that transaction; ``entityId`` is ``"burnTransactionsTable"``
    or ``"mintTransactionsTable"``. Hashes are 0x + 64 hex, any case.
Recipient listing (``transactions-address-recipient``)
    Transfers whose ``mintRecipient`` is the address: completed ones as
    ``transactionType`` ``"mint"`` (mint hash and time), pending ones as
    ``"burn"`` (burn hash and time), filtered and ordered by that time.
    ``address`` takes the 20-byte or the bytes32-padded form, any case.
    ``totalTransactions`` counts all matches, not just the page.
Volume (``transactions-volume``)
    ``mintVolume``/``mintCount`` count mints by mint time, ``burnVolume``/
    ``burnCount`` burns by burn time, both within the window;
    ``totalVolume`` = mint + burn, ``totalCount`` likewise. Amounts are raw
    integer USDC base units (6 decimals); ``startDate``/``endDate`` echo
    the resolved window.
Top senders (``stats-senders``)
    Message senders of the burns in the window, by total burn volume
    (descending, ties by address), ``limit`` 1..1000, under the key
    ``topRecipients`` as the interface names it.
Request fields
    Timestamps, ``page`` and ``limit`` are accepted as JSON integers or as
    strings of digits. Unknown fields are a 400 naming the allowed ones.
Errors
    Always the envelope: ``{"status": <HTTP status>, "body": {"error": code,
    "message": text}}``. 400 ``invalid_field`` / ``invalid_json``,
    401 ``unauthorized`` (missing or wrong ``x-api-key``, checked before
    anything else under ``/rest/``), 404 ``not_found`` (unknown project,
    operation or hash), 405 ``method_not_allowed`` (not POST), 413
    ``payload_too_large`` (body over 64 KiB), 415 ``unsupported_media_type``
    (not ``application/json``). An empty body means ``{}``.
Query cost
    Bounded whatever the request: windows are binary searches on sorted
    times, pages are slices (a page past the end is empty, not a scan), the
    recipient listing reads a per-address index, volume reads prefix sums
    and the senders report is one ``bincount`` over the window. On 1M
    transfers over ten years every operation at its maximum (the whole
    ten-year window, ``limit`` 1000, first, last or out-of-range page)
    answers over loopback HTTP in **under 0.5 s** on a 2-core machine;
    ``benchmarks/reliability.py`` measures it (see ``benchmarks/README.md``).

And where the interface is silent about where data comes from, one
extension (``docs/interface.md``):

Synthetic data
    A service of synthetic data (the sample, or ``--data`` whose
    provenance says synthetic) sends ``x-cctx-synthetic: true``
    (:data:`cctx_research.provenance.SYNTHETIC_HEADER`) on every reply,
    errors included; the toolkit's client marks what it fetches from it
    synthetic. Other data: no such header. A client that does not know the
    header loses nothing.
"""
