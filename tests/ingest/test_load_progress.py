"""A long ``load`` / ``import`` says which stage it is in: reading each file, decoding its
logs, building the sides, linking, writing; ``progress=False`` / ``--no-progress`` say
nothing."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

import cctx_research as cctx
from cctx_research.cli import main
from cctx_research.ingest.steps import STAGES, LoadStep

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EVM = FIXTURES / "evm"
BLOCKS = EVM / "cryo_blocks.parquet"


def _two_files(folder: Path) -> list[Path]:
    table = pq.read_table(EVM / "cryo_logs.parquet")
    half = table.num_rows // 2
    folder.mkdir()
    paths = [folder / "ethereum__logs__00000_to_00999.parquet",
             folder / "ethereum__logs__01000_to_01999.parquet"]  # fmt: skip
    pq.write_table(table.slice(0, half), paths[0])
    pq.write_table(table.slice(half), paths[1])
    return paths


def test_a_callable_hears_every_stage_in_order(tmp_path):
    paths = _two_files(tmp_path / "logs")
    seen: list[LoadStep] = []
    cctx.load(paths, blocks=BLOCKS, progress=seen.append, engine="duckdb", out=tmp_path / "led")
    assert all(isinstance(s, LoadStep) for s in seen)
    assert [(s.stage, s.done, s.total, s.path) for s in seen] == [
        ("read", 0, 2, paths[0]),
        ("decode", 0, 2, paths[0]),
        ("read", 1, 2, paths[1]),
        ("decode", 1, 2, paths[1]),
        ("read", 2, 2, None),
        ("sides", 0, 1, None),
        ("link", 0, 1, None),
        ("write", 0, 1, None),
        ("write", 1, 1, None),
    ]
    assert [s.label for s in seen][-1] == STAGES["write"]


def test_true_draws_the_stages_on_stderr_and_false_draws_nothing(tmp_path, capsys):
    paths = _two_files(tmp_path / "logs")
    quiet = cctx.load(paths, blocks=BLOCKS, progress=False)
    assert capsys.readouterr().err == ""
    shown = cctx.load(paths, blocks=BLOCKS, progress=True)
    err = capsys.readouterr().err
    for stage in ("read", "decode", "sides", "link"):
        assert STAGES[stage] in err
    assert shown.equals(quiet)


def test_a_wrong_progress_is_refused_before_any_file_is_read(tmp_path):
    with pytest.raises(TypeError, match="progress must be True, False, None or a callable"):
        cctx.load(tmp_path / "absent.parquet", progress="yes")


def test_import_shows_the_stages_and_no_progress_hides_them(tmp_path, capsys):
    paths = _two_files(tmp_path / "logs")
    argv = ["import", *map(str, paths), "--blocks", str(BLOCKS)]
    assert main([*argv, "--out", str(tmp_path / "a.parquet")]) == 0
    err = capsys.readouterr().err
    assert STAGES["read"] in err
    assert STAGES["link"] in err
    assert STAGES["write"] in err
    assert main([*argv, "--no-progress", "--out", str(tmp_path / "b.parquet")]) == 0
    assert STAGES["read"] not in capsys.readouterr().err
