"""Host cost of one small call (GPU): microseconds per call of a fused function, an unfused
ufunc, cupy.fuse and a CuPy ufunc on 1000 float32 elements, then cProfile's top entries for
the fused call and the time of the bare driver calls it makes. Run by hand when tuning the
dispatch path."""

import cProfile
import ctypes
import io
import pstats
import time

import numpy as np

import gpunb as gp
from gpunb.core.runtime import driver, fastcall


def per_call_us(fn, calls=5000, rounds=5):
    fn()
    driver.synchronize()
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls * 1e6)
        driver.synchronize()
    return best


def main():
    rng = np.random.default_rng(0)
    hs = [rng.standard_normal(1000, dtype=np.float32) for _ in range(3)]
    x, y, z = (gp.asarray(h) for h in hs)
    f = gp.fuse(lambda x, y, z: x * y + gp.sin(z))
    rows = {"gpunb.fuse x*y+sin(z)": lambda: f(x, y, z), "gpunb x + y": lambda: x + y,
            "gpunb.empty(1000)": lambda: gp.empty(1000, np.float32)}
    try:
        import cupy as cp

        cx, cy, cz = (cp.asarray(h) for h in hs)

        def mul_add_sin(x, y, z):
            return x * y + cp.sin(z)

        cf = cp.fuse(mul_add_sin)
        rows.update({"cupy.fuse x*y+sin(z)": lambda: cf(cx, cy, cz), "cupy x + y": lambda: cx + cy,
                     "cupy.empty(1000)": lambda: cp.empty(1000, np.float32)})
    except ImportError:
        pass
    for name, fn in rows.items():
        print(f"{name:24s} {per_call_us(fn):6.2f} us/call")
    # the bare launch of the fused kernel, as the plan makes it
    plan = next(iter(f._plans.values()))
    step = plan.steps[0]
    out = gp.empty(1000, np.float32)
    params = [ctypes.c_void_p(a.data.ptr) for a in (x, y, z, out)]
    stream = driver.current_stream()[1]
    launch_args = [params[p] if p.__class__ is int else p for p in step.params]
    print(f"{'bare cuLaunchKernel':24s} "
          f"{per_call_us(lambda: fastcall.launch(step.function, step.grid, (step.block,), 0, stream, launch_args)):6.2f}"
          " us/call")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(20000):
        f(x, y, z)
    prof.disable()
    driver.synchronize()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(14)
    print(s.getvalue())


if __name__ == "__main__":
    main()
