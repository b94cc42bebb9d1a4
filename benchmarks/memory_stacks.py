"""Where a command's memory goes: ``cctx-research ARGS`` in this process, its RSS sampled
every 20 ms on a thread, the main thread's stack kept at each new peak step.

    python benchmarks/memory_stacks.py report --no-progress --data LEDGER --out r.html
    python benchmarks/memory_stacks.py --step 100 report --data LEDGER --out r.html

Prints, after the command's own output, its wall time and peak RSS, then one
line per step of ``--step`` MiB: seconds since start, RSS (GiB) and the
toolkit's innermost frames at that moment (``file:line function``, innermost
first). A line's frames are where the memory was being taken, not whose it is.
"""

from __future__ import annotations

import argparse
import resource
import sys
import threading
import time
import traceback

import psutil


def _frames(frame, depth: int) -> str:
    mine = [f for f in traceback.extract_stack(frame) if "cctx_research/" in f.filename]
    named = [f"{f.filename.split('cctx_research/')[-1]}:{f.lineno} {f.name}" for f in mine]
    return " <- ".join(reversed(named[-depth:]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=200, metavar="MIB",
                        help="a line each time RSS grows by this much (default 200)")
    parser.add_argument("--depth", type=int, default=5, help="frames a line (default 5)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="cctx-research's arguments")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("give the cctx-research command to run, e.g. report --data DIR")
    if args.step < 1 or args.depth < 1:
        parser.error("--step and --depth take positive integers")
    process, main_thread = psutil.Process(), threading.main_thread().ident
    steps: list[tuple[float, float, str]] = []
    done = threading.Event()
    began = time.perf_counter()

    def sample() -> None:
        best = 0
        while not done.wait(0.02):
            rss = process.memory_info().rss
            if rss > best + args.step * 2**20:
                best = rss
                where = _frames(sys._current_frames().get(main_thread), args.depth)
                steps.append((time.perf_counter() - began, rss / 2**30, where))

    threading.Thread(target=sample, daemon=True).start()
    from cctx_research import cli

    try:
        code = cli.main(args.command)
    finally:
        done.set()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"{time.perf_counter() - began:.1f} s, peak RSS {peak:.2f} GiB")
        for at, rss, where in steps:
            print(f"{at:7.1f} s {rss:6.2f} GiB  {where}")
    return code or 0


if __name__ == "__main__":
    sys.exit(main())
