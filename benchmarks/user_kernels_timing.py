"""User kernels against CuPy's and gpunb's own (GPU; standalone: ``python benchmarks/user_kernels_timing.py``).

- ElementwiseKernel ``z = x * y + 2`` on 2**28 float32: fraction of the copy ceiling (a
  device-to-device copy moving the same bytes per element as the kernel: read 8, write 4,
  scaled from the copy's 8 bytes moved per element), against CuPy's ElementwiseKernel.
- ReductionKernel sum of squares over a 16384**2 float32, axis None, 0 and 1, against
  ``gpunb.sum(x * x)``'s reduction alone (``gpunb.sum`` of the same array).
- Host time per small call (1000 float32 elements, output allocated): gpunb's against CuPy's.
Each GPU time is the median over repeats of CUDA-event timings (warm-up first).
"""

import time

import numpy as np

import gpunb as gp
from gpunb.core.runtime import driver, memory
from event_timing import cupy_ms     # benchmarks/event_timing.py: run as a script, this folder is on sys.path

try:
    import cupy as cp
except ImportError:          # CuPy absent: gpunb's figures only
    cp = None


def host_us(fns, calls=20000, rounds=5, every=32):
    """Best-of-rounds microseconds per call of each ``(fn, sync)``, waiting for the GPU every
    ``every`` calls outside the clock (a full launch queue never makes the host wait); the
    functions alternate round by round so a drift of the machine reaches all alike (the
    method of benchmarks/host_calls.py)."""
    best = [float("inf")] * len(fns)
    for fn, sync in fns:
        for _ in range(200):
            fn()
        sync()
    for _ in range(rounds):
        for j, (fn, sync) in enumerate(fns):
            total, done = 0.0, 0
            while done < calls:
                t = time.perf_counter()
                for _ in range(every):
                    fn()
                total += time.perf_counter() - t
                sync()
                done += every
            best[j] = min(best[j], total / done * 1e6)
    return best


def main():
    N = 1 << 28
    rng = np.random.default_rng(0)
    xh = rng.standard_normal(N, dtype=np.float32)
    yh = rng.standard_normal(N, dtype=np.float32)
    x, y = gp.asarray(xh), gp.asarray(yh)
    src, dst = gp.empty(N, np.float32), gp.empty(N, np.float32)
    copy_ms = driver.time_ms(lambda: memory.copy_device(dst.data.ptr, src.data.ptr, 4 * N))
    copy_gbs = 2 * 4 * N / copy_ms / 1e6
    src = dst = None     # free the copy buffers
    print(f"copy ceiling: {copy_gbs:.0f} GB/s ({copy_ms:.3f} ms for {4 * N >> 20} MiB)")

    ek = gp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * y + 2", "fma2")
    z = ek(x, y)
    # one FMA (CUDA's default contraction, as CuPy's kernel): within a rounding of NumPy's
    ok = np.allclose(z[:1 << 20].get(), xh[:1 << 20] * yh[:1 << 20] + np.float32(2), rtol=1e-6, atol=1e-6)
    ms = driver.time_ms(lambda: ek(x, y))
    gbs = 3 * 4 * N / ms / 1e6
    print(f"ElementwiseKernel z = x*y + 2, 2^28 float32: gpunb {ms:.3f} ms, {gbs:.0f} GB/s, "
          f"{gbs / copy_gbs:.3f} of copy (correct: {ok})")
    if cp is not None:
        cx, cy = cp.asarray(xh), cp.asarray(yh)
        cek = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * y + 2", "fma2")
        cms = cupy_ms(lambda: cek(cx, cy))
        print(f"  CuPy {cms:.3f} ms, {3 * 4 * N / cms / 1e6:.0f} GB/s; gpunb/CuPy speed {cms / ms:.3f}")
        del cx, cy
    x = y = z = None

    m = 16384
    a = gp.asarray(rng.standard_normal((m, m), dtype=np.float32))
    rk = gp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "sumsq")
    ah = a.get()
    for axis in (None, 0, 1):
        r = rk(a, axis=axis)
        ref = np.sum(ah.astype(np.float64) ** 2, axis=axis)
        err = float(np.max(np.abs(r.get() - ref) / np.abs(ref)))
        ms_u = driver.time_ms(lambda: rk(a, axis=axis), repeat=15)
        ms_s = driver.time_ms(lambda: gp.sum(a, axis=axis), repeat=15)
        line = (f"ReductionKernel sum of squares 16384^2 axis={axis}: {ms_u:.3f} ms "
                f"({4 * m * m / ms_u / 1e6:.0f} GB/s), gpunb.sum {ms_s:.3f} ms; ratio "
                f"{ms_s / ms_u:.3f} (max rel err {err:.1e})")
        if cp is not None:
            ca = cp.asarray(ah)
            crk = cp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "sumsq")
            cms = cupy_ms(lambda: crk(ca, axis=axis), repeat=15)
            line += f"; CuPy {cms:.3f} ms"
            del ca
        print(line)
    a = None

    xs, ys = gp.asarray(xh[:1000]), gp.asarray(yh[:1000])
    ek(xs, ys)
    fast = any(type(k) is tuple and k and k[0] is ek for k in driver.context().prepared)
    fns = [(lambda: ek(xs, ys), gp.synchronize), (lambda: gp.multiply(xs, ys), gp.synchronize)]
    names = ["gpunb ElementwiseKernel", "gpunb.multiply"]
    if cp is not None:
        cxs, cys = cp.asarray(xh[:1000]), cp.asarray(yh[:1000])
        cek = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * y + 2", "fma2")
        sync = cp.cuda.Device().synchronize
        fns += [(lambda: cek(cxs, cys), sync), (lambda: cp.multiply(cxs, cys), sync)]
        names += ["CuPy ElementwiseKernel", "cupy.multiply"]
    us = host_us(fns)
    print(f"host time per small call (1000 float32; gpunb prepared launch used: {fast}): "
          + ", ".join(f"{n} {u:.2f} us" for n, u in zip(names, us)))


if __name__ == "__main__":
    main()
