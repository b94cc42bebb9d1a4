"""The report's figures agree with the analysis functions, and a figure on another base says it.

Numbers are read back out of the report's HTML (cards and tables as a reader
sees them) and compared with what the analysis functions compute from the
same client and ledger, independently of the report's own data.
"""

from __future__ import annotations

import html
import re
from typing import Any

import pandas as pd
import pytest

from cctx_research import report
from cctx_research.analysis import actors, flows, movements, volumes
from cctx_research.report import ledger_sections
from cctx_research.service.sample import generate

SAMPLE_AS_OF = "2024-07-01T12:00:00Z"
START, END = "2024-06-29T00:00:00Z", "2024-07-01T00:00:00Z"


@pytest.fixture(scope="module")
def ledger() -> pd.DataFrame:
    return generate(SAMPLE_AS_OF, days=3)


@pytest.fixture(scope="module")
def built(sample_client: Any, ledger: pd.DataFrame) -> tuple[report.Report, str]:
    page = report.build(sample_client, START, END, ledger=ledger)
    return page, page.to_html()


@pytest.fixture(scope="module")
def mints(sample_client: Any) -> pd.DataFrame:
    return sample_client.mints(START, END)


def _cards(text: str) -> dict[str, str]:
    pairs = re.findall(
        r'<div class="value"[^>]*>([^<]*)</div><div class="label"[^>]*>([^<]*)</div>', text
    )
    return {html.unescape(label): html.unescape(value) for value, label in pairs}


def _number(text: str) -> float:
    match = re.search(r"-?[\d,]+(?:\.\d+)?", text)
    assert match, f"no number in {text!r}"
    return float(match.group().replace(",", ""))


def _usdc(value: float) -> float:
    """A USDC figure as the report rounds it (whole units from 100 up)."""
    return float(round(value)) if abs(value) >= 100 else round(value, 2)


def test_headline_cards_agree_with_the_analysis_and_name_their_base(
    built: tuple[report.Report, str], mints: pd.DataFrame
) -> None:
    cards = _cards(built[1])
    sizes = volumes.size_buckets(mints)
    assert _number(cards["transfers minted in the window"]) == sizes.count
    assert _number(cards["volume minted in the window"]) == _usdc(sizes.volume)
    for label, value in cards.items():
        assert "USDC USDC" not in value, label
        assert "USDC" not in label.replace("USDC)", ""), label  # one unit per card


def test_burn_based_figures_say_they_count_burns(
    built: tuple[report.Report, str], ledger: pd.DataFrame
) -> None:
    cards = _cards(built[1])
    scoped = ledger_sections.scope_ledger(ledger, pd.Timestamp(START), pd.Timestamp(END), None)
    once = float(movements.dedupe(scoped)["amount_raw"].sum()) / 1e6
    label = "volume burned in the window, counted once per movement"
    assert _number(cards[label]) == _usdc(once)
    minted = _number(cards["volume minted in the window"])
    assert once != pytest.approx(minted)  # two bases, two figures: each card says which
    text = html.unescape(re.sub(r"<[^>]+>", " ", built[0].section("actors").to_html()))
    assert "burned (USDC)" in text
    assert "minted or not" in text


def test_corridor_table_agrees_with_the_matrix_and_the_headline(
    built: tuple[report.Report, str], mints: pd.DataFrame
) -> None:
    section = built[0].section("flows").to_html()
    rows = re.findall(r"<tr>(.*?)</tr>", section.split("Top corridors")[1])
    table = flows.corridors(mints, n=None)
    matrix = flows.matrix(mints)
    assert len(rows) >= 2
    for row in rows[1:]:
        cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", row)]
        route = next(c for c in cells if "→" in c)
        source, destination = route.split(" → ")
        found = table[
            (table["source_chain"].map(_label) == source)
            & (table["destination_chain"].map(_label) == destination)
        ]
        assert len(found) == 1, route
        volume = float(found["volume"].iloc[0])
        assert _usdc(volume) in {_number(c) for c in cells if re.search(r"\d", c)}
        cell = matrix.loc[found["source_chain"].iloc[0], found["destination_chain"].iloc[0]]
        assert float(cell) == pytest.approx(volume)
    assert float(table["volume"].sum()) == pytest.approx(volumes.size_buckets(mints).volume)


def test_actor_totals_agree_with_the_analysis(
    built: tuple[report.Report, str], ledger: pd.DataFrame
) -> None:
    scoped = ledger_sections.scope_ledger(ledger, pd.Timestamp(START), pd.Timestamp(END), None)
    relayed = actors.relayers(scoped)
    cards = _cards(built[1])
    assert _number(cards["relayers"]) == float(actors.hhi(relayed).iloc[0]["actors"])


def _label(chain: Any) -> str:
    from cctx_research.views import values

    return values.chain_text(chain)


def test_ticket_sizes_say_where_the_amounts_end(
    built: tuple[report.Report, str], mints: pd.DataFrame
) -> None:
    text = html.unescape(re.sub(r"<[^>]+>", " ", built[0].section("sizes").to_html()))
    largest = re.search(r"The largest ticket in the window: ([\d,.]+) USDC", text)
    assert largest, text[-400:]
    assert _number(largest.group(1)) == _usdc(float(mints["amount"].max()))
    assert "draws no ticket above 1,000,000 USDC" in text  # the sample's cap, said
