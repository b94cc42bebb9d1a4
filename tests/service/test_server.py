"""Running the service: background handles, the embedded sample, `serve`, the CLI."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from urllib.parse import urlparse

import pandas as pd
import pytest
import requests

from cctx_research import cli
from cctx_research.config import DEMO_API_KEY, DEMO_PROJECT_ID
from cctx_research.service.app import make_app
from cctx_research.service.local import local_service
from cctx_research.service.server import start_in_background
from cctx_research.service.store import Store

from .conftest import API_KEY, CLOCK, PROJECT_ID, make_ledger


def volume(url: str, project: str, key: str) -> requests.Response:
    return requests.post(
        f"{url}/rest/{project}/transactions-volume", json={}, headers={"x-api-key": key}, timeout=5
    )


def test_background_handle_serves_then_releases_the_port(store):
    app = make_app(store, api_key=API_KEY, project_id=PROJECT_ID)
    with start_in_background(app) as handle:
        assert handle.url.startswith("http://127.0.0.1:")
        assert volume(handle.url, PROJECT_ID, API_KEY).status_code == 200
        port = urlparse(handle.url).port
    assert handle.closed
    with pytest.raises(requests.ConnectionError):
        volume(handle.url, PROJECT_ID, API_KEY)
    handle.close()  # idempotent
    again = start_in_background(app, port=port)  # the port is free again
    try:
        assert volume(again.url, PROJECT_ID, API_KEY).status_code == 200
    finally:
        again.close()


def test_embedded_sample_uses_the_demo_credentials():
    with local_service(as_of="2024-07-01", days=2).serve() as handle:
        assert handle.settings.project_id == DEMO_PROJECT_ID
        assert handle.settings.api_key.get() == DEMO_API_KEY
        assert handle.settings.base_url == handle.url
        assert DEMO_API_KEY not in repr(handle.settings)
        body = volume(handle.url, DEMO_PROJECT_ID, DEMO_API_KEY).json()["body"]
        assert body["endDate"] == int(pd.Timestamp("2024-07-01", tz="UTC").timestamp())
        assert body["burnCount"] > 1000


def test_a_bug_is_a_500_envelope_logged_without_the_key(store, caplog, monkeypatch):
    broken = Store(make_ledger(20), clock=CLOCK)

    def boom(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(broken, "volume", boom)
    app = make_app(broken, api_key=API_KEY, project_id=PROJECT_ID)
    with caplog.at_level(logging.INFO), start_in_background(app) as handle:
        r = volume(handle.url, PROJECT_ID, API_KEY)
        assert r.status_code == 500
        assert r.json() == {
            "status": 500,
            "body": {"error": "internal_error", "message": "internal error"},
        }
        assert volume(handle.url, PROJECT_ID, API_KEY).status_code == 500  # still serving
    assert any("simulated bug" in (rec.exc_text or "") for rec in caplog.records)
    assert all(API_KEY not in rec.getMessage() + (rec.exc_text or "") for rec in caplog.records)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_cli_serve_shuts_down_cleanly_on_signals(tmp_path, sig):
    path = tmp_path / "ledger.parquet"
    make_ledger(200).to_parquet(path)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
    env["CCTX_API_KEY"] = "from-the-environment"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cctx_research.cli", "serve", "--port", str(port),
         "--data", str(path), "--as-of", CLOCK.isoformat(), "--project-id", PROJECT_ID],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                r = volume(url, PROJECT_ID, "from-the-environment")
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        assert r.status_code == 200
        assert volume(url, PROJECT_ID, DEMO_API_KEY).status_code == 401
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "service stopped" in err
    assert "from-the-environment" not in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["serve", "--data", "/no/such/file.parquet"], "no such file"),
        (["serve", "--as-of", "not-a-date"], "not a date"),
        (["serve", "--project-id", "a/b"], "project_id"),
        (["serve", "--port", "70000"], "--port"),
    ],
)
def test_cli_bad_input_is_one_line_and_non_zero(capsys, argv, needle):
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("cctx-research: error:")]
    assert len(lines) == 1
    assert needle in lines[0]
    assert "Traceback" not in err


def test_cli_port_in_use_is_a_clean_error(capsys, tmp_path):
    path = tmp_path / "ledger.csv"
    make_ledger(50).to_csv(path, index=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert cli.main(["serve", "--data", str(path), "--port", str(port)]) == 1
    assert "cctx-research: error:" in capsys.readouterr().err


def test_cli_without_a_command_prints_help(capsys):
    assert cli.main([]) == 2
    assert "serve" in capsys.readouterr().err


def test_a_busy_port_says_so_and_what_to_pass():
    app = make_app(Store(make_ledger(), clock=CLOCK), api_key=API_KEY, project_id=PROJECT_ID)
    with start_in_background(app) as first:
        port = urlparse(first.url).port
        with pytest.raises(OSError, match=f"port {port} on 127.0.0.1 is in use") as info:
            start_in_background(app, port=port)
    assert "--port 0" in str(info.value)
