"""NumPy's polynomial functions (``numpy.polyadd``... the ``poly1d``-free forms): the
arithmetic and ``polyfit`` on the GPU, written against an array namespace ``xp`` (NumPy's in
tests/test_numeric_cpu.py); ``roots`` and ``poly`` of their few coefficients computed by
NumPy on the host (a companion matrix's eigenvalues, a product of factors) and uploaded."""

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


def polyadd(a1, a2):
    """The sum of two polynomials (numpy.polyadd; coefficients highest power first)."""
    return _pad_sum(_gp(), a1, a2, False)


def polysub(a1, a2):
    """The difference of two polynomials (numpy.polysub)."""
    return _pad_sum(_gp(), a1, a2, True)


def polymul(a1, a2):
    """The product of two polynomials (numpy.polymul: their coefficients convolved)."""
    gp = _gp()
    return gp.convolve(gp.atleast_1d(gp.asarray(a1)), gp.atleast_1d(gp.asarray(a2)))


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
    return _polyder(_gp(), p, m)


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
    return _polyint(_gp(), p, m, k)


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
    return _gp().asarray(np.asarray(np.roots(asnumpy(p))))


def poly(seq_of_zeros):
    """The coefficients of the polynomial with these roots (numpy.poly; a square matrix: its
    characteristic polynomial), computed by NumPy on the host and uploaded; 1.0 for none."""
    r = np.poly(asnumpy(seq_of_zeros))
    return r if np.ndim(r) == 0 else _gp().asarray(r)
