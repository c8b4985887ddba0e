"""Runs in a child process on the GPU for benchmarks/run.py's ``math`` section: issues 14 and
15's anchors (sorting, order statistics, matmul, solvers, FFT, random draws) timed with CUDA
events in one process for gpunb, CuPy and PyTorch. Prints one JSON object on the last line:
per case the milliseconds of each library (or the error it raised) and the case's work
(``flop`` for products, ``bytes`` written for random draws).

    python benchmarks/math_child.py [--only a,b] [--repeat 20]
"""

import argparse
import json

import numpy as np

import gpunb as gp
from event_timing import libraries    # this folder, on sys.path as a script
from gpunb.core.runtime import driver

N26, N24, N28 = 1 << 26, 1 << 24, 1 << 28


def up(lib, h):
    if lib.__name__ == "torch":
        return lib.from_numpy(np.ascontiguousarray(h)).cuda()
    return lib.asarray(h)


def cases(rng):
    """name -> ({'flop' or 'bytes': work}, {library: setup(lib) -> call or None})."""
    f32 = rng.standard_normal(N26, dtype=np.float32)
    i64 = rng.integers(-(1 << 40), 1 << 40, N26)
    few = rng.integers(0, 1 << 20, N26)            # 2^20 distinct values
    c24 = (rng.standard_normal(N24) + 1j * rng.standard_normal(N24)).astype(np.complex64)
    r24 = rng.standard_normal(N24, dtype=np.float32)
    c2d = (rng.standard_normal((4096, 4096)) + 1j * rng.standard_normal((4096, 4096))).astype(np.complex64)
    out = {}

    def same(fn_lib, fn_torch=None):
        """A setup: ``fn_lib(lib)`` for gpunb and CuPy, ``fn_torch(torch)`` (or no torch case)."""
        def setup(lib):
            if lib.__name__ == "torch":
                return fn_torch(lib) if fn_torch else None
            return fn_lib(lib)
        return setup

    def bind(h, make):
        return lambda L: (lambda x: make(L, x))(up(L, h))

    out["sort float32 2^26"] = ({}, same(bind(f32, lambda L, x: lambda: L.sort(x)),
                                         bind(f32, lambda T, x: lambda: T.sort(x))))
    out["sort int64 2^26"] = ({}, same(bind(i64, lambda L, x: lambda: L.sort(x)),
                                       bind(i64, lambda T, x: lambda: T.sort(x))))
    out["argsort float32 2^26"] = ({}, same(bind(f32, lambda L, x: lambda: L.argsort(x)),
                                            bind(f32, lambda T, x: lambda: T.argsort(x))))
    out["unique int64 2^26 (2^20 distinct)"] = ({}, same(
        bind(few, lambda L, x: lambda: L.unique(x)),
        bind(few, lambda T, x: lambda: T.unique(x, sorted=True))))
    out["histogram 100 bins float32 2^26"] = ({}, same(
        bind(f32, lambda L, x: lambda: L.histogram(x, 100)),
        bind(f32, lambda T, x: lambda: T.histc(x, 100))))
    out["median float32 2^26"] = ({}, same(bind(f32, lambda L, x: lambda: L.median(x)),
                                           bind(f32, lambda T, x: lambda: T.median(x))))
    for dt, n in (("float32", 8192), ("float16", 8192), ("float64", 8192)):
        h = rng.standard_normal((n, n)).astype(dt)
        out[f"matmul {n}^3 {dt}"] = ({"flop": 2 * n ** 3}, same(
            bind(h, lambda L, a: lambda: L.matmul(a, a)),
            bind(h, lambda T, a: lambda: T.matmul(a, a))))
    hb = rng.standard_normal((256, 256, 256)).astype(np.float32)
    out["matmul batched 256 x 256^3 float32"] = ({"flop": 2 * 256 ** 4}, same(
        bind(hb, lambda L, a: lambda: L.matmul(a, a)), bind(hb, lambda T, a: lambda: T.matmul(a, a))))
    hs = rng.standard_normal((2048, 2048)) + 2048 * np.eye(2048)
    hv = rng.standard_normal(2048)

    def solve(L):
        a, b = up(L, hs), up(L, hv)
        return lambda: L.linalg.solve(a, b)
    out["solve float64 2048"] = ({}, same(solve, solve))
    hsvd = rng.standard_normal((1024, 1024)).astype(np.float32)
    out["svd float32 1024"] = ({}, same(bind(hsvd, lambda L, a: lambda: L.linalg.svd(a)),
                                        bind(hsvd, lambda T, a: lambda: T.linalg.svd(a))))
    out["fft complex64 2^24"] = ({}, same(bind(c24, lambda L, x: lambda: L.fft.fft(x)),
                                          bind(c24, lambda T, x: lambda: T.fft.fft(x))))
    out["rfft float32 2^24"] = ({}, same(bind(r24, lambda L, x: lambda: L.fft.rfft(x)),
                                         bind(r24, lambda T, x: lambda: T.fft.rfft(x))))
    out["fft2 4096^2 complex64"] = ({}, same(bind(c2d, lambda L, x: lambda: L.fft.fft2(x)),
                                             bind(c2d, lambda T, x: lambda: T.fft.fft2(x))))

    def draw(method, n, dt, numpy_values=False):
        # numpy_values: gpunb's Generator(Philox(0)), NumPy's values bit for bit (CuPy's and
        # torch's rows as default_rng's)
        def setup(L):
            if L.__name__ == "torch":
                if method == "standard_exponential":
                    return lambda: L.empty(n, device="cuda", dtype=getattr(L, dt)).exponential_()
                t = {"standard_normal": L.randn, "random": L.rand}.get(method)
                if t is None:
                    return lambda: L.randint(0, 1000, (n,), device="cuda", dtype=L.int64)
                return lambda: t(n, device="cuda", dtype=getattr(L, dt))
            g = L.random.default_rng(0)
            if numpy_values and L.__name__ == "gpunb":
                g = L.random.Generator(L.random.Philox(0))
            if method == "integers":
                return lambda: g.integers(0, 1000, n, dtype=dt)
            return lambda: getattr(g, method)(n, dtype=dt)
        return setup
    out["standard_normal float32 2^28"] = ({"bytes": 4 * N28}, draw("standard_normal", N28, "float32"))
    out["standard_exponential float32 2^28"] = ({"bytes": 4 * N28},
                                                draw("standard_exponential", N28, "float32"))
    out["standard_normal float64 2^27"] = ({"bytes": 8 * N28 // 2},
                                           draw("standard_normal", N28 // 2, "float64"))
    out["standard_exponential float64 2^27"] = ({"bytes": 8 * N28 // 2},
                                                draw("standard_exponential", N28 // 2, "float64"))
    out["random float64 2^27"] = ({"bytes": 8 * N28 // 2}, draw("random", N28 // 2, "float64"))
    out["integers int64 2^27"] = ({"bytes": 8 * N28 // 2}, draw("integers", N28 // 2, "int64"))
    out["random float64 2^27 (NumPy's Philox values)"] = ({"bytes": 8 * N28 // 2},
                                                          draw("random", N28 // 2, "float64", True))
    out["integers int64 2^27 (NumPy's Philox values)"] = ({"bytes": 8 * N28 // 2},
                                                          draw("integers", N28 // 2, "int64", True))
    out["random float32 2^28"] = ({"bytes": 4 * N28}, draw("random", N28, "float32"))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    dst = gp.empty(N28, "float32")      # the write-only bandwidth random draws are held to
    ms = driver.time_ms(lambda: dst.fill(1.0), repeat=args.repeat, warmup=3)
    result = {"write": {"ms": ms, "gbs": 4 * N28 / ms / 1e6}, "cases": {}}
    del dst
    libs = libraries()
    only = set(args.only.split(",")) if args.only else None
    for name, (work, setup) in cases(rng).items():
        if only and name not in only:
            continue
        row = dict(work)
        fns = {}
        for lname, lib in libs.items():
            try:
                fns[lname] = setup(lib)
            except Exception as e:      # a library without the function must not stop the run
                row[lname] = f"{type(e).__name__}: {str(e)[:120]}"
        # two rounds, the libraries in turn and then in reverse, the faster of each library's
        # two (the first library timed after a heavy case ran slower: clocks, caches)
        order = [k for k, f in fns.items() if f is not None]
        for lname in order + order[::-1]:
            try:
                ms = driver.time_ms(fns[lname], repeat=args.repeat, warmup=3)
            except Exception as e:
                row[lname] = f"{type(e).__name__}: {str(e)[:120]}"
                continue
            if not isinstance(row.get(lname), str):
                row[lname] = min(ms, row.get(lname, ms))
        result["cases"][name] = row
        print(name, {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
