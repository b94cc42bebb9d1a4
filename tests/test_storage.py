"""The dataset convention: part names made and parsed, the manifest, atomic writes."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cctx_research
from cctx_research import storage
from cctx_research.errors import DataError
from cctx_research.storage import Chunk, Manifest, Part

TOKENS = st.from_regex(r"[a-z0-9]{1,6}([-_][a-z0-9]{1,6}){0,2}", fullmatch=True)
NUMBERS = st.integers(min_value=0, max_value=10**12)
CHUNKS = st.one_of(
    st.builds(Chunk.blocks, NUMBERS, NUMBERS, tip=st.booleans()),
    st.builds(Chunk.slots, NUMBERS, NUMBERS, page=st.none() | st.integers(0, 10**7)),
    st.dates().map(lambda d: Chunk.day(d.isoformat())).filter(lambda c: len(c.value) == 10),
    st.from_regex(r"[0-9a-f]{1,64}", fullmatch=True).map(Chunk.key),
)


@given(TOKENS, TOKENS, CHUNKS, st.none() | TOKENS, st.sampled_from(["parquet", "jsonl", "arrow"]))
def test_a_part_name_parses_back_to_the_part(network, datatype, chunk, label, suffix):
    part = Part(network, datatype, chunk, label=label, suffix=suffix)
    assert storage.parse_part(part.name) == part


def test_names_say_what_a_part_covers():
    assert Part("base", "logs", Chunk.blocks(0, 511)).name == (
        "base__logs__blocks_0000000000_to_0000000511.parquet"
    )
    assert Part("base", "logs", Chunk.blocks(512, 600, tip=True)).name == (
        "base__logs__blocks_0000000512_to_0000000600_tip.parquet"
    )
    chunk = Chunk.slots(300_000_000, 300_000_099, page=12)
    assert Part("solana", "transactions", chunk, label="v2-messenger", suffix="jsonl").name == (
        "solana__transactions__v2-messenger__page_000012_slots_0300000000_to_0300000099.jsonl"
    )
    day = Part("world_chain", "transfers", Chunk.day("2026-11-20"))
    assert day.name == "world_chain__transfers__day_2026-11-20.parquet"
    key = Part("interface", "received", Chunk.key("ab" * 16), suffix="arrow")
    assert key.name == f"interface__received__key_{'ab' * 16}.arrow"


@pytest.mark.parametrize("name", [
    "0-511.parquet", "tip-0-511.parquet", "v1-messenger-000001-5-9.jsonl",  # the old names
    ".base__logs__blocks_1_to_2.parquet.x1y2.tmp", "part-1a2b3c4d-0.parquet", "_cctx.json",
    "base__logs.parquet", "base__logs__blocks_1_to_2", "Base__logs__blocks_1_to_2.parquet",
    "base__logs__blocks_1_to_2__x__y.parquet", "base___logs__blocks_1_to_2.parquet",
    "base__logs__day_2026-1-2.parquet", "base__logs__key_XYZ.arrow", "x.arrow.corrupt-1",
])  # fmt: skip
def test_other_file_names_are_not_parts(name):
    assert storage.parse_part(name) is None


def test_a_part_that_cannot_be_named_is_refused():
    with pytest.raises(ValueError, match="network is lower-case letters"):
        Part("Base Chain", "logs", Chunk.blocks(1, 2))
    with pytest.raises(ValueError, match="datatype"):
        Part("base", "logs__tip", Chunk.blocks(1, 2))
    with pytest.raises(ValueError, match="whole numbers >= 0"):
        Chunk.blocks(-1, 2)
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        Chunk.day("20 Nov 2026")
    with pytest.raises(ValueError, match="only a block or slot range"):
        Chunk("day", value="2026-11-20", tip=True)
    assert storage.slug("Domain 42") == "domain-42"
    assert storage.slug("world__chain") == "world_chain"
    assert storage.slug("??") == "unknown"


def test_the_manifest_round_trips_and_replaces_the_old_state_file(tmp_path):
    assert storage.read_manifest(tmp_path, kinds=("sync",), instead="x") is None
    assert storage.dataset_kind(tmp_path) is None
    (tmp_path / "sync.json").write_text(json.dumps({"format": 1, "chains": {"base": {}}}))
    old = storage.read_manifest(tmp_path, kinds=("sync",), instead="x")
    assert old == Manifest("sync", {"chains": {"base": {}}}, format=1, library_version=None)
    assert storage.dataset_kind(tmp_path) == "sync"
    assert storage.manifest_path(tmp_path) == tmp_path / "sync.json"
    path = storage.write_manifest(tmp_path, Manifest("sync", old.state))
    assert not (tmp_path / "sync.json").exists()
    assert storage.manifest_path(tmp_path) == path == tmp_path / storage.MANIFEST
    raw = json.loads(path.read_text())
    assert raw == {"format": storage.FORMAT, "kind": "sync",
                   "library_version": cctx_research.__version__, "synthetic": False,
                   "state": {"chains": {"base": {}}}}  # fmt: skip
    assert storage.read_manifest(tmp_path, kinds=("sync",), instead="x") == Manifest(
        "sync", {"chains": {"base": {}}}
    )


@pytest.mark.parametrize(("raw", "says"), [
    ({"format": 99, "kind": "ledger", "state": {}}, r"newer.*ledger format 99.*pip install -U"),
    ({"format": 0, "kind": "ledger", "state": {}}, r"an older.*ledger format 0.*use a new dir"),
    ({"format": "2", "kind": "ledger", "state": {}}, r"no version this one knows.*'2'"),
    ({"format": True, "kind": "ledger", "state": {}}, r"no version this one knows"),
    ({"format": 2, "kind": "sync", "state": {}}, r"of kind 'sync', not 'ledger'.*use a new dir"),
    ({"format": 2, "kind": "ledger"}, r"holds no kind or state.*use a new dir"),
    ([1, 2], r"not a manifest.*use a new dir"),
])  # fmt: skip
def test_a_manifest_this_version_does_not_read_is_refused_saying_what_to_do(tmp_path, raw, says):
    (tmp_path / storage.MANIFEST).write_text(json.dumps(raw))
    with pytest.raises(DataError, match=says):
        storage.read_manifest(tmp_path, kinds=("ledger",), instead="use a new directory")


def test_replace_atomically_leaves_the_old_file_or_none_never_a_partial_one(tmp_path):
    path = tmp_path / "deep" / "x.bin"
    storage.replace_atomically(path, lambda tmp: tmp.write_bytes(b"old"))
    assert oct(path.stat().st_mode & 0o777) == oct(0o666 & ~_umask())

    def fails(tmp):
        tmp.write_bytes(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        storage.replace_atomically(path, fails)
    assert path.read_bytes() == b"old"
    assert [p.name for p in path.parent.iterdir()] == ["x.bin"]
    frame = pd.DataFrame({"a": [1, 2]})
    storage.write_atomically(frame, tmp_path / "f.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "f.parquet"), frame)


def test_replace_directory_atomically_swaps_keeps_on_failure_and_removes_when_empty(tmp_path):
    day = tmp_path / "day=2026-11-20"
    storage.replace_directory_atomically(day, lambda tmp: (tmp / "a").write_text("old"))
    assert oct(day.stat().st_mode & 0o777) == oct(0o777 & ~_umask())

    def fails(tmp):
        (tmp / "a").write_text("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        storage.replace_directory_atomically(day, fails)
    assert (day / "a").read_text() == "old"
    storage.replace_directory_atomically(day, lambda tmp: (tmp / "b").write_text("new"))
    assert [p.name for p in day.iterdir()] == ["b"]
    storage.replace_directory_atomically(day, lambda tmp: None)
    assert not day.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary or old directory left


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask
