"""Runs in a child process on the GPU for benchmarks/run.py's ``arrays`` section: gpunb
against CuPy (same process, same GPU) and NumPy, timed with CUDA events, medians of warm runs.
Prints one JSON object on the last line."""

import json
import statistics
import sys
import time

import numpy as np

import gpunb as gp
from gpunb.core.runtime import driver, memory


def timed(fn, repeat=20, warmup=3):
    return driver.time_ms(fn, repeat=repeat, warmup=warmup)


def host_ms(fn, repeat=3):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ts)


def main():
    out = {}
    try:
        import cupy as cp
    except ImportError:
        cp = None
    n = 1 << 28
    # The ceiling: a device-to-device copy, bytes read plus written.
    src, dst = gp.empty(n, "float32"), gp.empty(n, "float32")
    src.fill(1.0)
    ms = timed(lambda: memory.copy_device(dst.data.ptr, src.data.ptr, 4 * n))
    out["copy"] = {"ms": ms, "gbs": 2 * 4 * n / ms / 1e6}
    del src, dst

    rng = np.random.default_rng(0)
    ha, hb, hc = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    a, b, c = gp.asarray(ha), gp.asarray(hb), gp.asarray(hc)
    res = {}
    res["add"] = {"gpunb": timed(lambda: a + b), "bytes": 3 * 4 * n}
    res["mul_add_sin"] = {"gpunb": timed(lambda: a * b + gp.sin(c)), "bytes": (3 + 2 + 2) * 4 * n}
    ok_add = bool(np.array_equal((a + b).get(), ha + hb))
    if cp is not None:
        ca, cb, cc = cp.asarray(ha), cp.asarray(hb), cp.asarray(hc)
        res["add"]["cupy"] = timed(lambda: ca + cb)
        res["mul_add_sin"]["cupy"] = timed(lambda: ca * cb + cp.sin(cc))
        del ca, cb, cc
    res["add"]["numpy"] = host_ms(lambda: ha + hb)
    res["mul_add_sin"]["numpy"] = host_ms(lambda: ha * hb + np.sin(hc))
    del a, b, c, ha, hb, hc

    m = 16384
    hx = rng.standard_normal((m, m), dtype=np.float32)
    x = gp.asarray(hx)
    res["transpose"] = {"gpunb": timed(lambda: gp.ascontiguousarray(x.T), repeat=10), "bytes": 2 * 4 * m * m}
    ok_t = bool(np.array_equal(gp.ascontiguousarray(x[:64, :32].T).get(), hx[:64, :32].T))
    if cp is not None:
        cx = cp.asarray(hx)
        res["transpose"]["cupy"] = timed(lambda: cp.ascontiguousarray(cx.T), repeat=10)
        del cx
    res["transpose"]["numpy"] = host_ms(lambda: np.ascontiguousarray(hx.T), repeat=1)

    # Reductions over the same 16384^2 float32: bytes read (the output is negligible).
    reductions = {"sum": lambda mod, v: mod.sum(v), "sum_axis0": lambda mod, v: mod.sum(v, axis=0),
                  "sum_axis1": lambda mod, v: mod.sum(v, axis=1)}
    ok_r = {}
    for key, f in reductions.items():
        res[key] = {"gpunb": timed(lambda: f(gp, x), repeat=10), "bytes": 4 * m * m}
        want = f(np, hx.astype(np.float64))
        ok_r[key] = bool(np.allclose(f(gp, x).get(), want, rtol=1e-4, atol=1e-2 * np.sqrt(m)))
        res[key]["numpy"] = host_ms(lambda: f(np, hx), repeat=1)
    if cp is not None:
        cx = cp.asarray(hx)
        for key, f in reductions.items():
            res[key]["cupy"] = timed(lambda: f(cp, cx), repeat=10)
        del cx
    del x

    # Dispatch: a + b on 1000 elements, host time per op.
    s1, s2 = gp.asarray(np.ones(1000, np.float32)), gp.asarray(np.ones(1000, np.float32))
    def per_op(f, sync, k=2000):
        for _ in range(100):
            f()
        sync()
        best = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(k):
                f()
            sync()
            best.append((time.perf_counter() - t) / k * 1e6)
        return statistics.median(best)
    res["dispatch_us"] = {"gpunb": per_op(lambda: s1 + s2, gp.synchronize)}
    if cp is not None:
        c1, c2 = cp.ones(1000, cp.float32), cp.ones(1000, cp.float32)
        res["dispatch_us"]["cupy"] = per_op(lambda: c1 + c2, cp.cuda.Device().synchronize)
    out["results"] = res
    out["ok"] = {"add": ok_add, "transpose": ok_t, **ok_r}
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
