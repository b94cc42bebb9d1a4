"""Exports keep provenance; serve --data reads fetch's JSON back; sub-second times refused."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cctx_research import cli, export
from cctx_research.errors import DataError
from cctx_research.provenance import Provenance, attach, provenance
from cctx_research.service.loading import load_ledger


def _fetch(sample_args, tmp_path, ext, capsys):
    out = tmp_path / f"mints.{ext}"
    code = cli.main(["fetch", "mints", *sample_args, "--no-progress", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    return out, err


SAMPLE = ["--sample", "--as-of", "2024-07-01T12:00Z", "--start", "2024-06-30", "--end",
          "2024-07-01", "--no-cache"]


@pytest.mark.parametrize("ext", ["csv", "json"])
def test_csv_and_json_get_a_sidecar_marking_synthetic_data(tmp_path, capsys, ext):
    out, err = _fetch(SAMPLE, tmp_path, ext, capsys)
    meta = json.loads(export.sidecar_path(out).read_text())
    assert meta["synthetic"] is True
    assert meta["operation"] == "mints"
    assert export.read_sidecar(out).window[0] == pd.Timestamp("2024-06-30", tz="UTC")
    # the CLI says the data is synthetic, as a warning line
    assert "cctx-research: warning:" in err
    assert "synthetic" in err


def test_parquet_keeps_the_record_in_its_metadata(tmp_path, capsys):
    out, _ = _fetch(SAMPLE, tmp_path, "parquet", capsys)
    record = provenance(pd.read_parquet(out))
    assert record is not None
    assert record.synthetic is True
    assert not export.sidecar_path(out).exists()


def test_serve_data_reads_the_json_fetch_writes_and_keeps_it_synthetic(tmp_path, capsys):
    out, _ = _fetch(SAMPLE, tmp_path, "json", capsys)
    written = pd.DataFrame(json.loads(out.read_text()))
    ledger = load_ledger(out)
    assert len(ledger) == len(written) > 100
    assert sorted(ledger["transfer_id"]) == sorted(written["transfer_id"])
    assert int(ledger["amount_raw"].sum()) == int(written["amount_raw"].sum())
    assert provenance(ledger).synthetic is True


def test_sub_second_times_are_refused_naming_the_row(tmp_path, capsys):
    out, _ = _fetch(SAMPLE, tmp_path, "json", capsys)
    rows = json.loads(out.read_text())
    rows[4]["timestamp"] = rows[4]["timestamp"].replace("Z", "").split(".")[0] + ".25Z"
    out.write_text(json.dumps(rows))
    with pytest.raises(DataError, match="row 5") as info:
        load_ledger(out)
    assert "fraction of a second" in str(info.value)


def test_a_frame_without_provenance_leaves_no_stale_sidecar(tmp_path):
    path = tmp_path / "x.csv"
    export.write(attach(pd.DataFrame({"x": [1]}), Provenance(source="s")), path)
    assert export.sidecar_path(path).exists()
    export.write(pd.DataFrame({"x": [2]}), path)
    assert not export.sidecar_path(path).exists()


def test_write_refuses_other_suffixes(tmp_path):
    with pytest.raises(ValueError, match=r"\.parquet, \.csv or \.json"):
        export.write(pd.DataFrame({"x": [1]}), tmp_path / "x.xlsx")
