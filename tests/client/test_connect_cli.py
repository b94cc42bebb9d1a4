"""connect(), the fetch command, progress bars."""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
import warnings

import pandas as pd
import pytest
import requests

from cctx_research import cli, connect, schema
from cctx_research.client import Client, WSGITransport
from cctx_research.config import DEMO_PROJECT_ID
from cctx_research.connection import IN_PROCESS_URL
from cctx_research.errors import ConfigError, CoverageWarning, SyntheticDataWarning
from cctx_research.net.progress import wanted

from .conftest import API_KEY, AS_OF, PROJECT_ID, ids, mints_in

START, END = "2024-06-29", "2024-06-30T06:00Z"


@pytest.fixture
def env(monkeypatch, tmp_path):
    for name in (
        "CCTX_API_KEY",
        "CCTX_PROJECT_ID",
        "CCTX_BASE_URL",
        "CCTX_SOURCE",
        "CCTX_SYNTHETIC",
        "CCTX_PAGE_SIZE",
        "CI",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CCTX_CACHE_DIR", str(tmp_path / "envcache"))
    return monkeypatch


@pytest.fixture
def credentials(env, service):
    env.setenv("CCTX_API_KEY", API_KEY)
    env.setenv("CCTX_PROJECT_ID", PROJECT_ID)
    env.setenv("CCTX_BASE_URL", service.url)
    return env


def test_connect_uses_the_configured_service(credentials, service, ledger, tmp_path):
    with connect(progress=False) as client:
        assert isinstance(client, Client)
        assert client.base_url == service.url
        assert client.cache_dir == tmp_path / "envcache"
        assert ids(client.mints(START, END)) == ids(mints_in(ledger, START, END))


def test_connect_overrides_win(credentials, service, tmp_path):
    with connect(cache_dir=tmp_path / "other", page_size=7) as client:
        assert client.cache_dir == tmp_path / "other"
        assert client.page_size == 7
    with pytest.raises(ValueError, match="sample"):
        connect(as_of="2024-07-01")


def test_connect_names_and_marks_the_configured_service(credentials, service):
    from cctx_research.provenance import is_synthetic

    credentials.setenv("CCTX_SOURCE", "sample served on loopback")
    credentials.setenv("CCTX_SYNTHETIC", "true")
    credentials.setenv("CCTX_PAGE_SIZE", "250")
    with connect(progress=False) as client:
        assert client.source == "sample served on loopback"
        assert client.page_size == 250
        frame = client.mints(START, END)
    assert is_synthetic(frame)
    assert frame.attrs["cctx"]["source"] == "sample served on loopback"


@pytest.mark.parametrize(
    ("name", "value"), [("CCTX_SYNTHETIC", "maybe"), ("CCTX_PAGE_SIZE", "0")]
)
def test_bad_service_settings_say_what_to_set(credentials, name, value):
    credentials.setenv(name, value)
    with pytest.raises(ConfigError, match=name):
        connect(progress=False)


def test_connect_without_credentials_starts_the_sample(env, caplog):
    with (
        caplog.at_level(logging.INFO, logger="cctx_research.connection"),
        pytest.warns(SyntheticDataWarning, match="synthetic") as shown,
    ):
        client = connect(as_of="2024-07-01T12:00Z", days=2, per_day=200, progress=False)
    assert len([w for w in shown if issubclass(w.category, SyntheticDataWarning)]) == 1
    with client:
        assert client.project_id == DEMO_PROJECT_ID
        assert "embedded synthetic sample" in client.source
        lines = [r.getMessage() for r in caplog.records if r.name == "cctx_research.connection"]
        assert len(lines) == 1
        assert "sample" in lines[0]
        assert "CCTX_API_KEY" in lines[0]
        df = client.mints()  # the pinned clock gives the default window
        assert len(df) > 100
        assert df.attrs["cctx"]["source"].startswith("embedded synthetic sample")
        # served in-process, through the transport seam: no port, no server
        assert client.base_url == IN_PROCESS_URL
        assert isinstance(client.transport, WSGITransport)


def test_connect_loopback_serves_on_a_port_and_stops_it_on_close(env):
    with pytest.warns(SyntheticDataWarning):
        client = connect(sample=True, as_of="2024-07-01T12:00Z", days=1, per_day=100,
                         loopback=True, progress=False)  # fmt: skip
    with client:
        assert client.base_url.startswith("http://127.0.0.1:")
        assert client.transport is None
        assert len(client.mints("2024-07-01", "2024-07-01T12:00Z")) > 10
        url = client.base_url
    # closing the client stops the service it started
    with pytest.raises(requests.ConnectionError):
        requests.post(url + "/rest/x/y", timeout=2)


def test_data_served_on_loopback_for_other_processes_reaches_connect_by_its_settings(
    env, ledger
):
    from cctx_research.connection import serve_on_loopback
    from cctx_research.provenance import is_synthetic

    with serve_on_loopback(ledger) as served:
        settings = served.settings
        assert settings.base_url.startswith("http://127.0.0.1:")
        assert (settings.synthetic, settings.page_size) == (is_synthetic(ledger), 1000)
        assert settings.base_url in served.description
        key = settings.api_key.get()
        assert len(key) >= 24  # made for this service, not the demo key
        assert key not in repr(served)
        # what a kernel does: connect() from the CCTX_* variables alone
        env.setenv("CCTX_BASE_URL", settings.base_url)
        env.setenv("CCTX_PROJECT_ID", settings.project_id)
        env.setenv("CCTX_API_KEY", key)
        env.setenv("CCTX_SOURCE", settings.source)
        with connect(progress=False) as client:
            assert ids(client.mints(START, END)) == ids(mints_in(ledger, START, END))
    with pytest.raises(requests.ConnectionError):
        requests.post(settings.base_url + "/rest/x/y", timeout=2)


def test_connect_sample_true_ignores_credentials(credentials):
    with connect(sample=True, as_of="2024-07-01T12:00Z", days=1, per_day=100) as client:
        assert client.project_id == DEMO_PROJECT_ID


def test_connect_sample_false_without_credentials(env):
    with pytest.raises(ConfigError, match="CCTX_API_KEY"):
        connect(sample=False)


def run(argv, capsys):
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("ext", ["parquet", "csv", "json"])
def test_fetch_writes_by_extension(credentials, service, ledger, tmp_path, capsys, ext):
    out = tmp_path / f"mints.{ext}"
    code, printed, err = run(
        [
            "fetch",
            "mints",
            "--start",
            START,
            "--end",
            END,
            "--source",
            "base",
            "0",
            "--no-progress",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 0, err
    truth = mints_in(ledger, START, END)
    truth = truth[truth["source_domain"].isin([0, 6])]
    # one line: what, how many, where (and where the provenance is)
    where = "the file's metadata" if ext == "parquet" else f"mints.{ext}.meta.json"
    said = f"wrote {len(truth):,} mints to {out} (provenance in {where}), synthetic data\n"
    assert printed == said
    # the permissions of any new file, as import writes its ledger (not mkstemp's 0600)
    umask = os.umask(0)
    os.umask(umask)
    written = [out] if ext == "parquet" else [out, out.with_name(out.name + ".meta.json")]
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path
    if ext == "parquet":
        df = pd.read_parquet(out)
        schema.validate(df, "transfers")
    elif ext == "csv":
        df = pd.read_csv(out)
    else:
        df = pd.DataFrame(json.loads(out.read_text()))
    assert sorted(df["transfer_id"].astype(str)) == ids(truth)


def test_fetch_into_a_partitioned_dataset_twice_without_duplicates(
    credentials, service, ledger, tmp_path, capsys
):
    from cctx_research.ingest import datasets

    out = str(tmp_path / "mints") + "/"
    argv = ["fetch", "mints", "--start", START, "--end", END, "--no-progress", "--out", out]
    for _ in range(2):  # the rerun replaces the window's partitions
        code, printed, err = run(argv, capsys)
        assert code == 0, err
    n = len(mints_in(ledger, START, END))
    assert printed == (
        f"wrote {n:,} mints to the dataset {out}: 2 days, {n:,} rows replaced, synthetic data\n"
    )
    back = datasets.read(out)
    assert sorted(back["transfer_id"].astype(str)) == ids(mints_in(ledger, START, END))
    assert any(p.name.startswith("day=") for p in (tmp_path / "mints").iterdir())
    code, _, err = run(["fetch", "volume", "--start", START, "--end", END, "--out", out], capsys)
    assert code != 0
    assert "a partitioned dataset holds mints" in err


@pytest.mark.parametrize(
    "what",
    [["volume"], ["volume-history", "--freq", "6h"], ["top-senders", "--limit", "3"]],
)
def test_fetch_other_frames(credentials, tmp_path, capsys, what):
    out = tmp_path / "x.parquet"
    code, _, err = run(["fetch", *what, "--start", START, "--end", END, "--out", str(out)], capsys)
    assert code == 0, err
    df = pd.read_parquet(out)
    kind = "top_addresses" if what[0] == "top-senders" else "volume"
    schema.validate(df, kind, extra=False)


def test_fetch_transaction_and_received(credentials, ledger, tmp_path, capsys):
    out = tmp_path / "tx.json"
    code, _, err = run(
        ["fetch", "transaction", "--tx-hash", ledger["burn_tx_hash"].iloc[0], "--out", str(out)],
        capsys,
    )
    assert code == 0, err
    assert json.loads(out.read_text())[0]["transaction_type"] == "burn"
    code, _, err = run(
        [
            "fetch",
            "received",
            "--address",
            ledger["mint_recipient"].iloc[0],
            "--start",
            START,
            "--end",
            END,
            "--out",
            str(tmp_path / "r.csv"),
        ],
        capsys,
    )
    assert code == 0, err


@pytest.mark.parametrize("domain", [5, 4])
def test_fetch_received_takes_a_non_evm_address(credentials, ledger, tmp_path, capsys, domain):
    rows = ledger[(ledger["destination_domain"] == domain) & (ledger["mint_timestamp"] <= AS_OF)]
    address = rows["mint_recipient"].iloc[0]  # Solana base58 / Noble bech32
    out = tmp_path / "r.csv"
    argv = ["fetch", "received", "--address", address, "--start", "2024-06-20", "--end", END]
    code, _, err = run([*argv, "--out", str(out)], capsys)
    assert code == 0, err
    got = pd.read_csv(out)
    want = ledger[(ledger["mint_recipient"] == address) & (ledger["burn_timestamp"] <= AS_OF)]
    assert sorted(got["transfer_id"]) == sorted(want["transfer_id"])
    assert (got["address"] == address).all()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fetch", "received", "--out", "x.csv"], "--address"),
        (["fetch", "mints", "--out", "x.xlsx"], ".parquet"),
        (
            ["fetch", "mints", "--start", "2024-06-02", "--end", "2024-06-01", "--out", "x.csv"],
            "before end",
        ),
        (["fetch", "mints", "--source", "narnia", "--out", "x.csv"], "unknown chain"),
        (["fetch", "transaction", "--tx-hash", "0x" + "ef" * 32, "--out", "x.csv"], "404"),
    ],
)
def test_fetch_errors_are_one_line(credentials, tmp_path, capsys, argv, message):
    code, _, err = run(argv, capsys)
    assert code != 0
    lines = [line for line in err.splitlines() if line.startswith("cctx-research")]
    assert len(lines) == 1
    assert message in lines[0]
    assert "Traceback" not in err


def test_fetch_wrong_key_hides_it(credentials, tmp_path, capsys):
    credentials.setenv("CCTX_API_KEY", "sk-wrong-secret-value-42")
    code, _, err = run(
        ["fetch", "volume", "--start", START, "--end", END, "--out", str(tmp_path / "v.csv")],
        capsys,
    )
    assert code == 1
    assert "sk-wrong-secret-value-42" not in err
    assert "401" in err


def test_progress_resolution(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert wanted(None) is False
    assert wanted(True) is True
    monkeypatch.delenv("CI")
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)  # not in a notebook's kernel
    monkeypatch.setattr(sys, "stderr", open(__file__))  # not a TTY  # noqa: SIM115
    assert wanted(None) is False
    assert wanted(False) is False


def test_progress_bar_without_ipywidgets(monkeypatch, make_client, service, capsys):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    for name in ("tqdm.auto", "tqdm.autonotebook", "tqdm.notebook"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    client = make_client(service.url, progress=True, cache=False, chunk="6h")
    df = client.mints(START, END)
    assert len(df) > 0
    err = capsys.readouterr().err
    assert "transactions-mint" in err
    assert "chunk" in err


@pytest.mark.parametrize(
    ("argv", "level"),
    [
        (["serve", "--port", "1"], None),
        (["--log-level", "DEBUG", "serve"], "DEBUG"),
        (["serve", "--log-level", "WARNING"], "WARNING"),
    ],
)
def test_log_level_before_or_after_the_subcommand(argv, level):
    from cctx_research.cli import build_parser

    assert build_parser().parse_args(argv).log_level == level


@pytest.mark.parametrize(
    ("argv", "level"),
    [
        (["fetch", "mints", "--out", "x.csv"], logging.WARNING),
        (["-v", "fetch", "mints", "--out", "x.csv"], logging.INFO),
        (["fetch", "mints", "-vv", "--out", "x.csv"], logging.DEBUG),
        (["serve"], logging.INFO),
        (["--log-level", "ERROR", "fetch", "mints", "--out", "x.csv"], logging.ERROR),
    ],
)
def test_quiet_by_default_louder_with_v(argv, level):
    from cctx_research.cli import build_parser, log_level

    assert log_level(build_parser().parse_args(argv)) == level


def test_fetch_reaches_a_service_by_flags_with_the_key_from_a_file(
    env, service, ledger, tmp_path, capsys
):
    key_file = tmp_path / "key"
    key_file.write_text(API_KEY + "\n")
    out = tmp_path / "m.csv"
    argv = ["fetch", "mints", "--start", START, "--end", END, "--no-progress",
            "--base-url", service.url, "--project-id", PROJECT_ID,
            "--api-key-file", str(key_file), "--out", str(out)]
    code, stdout, err = run(argv, capsys)
    assert code == 0, err
    assert ids(pd.read_csv(out)) == ids(mints_in(ledger, START, END))
    meta = (tmp_path / "m.csv.meta.json").read_text()
    assert service.url in meta
    for text in (stdout, err, meta):
        assert API_KEY not in text
    # quiet by default: no log line per request
    assert "transactions-mint" not in err


def test_the_key_is_never_a_command_line_value(env, tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli.main(["fetch", "volume", "--api-key", "sk-x", "--out", str(tmp_path / "v.csv")])
    assert "sk-x" not in capsys.readouterr().err.replace("--api-key sk-x", "")
    missing = ["fetch", "volume", "--project-id", PROJECT_ID, "--out", str(tmp_path / "v.csv")]
    code, _, err = run([*missing, "--api-key-file", str(tmp_path / "nope")], capsys)
    assert code == 1
    assert "--api-key-file" in err
    code, _, err = run(missing, capsys)
    assert code == 1
    assert "CCTX_API_KEY" in err


@pytest.mark.parametrize(
    ("present", "missing"),
    [("CCTX_API_KEY", "CCTX_PROJECT_ID"), ("CCTX_PROJECT_ID", "CCTX_API_KEY")],
)
def test_one_credential_without_the_other_says_which_is_missing(env, caplog, present, missing):
    env.setenv(present, "a-value-long-enough-to-be-a-key" if "KEY" in present else DEMO_PROJECT_ID)
    with (
        caplog.at_level(logging.INFO, logger="cctx_research.connection"),
        pytest.warns(SyntheticDataWarning, match=f"{present} is set but {missing} is not"),
    ):
        client = connect(as_of="2024-07-01T12:00Z", days=1, per_day=50, progress=False)
    client.close()
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert f"{present} is set but {missing} is not" in logged
    assert "a-value-long-enough-to-be-a-key" not in logged


@pytest.mark.parametrize("under", [False, True])
def test_a_cache_dir_that_is_a_file_says_so_and_what_to_do(credentials, tmp_path, capsys, under):
    # "the cache directory ... failed: File exists", with no hint on the command line, before
    blocker = tmp_path / "cache-file"
    blocker.write_text("not a directory")
    credentials.setenv("CCTX_CACHE_DIR", str(blocker / "sub" if under else blocker))
    status = cli.main(["fetch", "volume", "--start", START, "--end", END,
                       "--out", str(tmp_path / "v.json"), "--no-progress"])
    assert status == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    said = f"cannot be made: {blocker} is a file" if under else f"{blocker} is a file, not a"
    assert said in lines[0]
    assert "point CCTX_CACHE_DIR (or cache_dir=) at a directory, or pass --no-cache" in lines[0]
    assert blocker.read_text() == "not a directory"


def test_a_window_before_1970_is_refused_before_any_request(env, tmp_path, capsys, sample_client):
    # the service's raw 400 text ("invalid_field: endDate must be Unix seconds ...") before
    with pytest.raises(ValueError, match=r"^start=1900-01-01 is before 1970-01-01, where the "
                       r"interface's times \(Unix seconds\) begin; pass a start on or after"):
        sample_client.mints("1900-01-01", "1900-02-01")
    status = cli.main(["report", "--start", "1900-01-01", "--out", str(tmp_path / "r.html"),
                       "--no-progress"])
    assert status == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert errors == ["cctx-research: error: start=1900-01-01 is before 1970-01-01, where the "
                      "interface's times (Unix seconds) begin; pass a start on or after "
                      "1970-01-01"]
    assert not (tmp_path / "r.html").exists()
    # refused before the sample is built (or read) for a window it could never serve
    assert not (tmp_path / "envcache").exists() or not any((tmp_path / "envcache").rglob("*"))


def test_a_server_at_the_base_url_without_credentials_is_named_beside_the_sample(
    env, service, capsys
):
    # `serve` then `fetch` without CCTX_* read the embedded sample without a word about the server
    env.setenv("CCTX_BASE_URL", service.url)
    with pytest.warns(SyntheticDataWarning) as shown:
        connect(as_of="2024-07-01T12:00Z", days=1, per_day=50, progress=False).close()
    said = [str(w.message) for w in shown if issubclass(w.category, SyntheticDataWarning)]
    assert len(said) == 1
    assert said[0].startswith(
        f"no CCTX_API_KEY or CCTX_PROJECT_ID set (a server listens at {service.url}: to use it, "
        "set CCTX_PROJECT_ID and CCTX_API_KEY; serve's demo pair is in docs/configuration.md): "
        "using the embedded synthetic sample"
    )
    env.setenv("CCTX_BASE_URL", "http://127.0.0.1:9")  # nothing listens (discard port)
    with pytest.warns(SyntheticDataWarning, match=r"^no CCTX_API_KEY or CCTX_PROJECT_ID set: "):
        connect(as_of="2024-07-01T12:00Z", days=1, per_day=50, progress=False).close()


def test_a_chain_the_sample_does_not_hold_is_said_beside_its_0_rows(sample_client):
    # mints(source="linea") on the sample returned 0 rows without a word
    assert sample_client.domains == (0, 1, 2, 3, 4, 5, 6, 7)
    with pytest.warns(CoverageWarning) as shown:
        frame = sample_client.mints("2024-06-30", "2024-07-01", source="linea")
    assert len(frame) == 0
    said = [str(w.message) for w in shown if issubclass(w.category, CoverageWarning)]
    assert len(said) == 1
    assert said[0].startswith("source=linea: the embedded synthetic sample (pinned ")
    assert said[0].endswith(
        "holds 8 chains (ethereum, avalanche, optimism, arbitrum, noble, solana, base, "
        "polygon), not linea: its 0 rows there say nothing about linea"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoverageWarning)  # held chains: no word
        assert len(sample_client.mints("2024-06-30", "2024-07-01", destination=["base", 0])) > 0
