"""The scan family: cumsum, cumprod, nancumsum, nancumprod; stream compaction (nonzero,
flatnonzero, argwhere, where(condition), and the select behind x[mask]).

CPU: NVRTC compiles the kernels (every entry point, every dtype in some role), the planner's
choices, and NumPy's errors on made-up arrays (every check runs before a kernel). GPU: values
against NumPy over hypothesis shapes, axes, dtypes and layouts."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core.build.compiler import compile_program
from gpunb.core.dtypes import SUPPORTED
from gpunb.core.kernels.scan import codegen as cg
from gpunb.core.kernels.scan import plan as sp
from gpunb.core.kernels.scan.run import accumulate_dtype
from gpunb.core.ndarray import ndarray
from tests import data
from tests.data import fake

rng = np.random.default_rng(1212)
gpu = pytest.mark.gpu
CUM = ("cumsum", "cumprod", "nancumsum", "nancumprod")


# -- CPU: the kernels compile ------------------------------------------------------------------

def _compiles(k):
    prog = compile_program(cg.render(k), cg.nvrtc_options(k), "sm_90")
    assert prog.cubin
    for e in cg.entry_points(k):
        assert e.encode() in prog.cubin, e


# Every dtype in some role (input, accumulator, output, mask, selected value), both ops, the
# NaN forms, exclusive scans, every entry point: few sources, as each takes NVRTC seconds.
_SCANS = [cg.ScanKernel("float32", "float32", "float32", "sum"),
          cg.ScanKernel("bool", "int64", "int64", "prod"),
          cg.ScanKernel("float16", "float16", "float16", "sum", nan=True),
          cg.ScanKernel("complex128", "complex128", "complex64", "prod", nan=True, exclusive=True),
          cg.ScanKernel("int8", "uint16", "uint8", "sum", exclusive=True),
          cg.ScanKernel("int16", "uint32", "float64", "prod"),
          cg.ScanKernel("int32", "uint64", "int32", "sum")]
_COMPACTS = [cg.CompactKernel("bool", "values", "complex64"),
             cg.CompactKernel("uint8", "values", "float16"),
             cg.CompactKernel("float64", "flat"),
             cg.CompactKernel("complex128", "nd"),
             cg.CompactKernel("int16", "values", "int64")]


def test_compiled_kernels_cover_every_dtype():
    roles = {d for k in _SCANS for d in (k.src, k.acc, k.dst)}
    roles |= {d for k in _COMPACTS for d in (k.mask, k.value)}
    assert roles == set(SUPPORTED)


@pytest.mark.parametrize("k", _SCANS + _COMPACTS, ids=lambda k: k.name)
def test_kernels_compile(k):
    _compiles(k)


def test_cccl_version_is_in_the_options():
    from gpunb.core.build import cccl

    opts = cg.nvrtc_options(None)
    assert f"-DGPUNB_CCCL={cccl.version()}" in opts and cccl.version() >= 2000000
    assert any(o.startswith("-I") and o.endswith("cccl") or o[2:] == cccl.include_dir() for o in opts)


def test_kernel_names_are_distinct():
    names = {k.name for k in _SCANS + _COMPACTS}
    assert len(names) == len(_SCANS + _COMPACTS)


# -- CPU: plans ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, axis, kind", [
    ((100,), 0, "flat"), ((7, 100), 1, "rows"), ((1, 5, 1), 1, "flat"), ((100, 3), 1, "rows"),
    ((10**6, 64), 0, "moved"), ((1000, 10000), 0, "cols"), ((2, 10**6, 4), 1, "moved"), ((3, 100, 4), 1, "cols"),
    ((5, 1, 4), 1, "cols")])
def test_plan_kinds(shape, axis, kind):
    p = sp.plan(shape, axis)
    assert p.kind == kind and p.n == math.prod(shape) and p.L == shape[axis]


def test_accumulate_dtype_is_numpys():
    for d in SUPPORTED:
        assert accumulate_dtype(d) == np.cumsum(np.ones(2, d)).dtype == np.cumprod(np.ones(2, d)).dtype


def test_items_keep_tiles_in_static_shared_memory():
    for a in SUPPORTED:
        for b in SUPPORTED:
            items = cg.items_per_thread(a, b)
            assert cg.THREADS * items * max(a.itemsize, b.itemsize) <= 20480     # 20 KiB: the union of the load and store staging
            items = cg.CompactKernel(a, "values", b).items
            assert cg.THREADS * items * max(a.itemsize, b.itemsize) <= 32768


# -- CPU: errors are NumPy's -------------------------------------------------------------------

def _raises_like(gcall, ncall):
    with pytest.raises(Exception) as want:
        ncall()
    with pytest.raises(type(want.value)) as got:
        gcall()
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name", CUM)
@pytest.mark.parametrize("kw", [dict(axis=2), dict(axis=-3), dict(axis=(0,)), dict(axis=1.0),
                                dict(axis=True), dict(out=(5,)), dict(out=(3, 4)), dict(axis=1, out=(3, 5)),
                                dict(axis=0, out=(4, 3))])
def test_cum_errors(name, kw):
    shape = (3, 4)
    gkw, nkw = dict(kw), dict(kw)
    if "out" in kw:
        gkw["out"], nkw["out"] = fake(kw["out"]), np.ones(kw["out"], np.float32)
    _raises_like(lambda: getattr(gp, name)(fake(shape), **gkw),
                 lambda: getattr(np, name)(np.ones(shape, np.float32), **nkw))


def test_cum_0d_axis_error():
    _raises_like(lambda: gp.cumsum(fake(()), axis=1), lambda: np.cumsum(np.float32(1), axis=1))


def test_cum_refuses_host_arrays_and_bad_dtypes():
    with pytest.raises(TypeError, match="host memory"):
        gp.cumsum(np.ones(3))
    with pytest.raises(TypeError):
        gp.cumsum(fake(), dtype="U")
    with pytest.raises(TypeError, match="out must be a gpunb.ndarray"):
        gp.cumprod(fake(), axis=0, out=np.ones((3, 4)))


def test_nonzero_0d_raises_as_numpy():
    _raises_like(lambda: gp.nonzero(fake(())), lambda: np.nonzero(np.float32(1)))
    _raises_like(lambda: gp.where(fake(())), lambda: np.where(np.float32(1)))
    with pytest.raises(ValueError, match="either both or neither"):
        gp.where(fake(), fake())


def test_names_dispatch_from_numpy():
    for name in CUM + ("nonzero", "flatnonzero", "argwhere"):
        assert getattr(gp, name).__doc__
    assert hasattr(ndarray, "cumsum") and hasattr(ndarray, "cumprod") and hasattr(ndarray, "nonzero")


# -- GPU: values against NumPy -------------------------------------------------------------------

def rand(shape, dtype, special=None):
    return data.rand(shape, dtype, rng=rng, scale=2, bound=3, special=special)


def _check(got, x, name, axis=None, dtype=None):
    """``got`` against NumPy's ``name(x, axis, dtype)``: the same dtype and shape; integers
    equal; floats within the rounding of a scan, measured against the scan done in float64
    (complex128) of the same inputs, as NumPy's own float32 and float16 results carry the
    rounding of their sequential order (float16's of every step)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(np, name)(x, axis=axis, dtype=dtype)
        got = gp.asnumpy(got)
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
        if want.dtype.kind not in "fc":
            np.testing.assert_array_equal(got, want)
            return
        wide = np.complex128 if want.dtype.kind == "c" else np.float64
        xw = (x.astype(want.dtype) if dtype is not None else x).astype(wide)
        ref = getattr(np, name)(xw, axis=axis)
        n = max(2, x.size if axis is None else x.shape[axis])
        eps_r = np.finfo(want.dtype).eps
        eps_a = np.finfo(np.float32 if want.dtype == np.float16 else want.dtype).eps
        # the longest chain of roundings: a thread's elements, the block's tree, one step
        # per earlier tile of the look-back (tiles of 1024 to 4096 elements)
        depth = 16 + 2 * np.log2(n) + n / 1024
        if "sum" in name:
            mag = np.cumsum(np.abs(np.where(np.isnan(xw), 0, xw)), axis=axis)
            tol = eps_r * np.abs(ref) + eps_a * depth * mag
        else:
            tol = (2 * eps_r + 4 * eps_a * depth) * np.abs(ref)
        g = got.astype(wide)
        ok = (np.isnan(g) & np.isnan(ref)) | (g == ref) | (np.abs(g - ref) <= tol)
        assert ok.all(), (np.argwhere(~ok)[:5], g[~ok][:5], ref[~ok][:5])


def _near_one(x, name):
    """Inputs whose products stay finite and away from zero (products of N(0, 2) draws
    overflow or underflow, and then only the edge cases of float range are compared)."""
    if "prod" not in name or x.dtype.kind not in "fc":
        return x
    y = np.sign(x.real) * np.exp(x.real * 0.001)   # a random walk of log |product|
    if x.dtype.kind == "c":
        y = y + 0.001j
    y = np.asarray(y).astype(x.dtype)
    y[np.isnan(x)] = np.nan
    return y


def _view(x, kind):
    """``x`` (host) and the matching GPU view of a layout kind."""
    if kind == "c" or x.ndim == 0:
        return x, gp.asarray(x)
    if kind == "f":
        return x, gp.asfortranarray(gp.asarray(x)) if hasattr(gp, "asfortranarray") else gp.asarray(x).T.copy().T
    if kind == "neg":
        g = gp.asarray(x)
        sl = tuple(slice(None, None, -1) for _ in range(x.ndim))
        return x[sl], g[sl]
    # strided: every other element along the last axis of a wider array
    wide = np.repeat(x, 2, axis=-1)
    return wide[..., ::2], gp.asarray(wide)[..., ::2]


shapes = st.lists(st.integers(0, 7), min_size=0, max_size=6).filter(lambda s: math.prod(s) <= 4000)


@gpu
@settings(max_examples=60, deadline=None)
@given(shape=shapes, dtype=st.sampled_from(SUPPORTED), name=st.sampled_from(CUM),
       layout=st.sampled_from(["c", "f", "neg", "strided"]), data_=st.data())
def test_cum_vs_numpy(shape, dtype, name, layout, data_):
    x = _near_one(rand(tuple(shape), dtype, special="scattered" if name.startswith("nan") else None), name)
    xh, xg = _view(x, layout)
    axis = data_.draw(st.sampled_from([None] + list(range(-xh.ndim, xh.ndim))), "axis")
    _check(getattr(gp, name)(xg, axis=axis), xh, name, axis)


@gpu
@pytest.mark.parametrize("name", CUM)
@pytest.mark.parametrize("dtype", SUPPORTED, ids=str)
@pytest.mark.parametrize("shape, axis", [((5000,), 0), ((100003,), 0), ((37, 1000), 1),
                                        ((3, 4099), -1), ((4097, 3), 0), ((3, 3000, 5), 1),
                                        ((2, 70000, 3), 1), ((100000, 1), 1), ((2, 3), None)])
def test_cum_tiles_and_layouts(name, dtype, shape, axis):
    # sizes cross tile boundaries (4096, 2048 and 1024 elements) in every plan kind
    x = _near_one(rand(shape, dtype, special="scattered" if name.startswith("nan") else None), name)
    _check(getattr(gp, name)(gp.asarray(x), axis=axis), x, name, axis)


@gpu
@pytest.mark.parametrize("dtype, acc", [("int8", "int8"), ("float64", "int32"), ("bool", "bool"),
                                        ("int32", "float32"), ("complex128", "float64"),
                                        ("uint8", "float16"), ("int64", "uint16")])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cum_dtype(dtype, acc, name):
    x = _near_one(rand((3, 700), dtype), name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = getattr(gp, name)(gp.asarray(x), axis=1, dtype=acc)
    _check(got, x, name, 1, acc)


@gpu
@pytest.mark.parametrize("layout", ["c", "f", "strided", "neg"])
@pytest.mark.parametrize("odt", ["float64", "int16", "float32"])
def test_cum_out(layout, odt):
    x = rng.integers(-3, 4, (30, 50)).astype(np.float32)     # exact sums: casts to int16 agree
    oh = np.zeros((30, 50), odt)
    _, og = _view(oh, layout)
    want = np.cumsum(x, axis=0, out=np.zeros((30, 50), odt))
    r = gp.cumsum(gp.asarray(x), axis=0, out=og)
    assert r is og
    np.testing.assert_array_equal(gp.asnumpy(og), want)
    # in place, as NumPy allows
    xg = gp.asarray(x)
    gp.cumsum(xg, axis=1, out=xg)
    np.testing.assert_array_equal(gp.asnumpy(xg), np.cumsum(x, axis=1))


@gpu
def test_cum_methods_and_numpy_dispatch():
    x = rand((4, 5), "int16")
    g = gp.asarray(x)
    _check(g.cumsum(axis=1), x, "cumsum", 1)
    _check(g.cumprod(), x, "cumprod")
    _check(np.cumsum(g, axis=0), x, "cumsum", 0)
    _check(np.nancumprod(g), x, "nancumprod")


@gpu
def test_cumsum_long():
    x = rand((3 * 2**22 + 5,), "float32")
    _check(gp.cumsum(gp.asarray(x)), x, "cumsum")
    i = rand((2**23 + 7,), "int32")
    _check(gp.cumsum(gp.asarray(i)), i, "cumsum")
    r = i[: i.size // 7 * 7].reshape(-1, 7)
    _check(gp.cumsum(gp.asarray(r), axis=1), r, "cumsum", 1)


@gpu
@settings(max_examples=60, deadline=None)
@given(shape=shapes, dtype=st.sampled_from(SUPPORTED), layout=st.sampled_from(["c", "f", "neg", "strided"]),
       density=st.sampled_from([0.0, 0.1, 0.5, 1.0]))
def test_nonzero_vs_numpy(shape, dtype, layout, density):
    x = rand(tuple(shape), dtype, special="mixed")
    x = np.where(rng.random(x.shape) < density, x, np.zeros((), dtype)).astype(dtype)
    xh, xg = _view(x, layout)
    got = gp.flatnonzero(xg)
    np.testing.assert_array_equal(gp.asnumpy(got), np.flatnonzero(xh))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(gp.asnumpy(gp.argwhere(xg)), np.argwhere(xh))
    if xh.ndim:
        got = gp.nonzero(xg)
        want = np.nonzero(xh)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(gp.asnumpy(a), b)
        for a, b in zip(gp.where(xg), np.where(xh)):
            np.testing.assert_array_equal(gp.asnumpy(a), b)
        for a, b in zip(xg.nonzero(), xh.nonzero()):
            np.testing.assert_array_equal(gp.asnumpy(a), b)


@gpu
@pytest.mark.parametrize("n", [1, 4095, 4096, 4097, 100000, 2**21 + 3])
@pytest.mark.parametrize("dtype", SUPPORTED, ids=str)
def test_select_vs_numpy(n, dtype):
    from gpunb.core.kernels.scan.run import nonzero_flat, select

    x = rand((n,), dtype)
    m = rng.random(n) < 0.4
    got = select(gp.asarray(x), gp.asarray(m))
    np.testing.assert_array_equal(gp.asnumpy(got), x[m])
    np.testing.assert_array_equal(gp.asnumpy(nonzero_flat(gp.asarray(m))), np.flatnonzero(m))


@gpu
def test_select_views_and_mask_dtypes():
    from gpunb.core.kernels.scan.run import select

    x = rand((40, 60), "float64")
    m = rand((40, 60), "int8")
    for sl in [(slice(None), slice(None)), (slice(None, None, -1), slice(None, None, 2)), (slice(3, 30), slice(None, None, -3))]:
        got = select(gp.asarray(x)[sl], gp.asarray(m)[sl])
        np.testing.assert_array_equal(gp.asnumpy(got), x[sl][m[sl] != 0])
    got = select(gp.asarray(x).T, gp.asarray(m > 0).T)
    np.testing.assert_array_equal(gp.asnumpy(got), x.T[(m > 0).T])
    got = select(gp.asarray(np.float64(2.0)), gp.asarray(np.bool_(True)))
    np.testing.assert_array_equal(gp.asnumpy(got), np.float64(2.0)[np.bool_(True)])


@gpu
def test_nonzero_many_dims():
    x = (rng.random((2,) * 10) < 0.3)
    got = gp.nonzero(gp.asarray(x))
    for a, b in zip(got, np.nonzero(x)):
        np.testing.assert_array_equal(gp.asnumpy(a), b)
