"""Dask on one GPU with gpunb chunks against one gpunb array (GPU; standalone:
``python benchmarks/dask_timing.py [--json PATH] [--chunk-log2 K] [--nchunks N] [--null-gpu]``,
default K = 24, N = 64; GPU memory holds four copies of the 2**K * N float32: keep it under
20 GiB; ``--null-gpu``: no GPU, the driver's calls made no-ops (``host_null_gpu.py``), so
every time is host time).

The issue's anchor: 64 chunks of 2**24 float32 (4 GiB), a ``sum`` and a fused elementwise
expression, at >= 0.7 of the single-array gpunb speed (speed ratio = single-array time / Dask
time). Wall times (synchronize + perf_counter: Dask's time is host scheduling plus the GPU's
work), median of ``REPEATS`` after a warm-up. The elementwise expression is ``persist``ed
(64 chunks stay on the GPU: ``compute`` would add one 4 GiB concatenation). Schedulers: the
synchronous one and the threaded one (Dask's default for arrays). The scheduler's overhead
per task: the wall time of a graph of trivial tasks (tiny chunks, host-only work) over its
task count, and the Dask time over the single-array time as an excess per task. The rows
``*_inline`` build the array with ``from_array(..., inline_array=True)`` (no getter tasks).
The ``gpunb`` rows use :func:`gpunb.dask.get` (tasks in order in the calling thread, no
waiting on the GPU); ``gpunb_nofuse`` also turns Dask's low-level fusion off
(``optimization.fuse.active``), which only saves its own scheduler's per-task cost and costs
graph-building time.

H100, dask 2026.8, K = 24 (2026-11-25): one 2**30 float32 array: sum 1.48 ms, fused 2.88 ms;
Dask, synchronous scheduler: sum 28.7 ms (ratio 0.05), fused 21.6 ms (0.13); threaded:
48.4 ms (0.03), 51.1 ms (0.06). Dask's own cost per trivial task: 124 us (synchronous),
153 us (threaded). A 64 MiB chunk is 23 us of a sum on the H100: with two or more tasks per
chunk at ~120 us each, the 0.7 goal needs chunks of about 2**28 elements or more.

H100, 2026-11-28 (``gpunb.dask.get`` without Dask's low-level optimisation, two runs
alternating with the code before it): sum 5.98-6.97 ms (ratio 0.21-0.24; before 8.9-11.4 ms,
0.13-0.16), fused 3.86-4.03 ms (0.72-0.75; before 6.5-8.0 ms, 0.37-0.44).

H100, 2026-11-28, session 18 (tasks converted, compiled and ordered once per collection; four
processes alternating with session 17's code, ``.prof``'s A/B): sum 3.23-4.86 ms (ratio
0.29-0.44, median 3.36 ms; before 4.80-6.57 ms, 0.22-0.30), fused 0.78-0.81 (before
0.72-0.73). ``dask_preamble_ms_sum``: Dask's own ``compute`` before any scheduler runs,
0.50-0.72 ms; the chunk sums' own GPU time 1.77-1.81 ms against 1.42-1.46 ms for the single
sum, so even with free tasks the ratio is at most ``ratio_ceiling_sum_gpu`` = 0.57-0.62 on
this machine. 16 chunks of 2**26: sum 0.58-0.59, fused 0.83-0.84.
"""

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPEATS = 7


def _wall(fn, sync):
    fn()
    sync()
    times = []
    for _ in range(REPEATS):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv):
    null = "--null-gpu" in argv
    if null:        # host time only, on any machine: the driver's calls are no-ops
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import host_null_gpu

        host_null_gpu.install()
    import dask
    import dask.array as da

    import gpunb as gp
    import gpunb.dask
    from gpunb.core.runtime import driver

    gpunb.dask.register()
    chunk = 2 ** (int(argv[argv.index("--chunk-log2") + 1]) if "--chunk-log2" in argv else 24)
    nchunks = int(argv[argv.index("--nchunks") + 1]) if "--nchunks" in argv else 64
    sync = driver.synchronize
    n = chunk * nchunks
    if null:
        x = gp.ndarray((n,), np.float32)
    else:
        x = gp.random.default_rng(0).standard_normal(n, dtype=np.float32)
    d = da.from_array(x, chunks=chunk)
    assert d.numblocks == (nchunks,)

    @gp.fuse
    def expr(v):
        return gp.exp(-v * v) * 0.5 + gp.sin(v) * v

    if not null:    # correctness first (one chunk, and the totals)
        h0 = x[:chunk].get()
        np.testing.assert_allclose(expr(x[:chunk]).get(), np.exp(-h0 * h0) * 0.5 + np.sin(h0) * h0,
                                   rtol=2e-5, atol=2e-6)
        for scheduler in ("sync", gpunb.dask.get):
            np.testing.assert_allclose(float(d.sum().compute(scheduler=scheduler)), float(x.sum()),
                                       rtol=1e-4)

    res = {"chunk": chunk, "nchunks": nchunks, "dtype": "float32", "repeats": REPEATS,
           "null_gpu": null}
    res["single_sum_ms"] = 1e3 * _wall(lambda: float(x.sum()), sync)
    res["single_fused_ms"] = 1e3 * _wall(lambda: expr(x), sync)
    runs = (("sync", "sync", True), ("threads", "threads", True), ("gpunb", gpunb.dask.get, True),
            ("gpunb_nofuse", gpunb.dask.get, False))
    if null:        # the null driver's context is the calling thread's only
        runs = tuple(r for r in runs if r[0] != "threads")
    for sched, scheduler, fuse in runs:
        with dask.config.set({"optimization.fuse.active": fuse}, scheduler=scheduler):
            s = d.sum()
            res[f"dask_{sched}_sum_ms"] = 1e3 * _wall(lambda: float(s.compute()), sync)
            e = d.map_blocks(expr)
            res[f"dask_{sched}_fused_ms"] = 1e3 * _wall(lambda: dask.persist(e), sync)
            ntasks_sum = len(dict(s.__dask_graph__())) - 1    # all but the array (getters too)
            for kind, single, tasks in (("sum", "single_sum_ms", ntasks_sum),
                                        ("fused", "single_fused_ms", 2 * nchunks)):
                t = res[f"dask_{sched}_{kind}_ms"]
                res[f"ratio_{sched}_{kind}"] = res[single] / t
                res[f"excess_us_per_task_{sched}_{kind}"] = 1e3 * (t - res[single]) / tasks
            # trivial tasks: 4096 chunks of one element, a host-only function per chunk
            tiny = da.ones(4096, chunks=1).map_blocks(lambda b: b)
            ntiny = len(dict(tiny.__dask_graph__()))
            res[f"overhead_us_per_task_{sched}"] = 1e6 * _wall(lambda: dask.persist(tiny),
                                                               lambda: None) / ntiny
    # Dask's own time in a compute before any scheduler runs (collections to an expression,
    # its optimisation, the finalising task): no task can start earlier, so the sum's ratio
    # is at most single / (single + this) even with free tasks and the single array's GPU speed
    entered = []

    def entry(dsk, keys, **kwargs):
        entered.append(time.perf_counter())
        return gpunb.dask.get(dsk, keys, **kwargs)

    s = d.sum()
    float(s.compute(scheduler=entry))
    pre = []
    for _ in range(4 * REPEATS):
        sync()
        t = time.perf_counter()
        float(s.compute(scheduler=entry))
        pre.append(entered[-1] - t)
    res["dask_preamble_ms_sum"] = 1e3 * statistics.median(pre)
    res["ratio_ceiling_sum"] = res["single_sum_ms"] / (res["single_sum_ms"] + res["dask_preamble_ms_sum"])
    if not null:    # the GPU's own time for the chunks' sums, back to back (events)
        chunks = [x[i * chunk:(i + 1) * chunk] for i in range(nchunks)]
        gpu = []
        for _ in range(REPEATS + 1):
            e0, e1 = gp.cuda.Event(), gp.cuda.Event()
            e0.record()
            for c in chunks:
                c.sum(keepdims=True)
            e1.record()
            e1.synchronize()
            gpu.append(gp.cuda.get_elapsed_time(e0, e1))
        res["gpu_ms_chunk_sums"] = statistics.median(gpu[1:])
        res["ratio_ceiling_sum_gpu"] = res["single_sum_ms"] / (res["dask_preamble_ms_sum"]
                                                                + res["gpu_ms_chunk_sums"])
    di = da.from_array(x, chunks=chunk, inline_array=True)
    with dask.config.set(scheduler="sync"):
        si, ei = di.sum(), di.map_blocks(expr)
        res["dask_sync_sum_ms_inline"] = 1e3 * _wall(lambda: float(si.compute()), sync)
        res["dask_sync_fused_ms_inline"] = 1e3 * _wall(lambda: dask.persist(ei), sync)
        res["ratio_sync_sum_inline"] = res["single_sum_ms"] / res["dask_sync_sum_ms_inline"]
        res["ratio_sync_fused_inline"] = res["single_fused_ms"] / res["dask_sync_fused_ms_inline"]
    out = json.dumps(res, indent=1)
    print(out)
    if "--json" in argv:
        with open(argv[argv.index("--json") + 1], "w") as f:
            f.write(out)


if __name__ == "__main__":
    main(sys.argv[1:])
