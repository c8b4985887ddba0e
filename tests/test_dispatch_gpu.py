"""The ufunc fast path (contiguous arrays of one shape, Python scalars) gives what the general
path gives, and never serves a call it was not prepared for (GPU)."""

import os

import numpy as np
import pytest

import gpunb as gp
from gpunb._math.ufuncs import UFUNCS
from gpunb.core.runtime import driver, scratch

pytestmark = pytest.mark.gpu


def test_fast_path_is_prepared_and_matches_numpy():
    x = np.arange(1000, dtype=np.float32)
    y = np.linspace(-3, 3, 1000, dtype=np.float32)
    a, b = gp.asarray(x), gp.asarray(y)
    for _ in range(3):                       # general path first, then the prepared one
        np.testing.assert_array_equal((a + b).get(), x + y)
        np.testing.assert_array_equal((a * 2.5).get(), x * np.float32(2.5))
        np.testing.assert_array_equal((3 - a).get(), np.float32(3) - x)
    prepared = {key[0] for key in driver.context().prepared if isinstance(key, tuple)}
    assert UFUNCS["add"] in prepared and UFUNCS["multiply"] in prepared


def test_one_element_arrays_do_not_poison_the_fast_path():
    one = gp.asarray(np.array([2.0]))
    np.testing.assert_array_equal((one + one).get(), [4.0])     # 'uniform' kernel
    x = np.arange(10.0)
    g = gp.asarray(x)
    for _ in range(2):
        np.testing.assert_array_equal((g + g).get(), x + x)
        np.testing.assert_array_equal((one + one).get(), [4.0])


def test_one_element_and_zero_d_calls_take_a_longer_calls_fast_path(monkeypatch):
    """Once a longer call prepared the fast path (a kernel reading arrays element by element),
    1-element and 0-d calls of the same types replay it, not the layout path: NumPy's values,
    shapes and dtypes, Python scalars converted as NumPy does."""
    import gpunb.core.ufunc as uf

    x = np.linspace(-2, 2, 1000, dtype=np.float32)
    g = gp.asarray(x)
    for _ in range(2):
        np.testing.assert_array_equal((g * g + g).get(), x * x + x)
        np.testing.assert_array_equal((g - 1.5).get(), x - np.float32(1.5))

    def layout(*args):
        raise AssertionError("the layout path served a call the fast path takes")

    monkeypatch.setattr(uf, "_layout_call", layout)
    for h in (np.array([0.75], np.float32), np.asarray(np.float32(-3.25)), np.array([2.0], np.float32)):
        a = gp.asarray(h)
        for got, want in ((a * a + a, h * h + h), (a - 1.5, h - np.float32(1.5))):
            r = got.get()
            assert r.shape == want.shape and r.dtype == want.dtype
            np.testing.assert_array_equal(r, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64"])
def test_zero_d_operands_replay_with_new_values(dtype):
    """0-d arrays (what reductions return) replay the layout path's launch: each call's own
    pointers and scalar values, NumPy's results, a 1000-element call in between."""
    rng = np.random.default_rng(5)
    big = gp.asarray(np.arange(1000).astype(dtype))
    for _ in range(4):
        h = np.asarray(rng.standard_normal() * 10).astype(dtype)
        k = np.asarray(rng.standard_normal() * 10).astype(dtype)
        a, b = gp.asarray(h), gp.asarray(k)
        with np.errstate(all="ignore"):
            for got, want in ((gp.sqrt(a), np.sqrt(h)), (a + b, h + k), (a * 3, h * 3),
                              (2.5 - a, 2.5 - h), (gp.sqrt(big), np.sqrt(np.arange(1000).astype(dtype)))):
                g = got.get()
                assert g.shape == want.shape and g.dtype == want.dtype
                np.testing.assert_allclose(g, want, rtol=1e-6, equal_nan=True)
    keys = [key for key in driver.context().prepared if isinstance(key, tuple) and len(key) > 1]
    assert any(key[0] is UFUNCS["sqrt"] and key[1] == "layout" and key[3][1] == () for key in keys)


def test_misaligned_views_broadcasts_and_overflow_take_the_general_path():
    x = np.arange(1001, dtype=np.float32)
    g = gp.asarray(x)
    for _ in range(2):
        np.testing.assert_array_equal((g[1:] + g[:-1]).get(), x[1:] + x[:-1])    # offset 4 bytes
        np.testing.assert_array_equal((g[::2] * 2).get(), x[::2] * 2)
        np.testing.assert_array_equal((g + g[:1]).get(), x + x[:1])
    i8 = gp.asarray(np.arange(5, dtype=np.int8))
    for _ in range(2):
        np.testing.assert_array_equal((i8 + 1).get(), np.arange(5, dtype=np.int8) + 1)
    with pytest.raises(OverflowError):
        i8 + 300                            # NEP 50: a Python int out of int8's range


def test_dtype_pairs_are_separate_entries():
    a32 = gp.asarray(np.ones(100, np.float32))
    a64 = gp.asarray(np.ones(100, np.float64))
    for _ in range(2):
        assert (a32 + a32).dtype == np.float32
        assert (a32 + a64).dtype == np.float64
        assert (a32 + 1).dtype == np.float32
        assert (gp.asarray(np.ones(100, np.int32)) + 1.5).dtype == np.float64


def test_numpy_scalars_are_strong_not_python_floats():
    """np.float64 subclasses float: it must still promote as a NumPy scalar (NEP 50)."""
    x = np.arange(10, dtype=np.float32)
    g = gp.asarray(x)
    for s in (np.float64(2.5), np.float32(2.5), np.int64(3)):
        r = g * s
        want = x * s
        assert r.dtype == want.dtype, (type(s), r.dtype, want.dtype)
        np.testing.assert_array_equal(r.get(), want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "complex64"])
def test_layout_path_views_broadcasts_and_out_replay_exactly(dtype):
    """Strided views, broadcasts and out= (a stencil's u[1:-1, 1:-1] += ...) take the
    prepared layout path from the second call; every call equals NumPy's, with new pointers,
    new scalar values and another alignment each time."""
    rng = np.random.default_rng(0)
    for shift in range(4):           # the views' pointers move (alignment changes at 1 and 3)
        h = (rng.standard_normal((24, 20)) * 10).astype(dtype)
        u, hu = gp.asarray(h), h.copy()
        for k in (1, 2, 3):
            o = shift % 2
            a, ha = u[1 + o:-1, 1:-1 - o], hu[1 + o:-1, 1:-1 - o]          # (22 - o, 18 - o)
            b, hb = u[:22 - o, 1 + o:19], hu[:22 - o, 1 + o:19]
            np.testing.assert_allclose((a + b).get(), ha + hb, rtol=1e-6)
            np.testing.assert_allclose((k * a).get(), k * ha, rtol=1e-6)
            np.testing.assert_allclose((a - u[1:2, 1:-1 - shift % 2]).get(),
                                       ha - hu[1:2, 1:-1 - shift % 2], rtol=1e-6)   # broadcast row
            a += b                  # out= a strided view
            ha += hb
            np.testing.assert_allclose(u.get(), hu, rtol=1e-6)
            c = gp.empty(a.shape, dtype)
            gp.multiply(a, b, out=c)
            np.testing.assert_allclose(c.get(), ha * hb, rtol=1e-5)
    keys = [k for k in driver.context().prepared if isinstance(k, tuple) and len(k) > 1 and k[1] == "layout"]
    assert keys, "the layout path was never prepared"


def test_layout_path_keeps_numpys_scalar_errors_and_casting():
    a = gp.arange(20, dtype=np.int8)[::2]
    for _ in range(2):
        np.testing.assert_array_equal((a + 3).get(), np.arange(20, dtype=np.int8)[::2] + 3)
    with pytest.raises(OverflowError):
        a + 1000
    f = gp.zeros(10, np.float32)[::2]
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
        gp.add(f, f, out=gp.zeros(10, np.int32)[::2])
    for _ in range(2):
        o = gp.zeros(10, np.float64)[::2]
        gp.add(f, 1.5, out=o)
        np.testing.assert_array_equal(o.get(), np.full(5, 1.5))


@pytest.mark.parametrize("func", ["sum", "max", "argmin", "mean", "prod", "any"])
def test_reduction_calls_replayed_equal_numpy(func):
    """A reduction call seen before replays its planned launches: new data, views at other
    offsets (alignment), other axes and keepdims each give NumPy's answer."""
    rng = np.random.default_rng(1)
    for trial in range(3):
        h = rng.standard_normal((33, 64)).astype(np.float32)
        x = gp.asarray(h)
        for view, hv in ((x, h), (x[1:], h[1:]), (x[:, 3:], h[:, 3:]), (x.T, h.T)):
            for axis, keepdims in ((None, False), (0, False), (1, True), ((0, 1), False), (-1, False)):
                if func == "argmin" and isinstance(axis, tuple):
                    continue
                got = getattr(gp, func)(view, axis=axis, keepdims=keepdims)
                want = getattr(np, func)(hv, axis=axis, keepdims=keepdims)
                assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
                np.testing.assert_allclose(got.get(), want, rtol=1e-4, atol=1e-5)
    keys = [k for k in driver.context().prepared if isinstance(k, tuple) and k[:1] == ("reduce:call",)]
    assert keys


@pytest.mark.parametrize("func, dtype", [("sum", None), ("sum", np.float64), ("sum", "float32"),
                                         ("mean", np.float64), ("prod", None), ("max", None)])
def test_large_reduction_calls_replay_with_their_temporary_buffers(func, dtype):
    """Large reductions (a split launch and its scratch: Dask's chunk sums, which pass
    dtype=) replayed with new data and at another offset each time equal NumPy's, keepdims
    and axis as Dask writes them; the prepared entry holds the launch and the scratch size."""
    rng = np.random.default_rng(3)
    n = (1 << 22) + 3
    kw = {} if dtype is None else {"dtype": dtype}
    for trial in range(3):
        if func == "prod":
            # ones but for a few powers of two and signs, the ends included: every partial
            # product is exact, so a missed or repeated element shows (a product of values
            # near 1 drifts by 0.4% in a float32 tree, where NumPy's running product does not)
            h = np.ones(n, np.float32)
            at = np.concatenate([[0, 1, n - 2, n - 1], rng.integers(0, n, 40)])
            h[at] = rng.choice(np.array([2.0, 0.5, -1.0, 4.0, 0.25], np.float32), at.size)
        else:
            h = rng.uniform(0.999, 1.001, n).astype(np.float32)
        x = gp.asarray(h)
        for view, hv in ((x, h), (x[1:], h[1:])):
            got = getattr(np, func)(view, axis=(0,), keepdims=True, **kw)
            want = getattr(np, func)(hv.astype(np.float64), axis=(0,), keepdims=True)
            assert type(got) is gp.ndarray and got.shape == (1,)
            assert got.dtype == getattr(np, func)(hv[:8], axis=(0,), keepdims=True, **kw).dtype
            np.testing.assert_allclose(got.get(), want, rtol=1e-5)
    entries = [v for k, v in driver.context().prepared.items()
               if isinstance(k, tuple) and k[:2] == ("reduce:call", func) and k[3] == (n,)]
    # the generated replays (execute.make_replay): one launch, its last blocks combine
    assert entries and all(v.launches == 1 and v.temp_bytes > scratch.TICKET_BYTES for v in entries)


def test_raw_kernel_prepared_launch_checks_every_call():
    src = r'''extern "C" __global__ void axpb(const float* x, float* y, float a, int n, long long b) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + (float)b;
    }'''
    k = gp.RawKernel(src, "axpb")
    for trial in range(4):              # the first call checks and prepares, the rest replay
        n = 1000 + 37 * trial
        hx = np.arange(n, dtype=np.float32)
        x, y = gp.asarray(hx), gp.empty(n, np.float32)
        a = 0.5 * (trial + 1)
        k(((n + 255) // 256,), (256,), (x, y, np.float32(a) if trial % 2 else a,
                                          np.int32(n) if trial % 2 else n, trial - 2))
        np.testing.assert_allclose(y.get(), np.float32(a) * hx + (trial - 2), rtol=1e-6)
    # what the prepared launch was not made for still gets the checked path and its errors
    with pytest.raises(gp.KernelArgumentError, match="argument 3 of kernel axpb"):
        k((1,), (32,), (x, y, 1.0, 2 ** 40, 0))
    with pytest.raises(gp.KernelArgumentError, match="argument 0 of kernel axpb"):
        k((1,), (32,), (np.zeros(4, np.float32), y, 1.0, 4, 0))
    with pytest.raises(ValueError, match="grid must be a positive int"):
        k((1.0,), (32,), (x, y, 1.0, 4, 0))
    with pytest.raises(gp.KernelArgumentError):
        k((1,), (32,), (x, y, 1.0, 4))


def test_user_reduction_calls_replayed_equal_numpy():
    sumsq = gp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "dispatch_sumsq")
    rng = np.random.default_rng(2)
    for trial in range(3):
        h = rng.standard_normal((40, 70)).astype(np.float32)
        x = gp.asarray(h)
        for view, hv in ((x, h), (x[2:], h[2:]), (x.T, h.T)):
            for axis, keepdims in ((None, False), (0, False), (1, True)):
                got = sumsq(view, axis=axis, keepdims=keepdims)
                want = (hv * hv).sum(axis=axis, keepdims=keepdims)
                assert got.shape == want.shape
                np.testing.assert_allclose(got.get(), want, rtol=1e-4)
    e = gp.ElementwiseKernel("T x, T y", "T z", "z = x * y + 2", "dispatch_muladd")
    for n in (1000, 1000, 4096, 4096):
        hx, hy = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        z = gp.empty(n, np.float32)
        e(gp.asarray(hx), gp.asarray(hy), z)          # out= given: the prepared form too
        np.testing.assert_allclose(z.get(), hx * hy + 2, rtol=1e-5, atol=1e-6)   # FMA
        np.testing.assert_allclose(e(gp.asarray(hx), gp.asarray(hy)).get(), hx * hy + 2, rtol=1e-5, atol=1e-6)


def test_user_kernel_prepared_calls_every_signature_once_each():
    """The prepared ElementwiseKernel call is made per signature: alternating dtypes, scalar
    kinds (bool, int, float, complex; a half and a complex parameter), views it was not made
    for, several outputs, and a no_return kernel that adds into its given output (launched
    once per call: twice would double the sum)."""
    rng = np.random.default_rng(5)
    k = gp.ElementwiseKernel("T x, float64 c", "T z", "z = x * c", "dispatch_scale")
    for _ in range(3):
        for dt in (np.float32, np.float64, np.float32):
            h = rng.standard_normal(1001).astype(dt)
            g = gp.asarray(h)
            for view, hv in ((g, h), (g[1:], h[1:]), (g[::2], h[::2])):
                for c in (2, 0.5, True):
                    got = k(view, c)
                    assert got.dtype == dt
                    np.testing.assert_allclose(got.get(), (hv * np.float64(c)).astype(dt), rtol=1e-6)
    kc = gp.ElementwiseKernel("T x, complex64 c, float16 h", "T z, T w", "z = x * real(c) + h; w = x * imag(c)",
                              "dispatch_cplx_half")
    h = rng.standard_normal(1000).astype(np.float32)
    g = gp.asarray(h)
    for _ in range(3):
        z, w = kc(g, 1.5 - 2j, 0.25)
        # (a fused multiply-add: within a rounding of NumPy's two)
        np.testing.assert_allclose(z.get(), h * np.float32(1.5) + np.float32(0.25), rtol=1e-6, atol=3e-8)
        np.testing.assert_allclose(w.get(), h * np.float32(-2), rtol=1e-6)
    acc = gp.ElementwiseKernel("T x", "T z", "z = z + x", "dispatch_acc", no_return=True)
    out = gp.zeros(1000, np.float32)
    for i in range(4):
        assert acc(g, out) is None
        np.testing.assert_allclose(out.get(), h * (i + 1), rtol=1e-5)
    tup = gp.ElementwiseKernel("T x", "T z", "z = -x", "dispatch_tuple", return_tuple=True)
    for _ in range(2):
        r = tup(g)
        assert isinstance(r, tuple) and len(r) == 1
        np.testing.assert_array_equal(r[0].get(), -h)


@pytest.mark.parametrize("func", ["var", "std"])
def test_moment_calls_replayed_equal_numpy(func):
    """var/std seen before replay the mean's and their own launches: new data, views at
    other offsets, axes, keepdims, ddof and dtype= each give NumPy's answer; a call with
    N - ddof <= 0 warns every time (it is never replayed)."""
    rng = np.random.default_rng(4)
    for trial in range(3):
        h = rng.standard_normal((40, 70)).astype(np.float32)
        x = gp.asarray(h)
        for view, hv in ((x, h), (x[1:], h[1:]), (x[:, 5:], h[:, 5:]), (x.T, h.T)):
            for axis, keepdims, ddof, dtype in ((None, False, 0, None), (0, True, 1, None),
                                                (1, False, 0, np.float64), ((0, 1), False, 2, None)):
                got = getattr(gp, func)(view, axis=axis, keepdims=keepdims, ddof=ddof, dtype=dtype)
                want = getattr(np, func)(hv, axis=axis, keepdims=keepdims, ddof=ddof, dtype=dtype)
                assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
                np.testing.assert_allclose(got.get(), want, rtol=2e-5, atol=1e-6)
    keys = [k for k in driver.context().prepared if isinstance(k, tuple) and k[:2] == ("moment:call", func)]
    assert keys
    small = gp.asarray(np.ones(3, np.float32))
    for _ in range(2):
        with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
            r = getattr(gp, func)(small, ddof=3)
        assert np.isnan(r.get()) or np.isinf(r.get())


@pytest.mark.skipif(os.environ.get("GPUNB_HUGE_TESTS") != "1",
                    reason="2^31+ elements: set GPUNB_HUGE_TESTS=1 on a GPU with 40+ GB free")
def test_calls_over_int32_elements_run_in_pieces_with_each_pieces_pointers():
    """2^31 + 3 int8 elements: a ufunc (with and without out=), a fill, a converting copy and
    a fused function run as vector pieces of 2^30; the elements at each piece's edges (given
    values of their own first) come out where they belong, and calls made again are right."""
    n = 2**31 + 3
    edges = [0, 1, 2**30 - 1, 2**30, 2**30 + 1, 2**31 - 1, 2**31, n - 1]
    a = gp.zeros(n, np.int8)
    a[...] = 3                                           # fill
    want = np.full(len(edges), 3, np.int8)
    for i, e in enumerate(edges):
        a[e] = i + 10
        want[i] = i + 10

    @gp.fuse
    def f(x):
        return x * 2 + 1

    c = gp.empty(n, np.int8)
    for _ in range(2):
        b = a + 1                                        # ufunc
        gp.add(a, 2, out=c)
        w = a.astype(np.int16)                           # converting copy
        g = f(a)
        for got, expect in ((b, want + 1), (c, want + 2), (w, want.astype(np.int16)), (g, want * 2 + 1)):
            assert got.shape == (n,)
            np.testing.assert_array_equal(np.array([got[e].get() for e in edges]), expect)
        assert int(b[12345].get()) == 4 and int(g[2**31 + 1].get()) == 7
        del b, w, g
