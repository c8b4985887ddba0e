"""Reductions against NumPy on random inputs (GPU): every function x dtype, any axes, views,
NaN and inf, empty and 0-d, the split and vectorized paths."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core.dtypes import SUPPORTED
from tests import data

pytestmark = pytest.mark.gpu

rng = np.random.default_rng(2024)
FUNCS = ["sum", "prod", "max", "min", "argmax", "argmin", "mean", "var", "std", "any", "all",
         "nansum", "nanprod", "nanmax", "nanmin", "count_nonzero"]
_PRODUCTS = ("prod", "nanprod")
_EXACT = {"max", "min", "argmax", "argmin", "any", "all", "nanmax", "nanmin", "count_nonzero"}
_RTOL = {"float16": 1e-2, "float32": 2e-5, "float64": 1e-12, "complex64": 2e-5, "complex128": 1e-12}


def rand(shape, dtype, special=True):
    return data.rand(shape, dtype, rng=rng, bound=50, special="scattered" if special else None)


def numpy_call(func, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(getattr(np, func)(x, **kw))


def check(func, got, x, **kw):
    """``got`` (a gpunb result) equals NumPy's on host array ``x``: exactly for ints, bools,
    comparisons and arg reductions; floats within rounding scaled by the input's magnitude."""
    exp = numpy_call(func, x, **kw)
    g = got.get() if isinstance(got, gp.ndarray) else np.asarray(got)
    assert g.dtype == exp.dtype, (func, g.dtype, exp.dtype)
    assert g.shape == exp.shape, (func, g.shape, exp.shape)
    if func in _EXACT or exp.dtype.kind in "biu":
        np.testing.assert_array_equal(g, exp, err_msg=func)
        return
    rtol = _RTOL[exp.dtype.name]
    kw2 = {k: v for k, v in kw.items() if k in ("axis", "keepdims")}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        mag = np.asarray(np.sum(np.abs(np.nan_to_num(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64),
                                                     posinf=0, neginf=0)), **kw2))
        if func in ("var", "std"):
            mag = mag * mag if func == "var" else mag
        if func in ("mean", "var", "std"):
            n = max(1, x.size // max(1, exp.size))
            mag = mag / n if func != "var" else mag / n
    atol = rtol * (float(np.max(np.abs(mag), initial=0)) + 1) * 4
    if func in _PRODUCTS:
        # relative in the normal range; a product that underflows to subnormals may differ in
        # its last subnormal places (the tree's rounding order is not NumPy's sequential one)
        tiny = np.finfo(exp.dtype).smallest_subnormal
        np.testing.assert_allclose(g, exp, rtol=rtol * 8, atol=4 * tiny, equal_nan=True, err_msg=func)
        return
    np.testing.assert_allclose(g, exp, rtol=rtol, atol=atol, equal_nan=True, err_msg=func)


def call(func, a, **kw):
    return getattr(gp, func)(a, **kw)


def data_for(func, shape, dt):
    """Random data for ``func``: NaN and infinities, but for products only NaN (where inf
    meets an underflowed 0, the order of the partial products decides between inf and nan)."""
    if func not in _PRODUCTS:
        return rand(shape, dt)
    x = rand(shape, dt, special=False)
    if func == "nanprod" and dt.kind in "fc" and x.size >= 8:
        x.flat[rng.choice(x.size, 3, replace=False)] = np.nan
    return x


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", [d.name for d in SUPPORTED])
def test_every_function_and_dtype(func, dtype):
    dt = np.dtype(dtype)
    x = data_for(func, (37, 61) if func not in _PRODUCTS else (5, 7), dt)
    g = gp.asarray(x)
    for kw in ({}, {"axis": 0}, {"axis": 1}, {"axis": -1, "keepdims": True}):
        check(func, call(func, g, **kw), x, **kw)
    if func not in ("argmax", "argmin"):
        check(func, call(func, g, axis=(0, 1), keepdims=True), x, axis=(0, 1), keepdims=True)


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", [d.name for d in SUPPORTED])
def test_column_path_every_function_and_dtype(func, dtype):
    """Outputs adjacent and a multiple of the vector width: the 16-byte column entry (and,
    with 3000 rows, its split and combine passes); a 3-D batch of columns as well."""
    dt = np.dtype(dtype)
    # (a product of 3000 rows overflows, and where inf meets 0 the order of the partial
    # products decides between inf and nan: prod takes few rows)
    shapes = ((3000, 64), (5, 4, 32)) if func not in _PRODUCTS else ((8, 64), (5, 4, 32))
    for shape in shapes:
        x = data_for(func, shape, dt)
        g = gp.asarray(x)
        check(func, call(func, g, axis=0), x, axis=0)


@st.composite
def reduction_case(draw):
    nd = draw(st.integers(0, 5))
    shape = tuple(draw(st.lists(st.integers(1, 7), min_size=nd, max_size=nd)))
    big = tuple(s * 2 for s in shape)
    index = tuple(slice(None, None, draw(st.sampled_from([1, 2, -1, -2]))) for _ in shape)
    perm = draw(st.permutations(range(nd)))
    axis = draw(st.one_of(st.none(), st.lists(st.integers(0, max(nd - 1, 0)), unique=True,
                                                  max_size=nd).map(tuple) if nd else st.none()))
    return big, index, perm, axis, draw(st.booleans())


@settings(max_examples=60, deadline=None)
@given(case=reduction_case(), func=st.sampled_from(["sum", "max", "argmin", "mean", "var", "any", "nanmin"]),
       dtype=st.sampled_from(["float32", "int32", "float64", "complex64", "bool", "int8"]))
def test_views_and_axes_match_numpy(case, func, dtype):
    big, index, perm, axis, keepdims = case
    if func in ("var",) and dtype == "bool":
        dtype = "float32"
    x = rand(big, dtype)
    g = gp.asarray(x)
    xv, gv = x[index].transpose(perm), g[index].transpose(perm)
    kw = {"keepdims": keepdims}
    if func in ("argmin",):
        if axis is not None and len(axis) != 1:
            axis = axis[0] if axis else None
        if isinstance(axis, tuple):
            axis = axis[0]
    if axis is not None:
        kw["axis"] = axis
    check(func, call(func, gv, **kw), xv, **kw)


@pytest.mark.parametrize("shape,axis", [((1 << 22,), None), (((1 << 22) + 3,), None), ((3000, 2500), 0),
                                        ((3000, 2500), 1), ((5, 300000), 0), ((300000, 5), 0),
                                        ((300000, 5), 1), ((64, 64, 64), (0, 2))],
                         ids=str)
def test_large_split_and_vector_paths(shape, axis):
    x = rng.standard_normal(shape).astype(np.float32)
    g = gp.asarray(x)
    for func in ("sum", "max", "argmax", "mean", "std", "nansum"):
        if func == "argmax" and isinstance(axis, tuple):
            continue
        kw = {} if axis is None else {"axis": axis}
        check(func, call(func, g, **kw), x, **kw)
    # misaligned start (no 16-byte alignment): the scalar path
    check("sum", gp.sum(g.reshape(-1)[1:]), x.reshape(-1)[1:])


def test_argmax_ties_and_nan_positions():
    x = np.zeros(100_003, np.float32)
    x[[5, 70_000, 99_999]] = 7           # ties: the first index wins
    assert int(gp.argmax(gp.asarray(x)).get()) == 5
    x[[80_000, 90_000]] = np.nan         # NaN: the first NaN wins
    assert int(gp.argmax(gp.asarray(x)).get()) == 80_000
    assert int(gp.argmin(gp.asarray(x)).get()) == 80_000
    y = np.full((7, 50_000), 3, np.int16)
    y[:, 123] = -1
    y[3, 7] = -1
    check("argmin", gp.argmin(gp.asarray(y), axis=1), y, axis=1)


def test_nan_and_inf_rules():
    x = np.array([1.0, np.nan, 3.0, -np.inf], np.float64)
    g = gp.asarray(x)
    assert np.isnan(gp.max(g).get()) and np.isnan(gp.sum(g).get())
    assert gp.nanmax(g).get() == 3.0 and gp.nanmin(g).get() == -np.inf
    assert gp.nansum(g).get() == -np.inf
    allnan = gp.asarray(np.full((3, 4), np.nan, np.float32))
    np.testing.assert_array_equal(gp.nanmax(allnan, axis=0).get(), np.full(4, np.nan, np.float32))


def test_empty_rules():
    e = gp.asarray(np.zeros((0, 4), np.float32))
    check("sum", gp.sum(e, axis=0), np.zeros((0, 4), np.float32), axis=0)
    check("prod", gp.prod(e), np.zeros((0, 4), np.float32))
    check("any", gp.any(e, axis=0), np.zeros((0, 4), np.float32), axis=0)
    check("all", gp.all(e), np.zeros((0, 4), np.float32))
    check("sum", gp.sum(e, axis=1), np.zeros((0, 4), np.float32), axis=1)
    for f, msg in (("max", "zero-size array to reduction operation maximum"),
                   ("argmin", "attempt to get argmin of an empty sequence"),
                   ("nanmax", "zero-size array")):
        with pytest.raises(ValueError, match=msg):
            call(f, e, axis=0)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        m = gp.mean(e, axis=0)
    assert np.isnan(m.get()).all()
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        v = gp.var(gp.asarray(np.ones(3)), ddof=3)
    assert np.isnan(v.get()) or np.isinf(v.get())


def test_zero_d_and_size_one():
    z = gp.asarray(np.float32(2.5))
    check("sum", gp.sum(z), np.array(2.5, np.float32))
    assert int(gp.argmax(z).get()) == 0
    check("var", gp.var(z), np.array(2.5, np.float32))
    one = np.arange(6, dtype=np.int64).reshape(1, 6, 1)
    check("sum", gp.sum(gp.asarray(one), axis=(0, 2)), one, axis=(0, 2))


def test_dtype_out_keepdims_and_errors():
    x = rand((40, 30), np.int8, special=False)
    g = gp.asarray(x)
    check("sum", gp.sum(g, dtype=np.int8), x, dtype=np.int8)          # wraps, as NumPy
    check("sum", gp.sum(g, axis=0, dtype=np.float32), x, axis=0, dtype=np.float32)
    check("mean", gp.mean(g, axis=1, dtype=np.float32), x, axis=1, dtype=np.float32)
    out = gp.zeros(30, np.float64)
    r = gp.sum(g, axis=0, out=out)
    assert r is out
    np.testing.assert_array_equal(out.get(), x.sum(axis=0).astype(np.float64))
    strided = gp.zeros((30, 2), np.int64)[:, 1]                        # non-contiguous out
    gp.max(g, axis=0, out=strided)
    np.testing.assert_array_equal(strided.get(), x.max(axis=0))
    with pytest.raises(ValueError, match="wrong shape"):
        gp.sum(g, axis=0, out=gp.zeros(31))
    with pytest.raises(np.exceptions.AxisError):
        gp.sum(g, axis=2)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):     # NumPy's words
        gp.sum(g, axis=(0, 0))
    with pytest.raises(TypeError):
        gp.argmax(g, axis=(0, 1))
    with pytest.raises(TypeError, match="host memory"):
        gp.sum(x)


def test_methods_and_numpy_protocol():
    x = rand((20, 30), np.float32)
    g = gp.asarray(x)
    check("sum", g.sum(axis=0), x, axis=0)
    check("std", g.std(ddof=1), x, ddof=1)
    check("argmin", g.argmin(axis=1), x, axis=1)
    r = np.mean(g, axis=1)                        # __array_function__: runs on the GPU
    assert isinstance(r, gp.ndarray)
    check("mean", r, x, axis=1)
    assert isinstance(np.max(g), gp.ndarray)
