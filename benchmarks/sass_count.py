"""Instruction counts of generated kernels, from their SASS (no GPU: NVRTC and nvdisasm run
here). For kernels bound by the instructions they issue (float32 random draws: Philox4x32-10
plus a transform, ~150 instructions for 16 bytes written) the count is the prediction to
check on the device.

    python benchmarks/sass_count.py [--arch sm_90] [--show NAME]

Prints, per kernel: the static instruction count (NOPs left out), the count up to the first
store (the straight-line work a thread of a whole block does before it writes: branch-free
kernels execute all of it), the branches and reconvergence points in that stretch (a branch
on random data diverges in every warp, so both sides issue), and the commonest opcodes.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_LINE = re.compile(r"/\*([0-9a-f]+)\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)")


def kernels():
    """name -> CUDA source of the kernels counted."""
    import numpy as np

    from gpunb.core.kernels.random import codegen as cg

    out = {}
    for what in ("normal", "exponential", "uniform"):
        for dt in ("float32", "float64"):
            k = cg.RandomKernel("dist", what, np.dtype(dt))
            out[k.name] = cg.render(k)
    for dt in ("float32", "float64"):
        k = cg.RandomKernel("fill", "random", np.dtype(dt))
        out[k.name] = cg.render(k)
    return out


def count(sass_text: str) -> dict:
    ops = [(m.group(3), m.group(2) is not None) for m in
           (_LINE.search(ln) for ln in sass_text.splitlines()) if m and m.group(3) != "NOP"]
    first_store = next((i for i, (op, _) in enumerate(ops) if op.startswith("STG")), len(ops))
    head = ops[:first_store]
    return {"static": len(ops), "to_first_store": first_store,
            "branches_before_store": sum(op.startswith("BRA") and pred for op, pred in head),
            "reconvergences_before_store": sum(op.startswith("BSYNC") for op, _ in head),
            "top": collections.Counter(op.split(".")[0] for op, _ in ops).most_common(8)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--show", default=None, help="print this kernel's SASS")
    args = ap.parse_args(argv)
    from gpunb.core.build.compiler import compile as nvrtc_compile
    from gpunb.core.build.inspection import sass

    for name, src in kernels().items():
        text = sass(nvrtc_compile(src, (), args.arch))
        c = count(text)
        print(f"{name:32s} static {c['static']:4d}  to first store {c['to_first_store']:4d}  "
              f"branches {c['branches_before_store']}  reconvergences "
              f"{c['reconvergences_before_store']}  {c['top']}")
        if args.show == name:
            print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
