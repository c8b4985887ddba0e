"""gpunb.fuse on the GPU: fused results equal unfused gpunb and NumPy over dtypes, broadcasts,
scalar arguments, where with inf over newaxis, tuple outputs and fused reductions; a second
call compiles nothing."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core import events
from tests import data

pytestmark = pytest.mark.gpu

rng = np.random.default_rng(7)


def rand(shape, dtype):
    return data.rand(shape, dtype, rng=rng, bound=20)


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


# -- launch plans: a call with a seen argument layout replays the launches decided before --

def test_plans_replay_with_new_data_offset_views_and_scalars():
    @gp.fuse
    def f(x, col, s):
        return gp.where(col[:, gp.newaxis] > s, x * s, gp.nan)

    for trial in range(4):
        X, col = rand((40, 66), "float32"), rand(40, "float32")
        s = 0.25 * trial - 0.5
        x = gp.asarray(X)[:, 1:65]          # 4 bytes past a 16-byte boundary: no vector entry
        check(f(x, gp.asarray(col), s), np.where(col[:, None] > s, X[:, 1:65] * s, np.nan))
    assert f.traces == 1 and len(f._plans) == 1
    # the same views at another alignment are another plan, with its own entry point
    X = rand((40, 68), "float32")
    check(f(gp.asarray(X)[:, 4:68], gp.asarray(col), 0.0), np.where(col[:, None] > 0, X[:, 4:68] * 0.0, np.nan))
    assert len(f._plans) == 2


def test_plans_replay_split_reductions_and_tuples():
    @gp.fuse
    def total(x, s):
        return (x * s).sum()       # one output: split over blocks, with a partial-state buffer

    @gp.fuse
    def pair(x, y):
        return x - y, x * y

    for trial in range(3):
        x, y = rand(1 << 18, "float64"), rand(1 << 18, "float64")
        check(total(gp.asarray(x), trial + 0.5), np.asarray((x * (trial + 0.5)).sum()), rtol=1e-10)
        a, b = pair(gp.asarray(x), gp.asarray(y))
        check(a, x - y)
        check(b, x * y)
    assert len(total._plans) == 1 and len(pair._plans) == 1
    assert total._plans[next(iter(total._plans))].temp_bytes > 0


def test_plans_check_weak_int_range_every_call():
    @gp.fuse
    def f(x, s):
        return x + s

    x = gp.asarray(rand(100, "int8"))
    check(f(x, 3), gp.asnumpy(x) + np.int8(3))
    assert len(f._plans) == 1
    with pytest.raises(OverflowError):
        f(x, 1000)                   # the replayed call checks the range too
    check(f(x, -5), gp.asnumpy(x) - np.int8(5))


def test_plans_replay_on_other_threads():
    """A plan made on the main thread (whose replays fill objects of their own, with no
    lock) replayed from other threads at once (the locked set), then again on the main
    thread; reductions replayed the same way."""
    import threading

    @gp.fuse
    def f(x, s):
        return x * s + 1

    hx = rand(1000, "float32")
    x = gp.asarray(hx)
    check(f(x, 2.0), hx * np.float32(2.0) + 1)
    x.sum()
    got = {}

    def work(k):
        for _ in range(20):
            got[k] = (f(x, float(k)), x.sum())

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        check(got[k][0], hx * np.float32(k) + 1)
        check(got[k][1], np.asarray(hx.sum(dtype=np.float32)), rtol=1e-5)
    check(f(x, 5.0), hx * np.float32(5.0) + 1)
    assert len(f._plans) == 1


def test_plans_launch_on_the_current_stream():
    @gp.fuse
    def f(x, y):
        return x * y + 1

    hx, hy = rand(1 << 20, "float32"), rand(1 << 20, "float32")
    x, y = gp.asarray(hx), gp.asarray(hy)
    f(x, y)                              # records the plan on the default stream
    s = gp.Stream(non_blocking=True)
    with s:
        got = f(x, y)                    # replayed: must be ordered on s
        got2 = f(got, y)
    s.synchronize()
    check(got, hx * hy + 1)
    check(got2, (hx * hy + 1) * hy + 1)


@given(st.data())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_plans_match_numpy_over_random_layouts(data):
    # each example calls a fused function three times on fresh data with one layout: the
    # first call decides the launch, the others replay it
    nd = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=nd, max_size=nd)))
    dt = data.draw(st.sampled_from(["float32", "float64", "int32", "int16", "uint8"]))
    step = data.draw(st.sampled_from([1, 2]))
    bshape = tuple(1 if data.draw(st.booleans()) else n for n in shape)
    reduce_axis = data.draw(st.sampled_from([None, "last", "elementwise"]))

    def body(x, y, s):
        v = x * s + y
        if reduce_axis == "elementwise":
            return v
        return v.sum(axis=None if reduce_axis is None else -1)

    f = gp.fuse(body)
    done = 0
    for _ in range(3):
        big = rand(shape[:-1] + (shape[-1] * step,), dt)
        hy = rand(bshape, dt)
        s = int(data.draw(st.integers(-3, 3)))
        x = gp.asarray(big)[..., ::step]
        hx = big[..., ::step]
        try:
            want = body(hx, hy, s)
        except OverflowError:       # NEP 50: -3 does not fit uint8; the fused call says so too
            with pytest.raises(OverflowError):
                f(x, gp.asarray(hy), s)
            continue
        got = f(x, gp.asarray(hy), s)
        tol = dict(rtol=1e-4, atol=1e-4) if dt == "float32" else {}
        check(got, np.asarray(want), **tol)
        done += 1
    assert f.traces == 1 and len(f._plans) == min(done, 1)


def test_grid_stride_loops_when_the_grid_is_capped(monkeypatch):
    # with a grid of one resident wave each thread loops over many steps: every entry point
    # (vector, rows, strided, and the scalar tail) must cover all the elements
    from gpunb.core.kernels.elementwise import plan as launch

    monkeypatch.setattr(launch, "GRID_WAVES", 1)

    @gp.fuse
    def f(x, m):
        return x * 2 - m[:, gp.newaxis]

    @gp.fuse
    def g(x, y):
        return x + y

    rows, cols = 4099, 1028
    hx, hm = rand((rows, cols), "float32"), rand(rows, "float32")
    x, m = gp.asarray(hx), gp.asarray(hm)
    check(f(x, m), hx * 2 - hm[:, None])                          # rows entry
    check(f(x[:, 1:], m), hx[:, 1:] * 2 - hm[:, None])            # strided32 entry
    n = (1 << 22) + 3
    a, b = rand(n, "float32"), rand(n, "float32")
    check(g(gp.asarray(a), gp.asarray(b)), a + b)                  # vector entry and its tail
    check(g(gp.asarray(a)[1:], gp.asarray(b)[1:]), a[1:] + b[1:])  # flat entry (unaligned)


def test_fused_reduction_with_a_scalar_first():
    """A scalar before the arrays: the reduction's geometry once read the strides of the
    wrong operand (IndexError on the GPU while inspect worked)."""
    @gp.fuse
    def f(s, x):
        return (s * x).sum(axis=1)

    @gp.fuse
    def g(s, m, x):
        return (s * x - m[:, gp.newaxis]).max(axis=1)

    hx, hm = rand((300, 70), "float32"), rand(300, "float32")
    x, m = gp.asarray(hx), gp.asarray(hm)
    for s in (2.0, -0.5):                                  # traced, then replayed
        check(f(s, x), (np.float32(s) * hx).sum(axis=1))
        check(g(s, m, x), (np.float32(s) * hx - hm[:, None]).max(axis=1))
    assert f.inspect(2.0, hx).kind == "reduction"


@pytest.mark.gpu
@pytest.mark.parametrize("equal_nan", [False, True])
def test_fused_isclose_equals_numpys(equal_nan):
    rng = np.random.default_rng(3)
    hx = rng.standard_normal(1000).astype(np.float32)
    hy = (hx + rng.standard_normal(1000) * 1e-6).astype(np.float64)
    hy[::7] += 1
    hx[::11] = np.nan
    hy[::22] = np.nan
    hx[5], hy[5] = np.inf, np.inf

    @gp.fuse
    def f(x, y):
        return gp.isclose(x, y, equal_nan=equal_nan) & (x > -10)

    @gp.fuse
    def g(x):
        return np.isclose(x, 0.5, atol=0.6, equal_nan=equal_nan).sum()

    want = np.isclose(hx, hy, equal_nan=equal_nan) & (hx > -10)
    np.testing.assert_array_equal(f(gp.asarray(hx), gp.asarray(hy)).get(), want)
    assert int(g(gp.asarray(hx))) == int(np.isclose(hx, 0.5, atol=0.6, equal_nan=equal_nan).sum())


def test_float16_intermediates_round_like_numpy():
    """A float16 result inside a fused expression is rounded to half as NumPy's own loop
    rounds it, before a wider operand uses it (found by test_trapezoid: d * (y1 + y2))."""
    a = rng.standard_normal(4096).astype(np.float16)
    b = (rng.standard_normal(4096) * 1e-2).astype(np.float16)
    d = rng.random(4096)

    @gp.fuse
    def f(a, b, d):
        return d * (a + b) / 2.0

    @gp.fuse
    def g(a, b, d):
        return (d * (a * b + a)).sum()

    want = d * (a + b) / 2.0
    np.testing.assert_array_equal(f(gp.asarray(a), gp.asarray(b), gp.asarray(d)).get(), want)
    np.testing.assert_allclose(float(g(gp.asarray(a), gp.asarray(b), gp.asarray(d))),
                               (d * (a * b + a)).sum(), rtol=1e-12)
    assert not np.array_equal(d * (a.astype(np.float32) + b) / 2.0, want)    # rounding shows
