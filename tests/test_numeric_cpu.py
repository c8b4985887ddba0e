"""gpunb's numeric helpers (gpunb/_math/numeric.py) are NumPy's algorithms written against an
array namespace: run here on NumPy itself, each must give numpy's result exactly (and its
errors), so the steps are checked without a GPU; tests/test_numeric_gpu.py runs them on gpunb."""

import re

import numpy as np
import pytest

from gpunb._math import numeric as nm

rng = np.random.default_rng(77)
SPECIAL = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 3.0, -1e300, 1e-310])


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":
        assert (np.signbit(got) == np.signbit(want)).all()


@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int32", "bool"])
def test_signed_infinities(dt):
    with np.errstate(all="ignore"):
        x = SPECIAL.astype(dt)
    _same(nm._signed_inf(np, x, None, False), np.isposinf(x))
    _same(nm._signed_inf(np, x, None, True), np.isneginf(x))


def test_signed_infinities_of_complex_raise_numpys_error():
    z = np.ones(3, np.complex64)
    with pytest.raises(TypeError) as want:
        np.isposinf(z)
    with pytest.raises(TypeError, match=re.escape(str(want.value))):
        nm._signed_inf(np, z, None, False)


@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "complex64", "complex128", "int64"])
@pytest.mark.parametrize("kw", [{}, dict(nan=-1.0, posinf=7.0, neginf=-7.0), dict(nan=2)])
def test_nan_to_num(dt, kw):
    with np.errstate(all="ignore"):
        x = SPECIAL.astype(dt) if dt[0] != "c" else (SPECIAL + 1j * SPECIAL[::-1]).astype(dt)
    _same(nm._nan_to_num(np, x.copy(), True, kw.get("nan", 0.0), kw.get("posinf"), kw.get("neginf")),
          np.nan_to_num(x, **kw))
    y = x.copy()
    r = nm._nan_to_num(np, y, False, kw.get("nan", 0.0), kw.get("posinf"), kw.get("neginf"))
    assert r is y or dt == "int64"
    _same(y, np.nan_to_num(x, **kw))


@pytest.mark.parametrize("dt", ["float32", "float64", "int16", "complex64"])
def test_sinc(dt):
    x = (rng.standard_normal(200) * 4).astype(dt)
    x[:3] = 0
    with np.errstate(all="ignore"):
        _same(nm._sinc(np, x), np.sinc(x))


@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int8", "uint16", "bool"])
def test_fix(dt):
    with np.errstate(all="ignore"):
        x = np.concatenate([SPECIAL, rng.standard_normal(50) * 10]).astype(dt)
    _same(nm._fix(np, x, None), np.fix(x))
    out = np.empty_like(x)
    assert nm._fix(np, x, out) is out
    _same(out, np.fix(x))


@pytest.mark.parametrize("pdt, xdt", [("float64", "float64"), ("int64", "float32"), ("float32", "int32"),
                                      ("complex128", "float64"), ("int32", "int64")])
def test_polyval(pdt, xdt):
    p = (rng.standard_normal(6) * 3).astype(pdt)
    x = (rng.standard_normal(40) * 2).astype(xdt)
    _same(nm._polyval(np, p, x), np.polyval(p, x))
    _same(nm._polyval(np, p, x[0]), np.asarray(np.polyval(p, x[0])))


@pytest.mark.parametrize("dt", ["float32", "float64", "int8", "complex64", "bool"])
@pytest.mark.parametrize("N, increasing", [(None, False), (4, True), (1, False), (0, True), (7, False)])
def test_vander(dt, N, increasing):
    x = (rng.standard_normal(9) * 3).astype(dt)
    _same(nm._vander(np, x, N, increasing), np.vander(x, N, increasing))


def test_vander_needs_a_vector():
    with pytest.raises(ValueError, match="one-dimensional"):
        nm._vander(np, np.ones((2, 2)), None, False)


def _interp_case(r, n, cplx, dup):
    xp = np.sort(r.standard_normal(n) * 5)
    if dup and n > 3:
        xp[2] = xp[1]
        xp[-1] = xp[-2]
    fp = r.standard_normal(n) * 10
    if cplx:
        fp = fp + 1j * r.standard_normal(n)
    if n > 4:
        fp[3] = np.inf
        fp[4] = np.nan if not cplx else complex(np.nan, 1)
    x = np.concatenate([r.standard_normal(60) * 7, xp, [np.nan, np.inf, -np.inf, xp[0] - 1, xp[-1] + 1]])
    return x, xp, fp


@pytest.mark.parametrize("n", [1, 2, 5, 40])
@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("dup", [False, True])
def test_interp(n, cplx, dup):
    r = np.random.default_rng(n * 10 + cplx * 2 + dup)
    x, xpts, fp = _interp_case(r, n, cplx, dup)
    for kw in ({}, dict(left=-100.0, right=100.0), dict(period=3.5)):
        if "period" in kw and dup:
            continue
        with np.errstate(all="ignore"):
            want = np.interp(x, xpts, fp, **kw)
            got = nm._interp(np, x, xpts, fp, kw.get("left"), kw.get("right"), kw.get("period"))
        if cplx:        # NumPy's complex loop multiplies by 1/dx: within an ulp or two
            np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-300, equal_nan=True)
            assert got.dtype == want.dtype
        else:
            _same(got, want)
    _same(np.asarray(nm._interp(np, 0.5, xpts, fp.real, None, None, None)),
          np.asarray(np.interp(0.5, xpts, fp.real)))


@pytest.mark.parametrize("args", [
    (np.ones(3), np.ones(0), np.ones(0)), (np.ones(3), np.ones(3), np.ones(2)),
    (np.ones(3), np.ones((2, 2)), np.ones(4)), (np.ones(3), np.ones(3), np.ones(3), None, None, 0),
])
def test_interp_errors(args):
    with pytest.raises(ValueError) as want:
        np.interp(*args[:3], *args[3:5], **({"period": args[5]} if len(args) > 5 else {}))
    with pytest.raises(ValueError, match=re.escape(str(want.value))):
        nm._interp(np, *args[:3], *(list(args[3:]) + [None] * (6 - len(args))))


@pytest.mark.parametrize("dt", ["float64", "float32", "int64"])
@pytest.mark.parametrize("kw", [{}, dict(discont=4.0), dict(period=360), dict(period=6, axis=0)])
def test_unwrap(dt, kw):
    p = np.cumsum(rng.standard_normal((5, 30)) * 3, axis=1)
    if "period" in kw and kw["period"] == 360:
        p = p * 60
    p = (p % kw.get("period", 2 * np.pi)).astype(dt)
    args = (kw.get("discont"), kw.get("axis", -1), kw.get("period", 2 * np.pi))
    _same(nm._unwrap(np, p, *args), np.unwrap(p, **kw))


# ---- masks, bits, block, piecewise, i0 (gpunb/_manipulation/masks.py, block.py) -----------------

from gpunb._manipulation import block as bl  # noqa: E402
from gpunb._manipulation import masks as mk  # noqa: E402


@pytest.mark.parametrize("values", [7, [1, 2, 3], np.arange(5.0), np.array([9])])
def test_putmask(values):
    a = np.arange(20.0).reshape(4, 5)
    m = a % 3 == 0
    want, got = a.copy(), a.copy()
    np.putmask(want, m, values)
    mk._putmask(np, got, m, values)
    _same(got, want)


@pytest.mark.parametrize("shape, wrap, val", [((5, 5), False, 3), ((7, 3), False, [1, 2]),
                                              ((7, 3), True, 9), ((3, 7), True, [4, 5, 6]),
                                              ((3, 3, 3), False, 1), ((4, 4), False, np.arange(2))])
def test_fill_diagonal(shape, wrap, val):
    want = np.zeros(shape)
    np.fill_diagonal(want, val, wrap)
    got = np.zeros(shape)
    mk._fill_diagonal(np, got, val, wrap)
    _same(got, want)
    got = np.zeros(shape[::-1]).T       # not C-contiguous: written back
    mk._fill_diagonal(np, got, val, wrap)
    _same(got, want)


@pytest.mark.parametrize("shape, axis", [((13,), None), ((3, 10), 1), ((9, 4), 0), ((2, 3, 17), -1),
                                         ((5, 3), None), ((0,), None)])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits(shape, axis, bitorder):
    a = rng.integers(0, 3, shape).astype(np.int16)
    _same(mk._packbits(np, a, axis, bitorder), np.packbits(a, axis=axis, bitorder=bitorder))
    u = rng.integers(0, 256, shape, dtype=np.uint8)
    for count in (None, 5, -3, 100):
        if u.size == 0 and count and count > 0:     # NumPy returns uninitialized memory here
            _same(mk._unpackbits(np, u, axis, count, bitorder), np.zeros(count, np.uint8))
            continue
        try:
            want = np.unpackbits(u, axis=axis, count=count, bitorder=bitorder)
        except ValueError as e:
            with pytest.raises(ValueError, match=re.escape(str(e))):
                mk._unpackbits(np, u, axis, count, bitorder)
            continue
        _same(mk._unpackbits(np, u, axis, count, bitorder), want)


def test_bits_errors():
    with pytest.raises(TypeError, match="integer or boolean"):
        mk._packbits(np, np.ones(3), None, "big")
    with pytest.raises(TypeError, match="unsigned byte"):
        mk._unpackbits(np, np.ones(3, np.int8), None, None, "big")


@pytest.mark.parametrize("case", [
    lambda a, b: [[a, b], [b, a]], lambda a, b: [a, b], lambda a, b: [[[a]], [[b]]],
    lambda a, b: [[a[0], 1.5], [b[0], 2.0]], lambda a, b: [[np.ones((2, 2)), np.zeros((2, 3))],
                                                           [np.zeros((1, 2)), np.ones((1, 3))]],
    lambda a, b: 3.0])
def test_block(case):
    a, b = np.arange(6.0).reshape(2, 3), np.full((2, 3), 7.0)
    _same(bl._block(np, case(a, b)), np.block(case(a, b)))


@pytest.mark.parametrize("bad", [[[1, 2], 3], [], [[1], []], ([1, 2], [3]), [[1, 2], (3, 4)]])
def test_block_errors(bad):
    with pytest.raises(Exception) as want:
        np.block(bad)
    with pytest.raises(type(want.value), match=re.escape(str(want.value))):
        bl._block(np, bad)


def test_piecewise():
    x = np.linspace(-3, 3, 41)
    for conds, funcs in (([x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2]),
                         ([x < -1, x > 1], [0.5, lambda v: v * 3, -1.0]),
                         ([x < 0], [lambda v: v + 1])):
        _same(nm._piecewise(np, x, conds, funcs, (), {}), np.piecewise(x, conds, funcs))
    with pytest.raises(ValueError, match="either 2 or 3 functions"):
        nm._piecewise(np, x, [x < 0, x > 0], [1.0], (), {})


@pytest.mark.parametrize("dt", ["float64", "float32", "int32"])
def test_i0(dt):
    x = (rng.standard_normal(300) * 12).astype(dt)
    _same(nm._i0(np, x), np.i0(x))
    with pytest.raises(TypeError, match="complex"):
        nm._i0(np, np.ones(2, complex))


def test_host_helpers_are_numpys():
    import gpunb as gp
    from tests.data import fake

    assert gp.binary_repr(10, 8) == np.binary_repr(10, 8) and gp.base_repr(35, 36) == "Z"
    assert gp.common_type(fake((2,), "float32"), fake((2,), "int16")) is np.float64
    assert gp.min_scalar_type(fake((2,), "int16")) == np.int16 and gp.min_scalar_type(300) == np.uint16
    assert gp.typename("d") == np.typename("d") and gp.iterable([1]) and not gp.iterable(1)
    with gp.printoptions(precision=2):
        assert gp.get_printoptions()["precision"] == 2
    with pytest.raises(ValueError, match="both 'C' and 'F'"):
        gp.require(fake((2, 2)), requirements=["C", "F"])
    assert gp.require(fake((2, 2)), requirements="C").shape == (2, 2)


# ---- polynomials (gpunb/_math/polynomial.py) -------------------------------------------------------

from gpunb._math import polynomial as pm  # noqa: E402


@pytest.mark.parametrize("a1, a2", [([1.0, 2, 3], [4.0, 5]), ([1], [2, 3, 4]), ([1.5, 2], [3, 4.5])])
def test_polyadd_polysub(a1, a2):
    a1, a2 = np.asarray(a1), np.asarray(a2)
    _same(pm._pad_sum(np, a1, a2, False), np.polyadd(a1, a2))
    _same(pm._pad_sum(np, a1, a2, True), np.polysub(a1, a2))


@pytest.mark.parametrize("m", [0, 1, 2, 5])
def test_polyder_polyint(m):
    p = np.array([3.0, -2, 5, 7, 1])
    _same(pm._polyder(np, p, m), np.polyder(p, m))
    _same(pm._polyder(np, p.astype(int), m), np.polyder(p.astype(int), m))
    for k in (None, 2.5, [1.0, 2.0, 3.0, 4.0, 5.0]):
        _same(pm._polyint(np, p, m, k), np.polyint(p, m, k))
    with pytest.raises(ValueError, match="must be positive"):
        pm._polyder(np, p, -1)


@pytest.mark.parametrize("kw", [{}, dict(full=True), dict(cov=True), dict(cov="unscaled"),
                                dict(w=np.linspace(0.5, 2, 50)), dict(deg=1, two=True)])
def test_polyfit(kw):
    x = np.linspace(-2, 3, 50)
    y = 2 * x ** 3 - x + 0.5 + np.random.default_rng(4).standard_normal(50) * 0.1
    if kw.pop("two", False):
        y = np.stack([y, y * 2], axis=1)
    deg = kw.pop("deg", 3)
    want = np.polyfit(x, y, deg, **kw)
    got = pm._polyfit(np, x, y, deg, kw.get("rcond"), kw.get("full", False), kw.get("w"), kw.get("cov", False))
    for g, w in zip(got if isinstance(want, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(TypeError, match="same length"):
        pm._polyfit(np, x, y[:-1], 2, None, False, None, False)


def test_apply_over_axes():
    from gpunb._manipulation.apply import _apply_over_axes

    a = np.arange(24.0).reshape(2, 3, 4)
    for axes in (0, [0, 2], (-1, 1)):
        _same(_apply_over_axes(np, np.sum, a, axes), np.apply_over_axes(np.sum, a, axes))
    with pytest.raises(ValueError, match="correct shape"):
        _apply_over_axes(np, lambda v, ax: v.sum(axis=None), a, [0])
