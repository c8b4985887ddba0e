"""``python -m gpunb demo``: a short kernel demo with timings, or, without a GPU, a compile demo.

The demo kernels are in the standard set that ``gpunb cache warm`` precompiles.
"""

from __future__ import annotations

import time

from .core.kernels.standard import DEMO_SOURCE

DEFAULT_ARCH = "sm_90"


def laplace_reference(x):
    out = x.copy()
    out[1:-1, 1:-1] = 0.25 * (x[1:-1, :-2] + x[1:-1, 2:] + x[:-2, 1:-1] + x[2:, 1:-1])
    return out


def run(arch: str | None = None, out=print) -> int:
    from . import report
    from .core.build.cache import kernel_cache
    from .core.errors import GPUUnavailableError
    from .core.kernels.raw.module import RawModule
    from .core.runtime import driver

    out(f"gpunb demo -- kernel cache at {kernel_cache().directory}")
    try:
        info = driver.device_info()
    except GPUUnavailableError as e:
        arch = arch or DEFAULT_ARCH
        out(f"No GPU here: {e.reason}.")
        out(f"Compiling the demo kernels for {arch} instead (compiling needs no GPU).")
        t = time.perf_counter()
        mod = RawModule(code=DEMO_SOURCE).compile(arch)
        ms = (time.perf_counter() - t) * 1e3
        entry = mod.entry(arch)
        out(f"  compiled {', '.join(entry.meta['kernels'])} for {arch} in {ms:.1f} ms "
            f"({len(entry.cubin)} bytes of cubin; NVRTC time "
            f"{entry.meta.get('compile_seconds', 0) * 1e3:.1f} ms when first built)")
        out("")
        out(report.status_text(kernel_cache().stats()))
        return 0
    return _gpu_demo(info, arch, out)


def _gpu_demo(info, arch, out) -> int:
    import numpy as np

    from . import report
    from .core.build.cache import kernel_cache
    from ._creation.from_data import asarray, empty
    from .core.kernels.raw.module import RawModule
    from .core.runtime import driver

    out(f"GPU: {info.name} ({info.arch}, {info.multiprocessor_count} SMs, "
        f"{info.total_memory / 2**30:.0f} GiB), driver for CUDA {info.driver_version[0]}.{info.driver_version[1]}")
    t = time.perf_counter()
    mod = RawModule(code=DEMO_SOURCE).compile(arch)
    out(f"compile or cache load: {(time.perf_counter() - t) * 1e3:.1f} ms")
    add = mod.get_function("vector_add")
    step = mod.get_function("laplace_step")
    rng = np.random.default_rng(0)

    n = 1 << 26
    a, b = (rng.standard_normal(n, dtype=np.float32) for _ in range(2))
    da, db, dc = asarray(a), asarray(b), empty(n, np.float32)
    blocks = info.multiprocessor_count * 8
    ms = driver.time_ms(lambda: add((blocks,), (256,), (da, db, dc, n)))
    ok = np.array_equal(dc.get(), a + b)
    out(f"vector_add, {n:,} float32: {ms:.3f} ms, {3 * 4 * n / ms / 1e6:.0f} GB/s; "
        f"{'matches' if ok else 'DIFFERS FROM'} NumPy")

    rows, cols = 4096, 4096
    x = rng.random((rows, cols), dtype=np.float32)
    dx, dy = asarray(x), empty((rows, cols), np.float32)
    grid = ((cols + 31) // 32, (rows + 7) // 8)
    ms2 = driver.time_ms(lambda: step(grid, (32, 8), (dx, dy, rows, cols)))
    ok2 = np.allclose(dy.get(), laplace_reference(x), rtol=1e-6, atol=1e-6)
    out(f"laplace_step, {rows}x{cols} float32: {ms2:.3f} ms, {2 * 4 * rows * cols / ms2 / 1e6:.0f} GB/s; "
        f"{'matches' if ok2 else 'DIFFERS FROM'} NumPy")
    out("")
    out(report.status_text(kernel_cache().stats()))
    return 0 if ok and ok2 else 1
