"""Reliability and security figures: faults, bad input, query cost, load, cache, secrets.

Everything runs on loopback (127.0.0.1) and every loop is bounded. One
sentinel API key (``"sentinel-" + random hex``) is used for the whole run:
by every service started here and every client, with DEBUG logging to a
file. At the end every file the run wrote is searched for the key.

Sections (each prints rows of one table: figure, value, target, pass/miss):

faults
    The local service behind :class:`tests/client/faults.FaultInjector`
    (5xx, 429 with Retry-After, stalls past the client timeout, dropped
    connections, truncated JSON, error envelopes under HTTP 200) at a 20%
    rate, no cap on repeats. Many multi-page pulls (mints and recipient
    listings), each compared with the same pull from the fault-free
    service; every other pull caches, and is then re-read offline from its
    cache. Then each fault made persistent, against every operation.
bad input
    Hypothesis generates requests across the five operations (and some
    unknown ones): wrong types, out-of-range, huge and negative numbers,
    malformed domain lists, reversed windows, non-JSON, wrong content
    types, oversized bodies, odd unicode, duplicate, missing and wrong keys.
query cost
    1M transfers over ten years; every operation at its maximum (the whole
    ten-year window, ``limit`` 1000, first, last and out-of-range pages),
    over HTTP, against the bound documented in :mod:`cctx_research.service`.
sync
    ``cctx_research.nodes.sync`` against anvil behind a provider-like proxy
    (``benchmarks/sync_faults.py``): range errors, 429s, dropped connections,
    the node gone, a reorg, Ctrl-C, a full disk and a dataset of another
    format; each ends in a typed error or a dataset equal to a fault-free
    sync (skipped, with a row saying so, when anvil is not installed).
load
    ``cctx-research serve`` as a subprocess; 8 client threads of mixed
    operations for 15 s (2 s in quick mode); latency, throughput, errors and
    the server's RSS before and after.
cache
    8 threads and 2 processes (spawned) pulling overlapping windows into one
    cache directory; then a truncated and a damaged SQLite file and a
    truncated and a damaged Arrow chunk file.
dashboard
    ``cctx-research dashboard`` visited and closed 20 times (2 in quick mode)
    in Debian's Chromium, half the pages gone without telling the server:
    its memory (server RSS plus its kernels') after the last visit over
    after the first (``benchmarks/dashboard_memory.py``).
mistakes
    Everyday mistakes of a new user through the API and the real command
    (``benchmarks/everyday_mistakes.py``): each answer classed clear (one
    line naming what was wrong and what to pass), unclear or a traceback.
secrets
    Notebooks executed against the served sample with ``CCTX_*`` set, a
    report saved, the CLI run at DEBUG, exceptions printed with tracebacks,
    reprs: the key's raw, base64, hex and URL-encoded forms are counted in
    every file under the run directory (caches, logs, notebooks, report).

Run::

    .venv/bin/python benchmarks/reliability.py            # full run (a few minutes)
    .venv/bin/python benchmarks/reliability.py --quick    # smallest counts; run by the tests
    .venv/bin/python benchmarks/reliability.py --json out.json --keep /tmp/rel

Exit status 1 when a correctness figure misses its target. Timings are
reported, never judged by the tests.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures as cf
import json
import logging
import multiprocessing
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import requests

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

from client.faults import FAULT_KINDS, FaultInjector  # noqa: E402  (reused, not copied)
from dashboard_memory import section_dashboard  # noqa: E402  (benchmarks/dashboard_memory.py)
from everyday_faults import section_everyday  # noqa: E402  (benchmarks/everyday_faults.py)
from everyday_mistakes import section_mistakes  # noqa: E402  (benchmarks/everyday_mistakes.py)
from sync_faults import section_sync  # noqa: E402  (benchmarks/sync_faults.py)

from cctx_research import errors  # noqa: E402
from cctx_research.client import Client  # noqa: E402
from cctx_research.service.app import make_app  # noqa: E402
from cctx_research.service.fields import OPERATIONS  # noqa: E402
from cctx_research.service.local import local_service  # noqa: E402
from cctx_research.service.sample import generate  # noqa: E402
from cctx_research.service.server import start_in_background  # noqa: E402
from cctx_research.service.store import Store  # noqa: E402
from cctx_research.views.jupyter import without_iri_grammar  # noqa: E402

without_iri_grammar()  # nbformat's jsonschema and Voila's, later: 1.4-2 s of CPU spared

AS_OF = pd.Timestamp("2024-07-01T12:00:00Z")
PROJECT_ID = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
QUERY_BOUND_S = 0.5
"""The documented bound (cctx_research.service): any operation, 1M transfers, at its maximum."""
# --quick (the test suite's run) proves every figure is measured and right, at the smallest
# counts that still exercise each kind: 16 pulls meet every fault kind several times and
# both listings, cached and not; 500 generated requests reach every operation; 25k
# transfers over ten years answer every query of the query-cost section (timings only);
# 2 s of load by 8 clients send each operation hundreds of times (both cores busy throughout)
QUICK_PULLS = 16
QUICK_EXAMPLES = 500
QUICK_TEN_YEARS = 25_000
QUICK_LOAD_S = 2.0

logger = logging.getLogger("reliability")


# --------------------------------------------------------------------------- figures


@dataclass
class Figure:
    section: str
    name: str
    value: str
    target: str
    ok: bool | None
    correctness: bool
    """A correctness figure (the tests assert it); otherwise a timing, reported only."""


class Table:
    def __init__(self) -> None:
        self.rows: list[Figure] = []

    def add(
        self,
        section: str,
        name: str,
        value: Any,
        target: str,
        ok: bool | None,
        *,
        correctness: bool = True,
    ) -> None:
        ok = None if ok is None else bool(ok)
        self.rows.append(Figure(section, name, str(value), target, ok, correctness))
        mark = "pass" if ok else ("-" if ok is None else "MISS")
        print(f"  {section:<10} {name:<58} {value!s:<22} {mark}", flush=True)

    def render(self) -> str:
        head = ("section", "figure", "value", "target", "")
        rows = [
            (
                r.section,
                r.name,
                r.value,
                r.target,
                "pass" if r.ok else "-" if r.ok is None else "MISS",
            )
            for r in self.rows
        ]
        widths = [max(len(str(x[i])) for x in [head, *rows]) for i in range(5)]
        line = "| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |"
        sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
        body = [
            "| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
            for row in rows
        ]
        return "\n".join([line, sep, *body])


def _frames_equal(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    try:
        pd.testing.assert_frame_equal(a, b)
    except AssertionError:
        return False
    return True


def _digest(frame: pd.DataFrame) -> str:
    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return f"{len(frame)}:{int(hashed.sum(dtype=np.uint64))}:{list(map(str, frame.dtypes))}"


# --------------------------------------------------------------------------- services


class Services:
    """The small pinned sample (5 days, 300 transfers a day), served clean."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.ledger = generate(AS_OF, days=5, per_day=300, seed=11)
        local = local_service(self.ledger, as_of=AS_OF, api_key=key, project_id=PROJECT_ID)
        self.app = local.app
        self.clean = local.serve()
        self._handles = [self.clean]

    def serve(self, wsgi: Any, threads: int = 16) -> Any:
        handle = start_in_background(wsgi, threads=threads)
        self._handles.append(handle)
        return handle

    def client(self, url: str, **options: Any) -> Client:
        settings: dict[str, Any] = {
            "progress": False,
            "clock": lambda: AS_OF,
            "backoff": 0.001,
            "cache": False,
        }
        settings.update(options)
        return Client(url, PROJECT_ID, self.key, **settings)

    def busy_recipients(self, n: int) -> list[str]:
        counts = self.ledger["mint_recipient"].value_counts()
        return [str(a) for a in counts.index[:n]]

    def close(self) -> None:
        for handle in self._handles:
            handle.close()


class Texts:
    """Exception texts (repr, str and traceback), printed to a file the secrets scan reads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0

    def record(self, exc: BaseException) -> None:
        text = "\n".join(
            [repr(exc), str(exc), "".join(traceback.format_exception(exc))]  # chained causes too
        )
        with self.path.open("a", encoding="utf-8") as out:
            print(text, file=out)
        self.count += 1


# --------------------------------------------------------------------------- faults

EXPECTED_ERROR = {
    "server_error": errors.ServerError,
    "rate_limit": errors.RateLimitError,
    "stall": errors.ServerError,
    "truncate": errors.ResponseSchemaError,
    "drop": errors.ServerError,
    "envelope_error": errors.ServerError,
}


def section_faults(t: Table, svc: Services, tmp: Path, texts: Texts, quick: bool) -> None:
    pulls = QUICK_PULLS if quick else 200
    rate = 0.2
    faulty = FaultInjector(svc.app, rate=rate, max_per_request=None, seed=7, stall_seconds=0.3)
    handle = svc.serve(faulty)
    rng = random.Random(1)
    recipients = svc.busy_recipients(5)
    lost = duplicated = identical = offline_identical = offline_checked = 0
    failures = 0
    requests_per_pull: list[int] = []
    sleeps: list[float] = []
    began = time.perf_counter()
    for i in range(pulls):
        start = AS_OF - pd.Timedelta(days=4.8) + pd.Timedelta(minutes=rng.randrange(0, 3 * 1440))
        end = start + pd.Timedelta(hours=rng.randrange(4, 40))
        received = i % 4 == 3
        source = rng.choice([None, None, ["base", "arbitrum"], "ethereum"])

        def pull(client: Client, start=start, end=end, received=received, source=source, i=i):
            if received:
                who = recipients[i % len(recipients)]
                return client.received(who, start - pd.Timedelta("2D"), end)
            return client.mints(start, end, source=source)

        with svc.client(svc.clean.url, page_size=40) as ref_client:
            reference = pull(ref_client)
        cached = i % 2 == 1
        cache_dir = tmp / "faults" / f"pull{i}"
        client = svc.client(
            handle.url, page_size=40, timeout=0.2, retries=10, cache=cached, cache_dir=cache_dir
        )
        client.session.sender.sleep = sleeps.append  # Retry-After is honoured; not waited out here
        try:
            got = pull(client)
        except errors.CctxError as exc:
            texts.record(exc)
            failures += 1
            client.close()
            continue
        finally:
            client.close()
        requests_per_pull.append(got.attrs["cctx"]["requests"])
        want, have = set(reference["transfer_id"]), list(got["transfer_id"])
        lost += len(want - set(have))
        duplicated += len(have) - len(set(have))
        identical += _frames_equal(got, reference)
        if cached:
            offline = svc.client(
                handle.url, page_size=40, cache=True, cache_dir=cache_dir, offline=True
            )
            try:
                offline_identical += _frames_equal(pull(offline), reference)
            except errors.CctxError as exc:
                texts.record(exc)
            finally:
                offline.close()
            offline_checked += 1
    took = time.perf_counter() - began
    injected = sum(faulty.injected.values())
    kinds = ", ".join(f"{k} {faulty.injected[k]}" for k in FAULT_KINDS)
    t.add(
        "faults",
        "multi-page pulls at 20% faults",
        pulls,
        ">= 200 (full)",
        pulls >= (QUICK_PULLS if quick else 200),
    )
    t.add(
        "faults",
        "requests per pull (median)",
        int(np.median(requests_per_pull or [0])),
        "> 1 (multi-page)",
        np.median(requests_per_pull or [0]) > 1,
    )
    t.add(
        "faults",
        "faults injected / requests seen",
        f"{injected}/{faulty.requests} ({injected / max(faulty.requests, 1):.0%})",
        "~20%",
        None,
        correctness=False,
    )
    print(f"             kinds: {kinds}")
    t.add("faults", "pulls that raised (retries=10)", failures, "0", failures == 0)
    t.add("faults", "rows lost", lost, "0", lost == 0)
    t.add("faults", "rows duplicated", duplicated, "0", duplicated == 0)
    done = pulls - failures
    t.add(
        "faults",
        "pulls identical to the fault-free pull",
        f"{identical}/{done}",
        "all",
        identical == pulls,
    )
    t.add(
        "faults",
        "cached pulls re-read offline, identical",
        f"{offline_identical}/{offline_checked}",
        "all",
        offline_identical == offline_checked > 0,
    )
    t.add(
        "faults",
        "Retry-After honoured (waits >= 1 s asked)",
        sum(s >= 1.0 for s in sleeps),
        "> 0",
        any(s >= 1.0 for s in sleeps),
    )
    t.add("faults", "wall time of the faulty pulls", f"{took:.1f} s", "-", None, correctness=False)

    # persistent faults: every operation must end in the typed error, return nothing, cache nothing
    calls = typed = returned = untyped = dirty = 0
    clean_after = 0
    tx_hash = str(svc.ledger["burn_tx_hash"].iloc[5])
    window = (AS_OF - pd.Timedelta("3D"), AS_OF - pd.Timedelta("1D"))
    operations: dict[str, Callable[[Client], Any]] = {
        "mints": lambda c: c.mints(*window),
        "received": lambda c: c.received(recipients[0], *window),
        "volume": lambda c: c.volume(*window),
        "volume_history": lambda c: c.volume_history(*window, freq="12h"),
        "top_senders": lambda c: c.top_senders(*window, limit=20),
        "transaction": lambda c: c.transaction(tx_hash),
    }
    with svc.client(svc.clean.url, page_size=40) as ref_client:
        references = {name: op(ref_client) for name, op in operations.items()}
    for kind in FAULT_KINDS:
        broken = svc.serve(
            FaultInjector(svc.app, rate=1.0, kinds=[kind], max_per_request=None, stall_seconds=0.3)
        )
        cache_dir = tmp / "persistent" / kind
        client = svc.client(
            broken.url, page_size=40, timeout=0.2, retries=2, cache=True, cache_dir=cache_dir
        )
        client.session.sender.sleep = lambda s: None
        for op in operations.values():
            calls += 1
            try:
                op(client)
                returned += 1
            except EXPECTED_ERROR[kind] as exc:
                typed += 1
                texts.record(exc)
            except Exception as exc:  # anything else is a miss, reported below
                untyped += 1
                texts.record(exc)
        info = client.cache_info()
        dirty += info["http_entries"] + info["chunk_entries"]
        client.close()
        with svc.client(svc.clean.url, page_size=40, cache=True, cache_dir=cache_dir) as later:
            for name, op in operations.items():
                got = op(later)
                same = (
                    _frames_equal(got, references[name])
                    if isinstance(got, pd.DataFrame)
                    else got.equals(references[name])
                )
                clean_after += same
    t.add(
        "faults",
        "persistent faults: calls ending in the typed error",
        f"{typed}/{calls} ({typed / calls:.0%})",
        "100%",
        typed == calls,
    )
    t.add("faults", "persistent faults: results returned (partial)", returned, "0", returned == 0)
    t.add("faults", "persistent faults: other exceptions", untyped, "0", untyped == 0)
    t.add("faults", "persistent faults: cache entries left", dirty, "0", dirty == 0)
    t.add(
        "faults",
        "later clean run on that cache, correct",
        f"{clean_after}/{calls}",
        "all",
        clean_after == calls,
    )


# --------------------------------------------------------------------------- bad input

_FIELDS = sorted({f for fields in OPERATIONS.values() for f in fields})


_NAMED_BY_STATUS = {
    401: ("x-api-key",),
    404: ("project", "operation", "resource", "hash"),
    405: ("POST",),
    413: ("bytes",),
    415: ("Content-Type", "UTF-8"),
}


def _names_the_problem(status: int, code: str, message: str) -> bool:
    """Does an error message say what was wrong (which field, header or limit)?"""
    if not message.strip():
        return False
    if status == 400 and code == "invalid_field":
        return any(name in message for name in _FIELDS)
    if status == 400:
        return any(word in message for word in ("JSON", "UTF-8", "Content-Length", "duplicate"))
    return any(word in message for word in _NAMED_BY_STATUS.get(status, ()))


def section_bad_input(t: Table, svc: Services, quick: bool) -> None:
    from hypothesis import HealthCheck, Phase, given, seed, settings
    from hypothesis import strategies as st
    from service.test_app_fuzz import content_types, raw_bodies  # reused strategies

    examples = QUICK_EXAMPLES if quick else 3000
    odd_text = st.sampled_from(
        ["\ud800", "\u202e1719792000", "１７１９７９２０００", "\u0000", "🦄", "1\u200b", "Ⅻ", "٣"]
    )
    numbers = st.one_of(
        st.integers(min_value=-(2**80), max_value=2**80),
        st.sampled_from([0, -1, 1001, 10**9 + 1, 2**63, -(2**63), 1e308, -0.0, 1.5]),
        st.sampled_from(["-1", "0", "1e3", "99999999999999999999999", " 7", "0x10", "+5"]),
        odd_text,
    )
    domains = st.sampled_from(
        [
            '["0",',
            "[[0]]",
            "[-1]",
            '["a"]',
            "[]",
            json.dumps(list(range(100))),
            "[0,,6]",
            '["0","6"',
            "[1e3]",
            "[true]",
            "[null]",
            '{"0":1}',
            "4294967296",
            "0 6",
            [0, "6"],
            [[]],
            {},
        ]
    )
    windows = st.tuples(st.integers(0, 2_000_000_000), st.integers(1, 10**7)).map(
        lambda p: {"startDate": str(p[0] + p[1]), "endDate": str(p[0])}  # reversed
    )
    field_values = st.dictionaries(
        st.sampled_from([*_FIELDS, "start_date", "StartDate", "LIMIT", "", "\ud800", "page "]),
        st.one_of(
            numbers, domains, odd_text, st.none(), st.booleans(), st.lists(numbers, max_size=3)
        ),
        max_size=5,
    )
    bodies = st.one_of(
        field_values.map(lambda b: json.dumps(b).encode()),
        windows.map(lambda b: json.dumps(b).encode()),
        st.builds(
            lambda name, a, b: f'{{"{name}": {json.dumps(a)}, "{name}": {json.dumps(b)}}}'.encode(),
            st.sampled_from(_FIELDS),
            numbers,
            numbers,
        ),  # duplicate keys
        st.just(b"{}"),  # missing required keys (txHash, address)
        st.integers(65_537, 90_000).map(lambda n: b'{"startDate": "' + b"1" * n + b'"}'),
        raw_bodies,
    )
    valid = st.sampled_from(sorted(OPERATIONS))
    operations = st.one_of(valid, valid, valid, valid, st.text(alphabet="abcxyz-_.%", max_size=12))
    keys = st.sampled_from(["good"] * 8 + ["missing", "wrong", "empty"])
    methods = st.sampled_from(["POST"] * 12 + ["GET", "PUT", "HEAD"])

    counts: Counter[str] = Counter()
    bad: list[str] = []
    session = requests.Session()
    url = svc.clean.url

    @seed(20241121)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(
        operation=operations,
        data=bodies,
        content_type=st.one_of(*[st.just("application/json")] * 4, content_types),
        key=keys,
        method=methods,
    )
    def probe(operation: str, data: bytes, content_type: str, key: str, method: str) -> None:
        headers = {"Content-Type": content_type}
        if key != "missing":
            headers["x-api-key"] = {"good": svc.key, "wrong": "nope", "empty": ""}[key]
        try:
            r = session.request(
                method,
                f"{url}/rest/{PROJECT_ID}/{operation}",
                data=data,
                headers=headers,
                timeout=10,
            )
        except requests.RequestException as exc:
            counts["transport_errors"] += 1
            bad.append(f"{operation} {method}: {type(exc).__name__}")
            return
        counts["requests"] += 1
        if operation in OPERATIONS:
            counts["op:" + operation] += 1
        counts[f"status:{r.status_code}"] += 1
        if r.status_code >= 500:
            counts["5xx"] += 1
            bad.append(f"{operation} {data[:80]!r} -> {r.status_code}")
        if svc.key in r.text:
            counts["key_echoed"] += 1
        if method == "HEAD":
            return
        counts["with_body"] += 1
        try:
            env = r.json()
            ok = (
                set(env) == {"status", "body"}
                and env["status"] == r.status_code
                and (
                    r.status_code == 200
                    or (
                        set(env["body"]) == {"error", "message"}
                        and _names_the_problem(
                            r.status_code, env["body"]["error"], env["body"]["message"]
                        )
                    )
                )
            )
        except ValueError:
            ok = False
        counts["envelopes_ok"] += ok
        if not ok:
            bad.append(f"{operation} {data[:80]!r} -> {r.status_code} {r.text[:120]}")

    began = time.perf_counter()
    probe()
    took = time.perf_counter() - began
    session.close()
    n = counts["requests"]
    per_op = min(counts["op:" + op] for op in OPERATIONS)
    for line in bad[:5]:
        print("             example:", line)
    t.add("bad input", "generated requests (hypothesis)", n, ">= 3,000 (full)",
          n >= (QUICK_EXAMPLES if quick else 3000))
    t.add("bad input", "requests per operation (fewest)", per_op, "> 0 for all five", per_op > 0)
    t.add("bad input", "responses with a 5xx", counts["5xx"], "0", counts["5xx"] == 0)
    t.add(
        "bad input",
        "transport errors (no reply)",
        counts["transport_errors"],
        "0",
        counts["transport_errors"] == 0,
    )
    env_ok = counts["envelopes_ok"]
    t.add(
        "bad input",
        "JSON envelopes naming the problem",
        f"{env_ok}/{counts['with_body']} ({env_ok / max(counts['with_body'], 1):.0%})",
        "100%",
        env_ok == counts["with_body"] > 0,
    )
    t.add(
        "bad input", "replies echoing the key", counts["key_echoed"], "0", counts["key_echoed"] == 0
    )
    statuses = ", ".join(
        f"{k[7:]}: {v}" for k, v in sorted(counts.items()) if k.startswith("status:")
    )
    print(f"             statuses: {statuses}; {n / took:.0f} requests/s")


# --------------------------------------------------------------------------- query cost


def ten_year_ledger(n: int) -> pd.DataFrame:
    """``n`` transfers over the ten years up to AS_OF, with many senders and recipients."""
    from service.conftest import make_ledger  # the service tests' edge-case ledger, reused

    rng = np.random.default_rng(3)
    frame = make_ledger(n, seed=3, clock=AS_OF)
    end_s = int(AS_OF.value // 1_000_000_000)
    span = 3652 * 86_400
    burn = rng.integers(end_s - span, end_s, n)
    latency = rng.integers(5, 1800, n)
    pending = frame["mint_timestamp"].isna().to_numpy()
    frame["burn_timestamp"] = pd.to_datetime(burn, unit="s", utc=True)
    frame["mint_timestamp"] = pd.to_datetime(burn + latency, unit="s", utc=True).where(
        ~pending, pd.NaT
    )
    senders = np.array([f"0x{0xA0000000 + k:040x}" for k in range(50_000)], dtype=object)
    recipients = np.array([f"0x{0xB0000000 + k:040x}" for k in range(100_000)], dtype=object)
    frame["message_sender"] = senders[(rng.random(n) ** 3 * len(senders)).astype(np.int64)]
    frame["mint_recipient"] = recipients[(rng.random(n) ** 3 * len(recipients)).astype(np.int64)]
    from cctx_research import schema

    frame = schema.complete(frame, "ledger").astype(schema.dtypes("ledger"))
    return schema.validate(frame, "ledger")


def section_query_cost(t: Table, key: str, n: int) -> None:
    began = time.perf_counter()
    ledger = ten_year_ledger(n)
    store = Store(ledger, clock=AS_OF)
    built = time.perf_counter() - began
    handle = start_in_background(make_app(store, api_key=key, project_id=PROJECT_ID))
    lo = int((AS_OF - pd.Timedelta(days=3652)).value // 1_000_000_000)
    hi = int(AS_OF.value // 1_000_000_000)
    win = {"startDate": str(lo), "endDate": str(hi)}
    minted = int(store.volume(lo, hi)["mintCount"])
    busiest = str(ledger["mint_recipient"].value_counts().index[0])
    received = store.received(busiest, lo, hi, page=1, limit=1)["totalTransactions"]
    queries = {
        "mints, 10 years, limit 1000, page 1": ("transactions-mint", {**win, "limit": 1000}),
        "mints, 10 years, limit 1000, last page": (
            "transactions-mint",
            {**win, "limit": 1000, "page": -(-minted // 1000)},
        ),
        "mints, 10 years, 2 domains, page 300": (
            "transactions-mint",
            {**win, "limit": 1000, "page": 300, "sourceDomain": '["0","6"]'},
        ),
        "mints, page 1,000,000,000": ("transactions-mint", {**win, "limit": 1000, "page": 10**9}),
        f"recipient ({received:,} transfers), 10 years, limit 1000": (
            "transactions-address-recipient",
            {**win, "address": busiest, "limit": 1000},
        ),
        "volume, 10 years": ("transactions-volume", win),
        "top senders, 10 years, limit 1000": ("stats-senders", {**win, "limit": 1000}),
        "hash lookup": (
            "transactions-txHash",
            {"txHash": str(ledger["mint_tx_hash"].dropna().iloc[-1])},
        ),
    }
    worst_all = 0.0
    with requests.Session() as session:
        for name, (operation, body) in queries.items():
            times = []
            for _ in range(5):
                a = time.perf_counter()
                r = session.post(
                    f"{handle.url}/rest/{PROJECT_ID}/{operation}",
                    json=body,
                    headers={"x-api-key": key},
                    timeout=30,
                )
                times.append(time.perf_counter() - a)
                if r.status_code != 200:
                    raise RuntimeError(f"{name}: HTTP {r.status_code} {r.text[:200]}")
            worst = max(times)
            worst_all = max(worst_all, worst)
            t.add(
                "query cost",
                f"{name}",
                f"{worst * 1000:.0f} ms (worst of 5)",
                f"< {QUERY_BOUND_S * 1000:.0f} ms",
                worst < QUERY_BOUND_S,
                correctness=False,
            )
    handle.close()
    t.add(
        "query cost",
        "transfers in the store / build time",
        f"{len(store):,} / {built:.0f} s",
        "1,000,000 (full)",
        None,
        correctness=False,
    )


# --------------------------------------------------------------------------- load


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    """``cctx-research serve`` in a subprocess on loopback (live clock, sentinel key)."""

    def __init__(self, key: str, logs: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.key = key
        self.log_path = logs
        self.log = logs.open("w")
        env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cctx_research.cli",
                "--log-level",
                "DEBUG",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--api-key",
                key,
                "--project-id",
                PROJECT_ID,
                "--threads",
                "8",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                if self.post("transactions-volume", {}).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"cctx-research serve did not start; see {logs}")
            time.sleep(0.2)

    def post(self, operation: str, body: dict[str, Any], session: Any = requests) -> Any:
        return session.post(
            f"{self.url}/rest/{PROJECT_ID}/{operation}",
            json=body,
            headers={"x-api-key": self.key},
            timeout=30,
        )

    def rss(self) -> int:
        import psutil

        return psutil.Process(self.proc.pid).memory_info().rss

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


def section_load(t: Table, served: Served, quick: bool) -> None:
    seconds = QUICK_LOAD_S if quick else 15.0
    clients = 8
    now = int(time.time())
    day = 86_400
    sample = served.post(
        "transactions-mint", {"startDate": str(now - 3 * day), "endDate": str(now), "limit": 200}
    ).json()["body"]
    txs = [tx for group in sample for tx in group["transactions"]]
    hashes = [tx["id"] for tx in txs]  # not hashes: look them up via received below
    recipients = sorted({tx["mintRecipient"] for tx in txs})[:50]
    detail = served.post(
        "transactions-address-recipient",
        {"address": recipients[0], "startDate": str(now - 29 * day), "endDate": str(now)},
    ).json()["body"]
    hashes = [x["transactionHash"] for x in detail["transactions"]] or hashes

    def request(rng: random.Random, session: requests.Session) -> Any:
        kind = rng.choice(["mint", "mint", "volume", "senders", "hash", "recipient"])
        start = now - rng.randrange(1, 29) * day
        win = {"startDate": str(start), "endDate": str(start + rng.choice([3600, day, 7 * day]))}
        if kind == "mint":
            return served.post(
                "transactions-mint", {**win, "page": rng.randint(1, 3), "limit": 100}, session
            )
        if kind == "volume":
            return served.post("transactions-volume", win, session)
        if kind == "senders":
            return served.post("stats-senders", {**win, "limit": 100}, session)
        if kind == "hash":
            return served.post("transactions-txHash", {"txHash": rng.choice(hashes)}, session)
        return served.post(
            "transactions-address-recipient",
            {**win, "address": rng.choice(recipients), "limit": 100},
            session,
        )

    with requests.Session() as warm:  # warm-up, then the baseline RSS
        rng = random.Random(0)
        for _ in range(200):
            request(rng, warm)
    rss_before = served.rss()
    latencies: list[list[float]] = [[] for _ in range(clients)]
    failures = Counter()
    stop = time.monotonic() + seconds

    def worker(i: int) -> None:
        rng = random.Random(100 + i)
        with requests.Session() as session:
            while time.monotonic() < stop:
                a = time.perf_counter()
                try:
                    r = request(rng, session)
                    if r.status_code != 200:
                        failures[f"HTTP {r.status_code}"] += 1
                except requests.RequestException as exc:
                    failures[type(exc).__name__] += 1
                latencies[i].append(time.perf_counter() - a)

    began = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    took = time.perf_counter() - began
    rss_after = served.rss()
    alive = served.proc.poll() is None and served.post("transactions-volume", {}).status_code == 200
    lat = np.array([x for xs in latencies for x in xs]) * 1000
    errs = sum(failures.values())
    growth = (rss_after - rss_before) / rss_before
    t.add(
        "load",
        "clients x seconds (cctx-research serve)",
        f"{clients} x {seconds:.0f} s",
        "8 x 15 s (full)",
        clients >= 8 and seconds >= (QUICK_LOAD_S if quick else 15),
    )
    t.add("load", "requests / errors", f"{len(lat)} / {errs}", "errors 0", errs == 0)
    t.add("load", "throughput", f"{len(lat) / took:.0f} req/s", "-", None, correctness=False)
    t.add(
        "load",
        "latency p50 / p99",
        f"{np.percentile(lat, 50):.1f} / {np.percentile(lat, 99):.1f} ms",
        "-",
        None,
        correctness=False,
    )
    t.add(
        "load",
        "server RSS before -> after",
        f"{rss_before / 2**20:.0f} -> {rss_after / 2**20:.0f} MiB ({growth:+.1%})",
        "growth < 10%",
        growth < 0.10,
        correctness=False,
    )
    t.add("load", "server up and answering after", "yes" if alive else "NO", "yes", alive)


# --------------------------------------------------------------------------- cache integrity

CACHE_WINDOWS = [
    ("2024-06-27T00:00Z", "2024-06-29T00:00Z"),
    ("2024-06-28T00:00Z", "2024-06-30T00:00Z"),
    ("2024-06-27T12:00Z", "2024-06-30T12:00Z"),
    ("2024-06-28T06:00Z", "2024-06-29T18:00Z"),
    ("2024-06-26T18:00Z", "2024-07-01T00:00Z"),
]


def cache_worker(
    url: str, key: str, cache_dir: str, rounds: int, seed: int
) -> list[tuple[int, str]]:
    """Pull the overlapping windows in a shuffled order; ``(window, digest or 'error: ...')``."""
    rng = random.Random(seed)
    out: list[tuple[int, str]] = []
    with Client(
        url,
        PROJECT_ID,
        key,
        cache_dir=cache_dir,
        page_size=20,
        chunk="6h",
        max_workers=4,
        progress=False,
        clock=lambda: AS_OF,
        backoff=0.001,
    ) as client:
        for _ in range(rounds):
            order = list(range(len(CACHE_WINDOWS)))
            rng.shuffle(order)
            for w in order:
                try:
                    out.append((w, _digest(client.mints(*CACHE_WINDOWS[w]))))
                except Exception as exc:  # counted, with its text, by the caller
                    out.append((w, f"error: {type(exc).__name__}: {exc}"))
    return out


def _damage(path: Path, at: float, size: int) -> None:
    data = bytearray(path.read_bytes())
    where = int(len(data) * at)
    data[where : where + size] = bytes((b + 0x5A) % 256 for b in data[where : where + size])
    path.write_bytes(bytes(data))


def section_cache(t: Table, svc: Services, tmp: Path, quick: bool) -> None:
    rounds = 1 if quick else 3
    with svc.client(svc.clean.url, page_size=100) as ref_client:
        reference = [_digest(ref_client.mints(*w)) for w in CACHE_WINDOWS]
    shared = tmp / "shared-cache"
    results: list[tuple[int, str]] = []
    began = time.perf_counter()
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(2, mp_context=ctx) as procs, cf.ThreadPoolExecutor(8) as threads:
        futures = [
            procs.submit(cache_worker, svc.clean.url, svc.key, str(shared), rounds, 1000 + i)
            for i in range(2)
        ]
        futures += [
            threads.submit(cache_worker, svc.clean.url, svc.key, str(shared), rounds, i)
            for i in range(8)
        ]
        for f in futures:
            results.extend(f.result())
    took = time.perf_counter() - began
    errors_ = [d for _, d in results if d.startswith("error")]
    locks = [e for e in errors_ if "lock" in e.lower()]
    same = sum(d == reference[w] for w, d in results)
    for e in errors_[:3]:
        print("             error:", e[:200])
    t.add(
        "cache",
        "pulls by 8 threads + 2 processes, one cache",
        f"{len(results)} in {took:.1f} s",
        "-",
        None,
        correctness=False,
    )
    t.add(
        "cache",
        "lock errors / other errors",
        f"{len(locks)} / {len(errors_) - len(locks)}",
        "0 / 0",
        not errors_,
    )
    t.add(
        "cache",
        "frames identical to the uncached pull",
        f"{same}/{len(results)}",
        "all",
        same == len(results),
    )

    # damaged files: detected, moved aside, warned about, rebuilt; the pull stays correct
    window = CACHE_WINDOWS[0]
    expected = reference[0]

    def only_http(d: Path) -> None:
        for chunk in (d / "chunks").glob("*.arrow"):
            chunk.unlink()

    cases: dict[str, Callable[[Path], None]] = {
        "SQLite file truncated to half": lambda d: (
            only_http(d),
            (d / "http.sqlite").write_bytes(
                (d / "http.sqlite").read_bytes()[: (d / "http.sqlite").stat().st_size // 2]
            ),
        ),
        "SQLite page damaged mid-file": lambda d: (
            only_http(d),
            _damage(d / "http.sqlite", 0.5, 4096),
        ),
        "Arrow chunk truncated": lambda d: [
            p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
            for p in (d / "chunks").glob("*.arrow")
        ],
        "Arrow chunk bytes flipped (framing intact)": lambda d: [
            _damage(p, 0.5, 64) for p in (d / "chunks").glob("*.arrow")
        ],
    }
    for name, damage in cases.items():
        d = tmp / "damaged" / name.split()[0] / str(abs(hash(name)))
        with svc.client(svc.clean.url, page_size=20, cache=True, cache_dir=d) as first:
            first.mints(*window)
        damage(d)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with svc.client(svc.clean.url, page_size=20, cache=True, cache_dir=d) as again:
                    got = _digest(again.mints(*window))
            except Exception as exc:
                got = f"error: {type(exc).__name__}: {exc}"
        warned = any("moved it to" in str(w.message) for w in caught)
        aside = any(".corrupt-" in p.name for p in d.rglob("*"))
        ok = warned and aside and got == expected
        t.add(
            "cache",
            f"{name}: warned, moved aside, pull correct",
            ", ".join("yes" if x else "NO" for x in (warned, aside, got == expected)),
            "yes, yes, yes",
            ok,
        )


# --------------------------------------------------------------------------- secrets


def key_forms(key: str) -> dict[str, list[bytes]]:
    raw = key.encode()
    forms: dict[str, list[bytes]] = {
        "raw": [raw],
        "url-encoded": [
            urllib.parse.quote(key, safe="").encode(),
            urllib.parse.quote_plus(key).encode(),
        ],
        "hex": [raw.hex().encode(), raw.hex().upper().encode()],
        "base64": [],
    }
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for shift in range(3):  # the key at any byte offset inside a larger encoded blob
            text = encode(b"\0" * shift + raw)
            front = -(-shift * 8 // 6)
            forms["base64"].append(text[front : len(text) - 4])
    return forms


def count_forms(data: bytes, forms: dict[str, list[bytes]]) -> int:
    return sum(data.count(v) for vs in forms.values() for v in set(vs))


def section_secrets(
    t: Table, svc: Services, served: Served, tmp: Path, texts: Texts, log_path: Path, quick: bool
) -> None:
    key = svc.key
    sec = tmp / "secrets"
    sec.mkdir()
    cache_dir = sec / "cache"
    env = {
        "CCTX_API_KEY": key,
        "CCTX_PROJECT_ID": PROJECT_ID,
        "CCTX_BASE_URL": served.url,
        "CCTX_CACHE_DIR": str(cache_dir),
    }
    old_env = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        from cctx_research import connect, report
        from cctx_research.config import Settings

        # client pulls with faults, the key from the environment
        faulty = svc.serve(FaultInjector(svc.app, rate=0.3, seed=9, stall_seconds=0.3))
        with connect(
            base_url=faulty.url, clock=lambda: AS_OF, progress=False, timeout=0.2, backoff=0.001
        ) as client:
            client.session.sender.sleep = lambda s: None
            client.mints("2024-06-27", "2024-06-30")
            client.received(svc.busy_recipients(1)[0], "2024-06-27", "2024-06-30")
            client.volume_history("2024-06-27", "2024-06-30", freq="6h")
            client.top_senders("2024-06-27", "2024-06-30")
            reprs = [
                repr(client),
                str(client),
                repr(client.session.sender.__dict__),
                repr(Settings.from_env()),
                repr(client.cache_info()),
            ]
        # exceptions with the key in use: wrong project or key, persistent faults, bad input
        other = svc.serve(
            local_service(
                svc.ledger, as_of=AS_OF, api_key="another-key", project_id=PROJECT_ID
            ).app
        )
        broken = svc.serve(
            FaultInjector(
                svc.app, rate=1.0, max_per_request=None, kinds=["server_error", "envelope_error"]
            )
        )
        attempts: list[Callable[[], Any]] = [
            lambda: Client(
                svc.clean.url,
                "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb",
                key,
                cache_dir=cache_dir,
                progress=False,
            ).volume("2024-06-27", "2024-06-28"),
            lambda: Client(other.url, PROJECT_ID, key, cache_dir=cache_dir, progress=False).volume(
                "2024-06-27", "2024-06-28"
            ),
            lambda: Client(
                broken.url,
                PROJECT_ID,
                key,
                cache_dir=cache_dir,
                progress=False,
                retries=1,
                backoff=0.001,
            ).mints("2024-06-27", "2024-06-28"),
            lambda: Client(
                svc.clean.url, PROJECT_ID, key, cache_dir=cache_dir, progress=False
            ).transaction("0x" + "00" * 32),
            lambda: Client(svc.clean.url, PROJECT_ID, key, page_size=0),
            lambda: Client(f"http://user:{key}@127.0.0.1:1", PROJECT_ID, key),
            lambda: Client(
                "http://127.0.0.1:1", PROJECT_ID, key, retries=0, progress=False, cache=False
            ).volume("2024-06-27", "2024-06-28"),
        ]
        raised = 0
        for attempt in attempts:
            try:
                attempt()
            except Exception as exc:
                raised += 1
                texts.record(exc)
        # a report through the served sample, saved; its window ends hours before the hour,
        # so no run's minute changes what it holds (2 days in quick mode: every section
        # drawn, the key looked for in each, over fewer rows)
        with connect(progress=False) as client:
            now = pd.Timestamp.now(tz="UTC").floor("h") - pd.Timedelta(hours=3)
            built = report.build(client, now - pd.Timedelta(days=2 if quick else 7), now)
            reprs.append(repr(built))
        report_path = built.save(sec / "report.html")
        # the CLI at DEBUG
        cli_log = sec / "cli.log"
        with cli_log.open("w") as out:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "cctx_research.cli",
                    "--log-level",
                    "DEBUG",
                    "fetch",
                    "mints",
                    "--start",
                    (now - pd.Timedelta(days=2)).isoformat(),
                    "--end",
                    now.isoformat(),
                    "--out",
                    str(sec / "fetched.parquet"),
                    "--no-progress",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=os.environ.copy(),
                timeout=300,
                check=True,
            )
        # notebooks executed against the served sample
        import nbclient
        import nbformat

        names = (
            ["01_quickstart.ipynb"]
            if quick
            else sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
        )
        nb_dir = sec / "notebooks"
        nb_dir.mkdir()
        executed = 0
        for name in names:
            nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
            nbclient.NotebookClient(
                nb,
                timeout=300,
                kernel_name="python3",
                resources={"metadata": {"path": str(nb_dir)}},
            ).execute()
            nbformat.write(nb, nb_dir / name)
            executed += 1
            if served.url not in json.dumps(nb):
                raise RuntimeError(f"{name} did not use the served sample at {served.url}")
        (sec / "reprs.txt").write_text("\n".join(reprs), encoding="utf-8")
    finally:
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    for handler in logging.getLogger().handlers:
        handler.flush()

    forms = key_forms(key)
    groups: dict[str, list[Path]] = {
        "cache directories": [
            p
            for d in (
                tmp / "faults",
                tmp / "persistent",
                tmp / "shared-cache",
                tmp / "damaged",
                cache_dir,
            )
            if d.exists()
            for p in d.rglob("*")
            if p.is_file()
        ],
        "logs (client DEBUG, server, CLI)": [log_path, served.log_path, cli_log],
        "exception texts (repr, str, traceback)": [texts.path],
        "executed notebooks": sorted(nb_dir.glob("*.ipynb")),
        "report and fetched file": [report_path, sec / "fetched.parquet"],
        "reprs": [sec / "reprs.txt"],
    }
    everything = [p for p in tmp.rglob("*") if p.is_file()]
    for name, paths in groups.items():
        found = sum(count_forms(p.read_bytes(), forms) for p in paths if p.exists())
        size = sum(p.stat().st_size for p in paths if p.exists())
        t.add(
            "secrets",
            f"key occurrences: {name}",
            f"{found} in {len(paths)} files ({size / 1e6:.1f} MB)",
            "0",
            found == 0,
        )
    total = sum(count_forms(p.read_bytes(), forms) for p in everything)
    t.add(
        "secrets",
        "key occurrences: every file of the run",
        f"{total} in {len(everything)} files",
        "0",
        total == 0,
    )
    t.add(
        "secrets",
        "exceptions printed / notebooks executed",
        f"{texts.count} / {executed}",
        "> 0 / >= 1",
        texts.count > 0 and executed >= 1,
    )
    # the scan must be able to fail: it finds a planted copy in each form
    planted = sum(count_forms(b"..." + v + b"...", forms) > 0 for vs in forms.values() for v in vs)
    t.add(
        "secrets",
        "self-check: planted key forms found",
        f"{planted}/{sum(map(len, forms.values()))}",
        "all",
        planted == sum(map(len, forms.values())),
    )


# --------------------------------------------------------------------------- main


def run(quick: bool, keep: Path | None = None) -> Table:
    key = "sentinel-" + secrets.token_hex(16)
    tmp = Path(tempfile.mkdtemp(prefix="cctx-reliability-")) if keep is None else keep
    tmp.mkdir(parents=True, exist_ok=True)
    log_path = tmp / "run.log"
    handler = logging.FileHandler(log_path, encoding="utf-8")
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)s %(name)s %(threadName)s: %(message)s")
    )
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    logging.captureWarnings(True)
    texts = Texts(tmp / "exceptions.txt")
    t = Table()
    svc = Services(key)
    served = None
    try:
        print(f"reliability ({'quick' if quick else 'full'}), run directory {tmp}", flush=True)
        section_faults(t, svc, tmp, texts, quick)
        section_bad_input(t, svc, quick)
        section_cache(t, svc, tmp, quick)
        section_everyday(
            t, svc, tmp, quick, as_of=AS_OF, project_id=PROJECT_ID, frames_equal=_frames_equal
        )
        section_mistakes(t, tmp / "mistakes")
        section_sync(t, tmp, quick)
        served = Served(key, tmp / "serve.log")
        section_load(t, served, quick)
        section_dashboard(t, tmp, quick)
        section_secrets(t, svc, served, tmp, texts, log_path, quick)
        section_query_cost(t, key, QUICK_TEN_YEARS if quick else 1_000_000)
    finally:
        if served is not None:
            served.close()
        svc.close()
        root.removeHandler(handler)
        handler.close()
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts (a minute or two)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON")
    parser.add_argument("--keep", type=Path, default=None, help="keep the run directory here")
    args = parser.parse_args(argv)
    table = run(args.quick, args.keep)
    print()
    print(table.render())
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in table.rows], indent=1))
    missed = [r for r in table.rows if r.correctness and not r.ok]
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
