"""Everyday mistakes, in figures: a section of ``reliability.py``; also runs alone.

Each case makes one mistake a new user makes (a chain id for a domain, a
pandas spelling pandas deprecates, a swapped ``--chain``, a URL that is not a
node, ...) through the public API or the real ``cctx-research`` command, and
classes what the user got:

clear
    one line (an error, a warning or the command's stderr) that holds the
    words the case expects (the option, value or file, and what to pass);
    for a case that must simply work (``import --format solana``), it works;
unclear
    several lines, a raw dict or a raw reply body, a pandas warning, 0 rows
    without a word, or a line without the expected words;
traceback
    an exception the toolkit did not raise on purpose, or a traceback printed.

Run alone::

    .venv/bin/python benchmarks/everyday_mistakes.py

(Solana and plain-HTTP servers on loopback; the sample pinned, 3 days.)
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import shutil
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FIXTURES = ROOT / "tests" / "fixtures"
AS_OF = "2024-07-01T12:00:00Z"


@dataclass
class Answer:
    """What the user saw: stderr or the exception's text, warnings, rows, exit status."""

    text: str = ""
    warned: tuple[str, ...] = ()
    rows: int | None = None
    status: int | None = None
    unexpected: bool = False


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[Path], Answer]
    expect: tuple[str, ...] = ()
    works: bool = False  # the mistake is no mistake any more: it must just work


def _call(fn: Callable[[], Any]) -> Answer:
    """Run ``fn``; an error of the toolkit's own (or a ValueError/TypeError) is an answer."""
    from cctx_research.errors import CctxError

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            result = fn()
        except (CctxError, ValueError, TypeError) as exc:
            return Answer(str(exc), _texts(seen))
        except Exception:  # the figure counts them
            return Answer(traceback.format_exc(), _texts(seen), unexpected=True)
    rows = len(result) if hasattr(result, "__len__") else None
    return Answer("", _texts(seen), rows=rows)


def _sample_notice(line: str) -> bool:
    """The notice every run on the sample gives on purpose (not part of any answer)."""
    return "using the embedded synthetic sample" in line and "listens" not in line


def _texts(seen: list[warnings.WarningMessage]) -> tuple[str, ...]:
    return tuple(f"{w.category.__name__}: {w.message}" for w in seen
                 if not _sample_notice(str(w.message)))  # fmt: skip


def _cli(argv: list[str], env: dict[str, str] | None = None) -> Answer:
    """``cli.main(argv)`` in this process, stderr captured, ``env`` set for the call."""
    from cctx_research import cli

    err = io.StringIO()
    old = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        with (
            contextlib.redirect_stderr(err),
            contextlib.redirect_stdout(io.StringIO()),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("default")
            status = cli.main(argv)
    except SystemExit as exc:  # argparse's refusals
        status = int(exc.code or 0)
    except Exception:  # the figure counts them
        return Answer(traceback.format_exc(), unexpected=True)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    lines = [x for x in err.getvalue().splitlines() if x.strip() and "%|" not in x
             and not _sample_notice(x)]  # fmt: skip
    return Answer("\n".join(lines), status=status)


@functools.lru_cache(maxsize=1)
def _sample() -> Any:
    import cctx_research as cctx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cctx.connect(sample=True, as_of=AS_OF, days=3, progress=False)


@functools.lru_cache(maxsize=1)
def _ledger() -> Any:
    import cctx_research as cctx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cctx.load_sample(days=2, as_of=AS_OF)


def _timeseries(freq: str) -> Callable[[Path], Answer]:
    from cctx_research.analysis import volumes

    return lambda tmp: _call(lambda: volumes.timeseries(_ledger(), freq=freq))


def _cache_dir_a_file(tmp: Path) -> Answer:
    blocker = tmp / "cache-file"
    blocker.write_text("not a directory")
    return _cli(["fetch", "volume", "--start", "2024-06-29", "--end", "2024-06-30",
                 "--out", str(tmp / "v.json"), "--no-progress"],
                env={"CCTX_CACHE_DIR": str(blocker)})  # fmt: skip


def _dune_base_without_chain(tmp: Path) -> Answer:
    import cctx_research as cctx

    path = tmp / "received.csv"
    shutil.copy(FIXTURES / "dune" / "circle_base_messagetransmitter_evt_messagereceived.csv", path)
    return _call(lambda: cctx.load(path))


def _sync_dir_without_ledger(tmp: Path) -> Answer:
    import cctx_research as cctx
    from cctx_research import storage

    root = tmp / "synced"
    (root / "solana" / "transactions").mkdir(parents=True)
    (root / storage.MANIFEST).write_text(
        json.dumps({"format": storage.FORMAT, "kind": "sync", "state": {"chains": {}}})
    )
    reply = json.loads((FIXTURES / "solana" / "v2_burn_solana_to_ethereum.json").read_text())
    (root / "solana" / "transactions" / "p.jsonl").write_text(json.dumps(reply) + "\n")
    return _call(lambda: cctx.load(root))


def _csv(kind: str) -> Callable[[Path], Answer]:
    """The Dune flows fixture as a spreadsheet writes it, loaded."""

    def run(tmp: Path) -> Answer:
        import cctx_research as cctx

        flows = FIXTURES / "dune" / "bridges_evms_flows.csv"
        lines = flows.read_text().splitlines()
        path = tmp / "flows.csv"
        if kind == "header only":
            path.write_text(lines[0] + "\n")
        else:
            sep = {"semicolons": ";", "excel": ";", "pipes": "|"}[kind]
            import pandas as pd

            text = pd.read_csv(flows, dtype=str, keep_default_na=False).to_csv(
                index=False, sep=sep, lineterminator="\r\n" if kind == "excel" else "\n"
            )
            path.write_bytes((b"\xef\xbb\xbf" if kind == "excel" else b"") + text.encode())
        return _call(lambda: cctx.load(path))

    return run


def _web_page(environ: Any, start_response: Any) -> list[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/html")])
    return [b"<html><body>Not Found</body></html>"]


def _sync_not_a_node(tmp: Path) -> Answer:
    from cctx_research.service.server import start_in_background

    handle = start_in_background(_web_page)
    try:
        return _cli(["sync", "--chain", f"base={handle.url.rstrip('/')}/rpc", "--from", "0",
                     "--out", str(tmp / "a"), "--no-progress"])  # fmt: skip
    finally:
        handle.close()


def _sync_solana(chain: str, start: str) -> Callable[[Path], Answer]:
    def run(tmp: Path) -> Answer:
        from tests.solana_node import Node

        with Node() as node:
            return _cli(["sync", "--chain", f"{chain}={node.url}", "--from", start,
                         "--out", str(tmp / f"s-{chain}-{start}"), "--no-progress"])  # fmt: skip

    return run


def _serve_then_fetch(tmp: Path) -> Answer:
    from cctx_research.connection import connect, serve_on_loopback

    with serve_on_loopback() as served:
        old = os.environ.get("CCTX_BASE_URL")
        os.environ["CCTX_BASE_URL"] = served.settings.base_url
        try:
            return _call(lambda: connect(as_of=AS_OF, days=1, per_day=50, progress=False))
        finally:
            os.environ.pop("CCTX_BASE_URL")
            if old is not None:
                os.environ["CCTX_BASE_URL"] = old


def _readme_received(tmp: Path) -> Answer:
    found = re.findall(r'client\.received\("([^"]+)"', (ROOT / "README.md").read_text())
    return _call(lambda: _sample().received(found[0], "2024-06-28", "2024-07-01T12:00Z"))


def cases() -> list[Case]:
    import cctx_research as cctx

    src = FIXTURES / "dune" / "circle_ethereum_tokenmessenger_evt_depositforburn.csv"
    solana_file = FIXTURES / "solana" / "v2_burn_solana_to_ethereum.json"
    return [
        Case("chains.info(8453) (Base's chain id)",
             lambda tmp: _call(lambda: cctx.chains.info(8453)), ("8453", "domain 6", "pass 6")),
        Case("freq='1d'", _timeseries("1d"), ("'1d'", "pass '1D'")),
        Case("freq='1M'", _timeseries("1M"), ("'1M'", "'1MS'")),
        Case("CCTX_CACHE_DIR pointing at a file", _cache_dir_a_file,
             ("CCTX_CACHE_DIR", "--no-cache")),
        Case("report --start 1900-01-01",
             lambda tmp: _cli(["report", "--start", "1900-01-01", "--out", str(tmp / "r.html"),
                               "--no-progress"], env={"CCTX_CACHE_DIR": str(tmp / "cache")}),
             ("1900-01-01", "1970-01-01")),
        Case("mints(source='linea') on the sample",
             lambda tmp: _call(lambda: _sample().mints("2024-06-30", "2024-07-01",
                                                       source="linea")),
             ("linea", "holds 8 chains")),
        Case("import --chain ethereum=PATH (swapped)",
             lambda tmp: _cli(["import", str(src), "--chain", f"ethereum={src}", "--no-progress",
                               "--out", str(tmp / "l.parquet")]),
             (f"did you mean --chain {src}=ethereum",)),
        Case("import --format solana",
             lambda tmp: _cli(["import", str(solana_file), "--format", "solana", "--no-progress",
                               "--out", str(tmp / "s.parquet")]), works=True),
        Case("Dune MessageReceived of Base without chain=", _dune_base_without_chain,
             ("chain='base'",)),
        Case("CSV delimited by semicolons", _csv("semicolons"), works=True),
        Case("Excel export (BOM, CRLF, semicolons)", _csv("excel"), works=True),
        Case("CSV delimited by pipes", _csv("pipes"), ("flows.csv'", "its delimiter", "save it")),
        Case("CSV with a header and no rows", _csv("header only"), ("flows.csv'", "no rows")),
        Case("load of a sync directory without a ledger", _sync_dir_without_ledger,
             ("--chain solana", "transactions/*.jsonl")),
        Case("sync against a URL that is not a node", _sync_not_a_node,
             ("not a JSON-RPC node", "--chain base=")),
        Case("sync of a Solana node given as base", _sync_solana("base", "0"),
             ("looks like a Solana node", "--chain solana=")),
        Case("sync --from after the Solana node's head", _sync_solana("solana", "999999999999"),
             ("after the node's finalized slot", "at or before")),
        Case("serve, then connect without CCTX_*", _serve_then_fetch,
             ("a server listens at", "CCTX_API_KEY")),
        Case("report.build on an empty ledger",
             lambda tmp: _call(lambda: cctx.report.build(ledger=_ledger().iloc[:0])),
             ("ledger= has no rows", "pass a ledger with transfers")),
        Case("README tour: client.received(address)", _readme_received, works=True),
    ]


def verdict(case: Case, answer: Answer) -> tuple[str, str]:
    """``(class, what the user saw, shortened)`` of one case."""
    # the house shape: a message, and its hint on a line of its own ("hint: ...")
    said = "\n".join(x for x in [answer.text, *answer.warned] if x).replace("\nhint: ", " hint: ")
    if answer.unexpected or "Traceback (most recent call last)" in said:
        return "traceback", said.splitlines()[-1] if said else ""
    if case.works:
        ok = answer.status in (None, 0) and not answer.text and (answer.rows is None or answer.rows)
        works = f"works ({answer.rows:,} rows)" if answer.rows is not None else "works (exit 0)"
        return ("clear" if ok else "unclear"), works if ok else said[:200]
    lines = said.splitlines()
    raw = re.search(r"\{'|\"\w+\": |status 400|FutureWarning|DeprecationWarning", said)
    if not lines:
        return "unclear", f"no word ({answer.rows} rows)"
    if len(lines) > 1 or raw or not all(e in said for e in case.expect):
        return "unclear", said[:200]
    return "clear", lines[0][:200]


def section_mistakes(t: Any, tmp: Path) -> dict[str, int]:
    """Add one row per everyday mistake, and the counts, to table ``t``; print what was said."""
    counts = {"clear": 0, "unclear": 0, "traceback": 0}
    said = []
    for i, case in enumerate(cases()):
        where = tmp / f"mistake-{i}"
        where.mkdir(parents=True, exist_ok=True)
        kind, shown = verdict(case, case.run(where))
        counts[kind] += 1
        said.append(f"  {case.name}: {shown}")
        t.add("mistakes", case.name, kind, "clear", kind == "clear")
    print("what each mistake was answered:", *said, sep="\n", flush=True)
    t.add("mistakes", "everyday mistakes: clear / unclear / traceback",
          " / ".join(str(v) for v in counts.values()), f"{sum(counts.values())} / 0 / 0",
          counts["unclear"] == counts["traceback"] == 0)  # fmt: skip
    return counts


def main() -> int:
    from reliability import Table  # benchmarks/reliability.py

    t = Table()
    tmp = Path(tempfile.mkdtemp(prefix="cctx-mistakes-"))
    try:
        counts = section_mistakes(t, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(t.render())
    return 0 if counts["unclear"] == counts["traceback"] == 0 else 1


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
