"""Histograms and order statistics: bincount, histogram (every bins form), histogram_bin_edges,
histogram2d, histogramdd, median, percentile, quantile (every method), the NaN forms.

CPU: NVRTC compiles the histogram and radix-select kernels (every dtype in some role), and
NumPy's errors on made-up arrays. GPU: values against NumPy (hypothesis over dtypes,
NaN/inf, ties, empty and 0-d, non-contiguous views)."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core.build.compiler import compile_program
from gpunb.core.dtypes import SUPPORTED
from gpunb.core.kernels.search import codegen as cg
from tests import data
from tests.data import fake, same

rng = np.random.default_rng(1415)
gpu = pytest.mark.gpu
REAL = [d for d in SUPPORTED if d.kind != "c"]
METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
           "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
           "normal_unbiased", "lower", "higher", "midpoint", "nearest"]


# -- CPU: the kernels compile ------------------------------------------------------------------

def _compiles(k):
    prog = compile_program(cg.render(k), (), "sm_90")
    for e in cg.entry_points(k):
        assert e.encode() in prog.cubin, e


_HISTS = [cg.HistKernel("bincount", "int64"), cg.HistKernel("bincount", "bool", "float64", "int8"),
          cg.HistKernel("bincount", "uint8", "float64", "uint16", False),
          cg.HistKernel("bincount", "int16", "complex128", "complex64"),
          cg.HistKernel("bincount", "uint32", "float64", "uint32"),
          cg.HistKernel("bincount", "int32", "float64", "int32"),
          cg.HistKernel("bincount", "uint64", "float64", "uint64"),
          cg.HistKernel("uniform", "float32", None, None, True, *["float32"] * 5),
          cg.HistKernel("uniform", "float16", "complex128", "complex128", True, *["float16"] * 5),
          cg.HistKernel("uniform", "int64", "float64", "float32", False, "int64", "float64",
                        "float64", "float64", "float64"),
          cg.HistKernel("edges", "float64", "float64", "float64", True, None, "float64"),
          cg.HistKernel("edges", "int8", None, None, False, None, "float32")]


@pytest.mark.parametrize("k", _HISTS, ids=lambda k: k.name)
def test_histogram_kernels_compile(k):
    _compiles(k)


@pytest.mark.parametrize("dt", REAL, ids=str)
def test_select_kernels_compile(dt):
    _compiles(cg.SelectKernel(dt))


def test_kernels_cover_every_dtype():
    roles = {d for k in _HISTS for d in (k.x, k.wdtype) if d is not None}
    assert roles == set(SUPPORTED)


def test_select_passes_cover_the_key():
    for dt in REAL:
        k = cg.SelectKernel(dt)
        p = k.passes()
        assert sum(b for _, b in p) == 8 * dt.itemsize and p[-1][0] == 0
        assert all(b <= cg.RADIX_BITS for _, b in p)


# -- CPU: errors are NumPy's -------------------------------------------------------------------

def _raises_like(gcall, ncall):
    with pytest.raises(Exception) as want:
        ncall()
    with pytest.raises(type(want.value)) as got:
        gcall()
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("shape, dt, kw", [
    ((3,), "float64", {}), ((2, 2), "int64", {}), ((), "int64", {}),
    ((3,), "int64", dict(minlength=-1)), ((3,), "int64", dict(minlength=None)),
])
def test_bincount_errors(shape, dt, kw):
    _raises_like(lambda: gp.bincount(fake(shape, dt), **kw),
                 lambda: np.bincount(np.ones(shape, dt), **kw))


def test_bincount_weight_errors():
    _raises_like(lambda: gp.bincount(fake((3,), "int64"), weights=fake((4,))),
                 lambda: np.bincount(np.ones(3, int), weights=np.ones(4)))
    _raises_like(lambda: gp.bincount(fake((3,), "int64"), weights=fake((3,), "complex64")),
                 lambda: np.bincount(np.ones(3, int), weights=np.ones(3, np.complex64)))


@pytest.mark.parametrize("kw", [
    dict(bins=0, range=(0, 1)), dict(bins=-3, range=(0, 1)), dict(bins=2.5, range=(0, 1)),
    dict(bins=[[1, 2]]), dict(bins=[3, 2, 1]), dict(bins="nope"), dict(bins=5, range=(2, 1)),
    dict(bins=5, range=(0, np.nan)), dict(bins=5, range=(0, np.inf)),
    dict(bins="auto", weights=True),
])
def test_histogram_errors(kw):
    gkw, nkw = dict(kw), dict(kw)
    if kw.get("weights"):
        gkw["weights"], nkw["weights"] = fake((10,)), np.ones(10, np.float32)
    _raises_like(lambda: gp.histogram(fake((10,)), **gkw),
                 lambda: np.histogram(np.ones(10, np.float32), **nkw))


def test_histogram_weight_shape_error():
    _raises_like(lambda: gp.histogram(fake((10,)), weights=fake((9,))),
                 lambda: np.histogram(np.ones(10), weights=np.ones(9)))


@pytest.mark.parametrize("func", ["quantile", "percentile", "nanquantile", "nanpercentile"])
@pytest.mark.parametrize("q, kw", [
    (1.5, {}), (-0.1, {}), (0.5, dict(method="foo")), ([[[0.5]]], {}),
    (0.5, dict(weights=True)),
])
def test_quantile_errors(func, q, kw):
    if func.startswith("nan") and q == [[[0.5]]]:
        pytest.skip("checked on the full forms")
    if "percentile" in func and isinstance(q, float):
        q = q * 100
    gkw, nkw = dict(kw), dict(kw)
    if kw.get("weights"):
        gkw["weights"], nkw["weights"] = fake((5,)), np.ones(5)
    _raises_like(lambda: getattr(gp, func)(fake((5,)), q, **gkw),
                 lambda: getattr(np, func)(np.ones(5), q, **nkw))


def test_cumulative_weights_are_flat_over_zero_weights():
    """A parallel scan sums each position in its own order: entries after a zero weight may
    differ from the one before it by a rounding. They are made equal to the last positive
    weight's entry (0 before the first), as NumPy's sequential sum has them."""
    from gpunb._statistics.quantiles import _flat_over_zeros

    r = np.random.default_rng(9)
    ws = r.random((50, 30)) * (r.random((50, 30)) < 0.5)
    ws[0] = 0
    exact = np.cumsum(ws, axis=-1)
    noisy = exact * (1 + r.choice([-1, 0, 1], exact.shape) * 2.0 ** -52)
    got = _flat_over_zeros(np, noisy, ws)
    for row in range(50):
        for k in range(30):
            prev = [j for j in range(k + 1) if ws[row, j] > 0]
            assert got[row, k] == (noisy[row, prev[-1]] if prev else 0.0)


@pytest.mark.parametrize("nan", [False, True])
def test_weighted_inverted_cdf_rows_on_numpy(nan):
    """The weighted quantile along rows is written against an array namespace: run on NumPy
    it gives numpy.quantile's / nanquantile's results and errors (ties, zero weights, NaN,
    all-NaN rows, float32 q)."""
    import warnings

    from gpunb._statistics.quantiles import inverted_cdf_rows, nan_inverted_cdf_rows

    r = np.random.default_rng(5)
    qs = [np.float64(0.3), np.array([0.0, 0.5, 1.0]), np.array([0.25, 0.75], np.float32),
          np.float64(1.0), np.float64(0.0)]
    fn = np.nanquantile if nan else np.quantile
    checked = errors = 0
    for _ in range(200):
        shape = tuple(int(v) for v in r.integers(1, 6, r.integers(1, 4)))
        x = np.round(r.standard_normal(shape) * 2).astype(str(r.choice(["float32", "float64", "int16"])))
        if x.dtype.kind == "f" and r.random() < 0.5:
            x[r.random(shape) < 0.3] = np.nan
        w = r.random(shape) * (r.random(shape) < 0.7)
        if r.random() < 0.7:
            w = np.where(w.sum(-1, keepdims=True) == 0, 1.0, w)
        q = np.asarray(qs[r.integers(len(qs))])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = fn(x, q, axis=-1, method="inverted_cdf", weights=w)
            except ValueError as e:
                with pytest.raises(ValueError, match=str(e)):
                    nan_inverted_cdf_rows(np, x, w, q) if nan else inverted_cdf_rows(np, x, w, q)
                errors += 1
                continue
            got = nan_inverted_cdf_rows(np, x, w, q)[0] if nan else inverted_cdf_rows(np, x, w, q)
        assert got.dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)
        checked += 1
    assert checked > 100 and errors > 5


@pytest.mark.parametrize("shape, wshape, axis", [
    ((4, 5), (5,), 1), ((4, 5), (4,), 0), ((2, 3, 4), (4, 2), (2, 0)), ((4, 5), (5,), None),
    ((4, 5), (4,), 1), ((4, 5), (4, 5), None),
])
def test_weights_shapes(shape, wshape, axis):
    """Weights of the data's shape, or of its axes' shape in the axes' order (NumPy's
    ``_weights_are_valid``): broadcast the same way, or NumPy's error."""
    from numpy.lib._function_base_impl import _weights_are_valid

    from gpunb._statistics.quantiles import _weights

    x = np.ones(shape)
    try:
        want = np.broadcast_to(_weights_are_valid(np.ones(wshape), x, None if axis is None else
                                                  np.lib.array_utils.normalize_axis_tuple(axis, x.ndim)),
                               shape)
    except Exception:
        _raises_like(lambda: _weights(fake(shape, "float64"), fake(wshape, "float64"), axis),
                     lambda: np.quantile(x, 0.5, axis=axis, method="inverted_cdf",
                                         weights=np.ones(wshape)))
        return
    got = _weights(fake(shape, "float64"), fake(wshape, "float64"), axis)
    assert got.shape == want.shape and got.strides == want.strides


def test_quantile_of_complex_is_a_type_error():
    _raises_like(lambda: gp.quantile(fake((5,), "complex64"), 0.5),
                 lambda: np.quantile(np.ones(5, np.complex64), 0.5))


# -- GPU: bincount and histograms ----------------------------------------------------------------

@gpu
@settings(max_examples=30, deadline=None)
@given(dt=st.sampled_from([d for d in SUPPORTED if d.kind in "biu"]), n=st.integers(0, 3000),
       minlength=st.integers(0, 70), weighted=st.sampled_from([None, "float32", "float64", "int16"]))
def test_bincount(dt, n, minlength, weighted):
    x = np.abs(data.rand((n,), dt, rng=rng, bound=60))
    gx = gp.asarray(x)
    if weighted is None:
        same(gp.bincount(gx, minlength=minlength), np.bincount(x, minlength=minlength))
    else:
        w = data.rand((n,), weighted, rng=rng)
        got = gp.bincount(gx, gp.asarray(w), minlength)
        want = np.bincount(x, w, minlength)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(gp.asnumpy(got), want, rtol=1e-9, atol=1e-9)


@gpu
def test_bincount_many_bins_and_views():
    x = rng.integers(0, 50000, 100000)
    gx = gp.asarray(x)
    same(gp.bincount(gx), np.bincount(x))           # more bins than shared memory holds
    same(gp.bincount(gx[::-3]), np.bincount(x[::-3]))
    with pytest.raises(ValueError, match="negative"):
        gp.bincount(gp.asarray(np.array([1, -1])))


@gpu
@settings(max_examples=40, deadline=None)
@given(dt=st.sampled_from(REAL), n=st.integers(0, 2000),
       bins=st.sampled_from([1, 7, 10, 100, 5000, [-1.0, 0.0, 0.5, 0.5, 2.0], "auto", "fd",
                             "doane", "scott", "rice", "sturges", "sqrt", "stone"]),
       rng_=st.sampled_from([None, (-1.0, 1.5), (0, 3)]),
       weighted=st.sampled_from([None, "float32", "float64", "complex128"]),
       density=st.booleans())
def test_histogram(dt, n, bins, rng_, weighted, density):
    x = data.rand((n,), dt, rng=rng, bound=5)
    if isinstance(bins, str):
        weighted = None
        if bins == "stone":
            n = min(n, 300)
            x = x[:n]
    w = data.rand((n,), weighted, rng=rng) if weighted else None
    kw = dict(bins=bins, range=rng_, density=density)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = np.histogram(x, weights=w, **kw)
        except Exception as e:
            with pytest.raises(type(e)):
                gp.histogram(gp.asarray(x), weights=None if w is None else gp.asarray(w), **kw)
            return
        got = gp.histogram(gp.asarray(x), weights=None if w is None else gp.asarray(w), **kw)
    same(got[1], want[1])
    if w is None and not density:
        same(got[0], want[0])
    else:
        assert got[0].dtype == want[0].dtype
        # float32 weights of both signs: NumPy differences float32 running sums and the GPU
        # adds in whatever order its atomics land, each off by a few float32 ulps of the
        # weights' magnitudes, not of a bin's (smaller) net sum. nanmax: a zero-width bin's
        # density is NaN (NaN in both), which must not make the tolerance NaN
        loose = weighted == "float32"
        scale = np.nanmax(np.abs(want[0]), initial=0.0)
        np.testing.assert_allclose(gp.asnumpy(got[0]), want[0], rtol=1e-4 if loose else 1e-5,
                                   atol=1e-4 * scale if loose else 1e-6)


@gpu
@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int32", "uint8"])
def test_histogram_edges_exact_on_boundaries(dt):
    # values on and next to the edges: NumPy's index arithmetic and its corrections
    x = np.linspace(-3, 7, 1001).astype(dt)
    x = np.concatenate([x, np.nextafter(x.astype(np.float32), np.float32(np.inf)).astype(dt)])
    for bins, r in [(10, None), (13, (-1, 5)), (7, (0.1, 0.9)), (3, (x.min(), x.max()))]:
        got = gp.histogram(gp.asarray(x)[::-1], bins=bins, range=r)
        want = np.histogram(x[::-1], bins=bins, range=r)
        same(got[0], want[0])
        same(got[1], want[1])
        same(gp.histogram_bin_edges(gp.asarray(x), bins=bins, range=r), np.histogram_bin_edges(x, bins, r))


@gpu
def test_histogram_nan_range_error_and_2d():
    x = np.array([1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match="autodetected range"):
        gp.histogram(gp.asarray(x))
    a = rng.standard_normal(500)
    b = rng.standard_normal(500)
    w = rng.random(500)
    for kw in [dict(), dict(bins=5), dict(bins=[4, 6]), dict(bins=[[-1, 0, 1], [-2, 0, 2, 3]]),
               dict(range=[(-1, 1), (-2, 2)], density=True), dict(weights=True)]:
        g_kw = dict(kw)
        if kw.get("weights"):
            kw["weights"], g_kw["weights"] = w, gp.asarray(w)
        got = gp.histogram2d(gp.asarray(a), gp.asarray(b), **g_kw)
        want = np.histogram2d(a, b, **kw)
        for g, t in zip(got, want):
            np.testing.assert_allclose(gp.asnumpy(g), t, rtol=1e-12)
    s = rng.standard_normal((300, 3))
    got, gedges = gp.histogramdd(gp.asarray(s), bins=(3, 4, 5))
    want, wedges = np.histogramdd(s, bins=(3, 4, 5))
    same(got, want)
    for g, t in zip(gedges, wedges):
        same(g, t)


# -- GPU: order statistics -----------------------------------------------------------------------

@gpu
@settings(max_examples=40, deadline=None)
@given(dt=st.sampled_from(REAL[1:]), n=st.integers(1, 3000), special=st.sampled_from([None, "mixed", "scattered"]))
def test_median_whole_array(dt, n, special):
    x = data.rand((n,), dt, rng=rng, special=special, bound=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(gp.median(gp.asarray(x)), np.asarray(np.median(x)))


@gpu
@pytest.mark.parametrize("dt", ["float32", "int64", "float16", "complex64", "uint8"])
@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2), None])
@pytest.mark.parametrize("keepdims", [False, True])
def test_median_axes(dt, axis, keepdims):
    x = data.rand((5, 6, 4), dt, rng=rng, special="scattered", bound=9)
    view = x[:, ::-1]
    same(gp.median(gp.asarray(x)[:, ::-1], axis=axis, keepdims=keepdims),
         np.asarray(np.median(view, axis=axis, keepdims=keepdims)))


@gpu
@settings(max_examples=60, deadline=None)
@given(dt=st.sampled_from(REAL[1:]), n=st.integers(1, 500), method=st.sampled_from(METHODS),
       q=st.sampled_from([0.0, 0.3, 0.5, 1.0, [0.1, 0.5, 0.99], np.float32(0.25)]),
       special=st.sampled_from([None, "scattered"]))
def test_quantile_methods(dt, n, method, q, special):
    x = data.rand((n,), dt, rng=rng, special=special, bound=50)

    def like_numpy_24(got, want):
        if got.dtype != want.dtype and np.isnan(want).all() and np.lib.NumpyVersion(np.__version__) >= "2.5.0":
            # NumPy 2.5 returns a NaN result in the input's dtype where 2.4 (which gpunb
            # follows, and which CI runs) promotes with a NumPy-scalar q: compare the values
            return want.astype(got.dtype)
        return want

    got = gp.quantile(gp.asarray(x), q, method=method)
    same(got, like_numpy_24(got, np.asarray(np.quantile(x, q, method=method))))
    got = gp.percentile(gp.asarray(x), np.multiply(q, 100), method=method)
    same(got, like_numpy_24(got, np.asarray(np.percentile(x, np.multiply(q, 100), method=method))))


@gpu
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 7, 1000, "tile", "tile+1"])
@pytest.mark.parametrize("special", [None, "nan", "inf"])
def test_scalar_quantile_of_a_short_array(dt, n, special, monkeypatch):
    """A Python-scalar q of a whole float array no longer than one block's sort: the sort and
    one interpolating thread (quantile_small), NumPy's value and dtype bit for bit, NaN where
    the array holds NaN; a longer array takes the radix select."""
    from gpunb._statistics import quantile_small
    from gpunb.core.kernels.sort import run

    tile = run.kernel_for(np.dtype(dt)).block_tile
    n = {"tile": tile, "tile+1": tile + 1}.get(n, n)
    x = (rng.standard_normal(n) * 100).astype(dt)
    if special == "nan":
        x[rng.integers(0, n)] = np.nan
    elif special == "inf":
        x[rng.integers(0, n, 2)] = [np.inf, -np.inf]
    used = []
    real = quantile_small.small_quantile
    monkeypatch.setattr(quantile_small, "small_quantile", lambda *a: used.append(real(*a)) or used[-1])
    g = gp.asarray(x)
    for q in (0, 0.25, 0.5, 0.999, 1.0, 1 / 3):
        for method in ("linear", "weibull", "hazen", "median_unbiased", "interpolated_inverted_cdf"):
            same(gp.quantile(g, q, method=method), np.asarray(np.quantile(x, q, method=method)))
    for q in (0, 10, 90, 99.9, 100):
        same(gp.percentile(g, q), np.asarray(np.percentile(x, q)))
        same(gp.percentile(g, q, keepdims=True), np.percentile(x, q, keepdims=True))
    assert used and all((u is None) == (n > tile) for u in used)


@gpu
@pytest.mark.parametrize("method", ["linear", "nearest", "midpoint", "hazen"])
@pytest.mark.parametrize("axis", [0, 1, (1, 2)])
def test_quantile_axes(method, axis):
    x = data.rand((4, 7, 3), "float32", rng=rng, special="scattered")
    q = [0.2, 0.75]
    same(gp.quantile(gp.asarray(x), q, axis=axis, method=method, keepdims=True),
         np.quantile(x, q, axis=axis, method=method, keepdims=True))
    out = gp.empty(np.quantile(x, 0.5, axis=axis).shape, np.float32)
    r = gp.quantile(gp.asarray(x), 0.5, axis=axis, out=out, method=method)
    assert r is out
    same(out, np.quantile(x, 0.5, axis=axis, method=method))


@gpu
def test_weighted_quantile():
    x = rng.standard_normal(200)
    w = rng.random(200)
    w[:5] = 0
    for q in (0.0, 0.3, 1.0, [0.1, 0.9]):
        same(gp.quantile(gp.asarray(x), q, method="inverted_cdf", weights=gp.asarray(w)),
             np.asarray(np.quantile(x, q, method="inverted_cdf", weights=w)))


@gpu
@pytest.mark.parametrize("func", ["quantile", "percentile", "nanquantile", "nanpercentile"])
@pytest.mark.parametrize("dt", ["float32", "float64", "int64"])
def test_weighted_quantiles_along_axes(func, dt):
    """Weights with ``axis`` (the data's shape or the axes' shape), keepdims, ``out``, NaN
    (propagated, or ignored by the nan-forms with an all-NaN row's warning)."""
    x = np.round(rng.standard_normal((6, 40, 3)) * 3).astype(dt)
    if dt != "int64":
        x[1, ::7, 0] = np.nan
        if func.startswith("nan"):
            x[2, :, 1] = np.nan
    w = rng.random(x.shape) * (rng.random(x.shape) < 0.8)
    w[..., 2] += 0.5
    q = [0.1, 0.5, 1.0] if "quantile" in func else [10, 50, 100]
    gx, gw = gp.asarray(x), gp.asarray(w)
    w1, w2 = w[0, :, 0], w[:, :, 0]
    # NumPy's nan-forms index the weights per row, so they fail on the axes' shape
    # (IndexError in NumPy 2.4): NumPy's reference gets the same weights at the data's shape
    for axis, wh, wn in ((1, w, w), (-1, w, w), (None, w, w),
                         (1, w1, np.broadcast_to(w1[:, None], x.shape)),
                         ((0, 1), w2, np.broadcast_to(w2[:, :, None], x.shape)),
                         ((1, 0), w2.T, np.broadcast_to(w2[:, :, None], x.shape))):
        for qq in (q, q[1]):
            kw = dict(axis=axis, method="inverted_cdf")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                want = getattr(np, func)(x, qq, weights=wn, **kw)
            nw = sum("All-NaN" in str(c.message) for c in caught)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got = getattr(gp, func)(gx, qq, weights=gp.asarray(wh), **kw)
            assert sum("All-NaN" in str(c.message) for c in caught) == bool(nw)
            same(got, np.asarray(want))
    want = getattr(np, func)(x, q, axis=1, method="inverted_cdf", weights=w, keepdims=True)
    out = gp.empty(want.shape, want.dtype)
    r = getattr(gp, func)(gx, q, axis=1, method="inverted_cdf", weights=gw, keepdims=True, out=out)
    assert r is out
    same(out, want)


@gpu
@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int32"])
def test_nan_forms(dt):
    x = data.rand((301,), dt, rng=rng, special="scattered")
    gx = gp.asarray(x)
    same(gp.nanmedian(gx), np.asarray(np.nanmedian(x)))
    same(gp.nanquantile(gx, [0.25, 0.5]), np.nanquantile(x, [0.25, 0.5]))
    same(gp.nanpercentile(gx, 90, method="lower"), np.asarray(np.nanpercentile(x, 90, method="lower")))
    if dt.startswith("float"):
        allnan = np.full(4, np.nan, dt)
        with pytest.warns(RuntimeWarning, match="All-NaN"):
            got = gp.nanmedian(gp.asarray(allnan))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same(got, np.asarray(np.nanmedian(allnan)))


@gpu
def test_order_statistics_of_big_and_empty():
    x = rng.standard_normal(1 << 20).astype(np.float32)
    same(gp.median(gp.asarray(x)), np.asarray(np.median(x)))
    same(gp.percentile(gp.asarray(x), 37.5), np.asarray(np.percentile(x, 37.5)))
    with pytest.raises(IndexError):
        gp.quantile(gp.asarray(np.empty(0)), 0.5)
    same(gp.median(gp.asarray(np.float64(3.0))), np.asarray(np.median(np.float64(3.0))))


@gpu
@pytest.mark.parametrize("method", METHODS)
def test_nan_forms_along_axes(method):
    x = data.rand((5, 9, 4), "float32", rng=rng)
    x[rng.random(x.shape) < 0.3] = np.nan
    x[1, :, 2] = np.nan            # an all-NaN row along axis 1
    gx = gp.asarray(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for q in (0.4, [0.0, 0.5, 1.0]):
            same(gp.nanquantile(gx, q, axis=1, method=method),
                 np.asarray(np.nanquantile(x, q, axis=1, method=method)))
        same(gp.nanpercentile(gx, 30, axis=(0, 2), method=method, keepdims=True),
             np.nanpercentile(x, 30, axis=(0, 2), method=method, keepdims=True))
        if method == "linear":
            same(gp.nanmedian(gx, axis=1), np.nanmedian(x, axis=1))
            same(gp.nanmedian(gx[:, ::-1], axis=0, keepdims=True), np.nanmedian(x[:, ::-1], axis=0, keepdims=True))
