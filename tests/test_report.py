"""The HTML report: sections, self-containment, escaping, provenance, the CLI, and
how it renders in headless Chromium.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
from sample_seed import seed

import cctx_research as cctx
from cctx_research import __version__, chains, cli, plots, report

START, END = "2024-06-28T12:00:00Z", "2024-07-01T12:00:00Z"
AS_OF = "2024-07-01T12:00:00Z"  # the clock of sample_client (conftest)


@pytest.fixture(scope="module")
def client(sample_client: Any) -> Any:
    return sample_client


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's figure cache: a report drawn again on the same data is drawn once.

    A figure's key holds a fingerprint of every value it draws, so two builds share a
    picture only when they hand its draw function the same data and options; a build
    on other data still draws (and differs) as before.
    """
    return tmp_path_factory.mktemp("figures")


@pytest.fixture(scope="module")
def built(client: Any, figures: Path) -> report.Report:
    return report.build(client, START, END, figure_cache=figures)


@pytest.fixture(scope="module")
def page(built: report.Report) -> str:
    return built.to_html()


class _Tags(HTMLParser):
    """Every start tag with its attributes, and the section ids."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(text)
    parser.close()
    return parser.tags


def _decode(uri: str) -> np.ndarray:
    prefix = "data:image/png;base64,"
    assert uri.startswith(prefix)
    return mpimg.imread(io.BytesIO(base64.b64decode(uri[len(prefix) :], validate=True)))


# ------------------------------------------------------------------ structure


def test_every_section_in_order(built: report.Report, page: str) -> None:
    ids = [sid for sid, _ in report.SECTIONS]
    assert [s.id for s in built.sections] == ids
    sections = [a["id"] for tag, a in _tags(page) if tag == "section"]
    assert sections == ids
    for sid, title in report.SECTIONS:
        assert f"<h2>{html.escape(title)}</h2>" in page
        assert f'href="#{sid}"' in page  # the table of contents links to it


def test_figures_are_embedded_pngs_that_decode(built: report.Report, page: str) -> None:
    images = [a for tag, a in _tags(page) if tag == "img"]
    names = {f.name for f in built.figures}
    assert names == {
        "flow-graph",
        "flow-matrix",
        "net-flows",
        "volume",
        "in-flight",
        "size-distribution",
        "seasonality",
        "lorenz",
    }
    assert len(images) == len(built.figures)
    for attrs in images:
        pixels = _decode(attrs["src"] or "")
        assert min(pixels.shape[:2]) > 100
        assert float(pixels.std()) > 0.02  # not a blank canvas
        assert attrs["alt"]
    assert "could not be drawn" not in page


def _explorer_link(value: str) -> bool:
    """A plain link to a block explorer the toolkit knows (a link loads nothing)."""
    prefixes = {
        t.split("{")[0] for c in chains.CHAINS for t in (c.explorer_address, c.explorer_tx) if t
    }
    return any(value.startswith(prefix) for prefix in prefixes)


def test_no_external_resources(page: str) -> None:
    links = []
    for tag, attrs in _tags(page):
        assert tag not in ("script", "link", "iframe", "object", "embed"), tag
        for name in ("src", "href", "srcset", "action", "poster", "data"):
            value = attrs.get(name)
            if value is None:
                continue
            if tag == "a" and name == "href" and _explorer_link(value):
                links.append(value)
                continue
            assert value.startswith(("data:image/png;base64,", "#")), (tag, name, value[:80])
    assert links, "addresses link to their block explorer"
    lowered = page.lower()
    # the only absolute URLs are those explorer links
    assert lowered.count("https://") == len(links)
    for needle in ("http://", "//cdn", "url(", "@import", "<script"):
        assert needle not in lowered, needle


def test_sections_hold_their_content(built: report.Report, page: str) -> None:
    kpis = built.section("kpis").to_html()
    for text in ("transfers minted in the window", "24h", "30d"):
        assert text in kpis
    n = len(built.data["transfers"])
    assert f"{n:,}" in kpis
    flows_html = built.section("flows").to_html()
    assert "Top corridors" in flows_html
    assert "Ethereum → " in flows_html  # routes read as chain labels
    volume_html = built.section("volume").to_html()
    # no ledger: in flight from the volume history, which says what it cannot tell apart
    assert "From the interface&#x27;s volume operation" in volume_html
    assert "never-minted transfers accumulate" in volume_html
    for word in ("whale", "dust", "quantile"):
        assert word in built.section("sizes").to_html()
    addresses_html = built.section("addresses").to_html()
    assert "Top recipients" in addresses_html
    assert "Gini" in addresses_html
    top = built.data["top_recipients"]["address"].iloc[0]
    assert top in addresses_html
    with pytest.raises(KeyError, match="no section"):
        built.section("nope")


def test_provenance_block(client: Any, built: report.Report) -> None:
    prov = built.provenance
    assert prov["synthetic"] is True
    assert prov["source"] == client.source
    assert prov["library_version"] == __version__
    assert (prov["start"], prov["end"]) == (pd.Timestamp(START), pd.Timestamp(END))
    assert prov["requests"] > 0
    assert {o["operation"] for o in prov["operations"]} == {"mints", "volume_history"}
    block = built.section("provenance").to_html()
    for text in (
        "generated at",
        f"cctx_research {__version__}",
        "2024-06-28 12:00 UTC to 2024-07-01 12:00 UTC",
        "cache hits",
        "requests",
        html.escape(client.source),
    ):
        assert text in block, text
    assert 'id="synthetic-banner"' in block


def test_synthetic_banner_at_the_top(page: str) -> None:
    first_section = page.index("<section")
    banner = page.index('id="synthetic-banner"')
    assert banner < first_section
    assert "Synthetic data" in page


def test_secrets_stay_out(client: Any, page: str) -> None:
    assert client._api_key.get() not in page
    assert "x-api-key" not in page.lower()


def test_repeat_build_is_served_from_the_cache(client: Any, figures: Path) -> None:
    again = report.build(client, START, END, figure_cache=figures)
    prov = again.provenance
    assert prov["cache_hits"] > 0
    assert all(o["cache_hits"] > 0 for o in prov["operations"])


def test_chain_filter_keeps_transfers_touching_the_chains(client: Any) -> None:
    r = report.build(client, START, END, chains=["Base", 7])
    assert r.chains == ("base", "polygon")  # canonical names, domain order
    t = r.data["transfers"]
    touch = t["source_chain"].isin(["base", "polygon"]) | t["destination_chain"].isin(
        ["base", "polygon"]
    )
    assert len(t) > 0
    assert bool(touch.all())
    assert "transfers touching base, polygon" in r.to_html()


class _Frames:
    """A client over frames someone else fetched: no provenance, not the sample."""

    def __init__(self, transfers: pd.DataFrame, history: pd.DataFrame) -> None:
        self.transfers, self.history = transfers.copy(), history.copy()
        self.transfers.attrs, self.history.attrs = {}, {}

    def mints(self, start: Any, end: Any) -> pd.DataFrame:
        return self.transfers

    def volume_history(self, start: Any, end: Any, *, freq: str) -> pd.DataFrame:
        return self.history


def test_no_banner_without_the_sample_and_values_are_escaped(built: report.Report) -> None:
    fake = _Frames(built.data["transfers"], built.data["volume_history"])
    evil = '<script>alert("x")</script> & co'
    r = report.build(fake, START, END, title=evil)
    text = r.to_html()
    assert r.synthetic is False
    assert "synthetic-banner" not in text
    assert "<script" not in text.lower()
    assert html.escape(evil) in text
    assert r.provenance["source"] == "unknown"


def test_a_figure_that_fails_is_reported_in_its_place(
    built: report.Report, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("no ink <left>")

    monkeypatch.setattr(plots, "plot_lorenz", broken)
    fake = _Frames(built.data["transfers"], built.data["volume_history"])
    r = report.build(fake, START, END)
    text = r.section("addresses").to_html()
    assert "Figure lorenz could not be drawn: no ink &lt;left&gt;" in text
    assert len(r.figures) == len(built.figures) - 1
    assert any("lorenz" in rec.getMessage() for rec in caplog.records)


def test_a_report_from_the_ledger_says_what_the_service_serving_it_says(
    client: Any, figures: Path
) -> None:
    # the embedded sample serves this ledger: the frames path must not differ
    ledger = cctx.load_sample(as_of=AS_OF, days=3)
    served = report.build(client, START, END, ledger=ledger, figure_cache=figures)
    held = report.build(None, START, END, ledger=ledger, figure_cache=figures)
    assert [s.id for s in held.sections] == [s.id for s in served.sections]
    for mine, theirs in zip(held.sections, served.sections, strict=True):
        if mine.id != "provenance":  # requests and cache hits differ, nothing else
            assert mine.to_html() == theirs.to_html(), mine.id
    pd.testing.assert_frame_equal(held.data["transfers"], served.data["transfers"])
    pd.testing.assert_frame_equal(held.data["volume_history"], served.data["volume_history"])
    assert held.synthetic is True
    assert held.provenance["requests"] == 0
    # and given as frames, the same again
    given = report.build(
        transfers=served.data["transfers"],
        volume_history=served.data["volume_history"],
        start=START,
        end=END,
        figure_cache=figures,
    )
    assert given.section("flows").to_html() == served.section("flows").to_html()


def test_frames_or_a_client_not_both(client: Any, built: report.Report) -> None:
    with pytest.raises(ValueError, match="either a client or"):
        report.build(client, START, END, transfers=built.data["transfers"])
    with pytest.raises(ValueError, match="nothing to report on"):
        report.build(None, START, END)
    with pytest.raises(ValueError, match="volume_history= is missing"):
        report.build(transfers=built.data["transfers"])


def test_the_steps_go_to_the_callers_callback_and_the_drawing_takes_one_record(
    client: Any, built: report.Report, figures: Path
) -> None:
    from cctx_research.report.building import draw
    from cctx_research.report.inputs import resolve_inputs
    from cctx_research.report.progress import STEPS
    from cctx_research.views.figures import FigureCache

    seen: list[tuple[str, bool]] = []
    fetched = report.build(client, START, END, progress=lambda *step: seen.append(step),
                           figure_cache=figures)  # fmt: skip
    assert seen == [(step, done) for step in STEPS for done in (False, True)]
    assert fetched.section("flows").to_html() == built.section("flows").to_html()
    seen.clear()
    ledger = cctx.load_sample(as_of=AS_OF, days=3)
    inputs = resolve_inputs(None, START, END, ledger=ledger, chains=["base"],
                            on_step=lambda *step: seen.append(step))  # fmt: skip
    # frames already held: nothing to wait for, so those steps are only said done
    assert seen == [("transfers", True), ("volume history", True)]
    assert inputs.chains == ("base",)
    assert len(inputs.transfers) < len(inputs.fetched)
    drawn = draw(inputs, figures=FigureCache(figures))
    held = report.build(None, START, END, ledger=ledger, chains=["base"], figure_cache=figures)
    assert [s.to_html() for s in drawn.sections if s.id != "provenance"] == [
        s.to_html() for s in held.sections if s.id != "provenance"
    ]


def test_bad_arguments(client: Any) -> None:
    with pytest.raises(ValueError, match="must be before end"):
        report.build(client, END, START)
    with pytest.raises(ValueError, match="unknown chain"):
        report.build(client, START, END, chains=["atlantis"])
    with pytest.raises(ValueError, match="top_n"):
        report.build(client, START, END, top_n=0)


def test_default_window_is_the_last_30_days() -> None:
    start, end = report.default_window(now="2024-07-01T12:34:56Z")
    assert end == pd.Timestamp("2024-07-01T12:34:00Z")
    assert end - start == pd.Timedelta(days=30)
    start, end = report.default_window("2024-06-01", now="2024-07-15")
    assert (start, end) == (
        pd.Timestamp("2024-06-01", tz="UTC"),
        pd.Timestamp("2024-07-01", tz="UTC"),
    )


# ------------------------------------------------------------- save and repr


def test_save_and_repr(built: report.Report, page: str, tmp_path: Path) -> None:
    path = built.save(tmp_path / "report.html")
    assert path == tmp_path / "report.html"
    assert path.read_text(encoding="utf-8") == page
    assert page.startswith("<!DOCTYPE html>")
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind
    fragment = built._repr_html_()
    assert "<html" not in fragment
    assert "<section" in fragment
    assert "<style>" in fragment
    assert "synthetic sample" in repr(built)
    with pytest.raises(IsADirectoryError):
        built.save(tmp_path)


# ------------------------------------------------------------------------ CLI


def test_cli_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("CCTX_API_KEY", "CCTX_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CCTX_CACHE_DIR", str(seed(tmp_path / "cache")))  # built once a session
    out = tmp_path / "r.html"
    today = pd.Timestamp.now(tz="UTC").floor("h")
    argv = [
        "report",
        "--start",
        (today - pd.Timedelta(hours=6)).isoformat(),
        "--end",
        today.isoformat(),
        "--chains",
        "base",
        "arbitrum",
        "--out",
        str(out),
        "--no-progress",
    ]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.strip() == str(out)
    text = out.read_text(encoding="utf-8")
    # every section, but the links the sample's ledger cannot tell (the page says why)
    shown = [sid for sid, _ in report.SECTIONS if f'<section id="{sid}">' in text]
    assert shown == [sid for sid, _ in report.SECTIONS if sid != "links"]
    assert "Not in this report: Burns linked to mints: the synthetic sample" in text
    assert 'id="synthetic-banner"' in text
    # on the embedded sample, its ledger feeds the latency and pending sections
    for sid in ("latency", "pending"):
        body = text.split(f'<section id="{sid}">', 1)[1].split("</section>", 1)[0]
        assert "<img" in body, sid
    assert cli.main([*argv[:5], "--chains", "atlantis", "--out", str(out), "--no-progress"]) == 1
    assert "unknown chain" in capsys.readouterr().err


# ------------------------------------------------------------------- Chromium

_PROBE = """<script>window.addEventListener('load', function () {
  var out = document.createElement('pre'); out.id = 'cctx-probe';
  out.textContent = JSON.stringify(Array.prototype.map.call(document.images, function (i) {
    return [i.complete, i.naturalWidth, i.naturalHeight]; }));
  document.body.appendChild(out);
});</script>"""

_CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--no-first-run",
]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless Chromium on PATH (make browser / .ci/run installs Debian's chromium)")


def _run_chromium(exe: str, args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    return subprocess.run(
        [exe, *_CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_renders_in_headless_chromium(built: report.Report, tmp_path: Path) -> None:
    exe = _chromium()
    path = built.save(tmp_path / "report.html")
    shot = tmp_path / "shot.png"
    done = _run_chromium(
        exe, [f"--screenshot={shot}", "--window-size=1280,4000", path.as_uri()], tmp_path
    )
    assert shot.exists(), done.stderr[-2000:]
    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (4000, 1280)
    rgb = pixels[..., :3]
    assert float(rgb.std()) > 0.05  # not blank
    not_white = (rgb < 0.95).any(axis=-1).mean()
    assert not_white > 0.05, f"only {not_white:.1%} of the page is drawn"

    # every embedded image decoded: ask the browser itself
    probe = tmp_path / "probe.html"
    probe.write_text(path.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"))
    done = _run_chromium(exe, ["--dump-dom", probe.as_uri()], tmp_path)
    match = re.search(r'<pre id="cctx-probe">([^<]*)</pre>', done.stdout)
    assert match, done.stderr[-2000:]
    states = json.loads(html.unescape(match.group(1)))
    assert len(states) == len(built.figures)
    for complete, width, height in states:
        assert complete
        assert min(width, height) > 100


def test_a_window_outside_the_data_is_a_note_not_a_page_of_zeros(client: Any) -> None:
    from cctx_research.errors import CoverageWarning

    with pytest.warns(CoverageWarning, match="lies before the first record"):
        empty = report.build(client, "2024-01-01", "2024-01-08", progress=False)
    text = empty.to_html()
    assert 'id="coverage-note"' in text
    assert "none of it is covered" in text
    assert [s.id for s in empty.sections] == ["provenance"]


def test_a_window_past_the_clock_keeps_its_sections_and_says_so(client: Any) -> None:
    from cctx_research.errors import CoverageWarning

    with pytest.warns(CoverageWarning, match="past the service's clock"):
        partial = report.build(client, "2024-06-30", "2024-07-03", progress=False)
    text = partial.to_html()
    assert 'id="coverage-note"' in text
    assert "the data covers 2024-06-30 00:00 UTC to 2024-07-01 12:00 UTC" in text
    assert "kpis" in [s.id for s in partial.sections]
