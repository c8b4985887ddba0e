"""Runs in a child process on the GPU for benchmarks/run.py's ``fusion`` section: gpunb.fuse
against cupy.fuse and unfused gpunb, same process and GPU, CUDA-event medians. Each time is
taken twice: with the runs queued back to back (the GPU's time: ``KEY``) and with a wait after
every run (``KEY_sync``: one isolated call, the host's dispatch included). Prints one JSON
object on the last line."""

import json
import sys
import time

import numpy as np

import gpunb as gp
from gpunb.core.runtime import driver, memory


def timed(fn, repeat=20):
    return driver.time_ms(fn, repeat=repeat, warmup=3)


def both(r, key, fn, repeat=20):
    """``r[key]``: queued runs; ``r[key + '_sync']``: a wait after each run."""
    r[key] = timed(fn, repeat)
    r[key + "_sync"] = driver.time_ms(fn, repeat=repeat, warmup=0, sync_each=True)


def cupy_time(r, key, make, repeat=20):
    """Time cupy.fuse where it can trace and compile the function; else record why."""
    try:
        both(r, key, make(), repeat)
    except Exception as exc:
        r[key + "_error"] = f"{type(exc).__name__}: {exc}"[:200]


def host_us(fn, calls=3000):
    """Host microseconds per call on small inputs (what a wait after each call adds)."""
    fn()
    driver.synchronize()
    best = []
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best.append((time.perf_counter() - t) / calls * 1e6)
        driver.synchronize()
    return min(best)


def main():
    try:
        import cupy as cp
    except ImportError:
        cp = None
    n = 1 << 28
    src, dst = gp.empty(n, "float32"), gp.empty(n, "float32")
    src.fill(1.0)
    ms = timed(lambda: memory.copy_device(dst.data.ptr, src.data.ptr, 4 * n), repeat=30)
    out = {"copy": {"ms": ms, "gbs": 2 * 4 * n / ms / 1e6}}
    del src, dst
    rng = np.random.default_rng(0)
    res = {}

    # x*y + sin(z), float32, 2^28: 3 reads + 1 write
    hx, hy, hz = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    x, y, z = gp.asarray(hx), gp.asarray(hy), gp.asarray(hz)
    f = gp.fuse(lambda x, y, z: x * y + gp.sin(z))
    r = {"bytes": 4 * 4 * n, "unfused": timed(lambda: x * y + gp.sin(z))}
    both(r, "gpunb", lambda: f(x, y, z))
    ok = {"mul_add_sin": bool(np.allclose(f(x, y, z).get()[:1000], hx[:1000] * hy[:1000] + np.sin(hz[:1000]),
                                          rtol=1e-5, atol=1e-5))}
    if cp is not None:
        cx, cy, cz = cp.asarray(hx), cp.asarray(hy), cp.asarray(hz)
        def mul_add_sin(x, y, z):         # a def: cupy.fuse names the kernel after the function
            return x * y + cp.sin(z)

        cf = cp.fuse(mul_add_sin)
        cupy_time(r, "cupy_fuse", lambda: (lambda: cf(cx, cy, cz)))
        del cx, cy, cz
    res["mul_add_sin"] = r
    del x, y, z, hx, hy, hz

    # a row softmax step: exp(x - max) / sum, 16384 x 16384 float32 (the max given: one pass
    # reads x and m, writes e; the sum is a fused reduction)
    m = 16384
    hx = rng.standard_normal((m, m), dtype=np.float32)
    x = gp.asarray(hx)
    mx = x.max(axis=1)
    e = gp.fuse(lambda x, mx: gp.exp(x - mx[:, None]))
    s = gp.fuse(lambda x, mx: gp.exp(x - mx[:, None]).sum(axis=1))
    r = {"bytes": 2 * 4 * m * m, "unfused": timed(lambda: gp.exp(x - mx[:, None]), repeat=10),
         "sum_bytes": 4 * m * m, "sum_unfused": timed(lambda: gp.exp(x - mx[:, None]).sum(axis=1), repeat=10)}
    both(r, "gpunb", lambda: e(x, mx), repeat=10)
    both(r, "sum_gpunb", lambda: s(x, mx), repeat=10)
    want = np.exp(hx[:64].astype(np.float64) - hx[:64].max(axis=1, keepdims=True)).sum(axis=1)
    ok["softmax_sum"] = bool(np.allclose(s(x, mx).get()[:64], want, rtol=1e-4))
    if cp is not None:
        cx = cp.asarray(hx)
        cmx = cx.max(axis=1)
        def shifted_exp(x, mx):
            return cp.exp(x - mx[:, None])

        def shifted_exp_sum(x, mx):
            return cp.sum(cp.exp(x - mx[:, None]), axis=1)

        ce = cp.fuse(shifted_exp)
        cupy_time(r, "cupy_fuse", lambda: (lambda: ce(cx, cmx)), 10)
        cs = cp.fuse(shifted_exp_sum)
        cupy_time(r, "sum_cupy_fuse", lambda: (lambda: cs(cx, cmx)), 10)
        del cx
    res["softmax"] = r

    # where(mask[:, newaxis], inf, points): a (m, 3) float32 with a broadcast mask
    k = 1 << 24
    hp = rng.standard_normal((k, 4), dtype=np.float32)
    hm = rng.integers(0, 2, k).astype(bool)
    p, mask = gp.asarray(hp), gp.asarray(hm)
    w = gp.fuse(lambda mask, p: gp.where(mask[:, gp.newaxis], gp.inf, p))
    r = {"bytes": (4 * 4 + 1 + 4 * 4) * k, "unfused": timed(lambda: gp.where(mask[:, gp.newaxis], gp.inf, p))}
    both(r, "gpunb", lambda: w(mask, p))
    ok["where_inf"] = bool(np.array_equal(w(mask, p).get(), np.where(hm[:, None], np.inf, hp)))
    if cp is not None:
        cpp, cm = cp.asarray(hp), cp.asarray(hm)
        def masked(mask, p):
            return cp.where(mask[:, None], cp.inf, p)

        cw = cp.fuse(masked)
        cupy_time(r, "cupy_fuse", lambda: (lambda: cw(cm, cpp)))
        del cpp, cm
    res["where_inf"] = r
    del p, mask

    # host time per fused call on 1000 elements: what the GPU waits for between isolated calls
    hs = [rng.standard_normal(1000, dtype=np.float32) for _ in range(3)]
    xs = [gp.asarray(h) for h in hs]
    r = {"gpunb": host_us(lambda: f(*xs))}
    if cp is not None:
        cs = [cp.asarray(h) for h in hs]
        r["cupy_fuse"] = host_us(lambda: cf(*cs))
    res["host_us"] = r
    out["results"] = res
    out["ok"] = ok
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
