"""NumPy's numeric helpers built of other calls: ``isposinf``, ``isneginf``, ``nan_to_num``,
``sinc``, ``fix``, ``real_if_close``, ``polyval``, ``vander``, ``interp``, ``unwrap``.

Each is NumPy's own algorithm written once against an array namespace ``xp``: gpunb's here,
NumPy's in the CPU tests (tests/test_numeric_cpu.py), which so check the steps against
NumPy's results without a GPU.
"""

from __future__ import annotations

import math

import numpy as np


def _gp():
    import gpunb

    return gpunb


def _signed_inf(xp, x, out, negative: bool):
    x = xp.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(f"This operation is not supported for {x.dtype} values because it "
                        "would be ambiguous.")
    sign = xp.signbit(x)
    return xp.logical_and(xp.isinf(x), sign if negative else xp.logical_not(sign), out=out)


def isposinf(x, out=None):
    """Whether each element is positive infinity (numpy.isposinf)."""
    return _signed_inf(_gp(), x, out, False)


def isneginf(x, out=None):
    """Whether each element is negative infinity (numpy.isneginf)."""
    return _signed_inf(_gp(), x, out, True)


def _nan_to_num(xp, x, copy, nan, posinf, neginf):
    x = xp.asarray(x)
    if x.dtype.kind not in "fc":
        return x.copy() if copy else x
    real = np.dtype(x.real.dtype)
    hi = np.finfo(real).max if posinf is None else posinf
    lo = np.finfo(real).min if neginf is None else neginf

    def fixed(d):
        with np.errstate(over="ignore", invalid="ignore"):
            v = xp.where(xp.isnan(d), xp.asarray(nan, dtype=d.dtype), d)
            v = xp.where(xp.isposinf(d), xp.asarray(hi, dtype=d.dtype), v)
            return xp.where(xp.isneginf(d), xp.asarray(lo, dtype=d.dtype), v)
    out = x.copy() if copy else x
    if x.dtype.kind == "c":
        re, im = fixed(x.real), fixed(x.imag)
        out.real[...] = re
        out.imag[...] = im
    else:
        out[...] = fixed(x)
    return out


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced (numpy.nan_to_num): by ``nan`` (0), ``posinf`` and
    ``neginf`` (the dtype's largest and smallest finite values); complex parts each. In place
    when ``copy=False``."""
    return _nan_to_num(_gp(), x, copy, nan, posinf, neginf)


def _sinc(xp, x):
    x = xp.asarray(x)
    y = xp.multiply(math.pi, xp.where(x == 0, 1.0e-20, x))
    return xp.sin(y) / y


def sinc(x):
    """The normalized sinc function ``sin(pi x) / (pi x)`` (numpy.sinc, NumPy's steps)."""
    return _sinc(_gp(), x)


def _fix(xp, x, out):
    x = xp.asarray(x)
    r = xp.where(x >= 0, xp.floor(x), xp.ceil(x))
    if out is not None:
        out[...] = r
        return out
    return r


def fix(x, out=None):
    """Rounded toward zero (numpy.fix): ``floor`` of the non-negative elements, ``ceil`` of
    the others."""
    return _fix(_gp(), x, out)


def real_if_close(a, tol=100):
    """The real part of a complex array whose imaginary parts are all within ``tol`` machine
    epsilons of zero (numpy.real_if_close; one flag read back), else the array."""
    gp = _gp()
    a = gp.asarray(a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    if bool(gp.all(gp.absolute(a.imag) < tol)):
        return a.real
    return a


def _polyval(xp, p, x):
    p = xp.asarray(p)
    x = xp.asarray(x)
    y = xp.zeros_like(x)
    for i in range(p.shape[0] if p.ndim else 1):
        y = y * x + (p[i] if p.ndim else p)
    return y


def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x`` (numpy.polyval:
    Horner's steps, NumPy's dtypes; a poly1d ``p`` is its coefficients, a poly1d ``x`` gives
    a poly1d)."""
    from .poly1d import _polyval_poly1d, poly1d

    if isinstance(p, poly1d):
        p = p.coeffs
    if isinstance(x, poly1d):
        return _polyval_poly1d(_gp().asarray(p), x)
    return _polyval(_gp(), p, x)


def _vander(xp, x, N, increasing):
    x = xp.asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    if N is None:
        N = x.shape[0]
    v = xp.empty((x.shape[0], N), dtype=np.promote_types(x.dtype, int))
    tmp = v if increasing else v[:, ::-1]
    if N > 0:
        tmp[:, 0] = 1
    for k in range(1, N):       # NumPy's multiply.accumulate: each power from the previous
        tmp[:, k] = tmp[:, k - 1] * x if k > 1 else x
    return v


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of ``x`` (numpy.vander): columns ``x**(N-1) ... x**0`` (or
    increasing), each power the previous one times ``x`` as NumPy accumulates them."""
    return _vander(_gp(), x, N, increasing)


def _interp(xp, x, xpts, fp, left, right, period):
    x, xpts, fp = xp.asarray(x), xp.asarray(xpts), xp.asarray(fp)
    cplx = fp.dtype.kind == "c"
    ftype = np.complex128 if cplx else np.float64
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        if xpts.ndim != 1 or fp.ndim != 1:
            raise ValueError("Data points must be 1D sequences")
        if xpts.shape[0] != fp.shape[0]:
            raise ValueError("fp and xp are not of the same length")
        x = x.astype(np.float64) % period
        xpts = xpts.astype(np.float64) % period
        order = xp.argsort(xpts)
        xpts, fp = xp.take(xpts, order), xp.take(fp.astype(ftype), order)
        xpts = xp.concatenate((xpts[-1:] - period, xpts, xpts[0:1] + period))
        fp = xp.concatenate((fp[-1:], fp, fp[0:1]))
    if xpts.ndim != 1 or fp.ndim != 1:
        raise ValueError("object too deep for desired array" if max(xpts.ndim, fp.ndim) > 1
                         else "object of too small depth for desired array")
    n = xpts.shape[0]
    if n == 0:
        raise ValueError("array of sample points is empty")
    if fp.shape[0] != n:
        raise ValueError("fp and xp are not of the same length.")
    x, xpts, fp = x.astype(np.float64), xpts.astype(np.float64), fp.astype(ftype)
    lval = fp[0] if left is None else xp.asarray(left, dtype=ftype)
    rval = fp[n - 1] if right is None else xp.asarray(right, dtype=ftype)
    if n == 1:      # NumPy's one-point case (a NaN x gets fp[0] there)
        return xp.where(x < xpts[0], lval, xp.where(x > xpts[0], rval, fp[0]))
    j = xp.searchsorted(xpts, x, side="right") - 1
    jc = xp.clip(j, 0, n - 2)
    x0, x1 = xp.take(xpts, jc), xp.take(xpts, jc + 1)
    y0, y1 = xp.take(fp, jc), xp.take(fp, jc + 1)

    def line(a0, a1, b0, b1):
        with np.errstate(all="ignore"):
            slope = (b1 - b0) / (x1 - x0)
            r = slope * (x - x0) + b0
            r2 = slope * (x - x1) + b1       # NaN one way: NumPy tries the other end
            return xp.where(xp.isnan(r), xp.where(xp.isnan(r2) & (b0 == b1), b0, r2), r)
    if cplx:
        r = line(x0, x1, y0.real, y1.real) + 1j * line(x0, x1, y0.imag, y1.imag)
    else:
        r = line(x0, x1, y0, y1)
    r = xp.where(x == x0, y0, r)
    r = xp.where(j == n - 1, fp[n - 1], r)
    r = xp.where(j < 0, lval, xp.where(x > xpts[n - 1], rval, r))
    return xp.where(xp.isnan(x), x.astype(ftype), r)


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional piecewise-linear interpolation (numpy.interp): float64 (complex128
    for complex ``fp``) values at ``x`` of the points ``(xp, fp)``, ``xp`` increasing;
    ``left``/``right`` outside, ``period`` for periodic ``x``. NumPy's compiled steps (the
    slope from the left point, from the right one where that gives NaN) for every ``x`` at
    once, ``xp`` searched by :func:`gpunb.searchsorted`."""
    return _interp(_gp(), x, xp, fp, left, right, period)


def _unwrap(xp, p, discont, axis, period):
    p = xp.asarray(p)
    nd = p.ndim
    dd = xp.diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    slice1 = [slice(None, None)] * nd
    slice1[axis] = slice(1, None)
    slice1 = tuple(slice1)
    dtype = np.result_type(dd.dtype, period)
    if np.issubdtype(dtype, np.integer):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
    interval_low = -interval_high
    ddmod = xp.mod(dd - interval_low, period) + interval_low
    if boundary_ambiguous:
        ddmod = xp.where((ddmod == interval_low) & (dd > 0), xp.asarray(interval_high, dtype=ddmod.dtype),
                         ddmod)
    ph_correct = ddmod - dd
    ph_correct = xp.where(xp.abs(dd) < discont, xp.asarray(0, dtype=ph_correct.dtype), ph_correct)
    up = xp.asarray(p, dtype=dtype, copy=True)
    up[slice1] = p[slice1] + xp.cumsum(ph_correct, axis=axis)
    return up


def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    """Unwrap by taking the complement of large jumps with respect to ``period``
    (numpy.unwrap, NumPy's steps)."""
    return _unwrap(_gp(), p, discont, axis, period)


def _piecewise(xp, x, condlist, funclist, args, kw):
    x = xp.asarray(x)
    n2 = len(funclist)
    if np.isscalar(condlist) or (not isinstance(condlist[0], (list, np.ndarray)) and
                                 not hasattr(condlist[0], "shape") and x.ndim != 0):
        condlist = [condlist]
    conds = [xp.asarray(c, dtype=bool) for c in condlist]
    n = len(conds)
    if n == n2 - 1:         # the "otherwise" condition
        others = xp.logical_not(xp.any(xp.stack(conds), axis=0))
        conds.append(others)
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = xp.zeros_like(x)
    for cond, func in zip(conds, funclist):
        cond = xp.broadcast_to(cond, x.shape)
        if not callable(func):
            y[cond] = func
        else:
            vals = x[cond]
            if vals.size > 0:
                y[cond] = func(vals, *args, **kw)
    return y


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[i]`` (a function or a value) applied where ``condlist[i]`` holds
    (numpy.piecewise); one more function is the value elsewhere."""
    return _piecewise(_gp(), x, condlist, funclist, args, kw)


# numpy.i0's Chebyshev coefficients (Cephes), for |x| <= 8 and above
_I0A = [-4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
        1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
        -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
        9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
        -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
        1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
        -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
        1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
        -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
        1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1]
_I0B = [-7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
        3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
        1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
        -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
        7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
        -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
        3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
        2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
        8.04490411014108831608e-1]


def _chbevl(x, vals):
    b0, b1, b2 = vals[0], 0.0, 0.0
    for v in vals[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + v
    return 0.5 * (b0 - b2)


def _i0(xp, x):
    x = xp.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("i0 not supported for complex values")
    if x.dtype.kind != "f":
        x = x.astype(float)
    x = xp.abs(x)
    small = x <= 8.0
    with np.errstate(all="ignore"):
        a = xp.exp(x) * _chbevl(x / 2.0 - 2, _I0A)
        b = xp.exp(x) * _chbevl(32.0 / x - 2.0, _I0B) / xp.sqrt(x)
    return xp.where(small, a, b)


def i0(x):
    """The modified Bessel function of the first kind, order 0 (numpy.i0: its Chebyshev
    series, both branches computed and the right one kept)."""
    return _i0(_gp(), x)
