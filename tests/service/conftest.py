"""A small ledger with every edge case, a store over it, and a live local server.

``make_ledger`` builds a deterministic ledger around a pinned clock: burns
before and after the clock, mints after the clock (pending at the clock),
never-minted burns, transfers in and out of the default domains, several
transfers in the same second, ids whose order differs from time order, and
a few senders and recipients with many transfers each.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
import requests

from cctx_research import chains, schema
from cctx_research.service.app import make_app
from cctx_research.service.server import ServerHandle, start_in_background
from cctx_research.service.store import Store

CLOCK = pd.Timestamp("2024-07-01T12:00:00Z")
CLOCK_S = int(CLOCK.value // 1_000_000_000)
API_KEY = "test-key-0123456789"
PROJECT_ID = "11111111-2222-4333-8444-555555555555"
DOMAINS = np.array([0, 1, 2, 3, 5, 6, 7])


def addr(n: int) -> str:
    """A distinct, valid 20-byte address for small integers."""
    return "0x" + f"{n:040x}"


def make_ledger(n: int = 3000, *, seed: int = 7, clock: pd.Timestamp = CLOCK) -> pd.DataFrame:
    """A canonical ledger of ``n`` transfers burned in the 3 days around ``clock``."""
    rng = np.random.default_rng(seed)
    clock_s = int(clock.value // 1_000_000_000)
    burn = rng.integers(clock_s - 3 * 86_400, clock_s + 3_600, n)
    burn[: n // 10] = burn[: n // 10] // 60 * 60  # many transfers share a second
    src = rng.choice(DOMAINS, n)
    dst = rng.choice(DOMAINS, n)
    dst = np.where(dst == src, (src + 1) % 8, dst)
    latency = rng.integers(0, 4_000, n)
    latency[:50] = 0  # minted in the second it was burned
    pending = rng.random(n) < 0.1
    mint = burn + latency
    nonce = rng.permutation(n) + 10_000  # id order is not time order
    ids = [
        f"{k}_{chains.chain_id(int(a))}_{chains.chain_id(int(b))}"
        for k, a, b in zip(nonce, src, dst, strict=True)
    ]
    amount = rng.integers(1, 2_000_000_000_000, n)
    amount[::97] = 1_000_000_000_000  # equal amounts: ties in the top-senders ranking
    hashes = ["0x" + rng.bytes(32).hex() for _ in range(2 * n)]
    senders = np.array([addr(0xA000 + k) for k in range(40)], dtype=object)
    recipients = np.array([addr(0xB000 + k) for k in range(60)], dtype=object)
    frame = pd.DataFrame(
        {
            "transfer_id": ids,
            "source_domain": src.astype(np.int64),
            "destination_domain": dst.astype(np.int64),
            "amount_raw": amount.astype(np.int64),
            "burn_timestamp": pd.to_datetime(burn, unit="s", utc=True),
            "mint_timestamp": pd.to_datetime(np.where(pending, 0, mint), unit="s", utc=True).where(
                ~pending, pd.NaT
            ),
            "burn_tx_hash": hashes[:n],
            "mint_tx_hash": np.where(pending, None, np.array(hashes[n:], dtype=object)),
            "burn_block": rng.integers(1, 10**8, n),
            "mint_block": np.where(pending, -1, rng.integers(1, 10**8, n)),
            "message_sender": senders[rng.integers(0, len(senders), n)],
            "mint_recipient": recipients[rng.integers(0, len(recipients), n)],
            "burn_token": [addr(0xC000 + int(d)) for d in src],
            "destination_caller": np.where(rng.random(n) < 0.3, addr(0xD000), addr(0)),
            "destination_token_messenger": [addr(0xE000 + int(d)) for d in dst],
        }
    )
    frame = schema.complete(frame, "ledger").astype(schema.dtypes("ledger"))
    # shuffle: the store must not rely on the input order
    return schema.validate(frame.sample(frac=1, random_state=seed).reset_index(drop=True), "ledger")


@pytest.fixture(scope="session")
def ledger() -> pd.DataFrame:
    return make_ledger()


@pytest.fixture(scope="session")
def store(ledger: pd.DataFrame) -> Store:
    return Store(ledger, clock=CLOCK)


@pytest.fixture(scope="session")
def server(store: Store) -> Iterator[ServerHandle]:
    app = make_app(store, api_key=API_KEY, project_id=PROJECT_ID)
    with start_in_background(app) as handle:
        yield handle


@pytest.fixture(scope="session")
def http() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


@pytest.fixture
def post(server: ServerHandle, http: requests.Session):
    """POST one operation over loopback HTTP: ``post(op, body, key=..., **requests_kwargs)``."""

    def call(
        operation: str,
        body: Any = None,
        *,
        key: str | None = API_KEY,
        project: str = PROJECT_ID,
        **kwargs: Any,
    ) -> requests.Response:
        headers = dict(kwargs.pop("headers", {}))
        if key is not None:
            headers.setdefault("x-api-key", key)
        if body is not None:
            kwargs["json"] = body
        elif "data" not in kwargs:
            kwargs["json"] = {}
        url = f"{server.url}/rest/{project}/{operation}"
        return http.post(url, headers=headers, timeout=10, **kwargs)

    return call
