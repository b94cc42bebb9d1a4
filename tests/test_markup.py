"""HTML pieces shared by the report and the widgets: escaping, tables, explorer links."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pandas as pd
import pytest

from cctx_research import addressing
from cctx_research.views import explorers, markup

EVM = "0x" + "ab" * 20
TX = "0x" + "7c" * 32
# documented public addresses: USDC's mint on Solana, Circle's USDC on Ethereum
USDC_SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
USDC_ETHEREUM = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
EVIL = '"><script>alert(1)</script>'


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.anchors: list[dict[str, str | None]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "a":
            self.anchors.append(dict(attrs))


def _parse(text: str) -> _Anchors:
    parser = _Anchors()
    parser.feed(text)
    parser.close()
    return parser


# ------------------------------------------------------------------ escaping


def test_escape_covers_text_and_attribute_values() -> None:
    assert markup.escape(EVIL) == "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
    assert markup.escape("it's & co") == "it&#x27;s &amp; co"


def test_tables_escape_headers_cells_and_caption() -> None:
    frame = pd.DataFrame({EVIL: [EVIL], "address": [EVIL], "chain": ["base"]})
    text = markup.html_table(frame, caption=EVIL, links={"address": ("address", "chain")})
    parsed = _parse(text)
    assert "script" not in parsed.tags
    assert parsed.anchors == []  # not an address: shown as text, not linked
    assert text.count(markup.escape(EVIL)) == 4  # caption, header, two cells


def test_banner_and_cards_escape() -> None:
    assert "<script" not in markup.synthetic_banner(EVIL)
    assert "<script" not in markup.cards([(EVIL, EVIL)])
    assert "<script" not in markup.pairs([(EVIL, EVIL)])
    assert 'id="x"' in markup.synthetic_banner(element_id="x")


def test_numbers_are_formatted_for_reading() -> None:
    frame = pd.DataFrame(
        {"count": [1234567], "share": [0.1234], "volume": [1234.5678], "small": [0.5]}
    )
    text = markup.html_table(frame)
    for shown in ("1,234,567", "12.3%", "1,235", "0.50"):
        assert shown in text
    assert markup.usd(float("nan")) == "-"
    assert markup.when(None) == "-"
    assert markup.when(pd.Timestamp("2024-07-01 12:34")) == "2024-07-01 12:34 UTC"


def test_tables_head_columns_for_reading_and_line_numbers_up() -> None:
    frame = pd.DataFrame(
        {
            "source_chain": ["ethereum", "base", "arbitrum"],
            "volume": [1_234_567.891, 12.5, 0.5],
            "volume_raw": [1_234_567_891_000, 12_500_000, 500_000],
            "fee_raw": [1, 2, 3],
            "fee_bps": [0.46, 1.0, 2.0],
            "count": [1, 2, 3],
            "upper": [1.0, 100.0, float("inf")],
            "reference_s": ["18 s", "1 min 00 s", "-"],
        }
    )
    text = markup.html_table(frame)
    heads = re.findall(r"<th( class=\"num\")?>([^<]*)</th>", text)
    assert heads == [
        ("", "from"),
        (' class="num"', "volume (USDC)"),  # its exact twin volume_raw is left out
        (' class="num"', "fees (base units)"),  # a raw amount alone says its unit
        (' class="num"', "fee rate (bps)"),
        (' class="num"', "transfers"),
        (' class="num"', "below (USDC)"),
        ("", "typical latency"),
    ]
    cells = re.findall(r'<td class="num">([^<]*)</td>', text)
    # one column, one way: cents below 1,000, blank space as wide above, decimal points aligned
    assert cells[0] == "1,234,568\u2008\u2007\u2007"
    assert "12.50" in cells
    assert "0.50" in cells
    assert {"0.46", "1.00", "2.00"} <= set(cells)  # not "1" beside "0.46"
    assert "∞" in cells
    assert "volume_raw" not in text
    assert "1,234,567,891,000" not in text


def test_column_headers_cover_every_result_the_report_shows() -> None:
    from cctx_research.views import columns

    assert columns.header("median_fee_bps") == "median fee rate (bps)"
    assert columns.header("amount_raw") == "amount (base units)"
    assert columns.header("a_new_one") == "a new one"
    assert columns.header("mint only") == "mint only"
    assert columns.displayed(["fee", "fee_raw", "amount_raw"]) == ["fee", "amount_raw"]


def test_field_table_names_fields_for_reading() -> None:
    row = pd.Series({"tx_hash": TX, "amount": 6561854.25, "odd_field": "<x>"})
    text = markup.field_table(row)
    for shown in ("<th>transaction</th>", "<th>amount (USDC)</th>", "<th>odd field</th>"):
        assert shown in text
    assert "6,561,854" in text
    assert "e+06" not in text
    assert "&lt;x&gt;" in text


# --------------------------------------------------------------------- links


def test_table_links_each_row_to_its_own_chain() -> None:
    frame = pd.DataFrame(
        {
            "tx_hash": [TX, TX, TX],
            "chain": ["base", "arbitrum", "domain-42"],
            "address": [EVM, EVM, EVM],
        }
    )
    text = markup.html_table(
        frame, links={"tx_hash": ("tx", "chain"), "address": ("address", "chain")}
    )
    hrefs = [a["href"] for a in _parse(text).anchors]
    assert hrefs == [
        f"https://basescan.org/tx/{TX}",
        f"https://basescan.org/address/{EVM}",
        f"https://arbiscan.io/tx/{TX}",
        f"https://arbiscan.io/address/{EVM}",
    ]  # domain-42 has no explorer: plain text
    tips = [a.get("title") for a in _parse(text).anchors]
    assert tips[0] == TX  # the hash is shortened on screen, whole in the tooltip
    assert markup.shorten(TX) in text


def test_bad_link_specs_say_what_to_pass() -> None:
    frame = pd.DataFrame({"address": [EVM], "chain": ["base"]})
    with pytest.raises(ValueError, match="not among"):
        markup.html_table(frame, links={"address": ("address", "destination_chain")})
    with pytest.raises(ValueError, match="kind one of"):
        markup.html_table(frame, links={"address": ("account", "chain")})
    with pytest.raises(TypeError, match="links must map"):
        markup.html_table(frame, links=[("address", "chain")])  # type: ignore[arg-type]


def test_field_table_links_by_the_chain_of_the_record() -> None:
    row = pd.Series(
        {
            "tx_hash": TX,
            "source_chain": "ethereum",
            "destination_chain": "base",
            "mint_recipient": EVM,
            "amount": 12.5,
        }
    )
    text = markup.field_table(
        row,
        links={
            "tx_hash": ("tx", "destination_chain"),
            "mint_recipient": ("address", "source_chain"),
        },
    )
    hrefs = [a["href"] for a in _parse(text).anchors]
    assert hrefs == [f"https://basescan.org/tx/{TX}", f"https://etherscan.io/address/{EVM}"]
    assert "12.50" in text


def test_explorer_urls_in_each_chains_spelling() -> None:
    padded = "0x" + "00" * 12 + USDC_ETHEREUM[2:].upper()
    assert explorers.address_url("ethereum", padded) == (
        f"https://etherscan.io/address/{USDC_ETHEREUM}"
    )
    # a Solana account given in the interface's bytes32 form links in base58
    wire = addressing.to_bytes32(USDC_SOLANA)
    assert explorers.address_url("solana", wire) == f"https://solscan.io/account/{USDC_SOLANA}"
    assert explorers.address_url(5, USDC_SOLANA) == f"https://solscan.io/account/{USDC_SOLANA}"
    # Noble writes its hashes in upper-case hex without 0x
    url = explorers.tx_url("noble", "ab" * 32)
    assert url is not None
    assert url.endswith("/tx/" + "AB" * 32)
    assert url.startswith("https://www.mintscan.io/noble")


@pytest.mark.parametrize(
    ("chain", "value"),
    [
        ("base", USDC_SOLANA),  # base58 on an EVM chain
        ("domain-42", EVM),  # no explorer known
        (None, EVM),
        (float("nan"), EVM),
        ("atlantis", EVM),
        ("base", None),
        ("base", EVIL),
    ],
)
def test_no_url_when_the_value_does_not_fit_the_chain(chain: object, value: object) -> None:
    assert explorers.address_url(chain, value) is None
    assert explorers.tx_url(chain, value) is None
    shown = markup.address_link(chain, value)
    assert "<a" not in shown
    assert "<script" not in shown


def test_a_32_byte_account_is_no_evm_address() -> None:
    assert explorers.address_url("base", "0x" + "ab" * 32) is None
    assert explorers.tx_url("base", "0x" + "ab" * 32) is not None  # a hash has 32 bytes


def test_links_are_plain_anchors() -> None:
    text = markup.address_link("base", EVM)
    assert re.fullmatch(
        r'<a href="https://basescan\.org/address/0x[0-9a-f]{40}" '
        r'rel="noopener noreferrer">0x[0-9a-f]{40}</a>',
        text,
    )


def test_render_png_draws_once_the_same_picture(monkeypatch):
    import io

    import numpy as np
    from matplotlib.figure import Figure
    from PIL import Image

    from cctx_research.views.markup import render_png

    def draw(data, *, ax):
        ax.plot(data, label="a line")
        ax.set_title("a title long enough to need room")
        ax.legend()
        return ax

    data = np.random.default_rng(0).random(50)
    laid_out = Figure(figsize=(9.0, 4.5), dpi=100, layout="constrained")
    draw(data, ax=laid_out.add_subplot())
    buf = io.BytesIO()
    laid_out.savefig(buf, format="png", dpi=100, facecolor="white")
    draws = []
    original = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, r: draws.append(1) or original(self, r))
    png = render_png(draw, data)
    assert len(draws) == 1  # savefig of a figure with a layout engine draws it twice
    expected = np.asarray(Image.open(buf))
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(png))), expected)
    # encoded at zlib's level 3, not its default 6: the header's FLEVEL of the first IDAT
    # chunk says "fast" (levels 2-5), the default says 2 (RFC 1950)
    at = png.index(b"IDAT") + 4
    assert png[at + 1] >> 6 == 1
    assert buf.getvalue()[buf.getvalue().index(b"IDAT") + 5] >> 6 == 2


def test_tables_speak_one_vocabulary_chains_routes_durations_unlabelled() -> None:
    frame = pd.DataFrame(
        {
            "source_chain": ["optimism", "base"],
            "corridor": ["ethereum->optimism", "base->solana"],
            "median_s": [925.0, 8.24],
            "relayer_label": ["Wormhole", None],
        }
    )
    cells = re.findall(r"<td(?: class=\"[^\"]*\")?>([^<]*)</td>", markup.html_table(frame))
    assert cells == [
        "OP Mainnet", "Ethereum → OP Mainnet", "15 min 25 s", "Wormhole",
        "Base", "Base → Solana", "8.2 s", "unlabelled",
    ]  # fmt: skip
    assert "925.00" not in markup.html_table(frame)


def test_cards_read_as_cards_without_the_report_stylesheet() -> None:
    text = markup.cards([("volume in the window", "1,234 USDC")])
    assert re.search(r'class="cards" style="display:flex', text)
    assert re.search(r'class="card" style="border:', text)
    assert text.count("USDC") == 1
