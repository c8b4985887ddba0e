"""NumPy's polynomial functions (``numpy.polyadd``...): the arithmetic, ``polydiv`` and
``polyfit`` on the GPU, written against an array namespace ``xp`` (NumPy's in
tests/test_numeric_cpu.py); ``roots`` and ``poly`` of their few coefficients computed by
NumPy on the host (a companion matrix's eigenvalues, a product of factors) and uploaded.
As NumPy's, they take :class:`gpunb.poly1d` objects and return one when an input is one."""

from __future__ import annotations

import warnings

import numpy as np

from .._creation.from_data import asnumpy
from .numeric import _gp, _vander


def _pad_sum(xp, a1, a2, sub: bool):
    a1, a2 = xp.atleast_1d(xp.asarray(a1)), xp.atleast_1d(xp.asarray(a2))
    diff = a2.shape[0] - a1.shape[0]
    if diff > 0:
        a1 = xp.concatenate((xp.zeros(diff, a1.dtype), a1))
    elif diff < 0:
        a2 = xp.concatenate((xp.zeros(-diff, a2.dtype), a2))
    return a1 - a2 if sub else a1 + a2


def _poly1d():
    from .poly1d import poly1d

    return poly1d


def _coeffs(p):
    """A poly1d's coefficients, anything else as it is."""
    return p.coeffs if isinstance(p, _poly1d()) else p


def _as_poly(truepoly: bool, *values):
    """The results as poly1d objects when an input was one (NumPy's ``truepoly``)."""
    if not truepoly:
        return values if len(values) > 1 else values[0]
    out = tuple(_poly1d()(v) for v in values)
    return out if len(out) > 1 else out[0]


def _truepoly(*values) -> bool:
    cls = _poly1d()
    return any(isinstance(v, cls) for v in values)


def polyadd(a1, a2):
    """The sum of two polynomials (numpy.polyadd; coefficients highest power first)."""
    return _as_poly(_truepoly(a1, a2), _pad_sum(_gp(), _coeffs(a1), _coeffs(a2), False))


def polysub(a1, a2):
    """The difference of two polynomials (numpy.polysub)."""
    return _as_poly(_truepoly(a1, a2), _pad_sum(_gp(), _coeffs(a1), _coeffs(a2), True))


def _trimmed(xp, c):
    """NumPy's poly1d coefficients: at least 1-d, 1-d only, leading zeros trimmed (one read
    back on the GPU), ``[0]`` when nothing is left."""
    c = xp.atleast_1d(xp.asarray(c))
    if c.ndim > 1:
        raise ValueError("Polynomial must be 1d only.")
    c = xp.trim_zeros(c, trim="f")
    return xp.zeros(1, c.dtype) if len(c) == 0 else c


def _polymul(xp, a1, a2):
    return xp.convolve(_trimmed(xp, a1), _trimmed(xp, a2))


def polymul(a1, a2):
    """The product of two polynomials (numpy.polymul: both trimmed of leading zeros as
    poly1d objects, then their coefficients convolved)."""
    return _as_poly(_truepoly(a1, a2), _polymul(_gp(), _coeffs(a1), _coeffs(a2)))


def _polydiv(xp, u, v):
    u, v = xp.atleast_1d(xp.asarray(u)), xp.atleast_1d(xp.asarray(v))
    if u.ndim > 1 or v.ndim > 1:        # (NumPy fails on them with a ValueError of its own)
        raise ValueError("polydiv takes 0-d or 1-d coefficient arrays")
    if u.shape[0] == 0 or v.shape[0] == 0:      # NumPy's u[0] + v[0]
        raise IndexError("index 0 is out of bounds for axis 0 with size 0")
    u, v = u + 0.0, v + 0.0
    w = np.result_type(u.dtype, v.dtype)       # NumPy's u[0] + v[0]: the common type
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = xp.zeros((max(m - n + 1, 1),), w)
    r = u.astype(w)
    # NumPy's long division, one quotient coefficient per step: on the GPU each step is three
    # small launches (d = scale * r[k] into q[k], d * v, r[k:k+n+1] -= that), the same
    # operations in the same dtypes as NumPy's, so the same roundings; nothing is read back.
    for k in range(m - n + 1):
        d = q[k:k + 1]
        xp.multiply(scale, r[k:k + 1], out=d)
        xp.subtract(r[k:k + n + 1], d * v, out=r[k:k + n + 1])
    if r.shape[0] > 1:
        # NumPy drops leading remainder terms while allclose(r[0], 0, rtol=1e-14), i.e.
        # |r[0]| <= 1e-8 (computed in float64/complex128), keeping one: the first term that
        # is not, found at once (one value read back)
        wide = r.astype(np.complex128 if w.kind == "c" else np.float64)
        big = xp.logical_not(xp.abs(wide) <= 1e-8)
        first = int(xp.argmax(xp.concatenate((big, xp.ones(1, bool)))))
        r = r[min(first, r.shape[0] - 1):]
    return q, r


def polydiv(u, v):
    """The quotient and remainder of polynomial division (numpy.polydiv: NumPy's long
    division in the inputs' common floating type, and its trimming of the remainder's
    leading near-zero terms, ``|r[0]| <= 1e-8``). Real values are NumPy's bit for bit;
    complex ones within rounding (NumPy multiplies each quotient term as a complex scalar,
    which rounds apart from its array loops and gpunb's), so the remainder's leading
    roundoff terms may differ, and in complex64, where they can exceed NumPy's trimming
    tolerance, so may their number."""
    return _as_poly(_truepoly(u, v), *_polydiv(_gp(), _coeffs(u), _coeffs(v)))


def _polyder(xp, p, m):
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = xp.asarray(p)
    for _ in range(m):
        n = p.shape[0] - 1
        p = p[:-1] * xp.arange(n, 0, -1)
    return p


def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial (numpy.polyder)."""
    return _as_poly(_truepoly(p), _polyder(_gp(), _coeffs(p), m))


def _polyint(xp, p, m, k):
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = np.zeros(m, float) if k is None else np.atleast_1d(k.get() if hasattr(k, "get") else k)
    if len(k) == 1 and m > 1:
        k = k[0] * np.ones(m, float)
    if len(k) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = xp.asarray(p)
    for i in range(m):
        p = xp.concatenate((p / xp.arange(p.shape[0], 0, -1), xp.asarray([k[i]])))
    return p


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial, constants ``k`` (numpy.polyint)."""
    return _as_poly(_truepoly(p), _polyint(_gp(), _coeffs(p), m, k))


def _polyfit(xp, x, y, deg, rcond, full, w, cov):
    order = int(deg) + 1
    x = xp.asarray(x) + 0.0
    y = xp.asarray(y) + 0.0
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(x.dtype).eps)
    lhs = _vander(xp, x, order, False)
    rhs = y
    if w is not None:
        w = xp.asarray(w) + 0.0
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = xp.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale
    c, resids, rank, s = xp.linalg.lstsq(lhs, rhs, rcond=rcond)
    c = (c.T / scale).T
    if int(rank) != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=3)
    if full:
        return c, resids, rank, s, rcond
    if cov:
        vbase = xp.linalg.inv(lhs.T @ lhs) / xp.outer(scale, scale)
        if cov == "unscaled":
            fac = 1
        else:
            if x.shape[0] <= order:
                raise ValueError("the number of data points must exceed order to scale the "
                                 "covariance matrix")
            fac = resids / (x.shape[0] - order)
        return (c, vbase * fac) if y.ndim == 1 else (c, vbase[:, :, None] * fac)
    return c


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial fit of degree ``deg`` (numpy.polyfit: NumPy's scaled
    Vandermonde system, solved by :func:`gpunb.linalg.lstsq`)."""
    return _polyfit(_gp(), x, y, deg, rcond, full, w, cov)


def roots(p):
    """The roots of a polynomial (numpy.roots: its companion matrix's eigenvalues), computed
    by NumPy on the host from the few coefficients and uploaded."""
    return _gp().asarray(np.asarray(np.roots(asnumpy(_coeffs(p)))))


def poly(seq_of_zeros):
    """The coefficients of the polynomial with these roots (numpy.poly; a square matrix: its
    characteristic polynomial), computed by NumPy on the host and uploaded; 1.0 for none."""
    r = np.poly(asnumpy(_coeffs(seq_of_zeros)))
    return r if np.ndim(r) == 0 else _gp().asarray(r)
