"""Gather and scatter against CuPy and PyTorch (GPU; standalone:
``python benchmarks/indexing_timing.py``).

2**26 float32 values, 2**26 random int64 indices (scatter: a random permutation, so no
index repeats): ``x[idx]``, ``take``, ``x[idx] = v``, ``add.at`` (CuPy ``cupyx.scatter_add``,
torch ``index_add_``), ``x[mask]`` and ``x[mask] = 0`` (half true), and host time per call
of a small gather (1000 elements). Each GPU time is the median over repeats of CUDA-event
timings (warm-up first), in milliseconds; the table prints each library's time and gpunb's
ratio to the best other.
"""

import time

import numpy as np

import gpunb as gp
from gpunb.core.runtime import driver
from event_timing import cupy_ms, gp_ms, torch_ms     # benchmarks/event_timing.py: run as a script, this folder is on sys.path

try:
    import cupy as cp
    import cupyx
except ImportError:
    cp = None
try:
    import torch
except ImportError:
    torch = None

N = 1 << 26


def host_us(fn, sync, n=3000):
    for _ in range(100):
        fn()
    sync()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    sync()
    return (time.perf_counter() - t) / n * 1e6


def main():
    rng = np.random.default_rng(0)
    xh = rng.standard_normal(N).astype(np.float32)
    ih = rng.integers(0, N, N).astype(np.int64)
    ph = rng.permutation(N).astype(np.int64)
    mh = rng.random(N) < 0.5
    x, i, p, m = gp.asarray(xh), gp.asarray(ih), gp.asarray(ph), gp.asarray(mh)
    v = gp.asarray(rng.standard_normal(N).astype(np.float32))
    y = x.copy()
    rows = {}
    rows["x[idx] gather"] = [gp_ms(lambda: x[i])]
    rows["take(x, idx)"] = [gp_ms(lambda: gp.take(x, i))]
    rows["x[perm] = v scatter"] = [gp_ms(lambda: y.__setitem__(p, v))]
    rows["add.at(x, idx, v)"] = [gp_ms(lambda: gp.add.at(y, i, v))]
    try:
        rows["x[mask] (half true)"] = [gp_ms(lambda: x[m])]
    except Exception as e:             # the compaction not there
        rows["x[mask] (half true)"] = [float("nan")]
        print("x[mask]:", type(e).__name__, e)
    rows["x[mask] = 0"] = [gp_ms(lambda: y.__setitem__(m, 0.0))]
    small_x, small_i = gp.asarray(xh[:1000]), gp.asarray(ih[:1000] % 1000)
    host = {"gpunb": host_us(lambda: small_x[small_i], gp.synchronize)}
    np.testing.assert_array_equal(x[i].get(), xh[ih])
    if cp is not None:
        cx, ci, cpm, cm = cp.asarray(xh), cp.asarray(ih), cp.asarray(ph), cp.asarray(mh)
        cv, cy = cp.asarray(v.get()), cp.asarray(xh)
        rows["x[idx] gather"].append(cupy_ms(lambda: cx[ci]))
        rows["take(x, idx)"].append(cupy_ms(lambda: cp.take(cx, ci)))
        rows["x[perm] = v scatter"].append(cupy_ms(lambda: cy.__setitem__(cpm, cv)))
        rows["add.at(x, idx, v)"].append(cupy_ms(lambda: cupyx.scatter_add(cy, ci, cv)))
        rows["x[mask] (half true)"].append(cupy_ms(lambda: cx[cm]))
        rows["x[mask] = 0"].append(cupy_ms(lambda: cy.__setitem__(cm, 0.0)))
        sx, si = cp.asarray(xh[:1000]), cp.asarray(ih[:1000] % 1000)
        host["cupy"] = host_us(lambda: sx[si], cp.cuda.Device().synchronize)
    if torch is not None:
        tx, ti, tp, tm = (torch.from_numpy(a).cuda() for a in (xh, ih, ph, mh))
        tv, ty = torch.from_numpy(v.get()).cuda(), torch.from_numpy(xh).cuda()
        rows["x[idx] gather"].append(torch_ms(lambda: tx[ti]))
        rows["take(x, idx)"].append(torch_ms(lambda: torch.take(tx, ti)))
        rows["x[perm] = v scatter"].append(torch_ms(lambda: ty.__setitem__(tp, tv)))
        rows["add.at(x, idx, v)"].append(torch_ms(lambda: ty.index_add_(0, ti, tv)))
        rows["x[mask] (half true)"].append(torch_ms(lambda: tx[tm]))
        rows["x[mask] = 0"].append(torch_ms(lambda: ty.__setitem__(tm, 0.0)))
        st, sti = tx[:1000].clone(), ti[:1000] % 1000
        host["torch"] = host_us(lambda: st[sti], torch.cuda.synchronize)
    names = ["gpunb"] + (["cupy"] if cp is not None else []) + (["torch"] if torch is not None else [])
    print(f"2**26 float32, 2**26 int64 indices, ms (device {driver.device_info().name})")
    print(f"| call | {' | '.join(names)} | gpunb / best other |")
    print("|---|" + "---|" * (len(names) + 1))
    for name, ts in rows.items():
        best = min(ts[1:]) if len(ts) > 1 else float("nan")
        print(f"| {name} | {' | '.join(f'{t:.3f}' for t in ts)} | {ts[0] / best:.2f} |")
    print("host time per x[idx] on 1000 elements, us: " + ", ".join(f"{k} {v:.1f}" for k, v in host.items()))


if __name__ == "__main__":
    main()
