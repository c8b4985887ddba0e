"""Kernel cache at scale: one module of N kernels compiled through ``compile_cached``.

Reports, per N, NVRTC's time and gpunb's own work around it (the cache key, reading the
cubin and the source for every kernel's parameters, the envelope, the disk write), then a
disk hit (a fresh cache object on the same directory) and a memory hit. CPU only: NVRTC
compiles for ``sm_90``; no GPU is needed.

    python benchmarks/cache_scale.py                 # 500 1000 2000 10000
    python benchmarks/cache_scale.py 500 1000 --json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpunb.core.build.cache import KernelCache  # noqa: E402
from gpunb.core.build.cached import compile_cached  # noqa: E402


def module(n: int, salt: str) -> str:
    # every kernel distinct; a mix of extern "C" kernels and templates with launch bounds
    parts = [f"// {salt}\ntypedef long long int64_t;\n"]
    for i in range(n):
        if i % 4 == 3:
            parts.append(f"template <typename T>\n__global__ void __launch_bounds__(256) t{i}"
                         f"(T* x, int64_t n) {{ if (threadIdx.x < n) x[threadIdx.x] += T({i}); }}\n"
                         f"template __global__ void t{i}<float>(float*, int64_t);\n")
        else:
            parts.append(f'extern "C" __global__ void k{i}(float* x, const float* y, int n) '
                         f"{{ /* kernel {i} */ if (threadIdx.x < n) x[threadIdx.x] = y[threadIdx.x] * {i}.0f; }}\n")
    return "".join(parts)


def measure(n: int, arch: str) -> dict:
    src = module(n, f"scale {n} {time.time_ns()}")
    with tempfile.TemporaryDirectory(prefix="gpunb-scale-") as d:
        cache = KernelCache(Path(d) / "kernels")
        t = time.perf_counter()
        entry = compile_cached(src, (), arch, cache=cache)
        total = time.perf_counter() - t
        nvrtc = float(entry.meta["compile_seconds"])
        t = time.perf_counter()
        again = compile_cached(src, (), arch, cache=KernelCache(Path(d) / "kernels"))
        disk = time.perf_counter() - t
        assert again.cubin == entry.cubin
        t = time.perf_counter()
        compile_cached(src, (), arch, cache=cache)
        memory = time.perf_counter() - t
    own = total - nvrtc
    return dict(kernels=n, kernels_in_cubin=len(entry.meta["kernels"]), nvrtc_s=round(nvrtc, 3),
                gpunb_s=round(own, 3), gpunb_over_nvrtc=round(own / nvrtc, 3),
                disk_hit_s=round(disk, 4), memory_hit_s=round(memory, 5),
                source_bytes=len(src), cubin_bytes=len(entry.cubin))


def hits(arch: str, repeats: int = 2000) -> dict:
    """Host time of one ``compile_cached`` call that hits: in memory, and on disk (a fresh
    cache object each time, as a new process would have), for a small kernel and for one
    that includes a header from an ``-I`` directory. Medians, in microseconds."""
    import statistics

    out = {}
    with tempfile.TemporaryDirectory(prefix="gpunb-hits-") as d:
        inc = Path(d) / "include"
        inc.mkdir()
        (inc / "scale.h").write_text("#define SCALE 2.0f\n")
        time.sleep(2.1)    # a header not edited in the last 2 s (one just written is re-read)
        cases = {
            "small": ('extern "C" __global__ void hit(float* x) { x[threadIdx.x] *= 2.0f; }\n', ()),
            "header": ('#include "scale.h"\nextern "C" __global__ void hit_h(float* x) '
                       '{ x[threadIdx.x] *= SCALE; }\n', (f"-I{inc}",)),
        }
        for name, (src, opts) in cases.items():
            cache = KernelCache(Path(d) / "kernels")
            compile_cached(src, opts, arch, cache=cache)
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                compile_cached(src, opts, arch, cache=cache)
                times.append(time.perf_counter() - t)
            out[f"{name}_memory_hit_us"] = round(1e6 * statistics.median(times), 2)
            times = []
            for _ in range(max(1, repeats // 10)):
                fresh = KernelCache(Path(d) / "kernels")
                t = time.perf_counter()
                compile_cached(src, opts, arch, cache=fresh)
                times.append(time.perf_counter() - t)
            out[f"{name}_disk_hit_us"] = round(1e6 * statistics.median(times), 1)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sizes", nargs="*", type=int, default=[500, 1000, 2000, 10000])
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--json", action="store_true")
    p.add_argument("--hits", action="store_true", help="also time memory and disk hits")
    args = p.parse_args(argv)
    rows = []
    if args.hits:
        h = hits(args.arch)
        rows.append(h)
        if not args.json:
            print("hits (median host time per compile_cached call, us): "
                  + ", ".join(f"{k} {v}" for k, v in h.items()), flush=True)
    for n in args.sizes:
        r = measure(n, args.arch)
        rows.append(r)
        if not args.json:
            print(f"{n:6d} kernels: NVRTC {r['nvrtc_s']:8.3f} s  gpunb {r['gpunb_s']:8.3f} s "
                  f"({100 * r['gpunb_over_nvrtc']:.1f}% of NVRTC)  disk hit {r['disk_hit_s']:.4f} s  "
                  f"memory hit {1e3 * r['memory_hit_s']:.3f} ms", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
