"""gpunb's host work per call as a count of CPU instructions, without a GPU: the null driver of
:mod:`host_null_gpu` under valgrind's callgrind, a call repeated ``--short`` and ``--long``
times in two processes, the difference divided by the difference of the counts. Timings on a
small shared CPU machine move 30-50% between runs; the count moves by a few hundred
instructions in 20-30 thousand, so a change of a few percent shows.

    python benchmarks/host_instructions.py "a + b" "a.sum()" [--base TREE]

Each call is Python evaluated with ``a`` and ``b`` (1000 float32), ``gp`` (gpunb) and ``np``
in scope. ``--base TREE``: the same counts for another gpunb tree (e.g. a ``git archive`` of
the last commit) first on the path. Needs ``valgrind``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import gc, os, sys
sys.path.insert(0, {here!r})
import host_null_gpu
sys.path[:0] = [p for p in os.environ.get("GPUNB_TREE", "").split(os.pathsep) if p]
host_null_gpu.install()
import numpy as np
import gpunb as gp
from gpunb.core.ndarray import ndarray
a, b = ndarray((1000,), np.float32), ndarray((1000,), np.float32)
for _ in range(5):
    {call}
gc.disable()
for _ in range({n}):
    {call}
"""


def instructions(call: str, n: int, tree: str | None) -> int:
    env = dict(os.environ, PYTHONHASHSEED="0", GPUNB_TREE=tree or "")
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                        "-c", CHILD.format(here=str(HERE), call=call, n=n)],
                       capture_output=True, text=True, env=env)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if r.returncode or not m:
        raise SystemExit(f"{call!r} failed under valgrind:\n{r.stderr[-2000:]}")
    return int(m.group(1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("calls", nargs="+")
    ap.add_argument("--short", type=int, default=2000)
    ap.add_argument("--long", type=int, default=42000)
    ap.add_argument("--base", default=None, help="another gpunb tree to count first")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("needs valgrind (apt install valgrind)")
        return 1
    trees = ([("base", str(Path(args.base).resolve()))] if args.base else []) + [("this", None)]
    for call in args.calls:
        for name, tree in trees:
            per = (instructions(call, args.long, tree) - instructions(call, args.short, tree)) / (
                args.long - args.short)
            print(f"{call:32s} {name:5s} {per:9.0f} instructions a call", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
