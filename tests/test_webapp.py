"""`cctx-research dashboard`: bad options, and a real run stopped with Ctrl-C."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.request

import pytest
from browser_support import free_port, needs_module
from sample_seed import seed

from cctx_research import cli

needs_module("voila")
psutil = pytest.importorskip("psutil")


def test_data_and_sample_together_are_refused(capsys):
    assert cli.main(["dashboard", "--data", "x.parquet", "--sample"]) == 1
    assert "--data or --sample" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-5"])
def test_a_kernel_timeout_below_one_second_is_refused(value, capsys):
    assert cli.main(["dashboard", "--kernel-timeout", value]) == 1
    assert "--kernel-timeout must be at least 1 second" in capsys.readouterr().err


def test_culling_options_are_voilas_and_checked():
    from cctx_research.webapp.server import cull_interval, culling_options

    options = culling_options(120)
    assert "--MappingKernelManager.cull_idle_timeout=120" in options
    assert "--MappingKernelManager.cull_interval=30" in options
    assert "--MappingKernelManager.cull_connected=False" in options  # an open page keeps it
    assert cull_interval(5) == 1
    assert cull_interval(3600) == 30
    for bad in (0, -1, 1.5, True, "60"):
        with pytest.raises(ValueError, match="kernel_timeout must be a whole number"):
            culling_options(bad)


def test_a_busy_port_says_pass_another(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert cli.main(["dashboard", "--port", str(port)]) == 1
    assert "pass another --port" in capsys.readouterr().err


def test_a_missing_data_file_is_a_one_line_error(tmp_path, capsys):
    port = free_port()
    assert cli.main(["dashboard", "--port", str(port), "--data", str(tmp_path / "no.parquet")]) == 1
    assert "no.parquet" in capsys.readouterr().err


def test_the_server_starts_without_compiling_the_iri_grammar():
    """jsonschema under Jupyter's server imports rfc3987_syntax when installed, which
    compiles Lark grammars (1.4 s a start); the app's process skips it, and jsonschema's
    other format checks stay."""
    import importlib.metadata

    try:  # the suite's own workers skip it too (tests/conftest.py): asked of the installation
        importlib.metadata.distribution("rfc3987-syntax")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("rfc3987_syntax is not installed: nothing to skip")
    code = (
        "import sys\n"
        "from cctx_research.views.jupyter import without_iri_grammar\n"
        "without_iri_grammar()\n"
        "import voila.app, jsonschema\n"
        "checker = jsonschema.FormatChecker()\n"
        "print(sorted(m for m in ('lark', 'rfc3987_syntax') if sys.modules.get(m)),\n"
        "      checker.conforms('2026-11-28T00:00:00Z', 'date-time'),\n"
        "      checker.conforms('not a time', 'date-time'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    assert done.stdout.split() == ["[]", "True", "False"], done.stdout + done.stderr
    unguarded = code.replace("without_iri_grammar()\n", "")
    done = subprocess.run([sys.executable, "-c", unguarded], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    assert done.stdout.startswith("['lark', 'rfc3987_syntax']"), done.stdout  # what it spares


@pytest.mark.slow
def test_serves_the_panels_and_stops_on_ctrl_c(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
    env["CCTX_CACHE_DIR"] = str(seed(tmp_path / "cache"))  # the sample, built once a session
    proc = subprocess.Popen(
        [sys.executable, "-m", "cctx_research.cli", "dashboard", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=180).read().decode()
        assert "application/vnd.jupyter.widget-view+json" in page
        kernels = psutil.Process(proc.pid).children(recursive=True)
        assert kernels, "the page should have started a kernel"
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        assert proc.wait(60) in (0, 130)
        _gone, alive = psutil.wait_procs(kernels, timeout=10)
        assert not alive, f"left running: {alive}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
