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


def per_call_us(fn, calls=5000, rounds=5, sync_every=0):
    """Best host microseconds per call; ``sync_every`` > 0 waits for the GPU after that many
    calls (outside the clock), so a full launch queue cannot make the host wait for the GPU."""
    fn()
    driver.synchronize()
    best = float("inf")
    for _ in range(rounds):
        total = 0.0
        done = 0
        while done < calls:
            k = min(sync_every or calls, calls - done)
            t = time.perf_counter()
            for _ in range(k):
                fn()
            total += time.perf_counter() - t
            driver.synchronize()
            done += k
        best = min(best, total / calls * 1e6)
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
        print(f"{name:24s} {per_call_us(fn):6.2f} us/call, "
              f"{per_call_us(fn, sync_every=32):6.2f} with a wait every 32 calls")
    # the bare launch of the fused kernel, as its plan prepared it (parameters as last set)
    prepared = next(iter(f._plans.values())).prepared[0]
    stream = driver.current_stream()[1]
    launch_args = list(prepared.objects)

    def bare():
        prepared.launch(stream)

    print(f"{'bare cuLaunchKernel':24s} {per_call_us(bare):6.2f} us/call, "
          f"{per_call_us(bare, sync_every=32):6.2f} with a wait every 32 calls")
    print("GPU time of one launch (events, queued):", driver.time_ms(bare, repeat=200) * 1e3, "us")
    # the same launch on other streams and through cuda.bindings: is the driver call the cost?
    from cuda.bindings import driver as cu

    print("default stream handle:", stream)
    lib = fastcall._driver()
    addrs = (ctypes.c_void_p * len(launch_args))(*[ctypes.addressof(p) for p in launch_args])
    gx = prepared.grid[0]
    variants = {"ctypes, prepared args, stream 0": lambda: lib.cuLaunchKernel(
                    prepared.function, gx, 1, 1, 256, 1, 1, 0, 0, addrs, None),
                "ctypes, prepared args, default": lambda: lib.cuLaunchKernel(
                    prepared.function, gx, 1, 1, 256, 1, 1, 0, stream, addrs, None)}
    ns = cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING)[1]
    variants["ctypes, prepared args, non-blocking stream"] = lambda: lib.cuLaunchKernel(
        prepared.function, gx, 1, 1, 256, 1, 1, 0, int(ns), addrs, None)
    fn = cu.CUfunction(prepared.function)
    variants["cuda.bindings, prepared args, default"] = lambda: cu.cuLaunchKernel(
        fn, gx, 1, 1, 256, 1, 1, 0, stream, ctypes.addressof(addrs), 0)
    for name, v in variants.items():
        print(f"{name:44s} {per_call_us(v):6.2f} us/call")
    try:
        import cupy as cp

        k = cp.RawKernel(r'extern "C" __global__ void nop(float* p) {}', "nop")
        buf = cp.empty(1, cp.float32)
        print(f"{'cupy RawKernel nop, one argument':44s} "
              f"{per_call_us(lambda: k((1,), (256,), (buf,))):6.2f} us/call")
        nop = gp.RawKernel(r'extern "C" __global__ void nop(float* p) {}', "nop")
        gbuf = gp.empty(1, np.float32)
        nop((1,), (256,), (gbuf,))
        print(f"{'gpunb RawKernel nop, one argument':44s} "
              f"{per_call_us(lambda: nop((1,), (256,), (gbuf,))):6.2f} us/call")
        function = driver.function_of(nop._kernel()) if hasattr(nop, "_kernel") else None
        if function is not None:
            one = [ctypes.c_void_p(gbuf.data.ptr)]
            print(f"{'ctypes nop, one argument':44s} "
                  f"{per_call_us(lambda: fastcall.launch(function, (1,), (256,), 0, stream, one)):6.2f} us/call")
    except ImportError:
        pass
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
