"""The rules of docs/architecture.md, checked from the package's imports (``ast``, no import).

- The client knows the service only through HTTP or the transport seam: neither imports
  the other.
- The network floor (``net``) knows no API: it imports only the contract. The parts
  that talk HTTP over it (``client``, ``nodes``, ``iris``) never import one another's
  network internals: ``nodes`` and ``iris`` never import ``client``.
- Analysis does no IO and knows no pictures: it imports no data access (client, ingest,
  service), no view (plots, report, widgets, webapp, cli) and no plotting or IO library.
- Plots draw what analysis computed: they never fetch.
- Views meet data through ``connect()`` and ``load()``: they never import the service
  (the command line may).
- Dependencies point one way: the contract modules import no package above them.
- No module reaches another package's private names; no import cycle; no module over
  500 lines unless it is a declarative table; no function over 60 lines of code or 10
  parameters unless listed below with its reason.
- The top level holds the face, the contract modules, ``connect`` and ``cli``, and the
  packages: every other module lives in the package of its concern.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "cctx_research"
PACKAGE = "cctx_research"

# Modules allowed past the size limit: declarative tables, each with why.
TABLES = {
    "cctx_research/chains/_table.py": "the CCTP domain registry's data, one row a fact",
}
MAX_LINES = 500  # one concern a module: past this, it is two

CONTRACT = (
    "config", "errors", "chains", "schema", "times", "arguments", "provenance", "addressing",
    "tokens", "labels", "storage", "scratch", "_version", "_codes", "_textarrays", "_sealed",
    "_lazy",
)
VIEWS = ("plots", "report", "widgets", "webapp", "cli", "views", "export")
VIEW_PACKAGES = ("report", "widgets", "webapp", "export", "views", "plots")
"""The views proper: ``VIEWS`` without the command line, which may reach the service."""
DATA_ACCESS = ("client", "service", "ingest", "connection", "nodes", "iris", "net")


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


@functools.cache
def _parsed(path: Path) -> tuple[list[str], ast.Module]:
    """A module's lines and syntax tree, parsed once for every test here."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines, ast.parse("\n".join(lines))


def _imports(name: str, path: Path) -> list[tuple[str, tuple[str, ...], bool]]:
    """(imported module, names taken from it, at module level) of one module, resolved."""
    _, tree = _parsed(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    top_level = {id(node) for node in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, (), id(node) in top_level) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            names = tuple(a.name for a in node.names)
            out.append((target, names, id(node) in top_level))
    return out


def _part(module: str) -> str:
    """The top-level part of the package a module belongs to (``client``, ``schema``, ...)."""
    bits = module.split(".")
    return bits[1] if len(bits) > 1 else ""


@pytest.fixture(scope="module")
def graph() -> dict[str, list[tuple[str, tuple[str, ...], bool]]]:
    return {name: _imports(name, path) for name, path in _modules().items()}


def _edges(graph, *, lazy: bool = True):
    modules = set(graph)
    for name, imports in graph.items():
        for target, names, top in imports:
            if not target.startswith(PACKAGE) or (not lazy and not top):
                continue
            targets = [f"{target}.{n}" for n in names if f"{target}.{n}" in modules] or [target]
            for t in targets:
                yield name, t, names


def test_client_and_service_never_import_each_other(graph):
    bad = [
        (a, b)
        for a, b, _ in _edges(graph)
        if {_part(a), _part(b)} == {"client", "service"}
    ]
    assert bad == []


def test_the_network_floor_imports_only_the_contract(graph):
    bad = [
        (a, b)
        for a, b, _ in _edges(graph)
        if _part(a) == "net" and _part(b) not in (*CONTRACT, "net", "")
    ]
    assert bad == []


@pytest.mark.parametrize("part", ["nodes", "iris"])
def test_sync_and_iris_stand_on_the_network_floor_not_on_the_client(graph, part):
    bad = [(a, b) for a, b, _ in _edges(graph) if _part(a) == part and _part(b) == "client"]
    assert bad == []


@pytest.mark.parametrize("library", ["matplotlib", "requests", "requests_cache", "urllib",
                                     "socket", "ipywidgets", "waitress", "tqdm"])
def test_analysis_does_no_io_and_knows_no_pictures(graph, library):
    bad = [
        (name, target)
        for name, imports in graph.items()
        if _part(name) == "analysis"
        for target, _, _ in imports
        if target == library or target.startswith(library + ".")
    ]
    assert bad == []


def test_analysis_imports_no_data_access_and_no_view(graph):
    bad = [
        (a, b)
        for a, b, _ in _edges(graph)
        if _part(a) == "analysis" and _part(b) in (*DATA_ACCESS, *VIEWS)
    ]
    assert bad == []


def test_plots_never_fetch(graph):
    bad = [(a, b) for a, b, _ in _edges(graph) if _part(a) == "plots" and _part(b) in DATA_ACCESS]
    assert bad == []


def test_views_meet_data_through_connect_and_load_never_the_service(graph):
    bad = [
        (a, b)
        for a, b, _ in _edges(graph)
        if _part(a) in VIEW_PACKAGES and _part(b) == "service"
    ]
    assert bad == []


def test_the_contract_imports_nothing_above_it(graph):
    bad = [
        (a, b)
        for a, b, _ in _edges(graph)
        if _part(a) in CONTRACT and _part(b) not in CONTRACT and _part(b) != ""
    ]
    assert bad == []


def test_no_module_reaches_another_packages_private_names(graph):
    bad = []
    for name, imports in graph.items():
        home = name if _is_init(name) else name.rsplit(".", 1)[0]
        for target, names, _ in imports:
            if not target.startswith(PACKAGE):
                continue
            parts = target.split(".")
            private_module = next((p for p in parts[1:] if p.startswith("_")), None)
            owner = ".".join(parts[: parts.index(private_module)]) if private_module else target
            if private_module and not (home + ".").startswith(owner + "."):
                bad.append((name, target))
            owner_of_names = target.rsplit(".", 1)[0] + "."
            for n in names:
                if n.startswith("_") and not (home + ".").startswith(owner_of_names):
                    bad.append((name, f"{target}.{n}"))
    assert bad == []


def test_no_import_cycle_at_module_level(graph):
    edges: dict[str, set[str]] = {}
    for a, b, _ in _edges(graph, lazy=False):
        if a != b and not b.startswith(a + "."):  # a package importing its own modules
            edges.setdefault(a, set()).add(b)
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [])
    # a package's __init__ re-exporting its modules, which import siblings through it, is
    # not a cycle of concerns: only cycles between different modules of the tree count
    real = [c for c in cycles if len({x for x in c if not _is_init(x)}) > 1]
    assert real == []


def _is_init(module: str) -> bool:
    return _modules()[module].name == "__init__.py"


TOP_LEVEL = {
    "__init__", "_version", "_codes", "_textarrays", "_sealed", "_lazy", "config", "errors",
    "schema", "times", "arguments", "provenance", "tokens", "labels", "storage", "scratch",
    "connection", "cli",
}
"""The face, the contract modules (settings, errors, the schema, times, argument checks,
provenance, tokens, address labels, the dataset convention, scratch directories; the
registry and addresses are the contract packages ``chains/`` and ``addressing/``),
``connect`` and the command line."""


def test_the_top_level_holds_the_face_the_contract_and_the_packages():
    modules = {p.stem for p in ROOT.glob("*.py")}
    assert sorted(modules - TOP_LEVEL) == []


def test_modules_stay_small_unless_declarative():
    big = {
        str(path.relative_to(ROOT.parent)): n
        for path in ROOT.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert {k: v for k, v in big.items() if k not in TABLES} == {}


def test_every_package_is_shipped():
    """A package missing from pyproject's list works in an editable install and not in a wheel."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: the tomli the project depends on there
        import tomli as tomllib

    listed = set(tomllib.loads((ROOT.parent / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ])
    found = {_module_name(p.parent / "__init__.py") for p in ROOT.rglob("__init__.py")}
    assert sorted(found - listed) == []
    # a folder of data files (no __init__.py) must be listed too: setuptools ships it only
    # then, and warns on every install ("Package would be ignored") when it is not
    holding = {
        _module_name(p.parent / "__init__.py") for p in ROOT.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }  # fmt: skip
    assert sorted(holding - listed) == []


MAX_FUNCTION_LINES = 60
"""Lines of code a function may have: its docstring, blank lines and comment lines aside."""
MAX_PARAMETERS = 10
"""Parameters a function may take, ``self`` and ``cls`` aside (a record past that)."""

LONG_SIGNATURES = {
    "cctx_research/report/building.py:build": (
        "the public report call of the README, notebooks and users' code: its keywords stay "
        "as they are; it resolves them into one inputs record at once (report.inputs)"
    ),
}
"""Functions allowed more than :data:`MAX_PARAMETERS`, each with why."""


@functools.cache
def _functions() -> tuple[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, list[str]], ...]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        lines, tree = _parsed(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((f"{path.relative_to(ROOT.parent)}:{node.name}", node, lines))
    return tuple(found)


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> int:
    body = node.body
    first = body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and (
        isinstance(first.value.value, str)
    )
    start = first.end_lineno + 1 if docstring else first.lineno
    text = lines[start - 1 : node.end_lineno]
    return sum(1 for line in text if line.strip() and not line.strip().startswith("#"))


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = node.args
    names = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    n = len(names) + (a.vararg is not None) + (a.kwarg is not None)
    return n - (1 if names and names[0].arg in ("self", "cls") else 0)


def test_functions_stay_short():
    long = {
        name: n
        for name, node, lines in _functions()
        if (n := _code_lines(node, lines)) > MAX_FUNCTION_LINES
    }
    assert long == {}


def test_functions_take_a_record_past_ten_parameters():
    many = {
        name: n
        for name, node, _ in _functions()
        if (n := _parameters(node)) > MAX_PARAMETERS and name not in LONG_SIGNATURES
    }
    assert many == {}


def test_the_listed_exceptions_are_still_needed():
    """An exception whose function shrank (or went) is dropped from the list, not kept."""
    counts = {name: _parameters(node) for name, node, _ in _functions()}
    stale = [name for name in LONG_SIGNATURES if counts.get(name, 0) <= MAX_PARAMETERS]
    assert stale == []
