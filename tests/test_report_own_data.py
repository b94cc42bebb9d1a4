"""`report --data` on a small ledger of one's own: its span, its clock, its KPIs.

The ledger is real-shaped: 37 transfers of one real attested V2 message,
``v2_attested_base_to_eth_19500`` (tests/fixtures/cctp_real/v2_messages.json), burned on Base
and minted on Ethereum, loaded from event logs by ``cctx.load``. Filled in: each transfer's
amount and attested nonce (the real ones with their last bytes changed, so each transfer is
distinct), the hashes, blocks and times: a burn every two hours from 2025-11-13 08:13:20
UTC, each minted 15 minutes later, but one burn never minted and the last burned 10 minutes
before the data's end (a mint of the transfer before it).
"""

from __future__ import annotations

import html
import re
import warnings

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import report
from cctx_research.cli import main
from cctx_research.errors import CoverageWarning
from tests.ingest.real import burn_logs, message, mint_logs, tx, write

REAL = message("v2_attested_base_to_eth_19500")
T0 = 1_763_021_600  # 2025-11-13 08:13:20 UTC, filled in
N = 37
NEVER = 5  # this burn is never minted


def _variant(k: int):
    raw = bytearray(REAL.raw)
    raw[43] = (raw[43] + k) % 256  # the nonce's last byte
    body = REAL.header_size
    raw[body + 68 + 28 : body + 68 + 32] = (1_000_000 * (k + 1)).to_bytes(4, "big")  # amount
    return type(REAL)(bytes(raw), REAL.entry)


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    folder = tmp_path_factory.mktemp("own")
    burns, mints = [], []
    for k in range(N):
        at = T0 + 7200 * k
        m = _variant(k)
        burns += burn_logs(m, block=100 + k, tx_hash=tx(f"own burn {k}"), index=0, time=at)
        if k not in (NEVER, N - 1):
            mints += mint_logs(m, block=500 + k, tx_hash=tx(f"own mint {k}"), index=0,
                               time=at + 900)
    # the last burn: 10 minutes before the data's end, the mint of the one before it
    last_burn = T0 + 7200 * (N - 2) + 900 - 600
    burns = [dict(lg, blockTimestamp=hex(last_burn)) if lg["transactionHash"] ==
             tx(f"own burn {N - 1}") else lg for lg in burns]  # fmt: skip
    ledger = cctx.load([write(folder / "base.json", burns), write(folder / "eth.json", mints)],
                       chain={"base.json": "base", "eth.json": "ethereum"})
    path = folder / "ledger.parquet"
    ledger.to_parquet(path)
    return ledger, path


def test_the_window_is_the_datas_span_and_pending_ages_from_its_end(own, tmp_path):
    ledger, path = own
    first = ledger["burn_timestamp"].min()
    last = pd.concat([ledger["burn_timestamp"], ledger["mint_timestamp"]]).max()
    assert len(ledger) == N
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoverageWarning)  # the window it chose is the data's
        built = report.build(ledger=ledger)
    assert built.start == first.floor("min")
    assert built.end == last.floor("min") + pd.Timedelta(minutes=1)
    # pending now: the burn of 10 minutes before the end; never minted: the other one
    flight = built.data["in_flight_at_end"]
    assert int(flight["count"].sum()) == 2
    stuck = built.data["stuck"]
    assert stuck["burn_tx_hash"].tolist() == [tx(f"own burn {NEVER}")]
    expected_age = (last - ledger["burn_timestamp"].iloc[NEVER]).total_seconds()
    assert stuck["age_s"].iloc[0] == expected_age  # aged at the data's end, not a day boundary
    # KPIs where the data covers the period, "no data" where it does not
    kpis = built.data["kpis"]
    assert kpis.loc[("24h", "transfers"), "current"] > 0
    assert kpis.loc[("24h", "transfers"), "previous"] > 0
    assert pd.isna(kpis.loc[("30d", "transfers"), "current"])

    out = tmp_path / "own.html"
    assert main(["report", "--data", str(path), "--out", str(out)]) == 0
    page = out.read_text()
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    assert "2025-11-13 08:13 UTC" in text  # the span, to the minute
    assert f"Ages are measured at {last:%Y-%m-%d %H:%M} UTC, the data's last event" in text
    assert "no data" in text
    assert "pending now" in text


def test_an_empty_ledger_is_refused_in_one_line_not_drawn_as_empty_axes(own):
    # report.build(ledger=<0 rows>) drew every section as empty 0-1 axes
    with pytest.raises(ValueError, match=r"^ledger= has no rows") as caught:
        report.build(ledger=own[0].iloc[:0])
    assert str(caught.value) == (
        "ledger= has no rows: there is nothing to report on; pass a ledger with transfers "
        "(check what cctx.load read: cctx.provenance.provenance(ledger).count)"
    )
