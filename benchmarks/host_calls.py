"""Host time per small call (GPU): microseconds per call of common operations on 1000 float32
elements, gpunb, CuPy and (core set) torch in one process. Best of rounds of many calls, with
a wait for the GPU every 32 calls outside the clock (so a full launch queue never makes the
host wait); the libraries' rounds alternate, call by call, so that a drift of the machine's
speed during the run (seen: 30% within a minute) reaches all alike.

    python benchmarks/host_calls.py [--json PATH] [--calls N] [--set core|breadth|math]

Only public API is used, so any gpunb tree can be measured against another on the same
machine: ``python benchmarks/with_tree.py <tree> benchmarks/host_calls.py`` (with an editable
install, ``PYTHONPATH=<tree>`` alone still imports the working tree: see ``with_tree.py``).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import gpunb as gp

SOURCE = r'''extern "C" __global__ void axpy(const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * x[i] + y[i];
}'''


def per_call_us(fn, calls: int, *, sync, rounds: int = 5, every: int = 32) -> float:
    fn()
    sync()
    best = float("inf")
    for _ in range(rounds):
        total, done = 0.0, 0
        while done < calls:
            k = min(every, calls - done)
            t = time.perf_counter()
            for _ in range(k):
                fn()
            total += time.perf_counter() - t
            sync()
            done += k
        best = min(best, total / calls * 1e6)
    return best


def cases(lib, np_mod):
    """name -> a call on 1000 float32 elements, in ``lib`` (gpunb or cupy)."""
    rng = np.random.default_rng(0)
    ha, hb = (rng.standard_normal(1000, dtype=np.float32) for _ in range(2))
    a, b = lib.asarray(ha), lib.asarray(hb)
    m = lib.asarray(rng.standard_normal((10, 100), dtype=np.float32))
    out = lib.empty(1000, np.float32)
    chunk = lib.asarray(rng.standard_normal(1 << 24, dtype=np.float32))   # a Dask chunk's size

    def mul_add_sin(x, y):
        return x * y + lib.sin(x)

    f = lib.fuse(mul_add_sin)
    k = lib.RawKernel(SOURCE, "axpy")
    ek = lib.ElementwiseKernel("T x, T y", "T z", "z = x * y + 2", "gpunb_host_muladd")
    rk = lib.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "gpunb_host_sumsq")
    n = np.int32(1000)
    return {
        "a + b": lambda: a + b,
        "a * 2.0 + 1": lambda: a * 2.0 + 1,
        "a.sum()": lambda: a.sum(),
        "sum(m, axis=0)": lambda: lib.sum(m, axis=0),
        "m.max(axis=1)": lambda: m.max(axis=1),
        "fused a*b + sin(a)": lambda: f(a, b),
        "where(a > 0, a, 0.0)": lambda: lib.where(a > 0, a, 0.0),
        "numpy.sin(a)": lambda: np_mod.sin(a),
        "RawKernel launch": lambda: k((4,), (256,), (a, b, out, n)),
        "ElementwiseKernel x*y+2": lambda: ek(a, b),
        "ElementwiseKernel out=": lambda: ek(a, b, out),
        "ReductionKernel sum sq": lambda: rk(a),
        "empty(1000)": lambda: lib.empty(1000, np.float32),
        "a[1:-1]": lambda: a[1:-1],
        "a.astype(float64)": lambda: a.astype(np.float64),
        "a.std()": lambda: a.std(),
        "np.sum(2^24, keepdims, dtype=)": lambda: np_mod.sum(chunk, axis=(0,), keepdims=True,
                                                             dtype=np.float32),
    }


def torch_cases():
    """name -> the same call in torch, for the core rows torch has (issue 16 asks a + b,
    a.sum() and the RawKernel launch at or under torch's). torch has no RawKernel: its row is
    torch's smallest launch, one elementwise kernel into a given output (no allocation)."""
    import torch

    rng = np.random.default_rng(0)
    a, b = (torch.as_tensor(rng.standard_normal(1000, dtype=np.float32), device="cuda")
            for _ in range(2))
    m = torch.as_tensor(rng.standard_normal((10, 100), dtype=np.float32), device="cuda")
    out = torch.empty(1000, device="cuda")
    return {
        "a + b": lambda: a + b,
        "a * 2.0 + 1": lambda: a * 2.0 + 1,
        "a.sum()": lambda: a.sum(),
        "sum(m, axis=0)": lambda: m.sum(0),
        "m.max(axis=1)": lambda: m.amax(1),
        "where(a > 0, a, 0.0)": lambda: torch.where(a > 0, a, 0.0),
        "numpy.sin(a)": lambda: torch.sin(a),
        "RawKernel launch": lambda: torch.add(a, b, out=out),
        "empty(1000)": lambda: torch.empty(1000, device="cuda"),
        "a[1:-1]": lambda: a[1:-1],
        "a.astype(float64)": lambda: a.to(torch.float64),
        "a.std()": lambda: a.std(correction=0),
    }, torch.cuda.synchronize


def breadth_cases(lib, np_mod):
    """name -> a call of issue 12's functions on small arrays, in ``lib``."""
    rng = np.random.default_rng(0)
    a = lib.asarray(rng.standard_normal(1000, dtype=np.float32))
    b = lib.asarray(rng.standard_normal(1000, dtype=np.float32))
    m = lib.asarray(rng.standard_normal((10, 100), dtype=np.float32))
    idx = lib.asarray(rng.integers(0, 1000, 100))
    mask = a > 0
    return {
        "concatenate([a, b])": lambda: lib.concatenate([a, b]),
        "stack([a, b])": lambda: lib.stack([a, b]),
        "a[idx] (100 int64)": lambda: a[idx],
        "take(a, idx)": lambda: lib.take(a, idx),
        "a[idx] = 0": lambda: a.__setitem__(idx, 0),
        "a[mask]": lambda: a[mask],
        "nonzero(mask)": lambda: lib.nonzero(mask),
        "cumsum(a)": lambda: lib.cumsum(a),
        "cumsum(m, axis=0)": lambda: lib.cumsum(m, axis=0),
        "diff(a)": lambda: lib.diff(a),
        "flip(a)": lambda: lib.flip(a),
        "roll(a, 3)": lambda: lib.roll(a, 3),
        "tile(m, (2, 1))": lambda: lib.tile(m, (2, 1)),
        "repeat(a, 2)": lambda: lib.repeat(a, 2),
        "pad(m, 1)": lambda: lib.pad(m, 1),
        "tril(m)": lambda: lib.tril(m),
        "isclose(a, b)": lambda: lib.isclose(a, b),
        "allclose(a, b)": lambda: lib.allclose(a, b),
        "nanmean(a)": lambda: lib.nanmean(a),
        "average(a)": lambda: lib.average(a),
    }


def math_cases(lib, np_mod):
    """name -> a call of issues 14 and 15's functions on small arrays, in ``lib``."""
    rng = np.random.default_rng(0)
    a = lib.asarray(rng.standard_normal(1000, dtype=np.float32))
    c = lib.asarray((rng.standard_normal(1024) + 1j * rng.standard_normal(1024)).astype(np.complex64))
    m = lib.asarray(rng.standard_normal((64, 64), dtype=np.float32))
    s = lib.asarray(np.sort(rng.standard_normal(1000, dtype=np.float32)))
    d = lib.asarray(rng.standard_normal((64, 64)) + 64 * np.eye(64))
    v = lib.asarray(rng.standard_normal(64))
    gen = lib.random.default_rng(0)
    return {
        "sort(a)": lambda: lib.sort(a),
        "argsort(a)": lambda: lib.argsort(a),
        "searchsorted(s, a)": lambda: lib.searchsorted(s, a),
        "median(a)": lambda: lib.median(a),
        "histogram(a, 10)": lambda: lib.histogram(a, 10),
        "m @ m (64x64)": lambda: m @ m,
        "dot(a, a)": lambda: lib.dot(a, a),
        "linalg.norm(a)": lambda: lib.linalg.norm(a),
        "linalg.solve (64, f64)": lambda: lib.linalg.solve(d, v),
        "fft.fft (1024 c64)": lambda: lib.fft.fft(c),
        "fft.rfft(a)": lambda: lib.fft.rfft(a),
        "rng.random(1000)": lambda: gen.random(1000, dtype=np.float32),
        "rng.standard_normal(1000)": lambda: gen.standard_normal(1000, dtype=np.float32),
        "rng.integers(0, 10, 1000)": lambda: gen.integers(0, 10, 1000),
    }


SETS = {"core": cases, "breadth": breadth_cases, "math": math_cases}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--set", choices=tuple(SETS), default="core",
                    help="core: arithmetic, reductions, launches; breadth: issue 12's functions; "
                         "math: sorting, linalg, fft, random (issues 14, 15)")
    args = ap.parse_args(argv)
    make = SETS[args.set]
    results = {"gpunb_file": gp.__file__, "calls": args.calls, "gpunb": {}, "cupy": {},
               "torch": {}}
    ours = make(gp, np)
    try:
        import cupy as cp

        theirs, cp_sync = make(cp, np), cp.cuda.Device().synchronize
    except ImportError:
        theirs = {}
    torch_calls, torch_sync = {}, None
    if args.set == "core":
        try:
            torch_calls, torch_sync = torch_cases()
        except ImportError:
            pass
    for name, fn in ours.items():
        try:
            fn()
        except Exception as e:      # a function not built yet must not stop the others
            print(f"{name}: {type(e).__name__}: {e}")
            continue
        best = [float("inf")] * 3
        for _ in range(args.rounds):        # one round each, in turn
            best[0] = min(best[0], per_call_us(fn, args.calls, sync=gp.synchronize, rounds=1))
            if name in theirs:
                best[1] = min(best[1], per_call_us(theirs[name], args.calls, sync=cp_sync, rounds=1))
            if name in torch_calls:
                best[2] = min(best[2], per_call_us(torch_calls[name], args.calls, sync=torch_sync,
                                                   rounds=1))
        results["gpunb"][name] = best[0]
        if name in theirs:
            results["cupy"][name] = best[1]
        if name in torch_calls:
            results["torch"][name] = best[2]
    print(f"{'call (1000 float32)':24s} {'gpunb us':>9s} {'CuPy us':>9s} {'ratio':>6s} "
          f"{'torch us':>9s} {'ratio':>6s}   ({gp.__file__})")
    for name, us in results["gpunb"].items():
        cols = []
        for lib in ("cupy", "torch"):
            ref = results[lib].get(name)
            cols.append(f"{'':9s} {'':6s}" if ref is None else f"{ref:9.2f} {us / ref:6.2f}")
        print(f"{name:24s} {us:9.2f} {' '.join(cols)}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
