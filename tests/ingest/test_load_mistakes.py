"""Everyday mistakes with real data: each is refused or read right, never read wrong.

The files are the real messages of ``tests/fixtures/docs`` (sources in
``tests/fixtures/cctp_real/README.md``), copied under the names a user
would give them; each test says what it changed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import cctx_research as cctx

DOCS = Path(__file__).parents[1] / "fixtures" / "docs"


def _two_receipt_files(tmp_path: Path) -> tuple[Path, Path]:
    """``eth.json`` and ``base.json`` (unchanged) as ``ethereum/logs.json``, ``base/logs.json``."""
    eth = tmp_path / "ethereum" / "logs.json"
    base = tmp_path / "base" / "logs.json"
    for src, dst in ((DOCS / "eth.json", eth), (DOCS / "base.json", base)):
        dst.parent.mkdir()
        shutil.copy(src, dst)
    return eth, base


def test_files_of_one_name_are_each_read_as_the_chain_their_path_is_given(tmp_path):
    eth, base = _two_receipt_files(tmp_path)
    ledger = cctx.load([eth, base], chain={str(eth): "ethereum", str(base): "base"})
    corridors = set(zip(ledger["source_domain"], ledger["destination_domain"], strict=True))
    assert corridors == {(0, 6), (6, 0)}  # Ethereum -> Base and back, both linked
    assert ledger["mint_timestamp"].notna().all()


def test_a_bare_name_that_matches_two_files_is_refused(tmp_path):
    eth, base = _two_receipt_files(tmp_path)
    with pytest.raises(ValueError, match=r"'logs.json' matches 2 files.*by its path"):
        cctx.load([eth, base], chain={"logs.json": "ethereum"})
    # a bare name that matches one file still works
    ledger = cctx.load([eth], chain={"logs.json": "ethereum"})
    assert set(ledger["source_domain"]) == {0, 6}
