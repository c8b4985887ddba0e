"""Small linear-algebra calls (GPU): microseconds per call of ``solve``, ``inv``,
``cholesky`` and ``det`` on matrices up to 64 x 64 and on stacks of small matrices, gpunb,
CuPy and torch in one process.

A call's time is a loop of ``--calls`` calls and one synchronize at the end, divided by the
calls: what a notebook loop of such calls costs, whichever of the host or the GPU is slower
(gpunb reads the info code back after each solve, inverse and Cholesky factor to raise
NumPy's LinAlgError, so its calls wait for the GPU; CuPy's check nothing by default and
torch's ``linalg.solve``/``inv``/``cholesky`` read their info back as gpunb does). Rounds of
the three libraries alternate; the best round is kept.

    python benchmarks/small_linalg.py [--json PATH] [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import gpunb as gp


def per_call_us(fn, calls: int, sync) -> float:
    fn()
    sync()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - t) / calls * 1e6


def cases(xp, linalg):
    """name -> a call in the array module ``xp`` with its ``linalg``."""
    rng = np.random.default_rng(0)

    def well(shape, dt):
        n = shape[-1]
        return xp.asarray((rng.standard_normal(shape) + (2 * n + 1) * np.eye(n)).astype(dt))

    def hpd(shape, dt):
        a = rng.standard_normal(shape)
        return xp.asarray((a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dt))

    a64, a64f, a16 = well((64, 64), np.float64), well((64, 64), np.float32), well((16, 16), np.float64)
    v64, v64f, v16 = (xp.asarray(rng.standard_normal(n).astype(dt))
                      for n, dt in ((64, np.float64), (64, np.float32), (16, np.float64)))
    h64 = hpd((64, 64), np.float64)
    s8, b8 = well((1000, 8, 8), np.float64), xp.asarray(rng.standard_normal((1000, 8, 1)))
    h8 = hpd((1000, 8, 8), np.float32)
    s64, b64 = well((100, 64, 64), np.float64), xp.asarray(rng.standard_normal((100, 64, 1)))
    return {
        "solve 64 f64": lambda: linalg.solve(a64, v64),
        "solve 64 f32": lambda: linalg.solve(a64f, v64f),
        "solve 16 f64": lambda: linalg.solve(a16, v16),
        "inv 64 f64": lambda: linalg.inv(a64),
        "cholesky 64 f64": lambda: linalg.cholesky(h64),
        "det 64 f64": lambda: linalg.det(a64),
        "solve 1000x8x8 f64": lambda: linalg.solve(s8, b8),
        "inv 1000x8x8 f64": lambda: linalg.inv(s8),
        "cholesky 1000x8x8 f32": lambda: linalg.cholesky(h8),
        "solve 100x64x64 f64": lambda: linalg.solve(s64, b64),
        "inv 100x64x64 f64": lambda: linalg.inv(s64),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    libs = {"gpunb": (cases(gp, gp.linalg), gp.synchronize)}
    try:
        import cupy as cp

        libs["cupy"] = (cases(cp, cp.linalg), cp.cuda.Device().synchronize)
    except ImportError:
        pass
    try:
        import torch

        class _T:
            @staticmethod
            def asarray(h):
                return torch.as_tensor(h, device="cuda")

        libs["torch"] = (cases(_T, torch.linalg), torch.cuda.synchronize)
    except ImportError:
        pass
    results = {"gpunb_file": gp.__file__, "calls": args.calls,
               **{name: {} for name in libs}}
    for case in libs["gpunb"][0]:
        best = {name: float("inf") for name in libs}
        for _ in range(args.rounds):
            for name, (calls, sync) in libs.items():
                try:
                    best[name] = min(best[name], per_call_us(calls[case], args.calls, sync))
                except Exception as e:      # noqa: BLE001 - one library's gap must not stop the rest
                    print(f"{name} {case}: {type(e).__name__}: {e}")
                    break
        row = "  ".join(f"{name} {best[name]:8.1f}" for name in libs)
        print(f"{case:24s} {row}   (us per call)")
        for name in libs:
            results[name][case] = best[name]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
