"""What one ``cuLaunchKernel`` call costs the host in Python, apart from the driver's own work:
cuda.bindings' wrapper (gpunb's launch today) against ctypes calls of the same entry point and
of ``cuLaunchKernelEx`` (4 arguments: a ``CUlaunchConfig`` packed once with the parameters).

No GPU needed: the calls go to a stand-in ``libcuda.so.1`` built here with the C compiler
(its ``cuGetProcAddress`` hands cuda.bindings no-op entry points), so only the Python side of
each call is timed. The driver's own time per launch (~3-4 us on an H100 host) comes on top.

    python benchmarks/launch_call_cost.py [--cc gcc]

Runs itself again in a child process whose ``LD_LIBRARY_PATH`` finds the stand-in first.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

STAND_IN = r"""
#include <string.h>
typedef int CUresult;
static CUresult none(void) { return 0; }
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned smem, void* stream, void** params, void** extra) { return 0; }
CUresult cuLaunchKernelEx(const void* config, void* f, void** params, void** extra) { return 0; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return 0; }
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, unsigned long long flags,
                             int* status) {
    if (status) *status = 0;
    if (!strcmp(symbol, "cuLaunchKernel")) *pfn = (void*)cuLaunchKernel;
    else if (!strcmp(symbol, "cuLaunchKernelEx")) *pfn = (void*)cuLaunchKernelEx;
    else if (!strcmp(symbol, "cuDriverGetVersion")) *pfn = (void*)cuDriverGetVersion;
    else if (!strcmp(symbol, "cuGetProcAddress")) *pfn = (void*)cuGetProcAddress_v2;
    else *pfn = (void*)none;
    return 0;
}
CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, unsigned long long flags) {
    return cuGetProcAddress_v2(symbol, pfn, version, flags, 0);
}
"""

CHILD = r"""
import ctypes, struct, timeit
from cuda.bindings import driver

vp = ctypes.c_void_p
params = (vp * 4)()
pa = ctypes.addressof(params)
f, s = driver.CUfunction(0x1234), driver.CUstream(0x5678)
lib = ctypes.CDLL("libcuda.so.1")
k11 = lib.cuLaunchKernel
k11.argtypes = [vp] + [ctypes.c_uint] * 7 + [vp, vp, vp]
k11.restype = ctypes.c_int
kex = lib.cuLaunchKernelEx
kex.argtypes = [vp] * 4
kex.restype = ctypes.c_int
# CUlaunchConfig (grid, block, shared bytes, stream, attrs, numAttrs) and 4 pointer
# parameters, packed by one struct call as a generated launch would
layout = struct.Struct("@7IPPI4x4P")
buf = ctypes.create_string_buffer(layout.size)
ca = ctypes.addressof(buf)
# the same entry point through a prototype that keeps the GIL (ctypes.PYFUNCTYPE), its
# arguments prebuilt objects (the config, function and parameter addresses made once)
kex_gil = ctypes.PYFUNCTYPE(ctypes.c_int, vp, vp, vp, vp)(ctypes.cast(kex, vp).value)
cfg, fn, pr = vp(ca), vp(0x1234), vp(pa)
g = dict(globals())
rows = {
    "cuda.bindings cuLaunchKernel": "driver.cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, s, pa, 0)",
    "ctypes cuLaunchKernel (11 args)": "k11(0x1234, 4, 1, 1, 256, 1, 1, 0, 0x5678, pa, None)",
    "ctypes cuLaunchKernelEx (4 args)": "kex(ca, 0x1234, pa, None)",
    "ctypes cuLaunchKernelEx, prebuilt args": "kex(cfg, fn, pr, None)",
    "ctypes cuLaunchKernelEx, GIL kept": "kex_gil(cfg, fn, pr, None)",
    "  + packing the config": "layout.pack_into(buf, 0, 4, 1, 1, 256, 1, 1, 0, 0x5678, 0, 0, 1, 2, 3, 4)",
}
for name, stmt in rows.items():
    best = min(timeit.repeat(stmt, globals=g, number=200000, repeat=7)) / 200000 * 1e6
    print(f"{name:36s} {best:6.3f} us")
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    args = ap.parse_args(argv)
    if shutil.which(args.cc) is None:
        print(f"needs a C compiler ({args.cc} not found) to build the stand-in libcuda.so.1")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "stand_in.c")
        src.write_text(STAND_IN)
        subprocess.run([args.cc, "-O2", "-shared", "-fPIC", "-o", str(Path(tmp, "libcuda.so.1")),
                        str(src)], check=True)
        env = dict(os.environ, LD_LIBRARY_PATH=tmp + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
        return subprocess.run([sys.executable, "-c", CHILD], env=env).returncode


if __name__ == "__main__":
    raise SystemExit(main())
