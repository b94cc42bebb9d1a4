"""The on-disk cache: no key on disk, expiry, offline mode, corruption, sharing."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pandas as pd
import pytest
import requests_cache

from cctx_research import storage
from cctx_research.client import Client
from cctx_research.errors import CacheMissError, NotFoundError

from .conftest import API_KEY, AS_OF, PROJECT_ID

SETTLED = ("2024-06-28", "2024-06-30")
RECENT = ("2024-07-01T11:00Z", "2024-07-01T12:00Z")  # ends < 1 h before the clock


def raw_bytes(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file())


def exercise(client: Client, ledger: pd.DataFrame) -> None:
    client.mints(*SETTLED)
    client.mints(*RECENT)
    client.volume(*SETTLED)
    client.volume_history(*SETTLED, freq="12h")
    client.top_senders(*SETTLED, limit=5)
    client.received(ledger["mint_recipient"].iloc[0], *SETTLED)
    client.transaction(ledger["burn_tx_hash"].iloc[0])


def test_api_key_is_never_written_to_the_cache(client, ledger, tmp_path):
    exercise(client, ledger)
    client.close()
    data = raw_bytes(tmp_path / "cache")
    assert len(data) > 100_000
    assert b"REDACTED" in data  # the header was stored, with its value redacted
    for needle in (API_KEY, API_KEY.upper(), API_KEY.lower()):
        assert needle.encode() not in data
        assert needle.encode("utf-16-le") not in data


def test_leak_check_would_catch_requests_cache_defaults(service, tmp_path):
    """Positive control: requests-cache's own redaction misses the lowercase header."""
    db = tmp_path / "defaults.sqlite"
    session = requests_cache.CachedSession(str(db), allowable_methods=("POST",))
    session.post(
        f"{service.url}/rest/{PROJECT_ID}/transactions-volume",
        json={"startDate": "1719532800", "endDate": "1719619200"},
        headers={"x-api-key": API_KEY},
    )
    session.close()
    assert API_KEY.encode() in raw_bytes(tmp_path)


def test_api_key_is_in_no_log_line_repr_or_attrs(client, ledger, caplog):
    with caplog.at_level(logging.DEBUG):
        exercise(client, ledger)
        df = client.mints(*SETTLED)
    assert any("transactions-mint" in r.getMessage() for r in caplog.records)
    for record in caplog.records:
        assert API_KEY not in record.getMessage()
    assert API_KEY not in repr(client)
    assert API_KEY not in repr(df.attrs)
    assert API_KEY not in repr(client.session.sender.__dict__)


def test_warm_pull_needs_no_network(client):
    cold = client.mints(*SETTLED)
    assert cold.attrs["cctx"]["network_requests"] > 0
    warm = client.mints(*SETTLED)
    pd.testing.assert_frame_equal(cold, warm)
    assert warm.attrs["cctx"]["network_requests"] == 0
    assert warm.attrs["cctx"]["cache_hits"] >= 2  # one per settled chunk


def test_chunks_are_shared_between_overlapping_windows(client):
    client.mints("2024-06-27", "2024-06-30")
    inner = client.mints("2024-06-28", "2024-06-29")
    assert inner.attrs["cctx"]["network_requests"] == 0


@pytest.fixture
def frozen(monkeypatch):
    """Freeze requests-cache's clock; move it with ``frozen.advance(seconds)``."""

    class Clock:
        now = pd.Timestamp.now(tz="UTC").to_pydatetime()

        def advance(self, seconds: float) -> None:
            self.now = self.now + pd.Timedelta(seconds=seconds).to_pytimedelta()

    clock = Clock()
    monkeypatch.setattr("cctx_research.client.chunks._wall", lambda: clock.now.timestamp())
    for module in (
        "requests_cache.policy.expiration",
        "requests_cache.policy.actions",
        "requests_cache.models.response",
    ):
        monkeypatch.setattr(f"{module}.utcnow", lambda: clock.now)
    return clock


def test_expiry_recent_windows_expire_settled_ones_never(client, frozen):
    # the first aggregate also learns the service's bound semantics
    assert client.volume(*SETTLED).attrs["cctx"]["network_requests"] >= 1
    assert client.volume(*RECENT).attrs["cctx"]["network_requests"] == 1
    frozen.advance(200)  # within expire_after (300 s)
    assert client.volume(*RECENT).attrs["cctx"]["network_requests"] == 0
    frozen.advance(200)  # past it
    assert client.volume(*RECENT).attrs["cctx"]["network_requests"] == 1
    frozen.advance(10 * 365 * 86_400)
    assert client.volume(*SETTLED).attrs["cctx"]["network_requests"] == 0


def test_expiry_of_recent_listings(client, frozen):
    cold = client.mints(*RECENT)
    assert cold.attrs["cctx"]["network_requests"] >= 1
    assert client.cache_info()["chunk_entries"] == 1
    frozen.advance(200)
    warm = client.mints(*RECENT)
    assert warm.attrs["cctx"]["network_requests"] == 0
    pd.testing.assert_frame_equal(warm, cold)
    frozen.advance(200)  # both the chunk and its replies are stale now
    assert client.mints(*RECENT).attrs["cctx"]["network_requests"] >= 1
    frozen.advance(10 * 365 * 86_400)
    assert client.mints(*SETTLED).attrs["cctx"]["network_requests"] >= 1
    frozen.advance(10 * 365 * 86_400)
    assert client.mints(*SETTLED).attrs["cctx"]["network_requests"] == 0


def test_expiry_of_transactions_completed_forever_pending_not(client, ledger, frozen):
    done = ledger[ledger["mint_timestamp"] <= AS_OF].iloc[0]
    pending = ledger[ledger["mint_timestamp"].isna() | (ledger["mint_timestamp"] > AS_OF)]
    pending = pending.iloc[0]
    assert client.transaction(done["mint_tx_hash"])["is_completed"]
    assert not client.transaction(pending["burn_tx_hash"])["is_completed"]
    frozen.advance(3600)
    again = client.transaction(done["mint_tx_hash"])
    assert again.attrs["cctx"]["network_requests"] == 0
    again = client.transaction(pending["burn_tx_hash"])
    assert again.attrs["cctx"]["network_requests"] == 1


def test_expire_after_is_configurable(make_client, service, frozen):
    client = make_client(service.url, expire_after="20min")
    client.volume(*RECENT)
    frozen.advance(600)
    assert client.volume(*RECENT).attrs["cctx"]["network_requests"] == 0


def test_settle_after_is_configurable(make_client, service, frozen):
    client = make_client(service.url, settle_after="2D")
    recent, old = ("2024-06-29T12:00Z", "2024-07-01"), ("2024-06-27", "2024-06-29")
    client.mints(*recent)  # ends within 2 days of the clock: not settled
    client.mints(*old)
    frozen.advance(3600)
    assert client.mints(*recent).attrs["cctx"]["network_requests"] >= 1
    assert client.mints(*old).attrs["cctx"]["network_requests"] == 0


def test_errors_are_never_cached(client):
    before = client.cache_info()["http_entries"]
    for _ in range(2):
        with pytest.raises(NotFoundError):
            client.transaction("0x" + "cd" * 32)
    assert client.cache_info()["http_entries"] == before


def test_offline_answers_from_the_cache_alone(client, make_client, service, ledger):
    online = client.mints(*SETTLED)
    vol = client.volume(*RECENT)
    tx = client.transaction(ledger["burn_tx_hash"].iloc[3])
    client.close()
    offline = make_client(service.url, offline=True)
    pd.testing.assert_frame_equal(offline.mints(*SETTLED), online)
    pd.testing.assert_series_equal(offline.volume(*RECENT), vol)
    pd.testing.assert_series_equal(offline.transaction(ledger["burn_tx_hash"].iloc[3]), tx)
    with pytest.raises(CacheMissError) as info:
        offline.mints("2024-06-27", "2024-06-28")
    assert "offline" in str(info.value)
    assert info.value.hint


def test_offline_needs_no_server(make_client, service, tmp_path):
    online = make_client(service.url)
    df = online.mints(*SETTLED)
    offline = make_client("http://127.0.0.1:9", offline=True)  # nothing listens there
    # the cache is keyed by the service, so another URL shares nothing...
    with pytest.raises(CacheMissError):
        offline.mints(*SETTLED)
    # ...unless both name the same source
    a = make_client(service.url, source="my-service")
    a.mints(*SETTLED)
    b = make_client("http://127.0.0.1:9", offline=True, source="my-service")
    pd.testing.assert_frame_equal(b.mints(*SETTLED), df)


def test_cache_info_and_clear_cache(client):
    info = client.cache_info()
    assert info["entries"] == 0
    assert info["enabled"]
    client.mints(*SETTLED)
    client.volume(*RECENT)
    info = client.cache_info()
    assert info["location"] == str(client.cache_dir)
    assert info["http_entries"] > 0
    assert info["chunk_entries"] == 2
    assert info["entries"] == info["http_entries"] + info["chunk_entries"]
    assert info["bytes"] > 0
    assert client.clear_cache(older_than="1h") == 0
    removed = client.clear_cache()
    assert removed == info["entries"]
    assert client.cache_info()["entries"] == 0
    with pytest.raises(ValueError, match="duration"):
        client.clear_cache(older_than="eventually")


def test_cache_false_writes_nothing(make_client, service, tmp_path):
    client = make_client(service.url, cache=False, cache_dir=tmp_path / "none")
    client.mints(*SETTLED)
    assert not (tmp_path / "none").exists()
    assert client.cache_info()["entries"] == 0


def test_corrupt_cache_is_moved_aside_and_rebuilt(make_client, service, tmp_path):
    directory = tmp_path / "cache"
    directory.mkdir()
    (directory / "http.sqlite").write_bytes(b"this is not a database" * 100)
    with pytest.warns(RuntimeWarning, match="moved it to"):
        client = make_client(service.url, cache_dir=directory)
    assert list(directory.glob("http.sqlite.corrupt-*"))
    assert len(client.volume(*SETTLED)) > 0
    assert client.cache_info()["http_entries"] >= 1


def test_threads_share_the_cache(make_client, service):
    client = make_client(service.url, max_workers=8, page_size=20, chunk="3h")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = client.mints(*SETTLED)
    assert a.attrs["cctx"]["network_requests"] > 16


def test_two_processes_share_a_cache(service, tmp_path):
    script = textwrap.dedent(
        f"""
        import pandas as pd
        from cctx_research.client import Client
        c = Client({service.url!r}, {PROJECT_ID!r}, {API_KEY!r}, cache_dir={str(tmp_path)!r},
                   page_size=10, max_workers=4, chunk="2h", progress=False,
                   clock=lambda: pd.Timestamp({AS_OF.isoformat()!r}))
        df = c.mints("2024-06-27", "2024-07-01")
        print(len(df), int(df["amount_raw"].sum()))
        """
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert "locked" not in err
    assert outs[0][0] == outs[1][0]


def _damage(path: Path, at: float, size: int) -> None:
    data = bytearray(path.read_bytes())
    where = int(len(data) * at)
    data[where : where + size] = bytes((b + 0x5A) % 256 for b in data[where : where + size])
    path.write_bytes(bytes(data))


def test_damaged_page_deep_in_the_database_is_moved_aside(make_client, service, tmp_path):
    directory = tmp_path / "deep"
    with make_client(service.url, cache_dir=directory, page_size=20) as first:
        expected = first.mints(*SETTLED)
    for chunk in (directory / "chunks").glob("*.arrow"):
        chunk.unlink()  # only the HTTP level is left to answer
    _damage(directory / "http.sqlite", 0.5, 4096)  # header and first pages intact
    with pytest.warns(RuntimeWarning, match="moved it to"):
        client = make_client(service.url, cache_dir=directory, page_size=20)
    assert list(directory.glob("http.sqlite.corrupt-*"))
    pd.testing.assert_frame_equal(client.mints(*SETTLED), expected)


@pytest.mark.parametrize("damage", ["flipped bytes", "truncated"])
def test_damaged_chunk_file_is_detected_moved_aside_and_rebuilt(
    make_client, service, tmp_path, damage
):
    directory = tmp_path / "chunky"
    with make_client(service.url, cache_dir=directory) as first:
        expected = first.mints(*SETTLED)
    files = sorted((directory / "chunks").glob("*.arrow"))
    assert files
    for path in files:
        if damage == "truncated":
            path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        else:  # the Arrow framing stays intact: only the values change
            _damage(path, 0.5, 64)
    client = make_client(service.url, cache_dir=directory)
    with pytest.warns(RuntimeWarning, match="moved it to"):
        got = client.mints(*SETTLED)
    pd.testing.assert_frame_equal(got, expected)
    assert len(list((directory / "chunks").glob("*.arrow.corrupt-*"))) == len(files)
    assert len(list((directory / "chunks").glob("*.arrow"))) == len(files)  # rebuilt


def test_chunk_files_are_named_by_the_dataset_convention_and_old_ones_are_never_read(
    make_client, service, tmp_path
):
    directory = tmp_path / "named"
    with make_client(service.url, cache_dir=directory) as first:
        expected = first.mints(*SETTLED)
    files = sorted((directory / "chunks").glob("*.arrow"))
    assert files
    for path in files:
        part = storage.parse_part(path.name)
        assert (part.network, part.datatype, part.chunk.unit) == ("interface", "transfers", "key")
    # a chunk of the format before (named by its bare hash), damaged: it is never looked up
    old = directory / "chunks" / ("0" * 32 + ".arrow")
    old.write_bytes(b"not an Arrow file")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # nothing damaged is met
        with make_client(service.url, cache_dir=directory, offline=True) as warm:
            pd.testing.assert_frame_equal(warm.mints(*SETTLED), expected)
    assert old.read_bytes() == b"not an Arrow file"
    with make_client(service.url, cache_dir=directory) as client:
        assert client.clear_cache() >= len(files) + 1
    assert not old.exists()


def test_a_pending_transfer_is_not_cached_forever(serve, make_client, frozen):
    """A day whose recipient listing holds a pending burn settles only once it is minted."""
    from cctx_research.service.app import make_app
    from cctx_research.service.sample import generate
    from cctx_research.service.store import Store

    ledger = generate("2024-07-01", days=3)
    day = pd.Timestamp("2024-06-29", tz="UTC")
    i = ledger.index[(ledger["burn_timestamp"] >= day) & ledger["mint_timestamp"].notna()][0]
    recipient, transfer = ledger.at[i, "mint_recipient"], ledger.at[i, "transfer_id"]
    ledger.loc[i, "burn_timestamp"] = day + pd.Timedelta("23h30min")
    ledger.loc[i, "mint_timestamp"] = day + pd.Timedelta("26h30min")  # a slow attestation
    ledger = ledger.sort_values("burn_timestamp").reset_index(drop=True)
    now = {"t": day + pd.Timedelta("25h30min")}  # day 06-29 is settled, the mint not yet seen
    store = Store(ledger, clock=now["t"])
    handle = serve(make_app(store, api_key=API_KEY, project_id=PROJECT_ID))
    client = make_client(handle.url, clock=lambda: now["t"])
    window = (day, day + pd.Timedelta(days=2))

    first = client.received(recipient, *window).set_index("transfer_id")
    assert first.at[transfer, "transaction_type"] == "burn"

    now["t"] = store.clock = day + pd.Timedelta("28h")
    frozen.advance(2.5 * 3600)
    again = client.received(recipient, *window).set_index("transfer_id")
    assert again.at[transfer, "transaction_type"] == "mint"
    assert again.at[transfer, "timestamp"] == day + pd.Timedelta("26h30min")
    assert again.index.is_unique


def test_requests_cache_is_imported_when_a_reply_is_first_cached_not_by_connect(tmp_path):
    """Importing requests-cache cost more than the rest of a first connect(): it waits for a
    request made through the reply cache."""
    probe = textwrap.dedent("""
        import sys, warnings
        warnings.simplefilter("ignore")
        import cctx_research as cctx
        client = cctx.connect(sample=True, as_of="2024-07-01", days=2, per_day=40)
        print("requests_cache" in sys.modules)
        client.volume("2024-06-30", "2024-07-01")
        print("requests_cache" in sys.modules, client.cache_info()["http_entries"] > 0)
    """)
    env = {"CCTX_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]
