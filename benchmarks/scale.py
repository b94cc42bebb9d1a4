"""Figure 13: ``cctx.load`` of the whole CCTP history, against the same work in DuckDB SQL.

Run::

    .venv/bin/python benchmarks/scale.py                      # 1M and 4M transfers
    .venv/bin/python benchmarks/scale.py --full               # 1M, 4M and 12M (the whole history)
    .venv/bin/python benchmarks/scale.py --sizes 100k,500k    # chosen sizes
    .venv/bin/python benchmarks/scale.py --quick              # 20k, for the test suite
    .venv/bin/python benchmarks/scale.py --generate DIR -n 1M # only write a dataset

The data (``scale_plan.py``, ``scale_data.py``): N CCTP transfers, 70% V2,
on eight EVM chains, as the logs Circle's contracts emit (four a transfer)
in the layout of a ``cctx-research sync`` dataset: per chain, Parquet parts
of about 1 M logs in cryo's columns, and the manifest (``_cctx.json``). A sample of every
part is checked byte for byte against eth-abi while it is written.

For each size, each step runs in a fresh subprocess, one after the other:

1. the generator (time, for information);
2. the floor (``scale_sql.py``): the same decoding and linking written
   directly as one DuckDB query from the parts to a Parquet file;
3. ``cctx.load(parts)`` to a ledger, written to Parquet as ``cctx-research
   import`` does (pandas), and with ``engine="duckdb"`` (the relation written
   to Parquet; its rows checked equal to the pandas ledger's);
4. ``cctx-research report --data <ledger> --out report.html``.

Wall time is the worker's own (from the call to the written file; the
report's is the whole command). Peak RSS is the child's ``ru_maxrss`` (from
``os.wait4``): the whole process, imports included (the detail column gives
the RSS after the imports). ``load`` is compared with the floor measured in
the same run (targets: time and peak RSS <= 2x the floor's). The ledger
and the floor's output are checked against what was planted: every
transfer once, every minted one linked, the others pending.

Every child runs under ``RLIMIT_AS`` (``--memory-cap``, by default 20 GiB or
what the machine has free less 2 GiB, whichever is less), so a run that would
exceed the machine (``load`` at 4M needs about 26 GiB today) fails in its own
process, and its cells say "out of memory". With ``--full``, the last row
holds the whole-history target: the peak RSS of loading 12 M transfers
<= 6 GiB.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale_run import GIB, Child, load_engines, memory_cap, spawn, worker  # noqa: E402
from suite import Row, machine, table  # noqa: E402

TIME_TARGET = 2.0
MEMORY_TARGET = 2.0
WHOLE_HISTORY = 12_000_000
WHOLE_HISTORY_RSS = 6 * GIB
SIZES = (1_000_000, 4_000_000)
FULL_SIZES = (*SIZES, WHOLE_HISTORY)
QUICK_SIZES = (20_000,)


def size(text: str) -> int:
    """``20k``, ``1.5M``, ``12M`` or ``500000`` as a number of transfers."""
    text = text.strip().lower().replace("_", "").replace(",", "")
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    try:
        value = float(text[:-1] if scale > 1 else text) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 100k, 1M, 500000)") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"a size is at least one transfer, got {text!r}")
    return int(value)


def label(n: int) -> str:
    return f"{n / 1e6:g}M" if n >= 1_000_000 else f"{n / 1e3:g}k"


@dataclass(frozen=True)
class Options:
    """One run's settings, shared by every size."""

    seed: int
    cap: int
    work: Path
    check: int
    keep: bool
    part_logs: int
    days: int | None = None  # the transfers over the window's first days only


def _gib(child: Child) -> float:
    return child.peak / GIB


def _versus(figure: str, child: Child, floor: Child, what: str, detail: str) -> Row:
    """A row of ``child`` against the floor: its seconds or its peak RSS, target 2x."""
    target = TIME_TARGET if what == "time" else MEMORY_TARGET
    unit, value, base = ("s", child.seconds, floor.seconds) if what == "time" else (
        "GiB", _gib(child), _gib(floor))  # fmt: skip
    if child.failure:
        return Row(figure, float("nan"), None, unit, f"<= {target:.1f}", False, detail,
                   text=child.failure)  # fmt: skip
    if floor.failure:  # its own figure still says something; no ratio
        return Row(figure, value, None, unit, f"<= {target:.1f}", None,
                   f"the floor: {floor.failure}; {detail}")  # fmt: skip
    return Row(figure, value, base, unit, f"<= {target:.1f}", value / base <= target, detail)


def _info(figure: str, child: Child, what: str, detail: str) -> Row:
    if child.failure:
        return Row(figure, float("nan"), None, "s", "-", False, detail, text=child.failure)
    value, unit = (child.seconds, "s") if what == "time" else (_gib(child), "GiB")
    return Row(figure, value, None, unit, "-", None, detail)


def _absent(figure: str, unit: str, why: str) -> Row:
    return Row(figure, float("nan"), None, unit, "-", None, why, text="-")


def _agreement(figure: str, child: Child, planted: dict, check: str) -> Row:
    """Transfers linked against those planted, with the check's verdict and counts."""
    from scale_check import floor_agrees, ledger_agrees

    if child.failure:
        return _absent(figure, "n", f"not run: {child.failure}")
    ok, detail = (ledger_agrees if check == "ledger" else floor_agrees)(planted, child.result)
    return Row(figure, child.result["linked"], planted["minted"], "n", "= 1.00", ok, detail)


def _command(kind: str, root: Path, opts: Options, **extra: object) -> list[str]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, "--root", str(root),
           "--seed", str(opts.seed), "--part-logs", str(opts.part_logs), "--check", str(opts.check)]
    if opts.days is not None:
        cmd += ["--days", str(opts.days)]
    for key, value in extra.items():
        cmd += [f"--{key.replace('_', '-')}", str(value)]
    return cmd  # fmt: skip


@dataclass
class Measured:
    """One size's children: the generator, the floor, each engine's load, the report."""

    n: int
    generate: Child
    floor: Child | None = None
    loads: dict[str, Child] | None = None
    report: Child | None = None
    same: tuple[bool, str] | None = None  # the duckdb ledger against the pandas one


def measure(n: int, opts: Options, engines: list[str]) -> Measured:
    """Generate N transfers, then run the floor, each load and the report, each in its own child."""
    tag = label(n)
    root, here = opts.work / f"cctp-{tag}", opts.work
    print(f"{tag}: generating {n:,} transfers in {root}", file=sys.stderr)
    run = Measured(n, spawn(_command("generate", root, opts, transfers=n), cap=opts.cap, cwd=here))
    if run.generate.failure:
        return run
    print(f"{tag}: SQL floor", file=sys.stderr)
    limit = f"{int(opts.cap * 0.6 / 2**20)}MiB"  # DuckDB's buffers, with room for the rest
    run.floor = spawn(_command("floor", root, opts, out=here / f"floor-{tag}.parquet",
                               memory_limit=limit), cap=opts.cap, cwd=here)  # fmt: skip
    run.loads = {}
    for engine in engines:
        print(f"{tag}: load ({engine})", file=sys.stderr)
        out = here / f"ledger-{tag}-{engine}.parquet"
        run.loads[engine] = spawn(_command("load", root, opts, out=out, engine=engine),
                                  cap=opts.cap, cwd=here)  # fmt: skip
    done = [e for e in engines if not run.loads[e].failure]
    if {"pandas", "duckdb"} <= set(done):
        from scale_check import same_ledger

        pair = (here / f"ledger-{tag}-{e}.parquet" for e in ("pandas", "duckdb"))
        run.same = same_ledger(*pair, memory_limit=limit)
    if done:
        print(f"{tag}: report", file=sys.stderr)
        ledger = here / f"ledger-{tag}-{done[0]}.parquet"
        cmd = [sys.executable, "-m", "cctx_research.cli", "report", "--data", str(ledger),
               "--out", str(here / f"report-{tag}.html"), "--no-progress"]  # fmt: skip
        run.report = spawn(cmd, cap=opts.cap, cwd=here)
    if not opts.keep:
        shutil.rmtree(root, ignore_errors=True)
        for path in here.glob(f"*-{tag}*.parquet"):
            path.unlink()
    return run


def _generate_row(run: Measured) -> Row:
    figure = f"13a generate {label(run.n)} transfers"
    g = run.generate
    if g.failure:
        return Row(figure, float("nan"), None, "s", "-", False, g.error, text=g.failure)
    p = g.result
    return Row(figure, g.seconds, None, "s", "-", None,
               f"{p['logs']:,} logs in {p['parts']} parts of {p['chains']} chains, "
               f"{p['disk_mb']:,} MiB; V2 {p['v2']:,}, V1 {p['v1']:,}, fast {p['fast']:,}, never "
               f"minted {p['never_minted']:,}; {p['checked_logs']:,} logs checked with eth-abi; "
               f"peak RSS {_gib(g):.2f} GiB, CPU {g.cpu:.1f} s")  # fmt: skip


_LETTERS = {"pandas": "cde", "duckdb": "fgh"}


def _load_rows(run: Measured, engine: str, planted: dict) -> list[Row]:
    """Time and peak RSS of one engine's load against the floor, and its links against the plan."""
    tag, floor = label(run.n), run.floor
    name = "load" if engine == "pandas" else f'load(engine="{engine}")'
    time_, rss, links = (f"13{x} {name}" for x in _LETTERS[engine])
    figures = (f"{time_} vs SQL floor, time, {tag}", f"{rss} vs SQL floor, peak RSS, {tag}",
               f"{links}: transfers linked vs planted, {tag}")  # fmt: skip
    child = (run.loads or {}).get(engine)
    if child is None or floor is None:
        why = "not run" if floor is None else "not run: not among --engines"
        return [_absent(f, u, why) for f, u in zip(figures, ("s", "GiB", "n"), strict=True)]
    r = child.result
    detail = child.error if child.failure else (
        f"{r['rows']:,} transfers from {r['files']} parts; CPU of the process {child.cpu:.1f} s "
        f"(floor's {floor.cpu:.1f} s)")
    memory = child.error if child.failure else (
        f"each process, imports included; after imports {r['imports'] / GIB:.2f} GiB (floor's "
        f"{floor.result.get('imports', 0) / GIB:.2f})")
    links = _agreement(figures[2], child, planted, "ledger")
    if engine != "pandas" and run.same is not None:  # and the same rows as load's DataFrame
        links = replace(links, ok=bool(links.ok) and run.same[0],
                        detail=f"{links.detail}; {run.same[1]}")  # fmt: skip
    return [
        _versus(figures[0], child, floor, "time", detail),
        _versus(figures[1], child, floor, "memory", memory),
        links,
    ]


def rows_of(run: Measured) -> list[Row]:
    """The table's rows of one size."""
    tag = label(run.n)
    rows = [_generate_row(run)]
    if run.floor is None:
        return rows
    planted = run.generate.result
    rows.append(_info(f"13b SQL floor (DuckDB), time, {tag}", run.floor, "time",
                      f"decode 4 events, link, write Parquet; CPU {run.floor.cpu:.1f} s"
                      if not run.floor.failure else run.floor.error))  # fmt: skip
    rows.append(_agreement(f"13b SQL floor: transfers linked vs planted, {tag}", run.floor,
                           planted, "floor"))  # fmt: skip
    for engine in _LETTERS:
        rows += _load_rows(run, engine, planted)
    figures = (f"13i report on the ledger, time, {tag}",
               f"13i report on the ledger, peak RSS, {tag}")  # fmt: skip
    if run.report is None:
        return [*rows, *(_absent(f, u, "no ledger") for f, u in zip(figures, ("s", "GiB"),
                                                                     strict=True))]  # fmt: skip
    detail = run.report.error or (f"cctx-research report --data <ledger> --out report.html; CPU "
                                  f"{run.report.cpu:.1f} s")
    return [*rows, _info(figures[0], run.report, "time", detail),
            _info(figures[1], run.report, "memory", "the command's peak RSS")]  # fmt: skip


def whole_history_row(runs: list[Measured]) -> Row:
    """The whole-history target: 12 M transfers to a ledger, then its report, in <= 6 GiB."""
    figure = f"13j whole history ({label(WHOLE_HISTORY)}): load, then report --data, peak RSS"
    target = f"<= {WHOLE_HISTORY_RSS / GIB:.0f} GiB"
    run = next((r for r in runs if r.n == WHOLE_HISTORY), None)
    if run is None or not run.loads:
        return Row(figure, float("nan"), None, "GiB", target, None,
                   f"runs with --full or --sizes {label(WHOLE_HISTORY)}", text="-")  # fmt: skip
    engine = "duckdb" if "duckdb" in run.loads else "pandas"
    steps = [("load", run.loads[engine]), ("report --data", run.report)]
    for name, child in steps:
        if child is None or child.failure:
            why = "not run" if child is None else child.error
            return Row(figure, float("nan"), None, "GiB", target, False,
                       f"{name} (engine {engine}): {why}", text="failed")  # fmt: skip
    peak = max(child.peak for _, child in steps)
    spent = "; ".join(f"{name} {child.seconds / 60:.1f} min, {_gib(child):.2f} GiB"
                      for name, child in steps)  # fmt: skip
    return Row(figure, peak / GIB, None, "GiB", target, peak <= WHOLE_HISTORY_RSS,
               f"engine {engine}: {spent}")  # fmt: skip


def _engines(text: str) -> list[str]:
    """``pandas,duckdb`` as a list of the load engines this checkout has."""
    known = load_engines()
    wanted = [e.strip() for e in text.split(",") if e.strip()]
    wrong = [e for e in wanted if e not in known]
    if not wanted or wrong:
        raise argparse.ArgumentTypeError(
            f"engines are a comma-separated list of {', '.join(known)}, got {text!r}")
    return wanted


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20k transfers, for the test suite")
    parser.add_argument("--full", action="store_true", help="1M, 4M and 12M (the whole history)")
    parser.add_argument("--sizes", type=lambda t: [size(x) for x in t.split(",") if x.strip()],
                        help="sizes to run, e.g. 100k,500k")  # fmt: skip
    parser.add_argument("--engines", type=_engines, default=None,
                        help="load engines to run, e.g. duckdb (default: pandas,duckdb)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--memory-cap", type=float, default=None, metavar="GIB",
                        help="address space of each child (default: 20, or free memory less 2)")
    parser.add_argument("--work", type=Path, default=None, help="where the data goes (temporary)")
    parser.add_argument("--keep", action="store_true", help="keep the datasets and outputs")
    parser.add_argument("--part-logs", type=int, default=1_000_000, help="logs a part, at most")
    parser.add_argument("--check", type=int, default=None,
                        help="transfers of each group of each part checked with eth-abi (16)")
    parser.add_argument("--days", type=int, default=None,
                        help="the transfers over the window's first DAYS days (default: all "
                             "of it, V2's launch to Circle's count; --quick: a month)")
    parser.add_argument("--generate", type=Path, metavar="DIR", help="only write a dataset there")
    parser.add_argument("-n", "--transfers", type=size, default=1_000_000, help="with --generate")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    for hidden in ("--worker", "--root", "--out", "--engine", "--memory-limit"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    check = 16 if args.check is None else args.check
    if args.days is None and args.quick:
        from scale_data import QUICK_DAYS

        args.days = QUICK_DAYS
    if args.worker:
        args.check = check
        return worker(args)
    if args.generate:
        from scale_data import generate

        planted = generate(args.generate, args.transfers, seed=args.seed,
                           part_logs=args.part_logs, check=check, days=args.days)  # fmt: skip
        print(json.dumps(planted, indent=1))
        return 0
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES if args.full else SIZES)
    work = args.work or Path(tempfile.mkdtemp(prefix="cctx-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    opts = Options(args.seed, memory_cap(args.memory_cap), work.resolve(), check, args.keep,
                   args.part_logs, args.days)  # fmt: skip
    engines = args.engines or load_engines()
    runs = [measure(n, opts, engines) for n in sizes]
    rows = [row for run in runs for row in rows_of(run)]
    rows.append(whole_history_row(runs))
    if not args.keep and args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    text = table(rows)
    print(text)
    print(f"\nmemory cap a child: {opts.cap / GIB:.1f} GiB; {machine()}")
    if args.markdown:
        args.markdown.write_text(text + "\n")
    failed = [r for r in rows if r.text == "failed" or (" linked vs planted" in r.figure
                                                        and r.ok is False)]  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
