"""CSV as spreadsheets write it: semicolons, tabs, Excel's export (BOM, CRLF, decimal commas),
a header without rows. Each reads as the comma file does, or says what it holds."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research.errors import CoverageWarning

DUNE = Path(__file__).parent.parent / "fixtures" / "dune"
FLOWS = DUNE / "bridges_evms_flows.csv"


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True),
                                  check_like=True)  # fmt: skip


@pytest.mark.parametrize("sep", [";", "\t"])
def test_semicolons_and_tabs_read_as_commas(tmp_path, sep):
    # such a file read as one column: "matches no known format" and every format's columns
    rows = pd.read_csv(FLOWS, dtype=str, keep_default_na=False)
    path = tmp_path / "flows.csv"
    rows.to_csv(path, sep=sep, index=False)
    _same(cctx.load(path), cctx.load(FLOWS))


def test_an_excel_export_reads_bom_crlf_and_decimal_commas(tmp_path, sample_client):
    # amounts come from the exact amount_raw: the decimal commas of `amount` change nothing
    transfers = sample_client.mints("2024-06-30", "2024-06-30T02:00Z")
    comma = tmp_path / "transfers.csv"
    transfers.to_csv(comma, index=False)
    excel = tmp_path / "transfers-excel.csv"
    text = transfers.to_csv(index=False, sep=";", decimal=",", lineterminator="\r\n")
    assert ";" + f"{transfers['amount'].iloc[0]}".replace(".", ",") + ";" in text
    excel.write_bytes(b"\xef\xbb\xbf" + text.encode())
    _same(cctx.load(excel), cctx.load(comma))


def test_a_header_without_rows_warns_that_it_adds_nothing(tmp_path):
    header = tmp_path / "empty.csv"
    header.write_text(FLOWS.read_text().splitlines()[0] + "\n")
    with pytest.warns(CoverageWarning, match=r"^'empty\.csv' has a header \(\d+ columns, "
                      r"delimited by commas\) and no rows: it adds nothing to the data$"):
        assert len(cctx.load(header)) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoverageWarning)
        cctx.load(FLOWS)  # rows: no word


FIXTURES = Path(__file__).parent.parent / "fixtures"
EVERY_CSV = sorted(FIXTURES.rglob("*.csv"))


def _parsed(path, monkeypatch):
    """``_csv_text`` of ``path``, the parsers it asked (``"pyarrow"``, then ``"c"`` if Arrow's
    refused), and what pandas' own parser reads."""
    from cctx_research.ingest.files import _csv_text, csv_delimiter

    sep = csv_delimiter(path)
    want = pd.read_csv(path, dtype=str, keep_default_na=False, sep=sep, encoding="utf-8-sig")
    asked, read_csv = [], pd.read_csv

    def recorded(*args, **kwargs):
        asked.append(kwargs.get("engine", "c"))
        return read_csv(*args, **kwargs)

    monkeypatch.setattr(pd, "read_csv", recorded)
    got = _csv_text(path, sep)
    return got, asked, want


@pytest.mark.parametrize("path", EVERY_CSV, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_arrows_parser_reads_every_csv_fixture_as_pandas_parser(path, monkeypatch):
    """Arrow's CSV parser reads the text cells; the frame is the one pandas' parser gives."""
    got, asked, want = _parsed(path, monkeypatch)
    assert asked == ["pyarrow"]
    pd.testing.assert_frame_equal(got, want)


@pytest.mark.parametrize(("text", "parsers"), [
    ("a,b\n1,2\n3\n", ["pyarrow", "c"]),            # a short row: pandas fills it
    ("a,b\n 1 , 2 \n  \n3,4\n", ["pyarrow", "c"]),  # a line of spaces
    ('a,b\n"x\ny",2\n', ["pyarrow"]),                # a newline inside quotes
    ("\ufeffa;b\r\n1;2\r\nNA;\r\n", ["pyarrow"]),    # Excel's BOM and CRLF, "NA" as text, ""
])  # fmt: skip
def test_files_arrow_refuses_or_reads_are_read_as_pandas_reads_them(tmp_path, monkeypatch,
                                                                     text, parsers):  # fmt: skip
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8", newline="")
    got, asked, want = _parsed(path, monkeypatch)
    assert asked == parsers
    pd.testing.assert_frame_equal(got, want)
