"""Radix sorts against CuPy and PyTorch (GPU; standalone: ``python benchmarks/sort_timing.py``).

2**26 elements: ``sort`` float32, ``sort`` int64 (keys in +-2**62, and over the full range),
``argsort`` float32 and full-range int64, and a (4096, 16384) float32 ``sort(axis=-1)``;
each GPU time is the median over repeats of CUDA-event timings (warm-up first), in ms, with
gpunb's ratio to the best other. Then the host time per small call (``sort`` of 1000
float32; calls queued back to back, wall time per call).
``--warm [N]`` first compiles every sort kernel (all dtypes, keys and int64 pairs) in N
processes into the kernel cache and prints how long that took.
"""

import os
import sys
import time

import numpy as np

N = 1 << 26


def _variants():
    from gpunb.core.dtypes import SUPPORTED
    from gpunb.core.kernels.sort import codegen as cg

    ks = []
    for d in SUPPORTED:
        ks += [cg.SortKernel(d), cg.SortKernel(d, "int64"), cg.SortKernel(d, "int32")]
    ks += [cg.SortKernel("float32", None, True), cg.SortKernel("int64", None, True)]
    ks += [cg.SortKernel(d, rows=True) for d in SUPPORTED if d.itemsize <= 4 and d.kind != "c"]
    return ks


def _compile_one(i):
    from gpunb.core.build.cached import compile_cached
    from gpunb.core.kernels.sort import codegen as cg
    from gpunb.core.runtime import driver

    k = _variants()[i]
    t = time.perf_counter()
    try:
        compile_cached(cg.render(k), cg.nvrtc_options(k), driver.current_arch(), display_name=k.label)
    except Exception as e:      # report, keep warming the others
        print(f"FAILED {k.label}: {str(e)[:2000]}", flush=True)
    return k.label, time.perf_counter() - t


def warm(processes=None):
    from concurrent.futures import ProcessPoolExecutor

    n = len(_variants())
    t = time.perf_counter()
    with ProcessPoolExecutor(processes or os.cpu_count()) as ex:
        done = list(ex.map(_compile_one, range(n)))
    print(f"warmed {n} sort kernels in {time.perf_counter() - t:.1f} s "
          f"(slowest {max(s for _, s in done):.1f} s)")


def _host_us(fn, calls=2000):
    for _ in range(50):
        fn()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls * 1e6


def main():
    import gpunb as gp
    from gpunb.core.runtime import driver
    from event_timing import cupy_ms, gp_ms, torch_ms, peers    # this folder, on sys.path as a script

    cp, torch = peers()

    rng = np.random.default_rng(0)
    fh = rng.standard_normal(N).astype(np.float32)
    ih = rng.integers(-(1 << 62), 1 << 62, N, dtype=np.int64)
    fullh = rng.integers(-(1 << 63), (1 << 63) - 1, N, dtype=np.int64, endpoint=True)
    f, i, full = gp.asarray(fh), gp.asarray(ih), gp.asarray(fullh)
    f2 = f.reshape(4096, N // 4096)
    small_h = fh[:1000].copy()
    small = gp.asarray(small_h)
    # correctness first (reported, so that one wrong result still leaves the other timings)
    for what, got, want in [("sort float32", lambda: gp.sort(f).get(), lambda: np.sort(fh)),
                            ("sort int64", lambda: gp.sort(i).get(), lambda: np.sort(ih)),
                            ("sort int64 full range", lambda: gp.sort(full).get(), lambda: np.sort(fullh)),
                            ("argsort int64 full range", lambda: gp.argsort(full).get(),
                             lambda: np.argsort(fullh, kind="stable")),
                            ("argsort float32", lambda: gp.argsort(f).get(),
                             lambda: np.argsort(fh, kind="stable")),
                            ("sort 2-D", lambda: gp.sort(f2).get(),
                             lambda: np.sort(fh.reshape(4096, -1), axis=-1))]:
        ok = np.array_equal(got(), want())
        print(f"{what}: {'equal to NumPy' if ok else 'DIFFERS FROM NUMPY'}")
    gp.synchronize()
    rows = {
        "copy float32 (ceiling)": [gp_ms(lambda: f.copy())],
        "sort float32": [gp_ms(lambda: gp.sort(f))],
        "sort int64": [gp_ms(lambda: gp.sort(i))],
        "sort int64 full range": [gp_ms(lambda: gp.sort(full))],
        "argsort float32": [gp_ms(lambda: gp.argsort(f))],
        "argsort int64 full range": [gp_ms(lambda: gp.argsort(full))],
        "sort (4096, 16384) float32 axis=-1": [gp_ms(lambda: gp.sort(f2, axis=-1), repeat=10)],
    }
    host = {"sort 1000 float32, us/call": [_host_us(lambda: gp.sort(small))]}
    gp.synchronize()
    if cp is not None:
        cf, ci, cfull = cp.asarray(fh), cp.asarray(ih), cp.asarray(fullh)
        cf2 = cf.reshape(4096, -1)
        csmall = cp.asarray(small_h)
        t = cupy_ms
        rows["copy float32 (ceiling)"].append(t(lambda: cf.copy()))
        rows["sort float32"].append(t(lambda: cp.sort(cf)))
        rows["sort int64"].append(t(lambda: cp.sort(ci)))
        rows["sort int64 full range"].append(t(lambda: cp.sort(cfull)))
        rows["argsort float32"].append(t(lambda: cp.argsort(cf)))
        rows["argsort int64 full range"].append(t(lambda: cp.argsort(cfull)))
        rows["sort (4096, 16384) float32 axis=-1"].append(t(lambda: cp.sort(cf2, axis=-1), repeat=10))
        host["sort 1000 float32, us/call"].append(_host_us(lambda: cp.sort(csmall)))
        cp.cuda.Device().synchronize()
    if torch is not None:
        tf, ti, tfull = (torch.from_numpy(a).cuda() for a in (fh, ih, fullh))
        tf2 = tf.reshape(4096, -1)
        tsmall = torch.from_numpy(small_h).cuda()
        t = torch_ms
        rows["copy float32 (ceiling)"].append(t(lambda: tf.clone()))
        rows["sort float32"].append(t(lambda: torch.sort(tf)))
        rows["sort int64"].append(t(lambda: torch.sort(ti)))
        rows["sort int64 full range"].append(t(lambda: torch.sort(tfull)))
        rows["argsort float32"].append(t(lambda: torch.argsort(tf, stable=True)))
        rows["argsort int64 full range"].append(t(lambda: torch.argsort(tfull, stable=True)))
        rows["sort (4096, 16384) float32 axis=-1"].append(t(lambda: torch.sort(tf2, dim=-1), repeat=10))
        host["sort 1000 float32, us/call"].append(_host_us(lambda: torch.sort(tsmall)))
        torch.cuda.synchronize()
    names = ["gpunb"] + (["cupy"] if cp is not None else []) + (["torch"] if torch is not None else [])
    print(f"2**26 elements, ms (device {driver.device_info().name})")
    print(f"| call | {' | '.join(names)} | gpunb / best other |")
    print("|---|" + "---|" * (len(names) + 1))
    for name, ts in list(rows.items()) + list(host.items()):
        best = min(ts[1:]) if len(ts) > 1 else float("nan")
        print(f"| {name} | {' | '.join(f'{t:.3f}' for t in ts)} | {ts[0] / best:.2f} |")


if __name__ == "__main__":
    if "--warm" in sys.argv:
        rest = sys.argv[sys.argv.index("--warm") + 1:]
        warm(int(rest[0]) if rest else None)
    else:
        main()
