"""scikit-learn's PCA(n_components=10) on 1,000,000 x 100 float32: gpunb on the GPU against
NumPy on the CPU cores (and CuPy where installed).

    python benchmarks/sklearn_timing.py [--rows 1000000] [--repeats 5] [--json out.json]

Fit time only (the data is already on the device): one warm-up fit (it compiles gpunb's
kernels), then the median of ``--repeats`` fits, each ended by a device synchronize. Every
solver scikit-learn offers for array-API inputs: 'full' (SVD of the centred data),
'randomized' (Halko et al.) and 'covariance_eigh' (eigh of X^T X; 'auto' picks it for this
shape). Then one gpunb fit per solver with the namespace functions timed one by one
(synchronize + perf_counter around each call): where the time goes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np

SOLVERS = ("full", "randomized", "covariance_eigh")


def make_data(rows: int, cols: int = 100, rank: int = 10, seed: int = 0) -> np.ndarray:
    """A low-rank signal plus noise, float32 (so the 10 components mean something)."""
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((rows, rank), dtype=np.float32) * np.linspace(
        10, 1, rank, dtype=np.float32)
    basis = rng.standard_normal((rank, cols), dtype=np.float32)
    X = scores @ basis
    X += rng.standard_normal((rows, cols), dtype=np.float32)
    return X


def time_fits(fit, sync, repeats: int) -> dict:
    t = time.perf_counter()
    fit()
    sync()
    first = time.perf_counter() - t
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fit()
        sync()
        times.append(time.perf_counter() - t)
    return {"first_s": first, "median_s": statistics.median(times), "min_s": min(times),
            "times_s": times}


def pca(solver):
    from sklearn.decomposition import PCA

    return PCA(n_components=10, svd_solver=solver, random_state=0)


def profile_gpunb(X_gpu, solver) -> dict:
    """One fit with each gpunb namespace function (and linalg's) timed: {name: (calls, s)}."""
    import sklearn

    import gpunb as gp

    acc: dict = {}
    patched = []

    def wrap(mod, name, label):
        f = getattr(mod, name)

        def timed(*a, **k):
            gp.synchronize()
            t = time.perf_counter()
            r = f(*a, **k)
            gp.synchronize()
            c, s = acc.get(label, (0, 0.0))
            acc[label] = (c + 1, s + time.perf_counter() - t)
            return r
        patched.append((mod, name, f))
        setattr(mod, name, timed)

    for name in ("mean", "sum", "asarray", "matmul", "sqrt", "flip", "reshape", "astype", "abs",
                 "argmax", "sign", "take", "take_along_axis", "isdtype", "isfinite", "all", "any",
                 "max", "min", "where", "multiply", "divide", "subtract", "cumulative_sum",
                 "searchsorted", "arange", "zeros", "ones", "empty", "eye", "diag"):
        if hasattr(gp, name):
            wrap(gp, name, name)
    for name in ("svd", "eigh", "qr", "lu", "cholesky", "solve", "norm", "vector_norm"):
        if hasattr(gp.linalg, name):
            wrap(gp.linalg, name, f"linalg.{name}")
    try:
        with sklearn.config_context(array_api_dispatch=True):
            gp.synchronize()
            t = time.perf_counter()
            pca(solver).fit(X_gpu)
            gp.synchronize()
            total = time.perf_counter() - t
    finally:
        for mod, name, f in reversed(patched):
            setattr(mod, name, f)
    parts = {k: {"calls": c, "s": s} for k, (c, s) in sorted(acc.items(), key=lambda kv: -kv[1][1])}
    rest = total - sum(v["s"] for v in parts.values())
    return {"total_s": total, "parts": parts,
            "other_s (operators, indexing, host code)": rest}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--numpy-repeats", type=int, default=3)
    p.add_argument("--json", default=None)
    p.add_argument("--no-cupy", action="store_true")
    args = p.parse_args(argv)

    import sklearn
    from threadpoolctl import threadpool_info

    import gpunb as gp

    X = make_data(args.rows)
    res = {"shape": list(X.shape), "dtype": str(X.dtype), "sklearn": sklearn.__version__,
           "cpu_threads": [(i.get("internal_api"), i.get("num_threads"))
                           for i in threadpool_info()],
           "cpu_count": os.cpu_count(), "gpu": gp.device_info().name,
           "numpy": {}, "gpunb": {}, "cupy": {}, "profile": {}}
    print(f"X {X.shape} {X.dtype}; CPU threads {res['cpu_threads']}", flush=True)

    for solver in SOLVERS:
        res["numpy"][solver] = time_fits(lambda: pca(solver).fit(X), lambda: None,
                                         args.numpy_repeats)
        print(f"numpy  {solver:16s} median {res['numpy'][solver]['median_s']:.3f} s", flush=True)

    Xg = gp.asarray(X)
    gp.synchronize()
    for solver in SOLVERS:
        def fit():
            with sklearn.config_context(array_api_dispatch=True):
                pca(solver).fit(Xg)
        res["gpunb"][solver] = time_fits(fit, gp.synchronize, args.repeats)
        r = res["gpunb"][solver]
        print(f"gpunb  {solver:16s} median {r['median_s']:.4f} s (first {r['first_s']:.2f} s); "
              f"{res['numpy'][solver]['median_s'] / r['median_s']:.1f}x NumPy", flush=True)

    # the fitted components agree (up to the sign svd_flip fixes the same way)
    with sklearn.config_context(array_api_dispatch=True):
        got = gp.asnumpy(pca("full").fit(Xg).components_)
    want = pca("full").fit(X).components_
    res["max_abs_component_diff_full"] = float(np.abs(got - want).max())

    for solver in SOLVERS:
        res["profile"][solver] = profile_gpunb(Xg, solver)
        prof = res["profile"][solver]
        top = ", ".join(f"{k} {v['s'] * 1e3:.1f} ms x{v['calls']}"
                        for k, v in list(prof["parts"].items())[:6])
        print(f"profile {solver}: total {prof['total_s'] * 1e3:.1f} ms: {top}; other "
              f"{prof['other_s (operators, indexing, host code)'] * 1e3:.1f} ms", flush=True)

    if not args.no_cupy:
        try:
            import cupy as cp
        except ImportError:
            cp = None
        if cp is not None:
            Xc = cp.asarray(X)
            for solver in SOLVERS:
                def fitc():
                    with sklearn.config_context(array_api_dispatch=True):
                        pca(solver).fit(Xc)
                try:
                    res["cupy"][solver] = time_fits(fitc, cp.cuda.Device().synchronize,
                                                    args.repeats)
                    print(f"cupy   {solver:16s} median {res['cupy'][solver]['median_s']:.4f} s",
                          flush=True)
                except Exception as e:      # noqa: BLE001 - CuPy is only the reference
                    res["cupy"][solver] = {"error": f"{type(e).__name__}: {e}"[:300]}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
