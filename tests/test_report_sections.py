"""The section registry, and the ledger sections: present with a ledger, a note without."""

from __future__ import annotations

import base64
import html
import io
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import matplotlib.dates as mdates
import matplotlib.image as mpimg
import pandas as pd
import pytest

from cctx_research import chains, errors, report, schema
from cctx_research.provenance import Provenance, attach
from cctx_research.report import ledger_sections, registry
from cctx_research.service.sample import generate

SAMPLE_AS_OF = "2024-07-01T12:00:00Z"  # the sample client's clock (conftest)
START, END = "2024-06-29T00:00:00Z", "2024-07-01T00:00:00Z"
LEDGER_IDS = ("latency", "pending", "v2", "links", "actors")
TIMED_IDS = LEDGER_IDS[:4]  # those that need burn times (who moves the money does not)


@pytest.fixture(scope="module")
def client(sample_client: Any) -> Any:
    return sample_client


@pytest.fixture(scope="module")
def ledger_v2() -> pd.DataFrame:
    """The ledger the sample client serves: V1 and V2 (fast and standard) transfers."""
    ledger = generate(SAMPLE_AS_OF, days=3)
    assert bool((ledger["cctp_version"] == 2).any())
    return ledger


@pytest.fixture(scope="module")
def ledger(ledger_v2: pd.DataFrame) -> pd.DataFrame:
    """The same transfers from a source without the V2 fields (a V1-era export)."""
    out = ledger_v2.drop(columns=list(schema.LEDGER_V2))
    out.attrs = dict(ledger_v2.attrs)
    return out


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's figure cache, for builds whose pictures no test inspects.

    A picture is found again only for the same data and options (its key fingerprints
    every value drawn): the sections a ledger changes are drawn for each build.
    """
    return tmp_path_factory.mktemp("figures")


@pytest.fixture(scope="module")
def plain(client: Any, figures: Path) -> report.Report:
    return report.build(client, START, END, figure_cache=figures)


@pytest.fixture(scope="module")
def with_v2(client: Any, ledger_v2: pd.DataFrame, figures: Path) -> report.Report:
    return report.build(client, START, END, ledger=ledger_v2, figure_cache=figures)


def _in_window(ledger: pd.DataFrame) -> pd.DataFrame:
    burn = ledger["burn_timestamp"]
    return ledger.loc[(burn >= pd.Timestamp(START)) & (burn < pd.Timestamp(END))]


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs.append(dict(attrs).get("href") or "")


# ------------------------------------------------------------------- registry


def test_registry_is_the_one_list_of_sections() -> None:
    ids = [spec.id for spec in report.REGISTRY]
    assert len(set(ids)) == len(ids)
    assert tuple((s.id, s.title) for s in report.REGISTRY) == report.SECTIONS
    assert ids[-1] == "provenance"
    assert ids[ids.index("addresses") + 1 : -1] == list(LEDGER_IDS)
    titles = dict(report.SECTIONS)
    assert titles["latency"] == "Latency"
    assert titles["pending"] == "Pending and stuck"
    assert titles["v2"] == "V2 fast transfers and fees"


def test_a_spec_shows_its_note_when_the_data_cannot_feed_it() -> None:
    calls: list[str] = []

    def builder(ctx: report.Context) -> list[str]:
        calls.append("built")
        return ["<p>content</p>"]

    ctx = report.Context(start=None, end=None)
    shown = report.SectionSpec("x", "X", builder).build(ctx)
    assert (shown.supported, shown.parts, calls) == (True, ("<p>content</p>",), ["built"])
    spec = report.SectionSpec(
        "x",
        "X <b>",
        builder,
        supports=lambda c: c.ledger is not None,
        unsupported=lambda c: f"No <ledger> for {c.top_n} rows.",
    )
    shown = spec.build(ctx)
    assert calls == ["built"]  # the builder is not run
    assert shown.supported is False
    assert shown.parts == ('<p class="note">No &lt;ledger&gt; for 10 rows.</p>',)
    assert shown.to_html().startswith('<section id="x"><h2>X &lt;b&gt;</h2>')


# ------------------------------------------------------- without a ledger


def test_without_a_ledger_each_ledger_section_is_a_one_line_note(plain: report.Report) -> None:
    assert [s.id for s in plain.sections] == [sid for sid, _ in report.SECTIONS]
    for sid in LEDGER_IDS:
        section = plain.section(sid)
        assert section.supported is False
        assert len(section.parts) == 1
        assert section.parts[0].startswith('<p class="note">')
        assert section.figures == []
        assert "ledger=" in section.parts[0]  # says what would provide it
        assert "report --data" in section.parts[0]
    assert all(s.supported for s in plain.sections if s.id not in LEDGER_IDS)
    assert "latency" not in plain.data


# ----------------------------------------------------------- with a ledger


def test_latency_matches_plain_pandas(with_v2: report.Report, ledger_v2: pd.DataFrame) -> None:
    section = with_v2.section("latency")
    assert section.supported
    assert [f.name for f in section.figures] == ["latency"]
    rows = _in_window(ledger_v2)
    done = rows.loc[rows["mint_timestamp"] < pd.Timestamp(END)]
    seconds = (done["mint_timestamp"] - done["burn_timestamp"]).dt.total_seconds()
    names = (
        done["source_domain"].map(chains.chain_name)
        + ">"
        + done["destination_domain"].map(chains.chain_name)
    )
    expected = seconds.groupby(names.to_numpy()).median()
    table = with_v2.data["latency"]
    got = pd.Series(
        table["median_s"].to_numpy(),
        index=table["source_chain"].astype(str) + ">" + table["destination_chain"].astype(str),
    )
    pd.testing.assert_series_equal(
        got.sort_index(), expected.sort_index(), check_names=False, check_index_type=False
    )
    assert int(table["count"].sum()) == len(done)
    text = section.to_html()
    # fast and standard apart everywhere latency is shown: no median over both
    classes = with_v2.data["latency_by_finality"]
    fast = done["min_finality_threshold"].le(1000).fillna(False).to_numpy(bool)
    key = done["source_domain"].map(chains.chain_name) == "ethereum"
    key &= done["destination_domain"].map(chains.chain_name) == "base"
    for finality, rows in (("fast", done[fast & key]), ("standard", done[~fast & key])):
        mine = classes[
            (classes["source_chain"].astype(str) == "ethereum")
            & (classes["destination_chain"].astype(str) == "base")
            & (classes["finality"].astype(str) == finality)
        ]
        median = float(seconds[rows.index].median())
        assert float(mine["median_s"].iloc[0]) == pytest.approx(median)
        assert ledger_sections.duration(median) in text
    mixed = ledger_sections.duration(float(got["ethereum>base"]))
    assert mixed not in re.sub(r"<[^>]*>", " ", text.split("<table")[1])  # the mix is not shown
    assert "per route and finality class" in text


def test_pending_counts_mints_after_the_end_as_pending(
    with_v2: report.Report, ledger_v2: pd.DataFrame
) -> None:
    rows = _in_window(ledger_v2)
    minted_later = rows["mint_timestamp"].isna() | (rows["mint_timestamp"] >= pd.Timestamp(END))
    assert bool((rows["mint_timestamp"] >= pd.Timestamp(END)).any())  # the case is exercised
    per_route = with_v2.data["in_flight_at_end"]
    assert int(per_route["count"].sum()) == int(minted_later.sum())
    assert int(per_route["amount_raw"].sum()) == int(rows.loc[minted_later, "amount_raw"].sum())
    text = with_v2.section("pending").to_html()
    assert f"{int(minted_later.sum()):,}" in text
    assert "Ages are measured at 2024-07-01 00:00 UTC, the end of the window" in text
    stuck = with_v2.data["stuck"]
    assert "never minted: older than 3x" in text
    assert f"{int(minted_later.sum()) - len(stuck):,}</div>" in text  # pending now


def test_stuck_transfers_link_to_the_source_chains_explorer(with_v2: report.Report) -> None:
    stuck = with_v2.data["stuck"]
    assert len(stuck) > 0
    parser = _Anchors()
    parser.feed(with_v2.section("pending").to_html())
    tx_links = [h for h in parser.hrefs if "/tx/" in h]
    shown = stuck.head(10)
    assert len(tx_links) == len(shown)
    for href, (_, row) in zip(tx_links, shown.iterrows(), strict=True):
        entry = chains.info(str(row["source_chain"]))
        assert href == entry.tx_url(row["burn_tx_hash"])


def test_v2_section_fees_and_fast_share(with_v2: report.Report, ledger_v2: pd.DataFrame) -> None:
    section = with_v2.section("v2")
    assert section.supported
    assert [f.name for f in section.figures] == ["fast-share"]
    rows = _in_window(ledger_v2)
    v2 = rows.loc[rows["cctp_version"] == 2]
    share = with_v2.data["fast_share"]
    assert int(share["count"].sum()) == len(v2)
    assert int(share["fast_count"].sum()) == int((v2["min_finality_threshold"] == 1000).sum())
    done = v2.loc[v2["mint_timestamp"] < pd.Timestamp(END)]
    fees = with_v2.data["fees"]
    assert int(fees["fee_raw"].sum()) == int(done["fee_raw"].sum())
    for heading in ("Fees collected on fast transfers", "Fee caps", "Hooks"):
        assert heading in section.to_html()
    # standard transfers pay nothing: said once, not mixed into the fast ones' rates
    standard = done.loc[done["min_finality_threshold"] > 1000]
    assert int(standard["fee_raw"].sum()) == 0
    assert f"Standard transfers paid no fee: {len(standard):,} standard" in section.to_html()
    fees_html = section.to_html().split("Fees collected on fast transfers")[1].split("</table>")[0]
    assert "standard" not in fees_html
    png = section.figures[0].to_html().split("base64,")[1].split('"')[0]
    pixels = mpimg.imread(io.BytesIO(base64.b64decode(png)))
    assert float(pixels.std()) > 0.02


def test_provenance_names_the_ledger(with_v2: report.Report) -> None:
    ops = {o["data"]: o for o in with_v2.provenance["operations"]}
    assert ops["ledger"]["operation"] == "sample"
    assert with_v2.synthetic is True


def test_v1_ledger_and_chain_filter(client: Any, ledger: pd.DataFrame) -> None:
    r = report.build(client, START, END, chains=["base"], ledger=ledger)
    assert r.section("latency").supported
    assert r.section("pending").supported
    v2 = r.section("v2")
    assert v2.supported is False
    assert "No CCTP V2 transfers burned in the window" in v2.to_html()
    assert r.data["ledger"]["cctp_version"].isna().all()  # the V2 columns added as nulls
    kept = r.data["ledger"]
    base = chains.domain("base")
    assert len(kept) > 0
    assert bool(((kept["source_domain"] == base) | (kept["destination_domain"] == base)).all())
    assert set(r.data["latency"]["source_chain"].astype(str)) | set(
        r.data["latency"]["destination_chain"].astype(str)
    ) >= {"base"}


def test_a_ledger_without_burn_times_gets_the_notes(
    client: Any, ledger: pd.DataFrame, figures: Path
) -> None:
    blind = ledger.copy()
    blind["burn_tx_hash"] = pd.Series(pd.NA, index=blind.index, dtype=blind["burn_tx_hash"].dtype)
    blind["burn_block"] = -1  # what a ledger rebuilt from the interface's frames holds
    attach(blind, Provenance(source="a ledger from mints"))
    r = report.build(client, START, END, ledger=blind, figure_cache=figures)
    for sid in TIMED_IDS[:3]:
        assert r.section(sid).supported is False, sid
    assert "no burn times" in r.section("latency").to_html()
    # nor does it say how it was linked: no links section, and the provenance block says why
    assert "links" not in [s.id for s in r.sections]
    assert "its pairing column is empty" in r.section("provenance").to_html()


def test_bad_ledgers_are_refused_with_what_to_pass(client: Any, plain: report.Report) -> None:
    with pytest.raises(TypeError, match="load_sample"):
        report.build(client, START, END, ledger="ledger.parquet")
    with pytest.raises(errors.DataError, match=r"missing columns: .*burn_timestamp"):
        report.build(client, START, END, ledger=plain.data["transfers"])


# ----------------------------------------------------------- links


def test_the_links_section_counts_how_a_loaded_ledger_was_linked() -> None:
    import cctx_research as cctx

    dune = Path(__file__).parent / "fixtures" / "dune"
    ledger = cctx.load(
        [dune / "bridges_evms_flows.csv", dune / "bridges_evms_withdrawals.csv"]
    )
    built = report.build(ledger=ledger, progress=False)
    section = built.section("links")
    assert section.supported
    table = built.data["links"]
    assert int(table["burns"].sum()) == int(ledger["burn_tx_hash"].notna().sum())
    assert int(table["mint_only"].sum()) == int((ledger["pairing"] == "mint_only").sum())
    html = section.to_html()
    assert "link rate" in html
    assert "mints linked to their burn" in html


def test_the_sample_leaves_links_out_and_says_why(with_v2: report.Report) -> None:
    # the sample's transfers are made with both sides: a "no link data" section would be empty
    ids = [s.id for s in with_v2.sections]
    assert "links" not in ids
    assert ids[ids.index("v2") + 1] == "actors"
    page = with_v2.to_html()
    assert 'id="links"' not in page
    assert 'href="#links"' not in page
    assert "No link data" not in page
    (reason,) = with_v2.provenance["left_out"]
    assert reason.startswith("Burns linked to mints: the synthetic sample makes both sides")
    assert f"Not in this report: {html.escape(reason)}." in with_v2.section("provenance").to_html()


# ------------------------------------------------------------------- numbers on the axes

_COMPACT = re.compile(r"[−-]?\d+(\.\d+)?[kMBT]?")  # 12.3M, 950k, 0.5, −200k
_EXPONENT = re.compile(r"\d[eE][+−-]?\d|\^|\\times|×")  # 1e6, 10^{3}, 2×10^5


def _keep_figures(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """``(plot function name, figure)`` of each figure the report renders from now on."""
    drawn: list[tuple[str, Any]] = []
    render = registry.render_png

    def keeping(draw: Any, data: Any, **options: Any) -> bytes:
        def draw_and_keep(d: Any, *, ax: Any, **kw: Any) -> Any:
            out = draw(d, ax=ax, **kw)
            drawn.append((draw.__name__, ax.figure))
            return out

        return render(draw_and_keep, data, **options)  # savefig lays the figure out

    monkeypatch.setattr(registry, "render_png", keeping)
    return drawn


def test_no_axis_of_the_reports_figures_uses_an_offset_or_an_exponent(
    client: Any, ledger_v2: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every figure's axes, read back after the report rendered them: one compact format."""
    drawn = _keep_figures(monkeypatch)
    built = report.build(client, START, END, ledger=ledger_v2)
    assert len(drawn) == len(built.figures)
    assert {name for name, _ in drawn} >= {
        "plot_flow_matrix", "plot_net_flows", "plot_volume", "plot_in_flight",
        "plot_size_distribution", "plot_seasonality", "plot_latency", "plot_stuck",
        "plot_fast_share",
    }  # fmt: skip
    amounts: list[str] = []
    for name, fig in drawn:
        for ax in fig.axes:  # colour bars included
            for axis in (ax.xaxis, ax.yaxis):
                where = f"{name}: {axis.axis_name} axis {axis.get_label_text()!r}"
                if not isinstance(axis.get_major_formatter(), mdates.ConciseDateFormatter):
                    # (a date axis' offset is the date of its ticks, not a multiplier)
                    assert axis.get_offset_text().get_text() == "", where
                labels = [t.get_text() for t in axis.get_ticklabels(which="both") if t.get_text()]
                assert not [x for x in labels if _EXPONENT.search(x)], (where, labels)
                if "USDC" in axis.get_label_text() or "(count)" in axis.get_label_text():
                    assert labels, where
                    assert all(_COMPACT.fullmatch(x) for x in labels), (where, labels)
                    amounts += labels
    # amounts in the millions and thousands carry their suffix
    assert any(x.endswith("M") for x in amounts)
    assert any(x.endswith("k") for x in amounts)


def test_who_moves_the_money_names_relayers_depositors_and_rebalancing(
    with_v2: report.Report, ledger_v2: pd.DataFrame
) -> None:
    section = with_v2.section("actors")
    text = html.unescape(re.sub(r"<[^>]+>", " ", section.to_html()))
    relayers = with_v2.data["relayers"]
    # the shares are those of the transfers burned in the window, computed independently
    rows = with_v2.data["ledger"]
    minted = rows[rows["mint_timestamp"].notna()]
    plain = minted.groupby("relayer")["amount_raw"].sum().sort_values(ascending=False)
    top = relayers.iloc[0]
    assert top["relayer"] == plain.index[0]
    assert top["volume_share"] == pytest.approx(plain.iloc[0] / plain.sum())
    assert f"{top['volume_share'] * 100:.1f}%" in text
    assert "Mayan FastMCTP" in text  # a labelled integrator of the sample's cast
    assert "Rebalancing per route" in text
    assert "synthetic" in text  # the sample's actors say what they are
    assert "names no burn's signer" not in text  # the sample's burns carry their signers
    assert "_" not in re.sub(r"0x[0-9a-f_]+|\S+@\S+", "", " ".join(re.findall(r"<th>([^<]*)</th>",
                                                                        section.to_html())))


def test_who_moves_the_money_says_where_the_data_names_no_signer() -> None:
    import cctx_research as cctx

    ledger = cctx.load_sample(as_of="2024-07-01", days=1)
    ledger["burn_tx_from"] = None  # as eth_getLogs gives it
    text = html.unescape(report.build(ledger=ledger).section("actors").to_html())
    assert "Rebalancing" in text
    assert "names no burn's signer" in text


def test_who_moves_the_money_without_a_ledger_says_what_it_needs(plain: report.Report) -> None:
    text = plain.section("actors").to_html()
    assert "needs a ledger" in text


def test_the_reports_figures_tell_the_truth_about_their_window(
    client: Any, ledger_v2: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window from 09:30 to midnight: partial hours hatched, means per day, legends aside."""
    drawn = _keep_figures(monkeypatch)
    start, end = "2024-06-29T09:30:00Z", "2024-07-01T00:00:00Z"  # Saturday to Sunday
    built = report.build(client, start, end, ledger=ledger_v2)
    figures = dict(drawn)
    # every legend of every figure sits beside its axes, never over the data
    legends = 0
    for name, fig in drawn:
        for ax in fig.axes:
            if ax.get_legend() is None:
                continue
            legends += 1
            box, area = ax.get_legend().get_window_extent(), ax.get_window_extent()
            assert box.x0 >= area.x1, (name, box, area)
            assert not box.overlaps(area), name
            assert box.x1 <= fig.bbox.x1, name  # not cut off
    assert legends >= 5  # volume, in flight, latency, stuck, fast share, Lorenz
    # hourly buckets: the first, [09:00, 10:00), is half outside the window: hatched
    volume = figures["plot_volume"].axes[0]
    bands = [p for p in volume.patches if p.get_hatch()]
    assert len(bands) == 1
    first = mdates.num2date(bands[0].get_patch_transform().transform((0, 0))[0])
    assert first == pd.Timestamp("2024-06-29T09:00", tz="UTC")
    assert "partly inside the window (hatched)" in built.section("volume").figures[0].caption
    # seasonality: each cell the mean per day, worked out here from the transfers
    transfers = built.data["transfers"]
    stamps = transfers["timestamp"]
    totals = stamps.groupby([stamps.dt.day_of_week, stamps.dt.hour]).size()
    hours = pd.date_range("2024-06-29T09:00", "2024-06-30T23:00", freq="h", tz="UTC")
    held = pd.Series(1, index=hours).groupby([hours.day_of_week, hours.hour]).sum()
    grid = figures["plot_seasonality"].axes[0].images[0].get_array()
    for (weekday, hour), n in totals.items():
        assert grid[weekday, hour] == pytest.approx(n / held[(weekday, hour)])
    labels = [t.get_text() for t in figures["plot_seasonality"].axes[0].get_yticklabels()]
    assert labels == ["Mon (0)", "Tue (0)", "Wed (0)", "Thu (0)", "Fri (0)", "Sat (1)", "Sun (1)"]
    # in flight, from the ledger: pending apart from never minted, as the pending section says
    flight = figures["plot_in_flight"].axes[0]
    assert [line.get_label().split(":")[0] for line in flight.get_lines()] == [
        "pending", "never minted",
    ]  # fmt: skip
    series = built.data["in_flight_over_time"]
    late = built.data["stuck"]
    assert series["never_minted_count"].iloc[-1] == len(late)


def test_every_table_header_is_for_reading(with_v2: report.Report) -> None:
    page = with_v2.to_html()
    heads = re.findall(r"<th(?: [^>]*)?>([^<]*)</th>", page)
    assert len(heads) > 60
    snake = sorted({h for h in heads if re.search(r"[a-z]_[a-z]", h)})
    assert snake == []  # no raw column names: volume_raw, fee_bps, median_s, ...
    assert "volume (USDC)" in heads
    assert "fees (base units)" not in heads  # the exact twin of fees is left out
    assert len(heads) == len([h for h in heads if h.strip()])
    # the stuck table: each column its own header, the reference latency and its level
    stuck = with_v2.section("pending").to_html()
    table = stuck[stuck.index("Never minted (the") :]
    row = re.findall(r"<th(?: [^>]*)?>([^<]*)</th>", table[: table.index("</thead>")])
    assert len(row) == len(set(row))
    assert {"typical latency", "typical of", "age"} <= set(row)
    # a rate beside a median rate says which is which, under the table
    v2_html = with_v2.section("v2").to_html()
    assert "fee rate (bps)" in v2_html
    assert "median fee rate (bps)" in v2_html
    assert "Fee rate: the route&#x27;s fees over its volume" in v2_html
    assert "Median fee rate: each transfer&#x27;s own fee over its amount" in v2_html
    # numbers right-aligned, their headers with them
    assert '<th class="num">transfers</th>' in page
