"""Fusion timing experiments (GPU): each fused benchmark kernel of ``fusion_child.py`` timed
three ways (CUDA events around every call, events around a batch of calls, host time per call
on small inputs) under several launch settings, against cupy.fuse in the same process. Run by
hand when tuning; prints one line per kernel and setting."""

import statistics
import sys
import time

import numpy as np

import gpunb as gp
from gpunb.core.kernels.elementwise import plan as launch
from gpunb.core.runtime import driver, memory


def batch_ms(fn, calls=20, rounds=7):
    """Median over ``rounds`` of (events around ``calls`` back-to-back calls) / calls."""
    from cuda.core import EventOptions

    s = driver.as_stream(None)
    opts = EventOptions(timing_enabled=True)
    for _ in range(3):
        fn()
    out = []
    for _ in range(rounds):
        a = s.record(options=opts)
        for _ in range(calls):
            fn()
        b = s.record(options=opts)
        b.sync()
        out.append((b - a) / calls)
    return statistics.median(out)


def host_us(fn, calls=2000):
    fn()
    driver.synchronize()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    dt = time.perf_counter() - t
    driver.synchronize()
    return dt / calls * 1e6


def copy_ceiling(n):
    src, dst = gp.empty(n, "float32"), gp.empty(n, "float32")
    src.fill(1.0)
    copy_ms = batch_ms(lambda: memory.copy_device(dst.data.ptr, src.data.ptr, 4 * n))
    return 2 * 4 * n / copy_ms / 1e6


def main():
    import cupy as cp

    rng = np.random.default_rng(0)
    n = 1 << 28
    ceiling = copy_ceiling(n)
    print(f"copy ceiling {ceiling:.0f} GB/s (batched events)")

    hx, hy, hz = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    x, y, z = gp.asarray(hx), gp.asarray(hy), gp.asarray(hz)
    cx, cy, cz = cp.asarray(hx), cp.asarray(hy), cp.asarray(hz)
    del hx, hy, hz

    def mul_add_sin(x, y, z):
        return x * y + cp.sin(z)

    def add(a, b):
        return a + b

    def mul_add_sin_g(x, y, z):
        return x * y + gp.sin(z)

    def add_g(x, y):
        return x + y

    def shifted_exp_g(x, mx):
        return gp.exp(x - mx[:, None])

    def shifted_exp_sum_g(x, mx):
        return gp.exp(x - mx[:, None]).sum(axis=1)

    def masked_g(mask, p):
        return gp.where(mask[:, gp.newaxis], gp.inf, p)

    cf, ca = cp.fuse(mul_add_sin), cp.fuse(add)
    m = 16384
    hs = rng.standard_normal((m, m), dtype=np.float32)
    s2, cs2 = gp.asarray(hs), cp.asarray(hs)
    del hs
    mx, cmx = s2.max(axis=1), cs2.max(axis=1)

    def shifted_exp(x, mx):
        return cp.exp(x - mx[:, None])

    ce = cp.fuse(shifted_exp)
    k = 1 << 24
    hp = rng.standard_normal((k, 4), dtype=np.float32)
    hm = rng.integers(0, 2, k).astype(bool)
    p, mask, cpp, cm = gp.asarray(hp), gp.asarray(hm), cp.asarray(hp), cp.asarray(hm)

    def masked(mask, p):
        return cp.where(mask[:, None], cp.inf, p)

    cw = cp.fuse(masked)

    def make_cases():
        # new fused functions per setting: their launch plans keep the grid they were made with
        f, fa, e, es, w = (gp.fuse(g) for g in (mul_add_sin_g, add_g, shifted_exp_g,
                                                 shifted_exp_sum_g, masked_g))
        return {
            "a+b": (3 * 4 * n, lambda: fa(x, y), lambda: ca(cx, cy)),
            "unfused a+b": (3 * 4 * n, lambda: x + y, lambda: cx + cy),
            "x*y+sin(z)": (4 * 4 * n, lambda: f(x, y, z), lambda: cf(cx, cy, cz)),
            "exp(x-m[:,None])": (2 * 4 * m * m, lambda: e(s2, mx), lambda: ce(cs2, cmx)),
            "exp(x-m[:,None]).sum(1)": (4 * m * m, lambda: es(s2, mx), None),
            "where(m[:,None],inf,p)": ((16 + 1 + 16) * k, lambda: w(mask, p), lambda: cw(cm, cpp)),
        }

    waves = [int(a) for a in sys.argv[1:]] or [1]
    for g in waves:
        launch.GRID_WAVES = g if g > 0 else None        # 0: one thread per element (vector)
        driver.context().prepared.clear()     # the ufunc fast path's launches keep their grid
        for name, (nbytes, fn, cfn) in make_cases().items():
            per_call = driver.time_ms(fn, repeat=20)
            batch = batch_ms(fn)
            line = (f"waves {g:3d} {name:26s} per-call {nbytes / per_call / 1e6 / ceiling:.3f}  "
                    f"batched {nbytes / batch / 1e6 / ceiling:.3f}  ({batch:.3f} ms)")
            if cfn is not None and g == waves[0]:
                try:
                    cb = batch_ms(cfn)
                    cpc = driver.time_ms(cfn, repeat=20)
                    line += (f"  cupy per-call {nbytes / cpc / 1e6 / ceiling:.3f} "
                             f"batched {nbytes / cb / 1e6 / ceiling:.3f} ({cb:.3f} ms)")
                except Exception as exc:
                    line += f"  cupy failed: {type(exc).__name__}"
            print(line, flush=True)
    f, e, es, w = (gp.fuse(g) for g in (mul_add_sin_g, shifted_exp_g, shifted_exp_sum_g, masked_g))

    # host cost per call on small inputs (the GPU waits on this in per-call timing)
    xs, ys, zs = (gp.asarray(rng.standard_normal(1000, dtype=np.float32)) for _ in range(3))
    ms_ = gp.asarray(rng.standard_normal(100, dtype=np.float32))
    s_small = gp.asarray(rng.standard_normal((100, 64), dtype=np.float32))
    m_small = gp.asarray(rng.integers(0, 2, 256).astype(bool))
    p_small = gp.asarray(rng.standard_normal((256, 4), dtype=np.float32))
    cxs, cys, czs = cp.asarray(xs.get()), cp.asarray(ys.get()), cp.asarray(zs.get())
    print(f"host us/call: fuse x*y+sin(z) {host_us(lambda: f(xs, ys, zs)):.1f} "
          f"cupy.fuse {host_us(lambda: cf(cxs, cys, czs)):.1f} "
          f"exp(x-m) {host_us(lambda: e(s_small, ms_)):.1f} "
          f"sum {host_us(lambda: es(s_small, ms_)):.1f} "
          f"where {host_us(lambda: w(m_small, p_small)):.1f} "
          f"unfused a+b {host_us(lambda: xs + ys):.1f}")


if __name__ == "__main__":
    main()
