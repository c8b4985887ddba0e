"""gpunb.fuse on the GPU: fused results equal unfused gpunb and NumPy over dtypes, broadcasts,
scalar arguments, where with inf over newaxis, tuple outputs and fused reductions; a second
call compiles nothing."""

import numpy as np
import pytest

import gpunb as gp
from gpunb.core import events

pytestmark = pytest.mark.gpu

rng = np.random.default_rng(7)


def rand(shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        return rng.integers(-20 if dt.kind == "i" else 0, 20, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def check(got, want, rtol=None, atol=None):
    got = gp.asnumpy(got)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    assert got.shape == np.shape(want)
    if got.dtype.kind == "f":
        tol = rtol or (1e-5 if got.dtype == np.float32 else 1e-12)
        np.testing.assert_allclose(got, want, rtol=tol, atol=atol if atol is not None else tol)
    else:
        np.testing.assert_array_equal(got, want)


def xyz(x, y, z):
    return x * y + gp.sin(z)


fused_xyz = gp.fuse(xyz)


@pytest.mark.parametrize("dts", [("float32",) * 3, ("float64",) * 3, ("int32", "float32", "float32"),
                                 ("int32", "int32", "float64")])
@pytest.mark.parametrize("shape", [(1000,), (37, 5), (4097,)])
def test_x_times_y_plus_sin_z(dts, shape):
    hs = [rand(shape, d) for d in dts]
    gs = [gp.asarray(h) for h in hs]
    want = hs[0] * hs[1] + np.sin(hs[2])
    # a float32 sin inside a float64 result: the GPU's sinf and NumPy's may differ by an ulp
    # of float32, so that is the tolerance; against unfused gpunb (same sinf) it is exact
    f32_in_f64 = want.dtype == np.float64 and "float32" in dts
    check(fused_xyz(*gs), want, *((2e-7, 2e-7) if f32_in_f64 else ()))
    check(fused_xyz(*gs), gp.asnumpy(xyz(*gs)))


def test_broadcast_views_of_inputs():
    @gp.fuse
    def f(x, col, row):
        return x - col[:, gp.newaxis] * row[None] + np.expand_dims(col, 1)

    x, col, row = rand((33, 17), "float32"), rand(33, "float32"), rand(17, "float32")
    want = x - col[:, None] * row[None] + col[:, None]
    check(f(gp.asarray(x), gp.asarray(col), gp.asarray(row)), want)
    # non-contiguous inputs: the strided layout
    X = gp.asarray(rand((33, 34), "float32"))
    check(f(X[:, ::2], gp.asarray(col), gp.asarray(row)),
          gp.asnumpy(X)[:, ::2] - col[:, None] * row[None] + col[:, None])


def test_where_inf_over_newaxis():
    @gp.fuse
    def f(mask, points):
        return gp.where(mask[:, gp.newaxis], gp.inf, points)

    m, p = rand(100, bool), rand((100, 3), "float32")
    got = f(gp.asarray(m), gp.asarray(p))
    check(got, np.where(m[:, None], np.inf, p))
    assert np.isinf(gp.asnumpy(got)[m]).all()


def test_scalar_arguments_are_parameters():
    @gp.fuse
    def f(x, s, t):
        return x * s + t

    x = rand(1000, "float32")
    g = gp.asarray(x)
    check(f(g, 2.0, 3), x * 2.0 + 3)
    seen = []
    with events.subscribed(seen.append):
        check(f(g, 5.5, -1), x * 5.5 - 1)
        h = rand(77, "float32")
        check(f(gp.asarray(h), 1.0, 2), h * 1.0 + 2)
    assert not [e for e in seen if isinstance(e, events.CompileStarted)]
    assert f.traces == 1
    check(f(g, np.float64(2.0), 1), x * np.float64(2.0) + 1)      # strong scalar: float64


def test_constants_inside_the_function():
    @gp.fuse
    def f(x):
        return gp.where(gp.isnan(x), gp.pi, x) * 2 + np.e - gp.where(x > 1e30, gp.nan, 0.5)

    x = rand(500, "float32")
    x[::7] = np.nan
    x[3] = 3e38
    want = np.where(np.isnan(x), np.pi, x) * 2 + np.e - np.where(x > 1e30, np.nan, 0.5)
    check(f(gp.asarray(x)), want)     # where(c, nan, 0.5) is float64, as in NumPy


def test_tuple_outputs():
    @gp.fuse
    def f(x, y):
        d = x - y
        return d * d, d > 0

    x, y = rand((40, 30), "float64"), rand((40, 30), "float64")
    a, b = f(gp.asarray(x), gp.asarray(y))
    check(a, (x - y) ** 2)
    check(b, x - y > 0)


@pytest.mark.parametrize("dt", ["float32", "float64", "int32"])
@pytest.mark.parametrize("func", ["sum", "max", "min", "mean", "prod", "any", "all"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, True), (0, False), ((0, 1), True)])
def test_fused_reductions(dt, func, axis, keepdims):
    def body(x, y):
        v = x * y - 1 if func != "prod" else (x * y) % 3 + 1
        return getattr(v, func)(axis=axis, keepdims=keepdims)

    f = gp.fuse(body)
    x, y = rand((64, 45), dt), rand((64, 45), dt)
    want = body(x, y)
    got = f(gp.asarray(x), gp.asarray(y))
    tol = dict(rtol=1e-4, atol=1e-3) if dt == "float32" else {}    # summation order differs
    check(got, np.asarray(want), **tol)
    check(got, gp.asnumpy(body(gp.asarray(x), gp.asarray(y))), **tol)


def test_softmax_pieces():
    @gp.fuse
    def denominator(x, m):
        return gp.exp(x - m[:, None]).sum(axis=1)

    @gp.fuse
    def rowmax(x):
        return x.max(axis=1)

    x = rand((128, 1000), "float32")
    g = gp.asarray(x)
    m = rowmax(g)
    check(m, x.max(axis=1))
    check(denominator(g, m), np.exp(x - x.max(axis=1)[:, None]).sum(axis=1), rtol=1e-5)


def test_second_call_hits_the_kernel_cache():
    @gp.fuse
    def f(x, y):
        return (x + y) * 0.5, (x * y).astype(np.float64)

    @gp.fuse
    def r(x):
        return (x * x).mean(axis=0)

    x = gp.asarray(rand(1024, "float32"))
    f(x, x)
    r(x)
    seen = []
    with events.subscribed(seen.append):
        f(x, x)
        r(x)
        f(gp.asarray(rand(999, "float32")), gp.asarray(rand(999, "float32")))
    assert not [e for e in seen if isinstance(e, events.CompileStarted)]
    assert f.traces == 1 and r.traces == 1


def test_empty_and_zero_d():
    @gp.fuse
    def f(x, y):
        return x + y

    check(f(gp.asarray(np.zeros(0, np.float32)), gp.asarray(np.zeros(0, np.float32))), np.zeros(0, np.float32))
    check(f(gp.asarray(np.float32(2)), gp.asarray(np.ones(5, np.float32))), np.full(5, 3, np.float32))


def test_second_process_gets_disk_hits_and_compiles_nothing(tmp_path):
    # kernels of a fused function are cached on disk under a key of its IR: a fresh process
    # with the same cache directory retraces (cheap) and loads every kernel without NVRTC
    import json
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import json, numpy as np, gpunb as gp
        @gp.fuse
        def step(x, m, s):
            return gp.where(x > m[:, gp.newaxis], gp.inf, x * s)
        @gp.fuse
        def denom(x, m):
            return gp.exp(x - m[:, None]).sum(axis=1)
        x = np.random.default_rng(0).standard_normal((300, 70)).astype(np.float32)
        m = x.mean(axis=1).astype(np.float32)
        gx, gm = gp.asarray(x), gp.asarray(m)
        before = dict(gp.kernel_cache().stats())
        a = step(gx, gm, 2.5).get(); b = denom(gx, gm).get()
        s = gp.kernel_cache().stats()
        np.testing.assert_array_equal(a, np.where(x > m[:, None], np.inf, x * np.float32(2.5)))
        np.testing.assert_allclose(b, np.exp(x - m[:, None]).sum(axis=1), rtol=1e-5)
        maps = open("/proc/self/maps").read()
        print(json.dumps([s["compiles"] - before["compiles"], s["disk_hits"] - before["disk_hits"],
                          "libnvrtc" in maps]))
    """)
    env = dict(os.environ, GPUNB_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    first, second = (json.loads(r.stdout.splitlines()[-1]) for r in runs)
    assert first[0] >= 2 and first[2], first
    assert second == [0, first[0], False], second
