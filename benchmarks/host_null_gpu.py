"""gpunb's own host work per call, measured without a GPU: the driver's launch, allocation
and module-load calls are replaced by no-ops (everything above them runs for real: argument
handling, plans, the kernel cache, the memory pool's recycling), so a call's time here is
what gpunb's Python costs on top of the driver. For tuning host time on the CPU machine;
the device's ``host_calls.py`` gives the real figures against CuPy.

    python benchmarks/host_null_gpu.py [--set breadth|core] [--profile NAME] [--calls N]

Reads that a result's shape depends on (``nonzero``'s count) see zeros here.
"""

from __future__ import annotations

import argparse
import ctypes
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def install() -> None:
    """Replace the driver with no-ops (a fake H100: sm_90, 132 SMs)."""
    from gpunb.core.runtime import driver, fastcall, memory

    class Fake:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    addresses = itertools.count(1 << 40, 1 << 20)
    stream = Fake(handle=0, sync=lambda: None, record=lambda *a, **k: None)
    dev = Fake(device_id=0, set_current=lambda: None, sync=lambda: None)
    info = driver.DeviceInfo(0, "null GPU", (9, 0), 132, 80 << 30, (13, 0))
    ctx = driver.DeviceContext(dev, info, stream, 0)
    driver._driver.ready, driver._driver.version = True, (13, 0)
    driver._contexts[0] = ctx
    driver.active = driver._current.ctx = driver._current.core = ctx
    driver._activate = lambda ordinal=None: ctx
    occupancy = Fake(max_active_blocks_per_multiprocessor=lambda threads, smem: 2048 // threads)
    kernels = {}
    driver.load_kernel = lambda key, cubin, symbol: kernels.setdefault(
        (key, symbol), Fake(handle=len(kernels) + 1, occupancy=occupancy, attributes=None))
    driver.function_of = lambda kernel: int(kernel.handle)
    handles = itertools.count(1 << 20)
    driver.load_functions = lambda key, cubin, symbols, threads: (
        {s: next(handles) for s in symbols}, {s: 2048 // threads for s in symbols})
    driver.synchronize = lambda: None
    driver.launch = lambda *args, **kwargs: None        # cuda.core's launch (raw kernels' checked path)

    class Lib:
        @staticmethod
        def cuMemFreeAsync(*args):
            return 0

        @staticmethod
        def cuMemcpyDtoDAsync_v2(*args):
            return 0

    fastcall._lib = Lib()
    fastcall._cu_launch = lambda *args: (0,)
    fastcall._CUfunction = fastcall._CUstream = lambda handle: handle
    fastcall.allocate = lambda pool, size, s: next(addresses)
    pool = memory.get_default_memory_pool()
    pool._handle = 1
    memory.copy_to_host = lambda host, ptr, stream=None: host.fill(0) if host.size else None
    import numpy as np

    from gpunb.core.ndarray import ndarray

    ndarray.get = lambda self, *a, **k: np.zeros(self.shape, self.dtype)   # reads see zeros
    memory.copy_to_device = lambda ptr, host, stream=None: None
    memory.copy_device = lambda dst, src, n, stream=None: None
    memory.fill_bytes = lambda ptr, value, n, stream=None: None
    from gpunb.core.runtime import scratch

    scratch._zero = lambda ptr, stream: None       # a split reduction's tickets
    from gpunb.core.kernels.indexing import codegen as icg
    from gpunb.core.kernels.indexing import run as irun

    driver.index_flag = (ctypes.c_int64 * icg.ERROR_WORDS)()     # the mapped error word
    irun._err_dev = ctypes.addressof(driver.index_flag)
    from gpunb.core.kernels.dense import run as drun

    drun._optin[0] = 227 << 10                                    # an H100's opt-in shared memory
    words = (ctypes.c_int32 * drun._SLOTS)()
    drun._words = (ctypes.addressof(words), ctypes.addressof(words))
    drun.libcuda = Fake(allow_dynamic_shared=lambda f, n: None, check=lambda err, what: None,
                        lib=lambda: Fake(cuStreamSynchronize=lambda h: 0),
                        MAX_SHARED_MEMORY_PER_BLOCK_OPTIN=97)
    drun._keep = words


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", choices=("core", "breadth", "math"), default="breadth")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--profile", default=None, help="cProfile this case and print its top entries")
    ap.add_argument("--only", default=None, help="case names separated by semicolons")
    args = ap.parse_args(argv)
    install()
    import numpy as np

    import gpunb as gp
    from gpunb.core.ndarray import ndarray
    import host_calls

    gp.asarray = lambda h, dtype=None: ndarray(np.shape(h), dtype or np.asarray(h).dtype)
    make = host_calls.SETS[args.set]
    cases = make(gp, np)
    only = set(args.only.split(";")) if args.only else None
    for name, fn in cases.items():
        if only and name not in only:
            continue
        try:
            for _ in range(3):
                fn()
        except Exception as e:
            print(f"{name:24s} {type(e).__name__}: {str(e)[:80]}")
            continue
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(args.calls):
                fn()
            best = min(best, (time.perf_counter() - t) / args.calls * 1e6)
        print(f"{name:24s} {best:8.2f} us")
    if args.profile:
        import cProfile
        import pstats

        fn = cases[args.profile]
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.calls):
            fn()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
