"""First touch in fresh processes (issue 16): the import, the first ``asarray`` of 1000 float32,
the first ``a + a`` and the first ``a.sum()`` (each read back), for gpunb, CuPy and torch, and
the bare driver's floor (``dlopen`` of libcuda, ``cuInit``, the primary context and one
allocation, through ctypes). Warm caches (a warm-up process per library first), libraries
alternating process by process; medians in ms.

    python benchmarks/first_touch.py [--rounds 7] [--json PATH] [--profile]

``--profile``: one more fresh gpunb process with cProfile around its first ``asarray``,
``a + a`` and ``a.sum()`` (the top entries by cumulative time), to find gpunb's own share
above the driver's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = {
    "gpunb": """
import time; t0 = time.perf_counter()
import numpy as np; t1 = time.perf_counter()
import gpunb as L; t2 = time.perf_counter()
a = L.asarray(np.arange(1000, dtype=np.float32)); t3 = time.perf_counter()
(a + a).get(); t4 = time.perf_counter()
float(a.sum()); t5 = time.perf_counter()
""",
    "cupy": """
import time; t0 = time.perf_counter()
import numpy as np; t1 = time.perf_counter()
import cupy as L; t2 = time.perf_counter()
a = L.asarray(np.arange(1000, dtype=np.float32)); t3 = time.perf_counter()
(a + a).get(); t4 = time.perf_counter()
float(a.sum()); t5 = time.perf_counter()
""",
    "torch": """
import time; t0 = time.perf_counter()
import numpy as np; t1 = time.perf_counter()
import torch as L; t2 = time.perf_counter()
a = L.as_tensor(np.arange(1000, dtype=np.float32), device="cuda"); t3 = time.perf_counter()
(a + a).cpu(); t4 = time.perf_counter()
float(a.sum()); t5 = time.perf_counter()
""",
    "driver": """
import time; t0 = time.perf_counter()
import numpy as np; t1 = time.perf_counter()
import ctypes; cu = ctypes.CDLL("libcuda.so.1"); t2 = time.perf_counter()
assert cu.cuInit(0) == 0
dev, ctx, ptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
assert cu.cuMemAlloc_v2(ctypes.byref(ptr), 4000) == 0; t3 = time.perf_counter()
t4 = t5 = t3
""",
}
COMPILE = """
import compileall, importlib, os, sys
dirs = [sys.argv[1]]
for name in ("cuda.core", "cuda.bindings", "cuda.pathfinder", "platformdirs"):
    try:
        dirs += list(importlib.import_module(name).__path__)
    except ImportError:
        pass
for d in dirs:
    if os.access(d, os.W_OK):
        compileall.compile_dir(d, quiet=1)
"""
TAIL = """
import json; print(json.dumps({"import": t2 - t1, "asarray": t3 - t2, "add": t4 - t3, "sum": t5 - t4}))
"""
PROFILE = """
import cProfile, pstats, numpy as np
import gpunb
h = np.arange(1000, dtype=np.float32)
for what, fn in (("asarray", lambda: gpunb.asarray(h)), ("a + a", lambda: (a + a).get()),
                 ("a.sum()", lambda: float(a.sum()))):
    pr = cProfile.Profile(); pr.enable(); r = fn(); pr.disable()
    if what == "asarray":
        a = r
    print("=== first", what)
    pstats.Stats(pr).sort_stats("cumulative").print_stats(28)
"""


def child(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=True).stdout


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", default=None)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    # bytecode first, as an installed package has it (a checkout without __pycache__, or with
    # PYTHONDONTWRITEBYTECODE set, compiles gpunb's modules in every process: 36-48 ms)
    # (the packages gpunb loads on these paths too: a wheel installed with --no-compile has none)
    subprocess.run([sys.executable, "-c", COMPILE, str(ROOT / "gpunb")], check=True)
    libs = []
    for name in CHILD:      # warm-up (kernel caches, the OS's file cache); a library that
        try:                # fails here (not installed) is left out
            child(CHILD[name] + TAIL)
            libs.append(name)
        except subprocess.CalledProcessError:
            print(f"{name}: left out (its warm-up process failed)")
    runs = {name: [] for name in libs}
    for _ in range(args.rounds):
        for name in libs:
            runs[name].append(json.loads(child(CHILD[name] + TAIL).strip().splitlines()[-1]))
    out = {name: {k: 1e3 * statistics.median(r[k] for r in rs) for k in rs[0]}
           for name, rs in runs.items()}
    out["samples_ms"] = {name: [{k: round(1e3 * v, 2) for k, v in r.items()} for r in rs]
                         for name, rs in runs.items()}
    print(f"{'ms (median of ' + str(args.rounds) + ')':24s} {'import':>8s} {'asarray':>8s} "
          f"{'a + a':>8s} {'a.sum()':>8s}")
    for name in libs:
        m = out[name]
        print(f"{name:24s} {m['import']:8.1f} {m['asarray']:8.1f} {m['add']:8.1f} {m['sum']:8.1f}")
    print("asarray samples:", {name: sorted(round(1e3 * r["asarray"], 1) for r in rs)
                               for name, rs in runs.items()})
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    if args.profile:
        print(child(PROFILE))
    return 0


if __name__ == "__main__":
    sys.exit(main())
