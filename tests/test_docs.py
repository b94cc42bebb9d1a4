"""Every command and snippet of README.md and docs/*.md runs; every link leads somewhere.

How a page's code blocks are checked (the conventions for whoever writes one):

- A fenced block tagged ``bash`` is shell commands, one per line (``\\`` continues
  a line); one tagged ``python`` is Python. Both run. A ``toml`` or ``json`` block is parsed.
  ``sql`` (a query for Dune) and ``text`` or untagged blocks (usage lines, trees)
  are not code of this machine and are not run. Any other tag is refused, so
  that no block escapes the check by its spelling.
- ``<!-- needs: REASON -->`` on the line right before a block: the block needs
  what this machine cannot have (a node, a remote service, credentials, the
  package index). It is not run; the test is reported skipped with REASON.
- ``<!-- slow: REASON -->`` on that line: the block runs, and its test is marked
  ``slow`` (the sample takes seconds to build, a report tens of seconds).
- A page's blocks run in order, each after every block before it on the page,
  in one temporary directory per page: Python blocks with ``exec`` in one
  namespace per page (in this process, matplotlib drawing off screen), shell
  blocks with ``bash`` and the virtualenv's ``bin`` first on ``PATH``. No
  ``CCTX_*`` variable is set (so ``connect()`` serves the embedded sample)
  but ``CCTX_CACHE_DIR``, a cache of the page's own, lent the sample's days built
  once a session (``tests/sample_seed.py``); ``HOME`` is the page's. What the
  namespace opened (clients, a Dask cluster) is closed once the page's last block ran.
- A command of the checkout itself (``.venv/bin/...``, as ``make`` installs it)
  runs at the repository's root.
- The directory holds the files a researcher would bring, under the names the
  pages use (:data:`FILES`: real encodings from ``tests/fixtures``), and
  ``notebooks/`` (the repository's) for the commands that name a notebook.
- A server (``cctx-research serve``, ``cctx-research dashboard``) is started on a
  free port (the block's ``--port`` replaced), must listen, and is then stopped
  as a user stops it, with Ctrl-C (SIGINT): it must exit without a traceback.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sample_seed import seed

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FIXTURES = ROOT / "tests" / "fixtures"
BIN = Path(sysconfig.get_path("scripts"))

FILES = {  # name in a page -> what stands for it (a file, or a directory's chosen files)
    "eth.json": "docs/eth.json",  # eth_getLogs result: an Ethereum -> Base V1 burn, a V2 mint
    "base.json": "docs/base.json",  # a JSON-RPC response: their other sides on Base
    "base_logs.json": "docs/base_logs.json",  # the same logs without block times
    "base_blocks.json": "docs/base_blocks.json",  # eth_getBlockByNumber responses for them
    "arb_logs.parquet": "docs/arb_logs.parquet",  # cryo's logs of an Arbitrum V1 burn
    "eth_logs": "docs/eth_logs",  # cryo's logs, Ethereum
    "eth_blocks": "docs/eth_blocks",  # cryo's blocks, one chunk
    "my_labels.csv": "docs/my_labels.csv",
    "flows.csv": "dune/bridges_evms_flows.csv",
    "depositforburn_eth.csv": "dune/circle_ethereum_tokenmessenger_evt_depositforburn.csv",
    "mintandwithdraw_base.csv": "dune/circle_base_tokenmessenger_evt_mintandwithdraw.csv",
    "messagereceived_base.csv": "dune/circle_base_messagetransmitter_evt_messagereceived.csv",
    "dune": ["dune/bridges_evms_flows.csv", "dune/bridges_evms_deposits.csv",
             "dune/bridges_evms_withdrawals.csv"],
    "xchaindatagen_export": "xchaindatagen",
    "solana.jsonl": "solana/v1_mayan_burn_and_other_programs.jsonl",
}  # fmt: skip
LINKED = {"notebooks": ROOT / "notebooks"}  # read, never written
# pages the docs link to that this repository does not hold yet; once one is here,
# its links and headings are checked like any other page's

RUN = {"bash", "python"}
NOT_RUN = {"toml", "json", "sql", "text", ""}
MARKER = re.compile(r"^<!--\s*(needs|slow):\s*(\S.*?)\s*-->$")
SERVER = re.compile(r"^cctx-research(?:\s+-\S+)*\s+(serve|dashboard)\b")
COMMAND_TIMEOUT = 900  # seconds: a report on the sample, on a busy machine


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    needs: str | None = None
    slow: str | None = None

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    """The fenced code blocks of a page, with the marker on the line before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        lang = lines[i][3:].strip()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        assert end is not None, f"{page.name}:{i + 1}: a code block that never closes"
        found = MARKER.match(lines[i - 1].strip()) if i else None
        marks = {found.group(1): found.group(2)} if found else {}
        out.append(Block(page, i + 1, lang, "\n".join(lines[i + 1 : end]) + "\n", **marks))
        i = end + 1
    return out


ALL_BLOCKS = [b for page in PAGES for b in blocks_of(page)]


# ---------------------------------------------------------------- running a page


def commands(code: str) -> list[str]:
    """A shell block's commands: continued lines joined, blank and comment lines dropped."""
    out: list[str] = []
    pending = ""
    for raw in code.splitlines():
        line = pending + raw
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1] + " "
            continue
        pending = ""
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(line.strip())
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    # a connection, not a page: the dashboard's page would start a kernel
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Page:
    """One page's working directory, namespace and progress through its blocks."""

    directory: Path
    blocks: list[Block]
    namespace: dict[str, Any] = field(default_factory=dict)
    done: int = 0
    failed: str | None = None

    @classmethod
    def make(cls, page: Path, directory: Path) -> Page:
        for name, source in FILES.items():
            target = directory / name
            if isinstance(source, list):
                target.mkdir()
                for item in source:
                    shutil.copy(FIXTURES / item, target)
            elif (FIXTURES / source).is_dir():
                shutil.copytree(FIXTURES / source, target)
            else:
                shutil.copy(FIXTURES / source, target)
        for name, source in LINKED.items():
            (directory / name).symlink_to(source, target_is_directory=True)
        (directory / "home").mkdir()
        seed(directory / "cache")
        return cls(directory, blocks_of(page), {"__name__": "__main__"})

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
        env.update(
            PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
            CCTX_CACHE_DIR=str(self.directory / "cache"),
            HOME=str(self.directory / "home"),
            MPLBACKEND="Agg",
        )
        return env

    def run_through(self, block: Block, selected: set[str]) -> None:
        """Run every block of the page up to ``block``, each once, in order.

        A slow block left out of the run (``-m "not slow"``) is passed over.
        """
        index = self.blocks.index(block)
        while self.done <= index:
            current = self.blocks[self.done]
            if self.failed:
                pytest.skip(f"an earlier block of the page failed: {self.failed}")
            self.done += 1
            if current.needs or current.lang not in RUN:
                continue
            if current.slow and current is not block and current.id not in selected:
                continue
            try:
                self.run(current)
            except BaseException:
                self.failed = current.id
                raise
        if self.finished(selected):
            self.close()  # a Dask cluster left open would spin for the rest of the run

    def finished(self, selected: set[str]) -> bool:
        """Whether no block after those run will run in this session."""
        return all(
            b.needs or b.lang not in RUN or (b.slow and b.id not in selected)
            for b in self.blocks[self.done :]
        )

    def run(self, block: Block) -> None:
        if block.lang == "python":
            self.run_python(block)
        else:
            for command in commands(block.code):
                self.run_shell(command, block)

    def run_python(self, block: Block) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        code = compile(block.code, block.id, "exec")
        with pytest.MonkeyPatch.context() as mp, _inside(self.directory):
            for name in [k for k in os.environ if k.startswith("CCTX_")]:
                mp.delenv(name)
            for name, value in self.env().items():
                mp.setenv(name, value)
            try:
                exec(code, self.namespace)
            finally:
                plt.close("all")

    def run_shell(self, command: str, block: Block) -> None:
        if SERVER.match(command):
            self.run_server(command, block)
            return
        # the developer's commands on the checkout itself (.venv/bin/...) run at its root
        cwd = ROOT if command.startswith(".venv/bin/") else self.directory
        done = subprocess.run(
            ["bash", "-c", command], cwd=cwd, env=self.env(), capture_output=True,
            text=True, timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 0, (
            f"{block.id}: `{command}` exited {done.returncode}\n"
            f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
        )

    def run_server(self, command: str, block: Block) -> None:
        """Start a server on a free port, wait until it listens, stop it with Ctrl-C."""
        argv = shlex.split(command, comments=True)
        port = free_port()
        if "--port" in argv:
            argv[argv.index("--port") + 1] = str(port)
        else:
            argv += ["--port", str(port)]
        proc = subprocess.Popen(
            argv, cwd=self.directory, env=self.env(), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + COMMAND_TIMEOUT
            while not _listening(port):
                assert proc.poll() is None, (
                    f"{block.id}: `{command}` ended ({proc.returncode}) before it listened\n"
                    f"{proc.stderr.read()[-3000:] if proc.stderr else ''}"
                )
                assert time.monotonic() < deadline, f"{block.id}: `{command}` never listened"
                time.sleep(0.5)
            os.killpg(proc.pid, signal.SIGINT)
            _, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        assert "Traceback" not in err, f"{block.id}: `{command}` stopped with\n{err[-3000:]}"

    def close(self) -> None:
        """Close what the page's snippets opened (clients, a Dask cluster)."""
        values = sorted(  # a cluster after its clients, which would wait for it otherwise
            self.namespace.values(), key=lambda v: type(v).__name__.endswith("Cluster")
        )
        for value in values:
            module = type(value).__module__ or ""
            if module.startswith(("cctx_research", "distributed")) and hasattr(value, "close"):
                with contextlib.suppress(Exception):
                    value.close()


@contextlib.contextmanager
def _inside(directory: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(before)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Path, Page]]:
    opened: dict[Path, Page] = {}

    class Opened(dict):
        def __missing__(self, page: Path) -> Page:
            made = Page.make(page, tmp_path_factory.mktemp(page.stem))
            opened[page] = self[page] = made
            return made

    yield Opened()
    for page in opened.values():
        page.close()


def _param(block: Block) -> Any:
    marks = [pytest.mark.slow] if block.slow else []
    return pytest.param(block, id=block.id, marks=marks)


@pytest.fixture(scope="session")
def selected(request: pytest.FixtureRequest) -> set[str]:
    """The ids of the blocks this run tests."""
    return {
        item.callspec.params["block"].id
        for item in request.session.items
        if hasattr(item, "callspec") and isinstance(item.callspec.params.get("block"), Block)
    }


@pytest.mark.parametrize("block", [_param(b) for b in ALL_BLOCKS if b.lang in RUN])
def test_block_runs(block: Block, pages: dict[Path, Page], selected: set[str]) -> None:
    if block.needs:
        pytest.skip(f"needs {block.needs}")
    pages[block.page].run_through(block, selected)


# ---------------------------------------------------------------- the page's own checks


def test_every_block_is_run_or_said_not_to_be():
    for block in ALL_BLOCKS:
        assert block.lang in RUN | NOT_RUN, (
            f"{block.id}: a block tagged {block.lang!r}; tag code bash or python "
            f"(others: {sorted(NOT_RUN - {''})})"
        )
        assert not (block.needs and block.slow), f"{block.id}: needs and slow exclude each other"


def test_markers_stand_before_blocks():
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.strip().startswith("<!--") and re.match(r"<!--\s*(needs|slow)\b", line.strip()):
                assert MARKER.match(line.strip()), f"{page.name}:{i + 1}: write <!-- needs: why -->"
                following = lines[i + 1] if i + 1 < len(lines) else ""
                assert following.startswith("```"), (
                    f"{page.name}:{i + 1}: a marker must stand on the line right before its block"
                )


@pytest.mark.parametrize(
    "block", [pytest.param(b, id=b.id) for b in ALL_BLOCKS if b.lang == "toml"]
)
def test_toml_blocks_parse(block: Block) -> None:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    assert tomllib.loads(block.code)


@pytest.mark.parametrize(
    "block", [pytest.param(b, id=b.id) for b in ALL_BLOCKS if b.lang == "json"]
)
def test_json_blocks_parse(block: Block) -> None:
    assert json.loads(block.code)


def test_the_two_commands_are_make_targets():
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    done = subprocess.run(
        ["make", "-n", "report", "test"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "cctx-research report --out report.html" in done.stdout
    assert "pytest" in done.stdout


# ---------------------------------------------------------------- links


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found = set()
    inside = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = not inside
        elif not inside and line.startswith("#"):
            found.add(slug(line.lstrip("#")))
    return found


def links(page: Path) -> Iterator[tuple[int, str]]:
    inside = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            inside = not inside
            continue
        if not inside:
            for target in LINK.findall(line):
                yield number, target


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_lead_somewhere(page: Path) -> None:
    broken = []
    for number, target in links(page):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:: not this repository's
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{page.name}:{number}: {target} (no such file)")
            continue
        if anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{page.name}:{number}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_every_page_is_linked_from_the_readme():
    readme = {(ROOT / t.partition("#")[0]).resolve() for _, t in links(ROOT / "README.md")}
    missing = [p.name for p in PAGES[1:] if p.resolve() not in readme]
    assert not missing, f"README.md's 'Where to go next' does not link {missing}"


# ---------------------------------------------------------------- the CLI reference


def test_cli_reference_is_generated_from_the_parser():
    script = ROOT / "docs" / "make_cli_reference.py"
    spec = importlib.util.spec_from_file_location("make_cli_reference", script)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert committed == module.render(), (
        "docs/cli.md differs from the parser: run .venv/bin/python docs/make_cli_reference.py"
    )


def test_the_tours_addresses_return_rows_on_the_sample(sample_client):
    # the tour once asked for the USDC mint's address, which no transfer is sent to
    asked = re.findall(r'client\.received\("([^"]+)"', (ROOT / "README.md").read_text())
    assert asked, "the README's tour no longer asks for an address's transfers"
    for address in asked:
        rows = sample_client.received(address, "2024-06-28", "2024-07-01T12:00Z")
        assert len(rows) > 0, f"README: client.received({address!r}) returns no rows on the sample"


def test_the_readme_states_the_measured_kernel_memory():
    # a page's kernel: the README gives the figure docs/views.md records as measured
    said = re.findall(r"own kernel, (\d+) MiB", (ROOT / "README.md").read_text())
    assert said, "README.md no longer says a dashboard page's kernel memory (N MiB)"
    views = (ROOT / "docs" / "views.md").read_text()
    measured = re.search(r"kernel \((\d+) MiB, its resident memory", views)
    assert measured, "docs/views.md no longer records the kernel's measured memory"
    assert said == [measured.group(1)], f"README says {said} MiB, docs/views.md {measured.group(1)}"
