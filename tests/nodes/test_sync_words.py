"""What `sync` says about a URL that is not the node asked for, and about a start it cannot use.

Real servers on loopback: a plain web server that takes no JSON-RPC (404 to every
POST), the Solana stand-in (tests/solana_node) given as an EVM chain, and the
stand-in asked from a slot after its head.
"""

from __future__ import annotations

from cctx_research.cli import main
from cctx_research.service.server import start_in_background
from tests.solana_node import Node


def _web_page(environ, start_response):
    start_response("404 Not Found", [("Content-Type", "text/html")])
    return [b"<html><body>Not Found</body></html>"]


def _errors(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_a_url_that_is_not_a_json_rpc_node_is_said_to_be_one(tmp_path, capsys):
    # it said "[eth_chainId] 127.0.0.1:PORT: HTTP 404"
    handle = start_in_background(_web_page)
    try:
        host = handle.url.split("//", 1)[1].rstrip("/")
        argv = ["sync", "--chain", f"base={handle.url.rstrip('/')}/rpc", "--from", "0",
                "--out", str(tmp_path / "cctp"), "--no-progress"]  # fmt: skip
        assert main(argv) == 1
    finally:
        handle.close()
    assert _errors(capsys) == [
        f"cctx-research: error: {host} answered eth_chainId with HTTP 404: it is not a JSON-RPC "
        "node; pass base's node URL (--chain base=https://...)"
    ]


def test_a_solana_node_given_as_an_evm_chain_is_named_as_solana(tmp_path, capsys):
    # it said "[eth_chainId] 127.0.0.1:PORT: Method not found"
    with Node() as node:
        argv = ["sync", "--chain", f"base={node.url}", "--from", "0",
                "--out", str(tmp_path / "cctp"), "--no-progress"]  # fmt: skip
        assert main(argv) == 1
        host = node.url.split("//", 1)[1].split("/", 1)[0]
    assert _errors(capsys) == [
        f"cctx-research: error: {host} looks like a Solana node (it answers getSlot, not "
        "eth_chainId), not a node of base; pass it as solana (--chain solana=URL), and base's "
        "own node as base"
    ]


def test_a_solana_start_after_the_head_is_refused_and_the_right_one_then_runs(tmp_path, capsys):
    # it reported "up to date", then refused the right start with "starts at {'slot': ...}"
    out = str(tmp_path / "cctp")
    with Node() as node:
        late = ["sync", "--chain", f"solana={node.url}", "--from", "999999999999", "--out", out,
                "--no-progress"]  # fmt: skip
        assert main(late) == 1
        assert _errors(capsys) == [
            "cctx-research: error: start='999999999999' is after the node's finalized slot "
            "395,000,000; pass a slot at or before it, or a date"
        ]
        right = ["sync", "--chain", f"solana={node.url}", "--from", "300000000", "--out", out,
                 "--no-progress"]  # fmt: skip
        assert main(right) == 0
        assert "2 transfers in" in capsys.readouterr().out  # the two after slot 300,000,000
        earlier = [*right[:4], "0", *right[5:]]
        assert main(earlier) == 1
    assert _errors(capsys) == [
        f"cctx-research: error: solana in {out} starts at slot 300,000,000; start='0' is "
        "earlier. Sync earlier slots into a new directory"
    ]


def test_a_port_that_is_not_a_number_is_said_in_words(tmp_path, capsys):
    # it said urllib's "Port could not be cast to integer value as 'PORTrpc'"
    bad = (("http://127.0.0.1:PORTrpc", "PORTrpc"), ("http://127.0.0.1:99999/x", "99999"))
    for url, port in bad:
        argv = ["sync", "--chain", f"base={url}", "--out", str(tmp_path / "cctp"), "--no-progress"]
        assert main(argv) == 1
        assert _errors(capsys) == [
            f"cctx-research: error: a node URL's port must be a number from 1 to 65535; got "
            f"{port!r} (write http://HOST:PORT/PATH, a '/' before any path)"
        ]
    assert not (tmp_path / "cctp").exists()
