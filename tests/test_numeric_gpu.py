"""The numeric helpers, windows, copies and small utilities on the GPU against NumPy (their
algorithms are checked on NumPy in tests/test_numeric_cpu.py)."""

import warnings

import numpy as np
import pytest

import gpunb as gp
from tests.data import fake, same

rng = np.random.default_rng(78)
gpu = pytest.mark.gpu
SPECIAL = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 3.0, -1e300, 1e-310])


def _close(got, want, rtol=1e-13):
    got = gp.asnumpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True)


# ---- no GPU needed ------------------------------------------------------------------------------

@pytest.mark.parametrize("axis, start", [(0, 0), (2, 0), (1, 3), (-1, 1), (0, -2)])
def test_rollaxis_is_numpys_view(axis, start):
    h = np.empty((2, 3, 4))
    g = fake((2, 3, 4), "float64")
    want = np.rollaxis(h, axis, start)
    got = gp.rollaxis(g, axis, start)
    assert got.shape == want.shape and got.strides == want.strides


def test_rollaxis_errors_and_isfortran():
    with pytest.raises(np.exceptions.AxisError):
        gp.rollaxis(fake((2, 3)), 0, 5)
    assert gp.isfortran(fake((2, 3)).T) and not gp.isfortran(fake((2, 3)))
    assert not gp.isfortran(fake((3,)))


def test_copyto_casting_errors_are_numpys():
    for src in (fake((3,), "float64"), 1.5):
        with pytest.raises(TypeError) as want:
            np.copyto(np.zeros(3, np.int64), np.zeros(3) if not np.isscalar(src) else src)
        with pytest.raises(TypeError, match="Cannot cast"):
            gp.copyto(fake((3,), "int64"), src)
        assert "Cannot cast" in str(want.value)


# ---- on the GPU ---------------------------------------------------------------------------------

@gpu
@pytest.mark.parametrize("dt", ["float32", "float64", "complex128", "int32"])
def test_numeric_helpers_match_numpy(dt):
    with np.errstate(all="ignore"):
        x = SPECIAL.astype(dt) if dt[0] != "c" else (SPECIAL + 1j * SPECIAL[::-1]).astype(dt)
    g = gp.asarray(x)
    same(gp.nan_to_num(g), np.nan_to_num(x))
    same(gp.nan_to_num(g, nan=-1.0, posinf=5.0, neginf=-5.0), np.nan_to_num(x, nan=-1.0, posinf=5.0, neginf=-5.0))
    g2 = g.copy()
    gp.nan_to_num(g2, copy=False)
    same(g2, np.nan_to_num(x))
    if dt[0] != "c":
        same(gp.isposinf(g), np.isposinf(x))
        same(gp.isneginf(g), np.isneginf(x))
        same(gp.fix(g), np.fix(x))
    with np.errstate(all="ignore"):
        _close(gp.sinc(g), np.sinc(x), 1e-5 if dt == "float32" else 1e-13)


@gpu
def test_polyval_vander_real_if_close():
    p = rng.standard_normal(5)
    x = rng.standard_normal(100).astype(np.float32)
    _close(gp.polyval(gp.asarray(p), gp.asarray(x)), np.polyval(p, x))
    same(gp.vander(gp.asarray(x[:7]), 5), np.vander(x[:7], 5))
    same(gp.vander(gp.asarray(np.arange(6)), increasing=True), np.vander(np.arange(6), increasing=True))
    z = (x + 1e-20j).astype(np.complex128)
    same(gp.real_if_close(gp.asarray(z)), np.real_if_close(z))
    z[3] += 1j
    same(gp.real_if_close(gp.asarray(z)), np.real_if_close(z))


@gpu
@pytest.mark.parametrize("cplx", [False, True])
def test_interp_and_unwrap(cplx):
    xp = np.sort(rng.standard_normal(30) * 5)
    xp[5] = xp[4]
    fp = rng.standard_normal(30) * 10 + (1j * rng.standard_normal(30) if cplx else 0)
    x = np.concatenate([rng.standard_normal(500) * 7, xp, [np.nan, np.inf, -np.inf]])
    for kw in ({}, dict(left=-1.0, right=2.0)):
        _close(gp.interp(gp.asarray(x), gp.asarray(xp), gp.asarray(fp), **kw), np.interp(x, xp, fp, **kw))
    xq = np.sort(rng.random(12) * 3)
    _close(gp.interp(gp.asarray(x), gp.asarray(xq), gp.asarray(fp[:12]), period=3.0),
           np.interp(x, xq, fp[:12], period=3.0))
    ph = np.cumsum(rng.standard_normal((4, 200)), axis=1) % (2 * np.pi)
    _close(gp.unwrap(gp.asarray(ph)), np.unwrap(ph), 1e-12)


@gpu
def test_windows_copies_and_builders():
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        same(getattr(gp, name)(17), getattr(np, name)(17))
    same(gp.kaiser(12, 5.5), np.kaiser(12, 5.5))
    d = gp.zeros((3, 4), np.float32)
    gp.copyto(d, gp.asarray(np.arange(4.0, dtype=np.float32)))
    same(d, np.broadcast_to(np.arange(4.0, dtype=np.float32), (3, 4)))
    mask = np.arange(12).reshape(3, 4) % 2 == 0
    gp.copyto(d, 7, where=gp.asarray(mask))
    want = np.broadcast_to(np.arange(4.0, dtype=np.float32), (3, 4)).copy()
    np.copyto(want, 7, where=mask)
    same(d, want)
    same(gp.fromfunction(lambda i, j: i * 10 + j, (3, 4)), np.fromfunction(lambda i, j: i * 10 + j, (3, 4)))
    same(gp.frombuffer(b"\x01\x02\x03\x04", np.uint8), np.frombuffer(b"\x01\x02\x03\x04", np.uint8))
    same(gp.fromiter(range(5), np.int16), np.fromiter(range(5), np.int16))
    h = rng.standard_normal((2, 3))
    assert gp.array_repr(gp.asarray(h)) == np.array_repr(h)
    assert gp.array_str(gp.asarray(h)) == np.array_str(h)
    assert gp.array2string(gp.asarray(h), precision=2) == np.array2string(h, precision=2)
    assert gp.asanyarray(gp.asarray(h)).shape == (2, 3)


@gpu
def test_apply_along_axis_matvec_vecmat():
    h = rng.standard_normal((4, 5, 6))
    g = gp.asarray(h)
    for axis in (0, 1, 2):
        _close(gp.apply_along_axis(lambda v: v * 2 + v.sum(), axis, g),
               np.apply_along_axis(lambda v: v * 2 + v.sum(), axis, h))
        _close(gp.apply_along_axis(lambda v: gp.stack([v.min(), v.max()]), axis, g),
               np.apply_along_axis(lambda v: np.stack([v.min(), v.max()]), axis, h))
    m = rng.standard_normal((3, 4, 5)) + 1j * rng.standard_normal((3, 4, 5))
    v5, v4 = rng.standard_normal(5), rng.standard_normal((3, 4)) + 1j
    _close(gp.matvec(gp.asarray(m), gp.asarray(v5)), np.matvec(m, v5))
    _close(gp.vecmat(gp.asarray(v4), gp.asarray(m)), np.vecmat(v4, m))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        gp.matvec(gp.asarray(m), gp.asarray(np.float64(1.0)))


@gpu
def test_new_ufuncs_and_aliases():
    a = rng.integers(-50, 50, 300)
    b = rng.integers(-50, 50, 300)
    for name in ("gcd", "lcm", "fmod"):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            same(getattr(gp, name)(gp.asarray(a), gp.asarray(b)), getattr(np, name)(a, b))
    q, r = gp.divmod(gp.asarray(a), gp.asarray(b | 1))
    same(q, np.divmod(a, b | 1)[0])
    same(r, np.divmod(a, b | 1)[1])
    x = rng.standard_normal(300) * 100
    m, e = gp.frexp(gp.asarray(x))
    same(m, np.frexp(x)[0])
    same(e, np.frexp(x)[1])
    same(gp.ldexp(m, e), x)
    same(gp.radians(gp.asarray(x)), np.radians(x))
    same(gp.degrees(gp.asarray(x)), np.degrees(x))
    same(gp.bitwise_count(gp.asarray(a)), np.bitwise_count(a))
    same(gp.heaviside(gp.asarray(x), 0.5), np.heaviside(x, 0.5))


@gpu
def test_masks_bits_block_piecewise_i0():
    a = rng.standard_normal((5, 6))
    m = a > 0
    g, want = gp.asarray(a), a.copy()
    gp.putmask(g, gp.asarray(m), gp.asarray(np.arange(4.0)))
    np.putmask(want, m, np.arange(4.0))
    same(g, want)
    for shape, wrap in (((5, 5), False), ((7, 3), True), ((3, 3, 3), False)):
        g, want = gp.zeros(shape), np.zeros(shape)
        gp.fill_diagonal(g, 4.0, wrap)
        np.fill_diagonal(want, 4.0, wrap)
        same(g, want)
    bits = rng.integers(0, 2, (4, 21)).astype(bool)
    for axis in (None, 0, 1):
        same(gp.packbits(gp.asarray(bits), axis=axis), np.packbits(bits, axis=axis))
        u = np.packbits(bits, axis=axis)
        same(gp.unpackbits(gp.asarray(u), axis=axis), np.unpackbits(u, axis=axis))
        same(gp.unpackbits(gp.asarray(u), axis=axis, count=-2, bitorder="little"),
             np.unpackbits(u, axis=axis, count=-2, bitorder="little"))
    b1, b2 = rng.standard_normal((2, 2)), rng.standard_normal((2, 3))
    same(gp.block([[gp.asarray(b1), gp.asarray(b2)], [gp.asarray(b2[:, :2]), gp.asarray(b2)]]),
         np.block([[b1, b2], [b2[:, :2], b2]]))
    x = np.linspace(-3, 3, 101)
    gx = gp.asarray(x)
    same(gp.piecewise(gx, [gx < 0, gx >= 1], [lambda v: -v, lambda v: v * 2, 0.5]),
         np.piecewise(x, [x < 0, x >= 1], [lambda v: -v, lambda v: v * 2, 0.5]))
    _close(gp.i0(gp.asarray(x * 5)), np.i0(x * 5), 1e-13)
    s = np.array([0.0, -0.0, 1.0, -1.0, np.inf, np.nan, 1e300])
    for dt in ("float16", "float32", "float64"):
        with np.errstate(all="ignore"):
            same(gp.spacing(gp.asarray(s.astype(dt))), np.spacing(s.astype(dt)))


@gpu
def test_save_load_and_checked_arrays(tmp_path):
    h = rng.standard_normal((3, 4)).astype(np.float32)
    g = gp.asarray(h)
    gp.save(tmp_path / "a.npy", g)
    same(gp.load(tmp_path / "a.npy"), h)
    gp.savez(tmp_path / "b.npz", g, y=gp.arange(3))
    with gp.load(tmp_path / "b.npz") as z:
        same(z["arr_0"], h)
        same(z["y"], np.arange(3))
        assert sorted(z.files) == ["arr_0", "y"]
    gp.savez_compressed(tmp_path / "c.npz", x=g)
    same(gp.load(tmp_path / "c.npz")["x"], h)
    same(gp.asarray_chkfinite(g), h)
    with pytest.raises(ValueError, match="must not contain infs or NaNs"):
        gp.asarray_chkfinite(gp.asarray(np.array([1.0, np.nan])))
    f = gp.require(g.T, requirements=["C"])
    assert f.flags.c_contiguous
    same(f, h.T.copy())


@gpu
def test_polynomials_and_text_files(tmp_path):
    p, q = np.array([3.0, -2, 5, 7]), np.array([1.0, 4])
    gp_p, gp_q = gp.asarray(p), gp.asarray(q)
    same(gp.polyadd(gp_p, gp_q), np.polyadd(p, q))
    same(gp.polysub(gp_q, gp_p), np.polysub(q, p))
    _close(gp.polymul(gp_p, gp_q), np.polymul(p, q))
    same(gp.polyder(gp_p, 2), np.polyder(p, 2))
    same(gp.polyint(gp_p, 2, k=[1.0, 2.0]), np.polyint(p, 2, k=[1.0, 2.0]))
    x = np.linspace(-2, 3, 400)
    y = 2 * x ** 3 - x + 0.5 + rng.standard_normal(400) * 0.1
    _close(gp.polyfit(gp.asarray(x), gp.asarray(y), 3), np.polyfit(x, y, 3), 1e-10)
    c, v = gp.polyfit(gp.asarray(x), gp.asarray(y), 2, cov=True)
    cw, vw = np.polyfit(x, y, 2, cov=True)
    _close(c, cw, 1e-10)
    _close(v, vw, 1e-8)
    same(gp.roots(gp_p), np.roots(p))
    same(gp.poly(gp.asarray([1.0, 2.0, 3.0])), np.poly([1.0, 2.0, 3.0]))
    np.savetxt(tmp_path / "t.txt", y[:10])
    same(gp.loadtxt(tmp_path / "t.txt"), np.loadtxt(tmp_path / "t.txt"))
    gp.savetxt(tmp_path / "u.txt", gp.asarray(y[:10]))
    same(gp.loadtxt(tmp_path / "u.txt"), np.loadtxt(tmp_path / "t.txt"))
    same(gp.fromstring("1 2 3", dtype=np.int64, sep=" "), np.array([1, 2, 3]))


@gpu
def test_apply_over_axes_and_mask_indices():
    h = rng.standard_normal((3, 4, 5))
    _close(gp.apply_over_axes(gp.sum, gp.asarray(h), [0, 2]), np.apply_over_axes(np.sum, h, [0, 2]))
    for k in (0, 1, -1):
        got = gp.mask_indices(5, gp.triu, k)
        want = np.mask_indices(5, np.triu, k)
        for g, w in zip(got, want):
            same(g, w)
