"""Rearranging against a plain copy and CuPy (GPU; standalone:
``python benchmarks/manip_timing.py``).

``roll``, ``flip(x).copy()``, ``tile``, ``repeat`` and ``pad`` of float32 arrays of 2**26
elements (the output's size), and ``tril``. Each time is the median over repeats of
CUDA-event timings (warm-up first), in milliseconds. "of copy" is the time of a plain copy of
an array of the output's size divided by the call's time: 1.0 is copy bandwidth (every call
here reads at most what it writes). Every result is checked against CuPy's first.
"""

import sys

import numpy as np

import gpunb as gp
from gpunb.core.runtime import driver
from event_timing import cupy_ms, gp_ms     # benchmarks/event_timing.py: run as a script, this folder is on sys.path

try:
    import cupy as cp
except ImportError:
    cp = None

N = 1 << 26
S = 8192


def main():
    rng = np.random.default_rng(0)
    xh = rng.standard_normal(N).astype(np.float32)
    x = gp.asarray(xh)
    m = x.reshape(S, S)
    small = x[:N // 4]
    msmall = x[:N // 4].reshape(S // 2, S // 2)
    counts = np.tile(np.array([1, 3], np.int64), N // 4)       # per-element: 2**25 -> 2**26
    cases = {
        "copy 2**26": (lambda g: g["x"].copy(), N),
        "roll 2**26 by 12345": (lambda g: g["np"].roll(g["x"], 12345), N),
        "roll 2**26 by 1024": (lambda g: g["np"].roll(g["x"], 1024), N),
        "roll 8192^2 by (100, 37)": (lambda g: g["np"].roll(g["m"], (100, 37), axis=(0, 1)), N),
        "flip(x).copy() 2**26": (lambda g: g["np"].flip(g["x"]).copy(), N),
        "flip(m, 1).copy() 8192^2": (lambda g: g["np"].flip(g["m"], 1).copy(), N),
        "flip(m).copy() 8192^2": (lambda g: g["np"].flip(g["m"]).copy(), N),
        "tile(2**24, 4)": (lambda g: g["np"].tile(g["small"], 4), N),
        "tile(4096^2, (2, 2))": (lambda g: g["np"].tile(g["msmall"], (2, 2)), N),
        "repeat(2**24, 4)": (lambda g: g["np"].repeat(g["small"], 4), N),
        "repeat(8192x2048, 4, axis=1)": (lambda g: g["np"].repeat(g["small"].reshape(S, S // 4), 4, axis=1), N),
        # per-element counts held on the GPU (CuPy takes host lists only: no CuPy time)
        "repeat(2**25, gpu counts [1, 3, ...])": (lambda g: g["np"].repeat(g["x"][:N // 2], g["counts"]), N),
        "pad(8190^2, 1) constant": (lambda g: g["np"].pad(g["inner"], 1), N),
        "pad(8190^2, 1) reflect": (lambda g: g["np"].pad(g["inner"], 1, mode="reflect"), N),
        "pad(8190^2, 1) edge": (lambda g: g["np"].pad(g["inner"], 1, mode="edge"), N),
        "pad(8190^2, 1) wrap": (lambda g: g["np"].pad(g["inner"], 1, mode="wrap"), N),
        "pad(8190^2, 1) reflect odd": (lambda g: g["np"].pad(g["inner"], 1, mode="reflect",
                                                              reflect_type="odd"), N),
        "pad(2**26 - 64, 32) constant": (lambda g: g["np"].pad(g["x1"], 32), N),
        "tril(8192^2)": (lambda g: g["np"].tril(g["m"]), N),
    }
    G = {"np": gp, "x": x, "m": m, "small": small, "msmall": msmall, "counts": gp.asarray(counts),
         "inner": m[1:-1, 1:-1].copy(), "x1": x[:N - 64].copy()}
    C = None
    if cp is not None:
        cx = cp.asarray(xh)
        cm = cx.reshape(S, S)
        C = {"np": cp, "x": cx, "m": cm, "small": cx[:N // 4], "msmall": cx[:N // 4].reshape(S // 2, S // 2),
             "counts": counts, "inner": cm[1:-1, 1:-1].copy(), "x1": cx[:N - 64].copy()}
    rows = []
    copy_ms = None
    for name, (fn, n_out) in cases.items():
        try:
            t = gp_ms(lambda: fn(G))
            ok = ""
            if C is not None and "gpu counts" in name:
                ok = "" if np.array_equal(fn(G).get(), np.repeat(xh[:N // 2], counts)) else " MISMATCH"
                rows.append((name, t, float("nan"), ok))
                continue
            if C is not None:
                want = cp.asnumpy(fn(C))
                got = fn(G).get()
                ok = "" if np.array_equal(got, want) else " MISMATCH"
            tc = cupy_ms(lambda: fn(C)) if C is not None else float("nan")
        except Exception as e:          # a function not there yet
            print(f"{name}: {type(e).__name__}: {e}", file=sys.stderr)
            rows.append((name, float("nan"), float("nan"), " ERROR"))
            continue
        if copy_ms is None:
            copy_ms = t
        rows.append((name, t, tc, ok))
    print(f"float32, output 2**26 elements, ms (device {driver.device_info().name}); "
          f"copy ceiling {2 * 4 * N / copy_ms / 1e9:.2f} TB/s")
    print("| call | gpunb ms | cupy ms | gpunb of copy | cupy of copy |")
    print("|---|---|---|---|---|")
    for name, t, tc, ok in rows:
        print(f"| {name}{ok} | {t:.3f} | {tc:.3f} | {copy_ms / t:.2f} | {copy_ms / tc:.2f} |")


if __name__ == "__main__":
    main()
