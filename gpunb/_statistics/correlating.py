"""Correlating: ``cov``, ``corrcoef``, ``correlate``, ``convolve``.

There is no matrix product in gpunb yet (cuBLAS comes with ``gpunb.linalg``), so the products
here are one fused multiply-and-sum kernel over broadcast views: ``cov``'s
``X @ X.T.conj()`` is ``(x[:, None, :] * conj(x[None, :, :])).sum(-1)``, with the centering
(subtracting each row's mean, read once per output as a per-output operand) in the same
kernel, and ``correlate``/``convolve`` are a sliding-window view (row ``i`` of the window is
``a[i:i + len(v)]``: a stride equal to the step, no copy) times ``v``, summed by the same
fused reduction. The fused reduction reads the broadcast views directly; the product is never
materialized. This is right for the sizes statistics usually sees (tens to thousands of
variables); large covariance matrices will take the cuBLAS path once linalg brings it.
Sums run in another order than NumPy's BLAS dot, so float results agree to rounding.
"""

from __future__ import annotations

import operator

import numpy as np

from ..core import args, memo
from ..core.fusion.function import fuse
from ..core.ndarray import ndarray
from .._math.ufuncs import UFUNCS
from .meanvar import average

_subtract, _multiply, _conj = UFUNCS["subtract"], UFUNCS["multiply"], UFUNCS["conjugate"]
_divide, _sqrt = UFUNCS["true_divide"], UFUNCS["sqrt"]
_rint, _where = UFUNCS["rint"], UFUNCS["where"]
_fused = memo.table("correlating.fused")


def _memo(key, build):
    f = _fused.get(key)
    if f is None:
        f = _fused[key] = fuse(build())
    return f


# -- cov, corrcoef ----------------------------------------------------------------------------

def _products(complex_, weighted):
    """Entry (i, j): sum over samples of (x_i - m_i) * conj((x_j - m_j) [* w])."""
    def cov_products(x1, m1, x2, m2, *w):
        d1, d2 = _subtract(x1, m1), _subtract(x2, m2)
        if weighted:
            d2 = _multiply(d2, w[0])
        return _multiply(d1, _conj(d2) if complex_ else d2).sum(axis=-1)
    return cov_products


def _weight_flags():
    """2 where a weight is not an integer, 1 where it is negative: the max says which of
    NumPy's errors (integer first) applies."""
    def weight_flags(w):
        return (_where(w != _rint(w), 2, 0) + _where(w < 0, 1, 0)).max()
    return weight_flags


def _weights(w, name, n, integer):
    """NumPy's checks of ``fweights``/``aweights``, in NumPy's order, and the weights as
    float64 (NumPy converts them first); the value checks read one flag back."""
    w = _as_gpu(w, "cov's " + name)
    flags = _memo(("weight_flags",), _weight_flags)
    if integer:     # NumPy checks that they are integers first
        w = w.astype(np.float64, copy=False)
        flag = int(flags(w)) if w.size else 0
        if flag >= 2:
            raise TypeError("fweights must be integer")
    if w.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if w.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if not integer:
        w = w.astype(np.float64, copy=False)
        flag = int(flags(w)) if w.size else 0
    if flag % 2:
        raise ValueError(f"{name} cannot be negative")
    return w


def _as_gpu(value, what):
    g = args.as_gpu(value, what)
    if g is not None:
        return g
    from .._creation.from_data import upload

    return upload(np.asarray(value))


def _rows(a, rowvar, transpose_if):
    """numpy.array(a, ndmin=2), transposed for ``rowvar=False``: a view."""
    x = a.reshape((1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a
    return x.T if not rowvar and transpose_if(x) else x


def _copy(x, dtype):
    """A new C-contiguous copy in ``dtype`` (the one copy NumPy makes too)."""
    out = ndarray._empty(x.shape, dtype)
    out[...] = x
    return out


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """Covariance matrix of the rows (variables) of ``m`` and ``y`` (numpy.cov), with
    NumPy's normalization (N - 1, or N with ``bias``, or N - ddof), frequency and
    observation weights, and dtype (float64 at least). The product is one fused kernel (see
    the module notes). Weights' checks and their normalization read a few values back from
    the GPU (NumPy's errors and 'Degrees of freedom' warning depend on them); unweighted
    calls read nothing."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    x = args.array(m, "cov")
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    yy = None
    if y is not None:
        yy = args.array(y, "cov")
        if yy.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dt = np.result_type(x.dtype, np.float64) if yy is None else \
            np.result_type(x.dtype, yy.dtype, np.float64)
    else:
        dt = args.dtype(dtype)
    X = _rows(x, rowvar, lambda _: x.ndim != 1)
    if X.shape[0] == 0:
        return ndarray._empty((0, 0), np.dtype(np.float64))
    if yy is not None:
        from .._manipulation.joining import concatenate

        Y = _rows(yy, rowvar, lambda r: r.shape[0] != 1)
        X = concatenate((_copy(X, dt), _copy(Y, dt)), axis=0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    p, n = X.shape
    w = None
    if fweights is not None:
        w = _weights(fweights, "fweights", n, True)
    aw = None
    if aweights is not None:
        aw = _weights(aweights, "aweights", n, False)
        w = aw if w is None else _multiply(w, aw)
    if yy is None:                  # copied after the weights' checks (which need no copy)
        X = _copy(X, dt)
    if w is None:
        avg = average(X, axis=1)
        fact = n - ddof
    else:
        avg, w_sum = average(X, axis=1, weights=w, returned=True)
        w_sum = w_sum[0].get()[()]                   # read back (a NumPy scalar, as NumPy's)
        if ddof == 0:
            fact = w_sum
        elif aw is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * _multiply(w, aw).sum().get()[()] / w_sum
    if fact <= 0:
        from ..core.errors import warn

        warn("Degrees of freedom <= 0 for slice")
        fact = 0.0
    sx, sm = X.strides, avg.strides[0]
    x1 = X._derive((p, 1, n), (sx[0], 0, sx[1]))
    x2 = X._derive((1, p, n), (0, sx[0], sx[1]))
    m1 = avg._derive((p, 1, 1), (sm, 0, 0))
    m2 = avg._derive((1, p, 1), (0, sm, 0))
    cplx, weighted = dt.kind == "c", w is not None
    f = _memo(("cov", cplx, weighted), lambda: _products(cplx, weighted))
    c = f(x1, m1, x2, m2, w) if w is not None else f(x1, m1, x2, m2)
    scale = np.true_divide(1, fact)             # NumPy's warning for fact == 0 included
    _multiply(c, scale, out=c)
    return c.squeeze()


def _normalize():
    def corr_normalize(c, s1, s2):
        return UFUNCS["clip"](_divide(_divide(c, s1), s2), -1, 1)
    return corr_normalize


def _normalize_complex():
    def corr_normalize_complex(c, s1, s2):
        return _divide(_divide(c, s1), s2)
    return corr_normalize_complex


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients (numpy.corrcoef): ``cov`` divided by the outer
    product of the standard deviations (one fused kernel), real and imaginary parts clipped
    to [-1, 1] as NumPy; NaN where a variable has zero variance."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    p = c.shape[0]
    d = c._derive((p,), (c.strides[0] + c.strides[1],))       # the diagonal, a view
    stddev = _sqrt(d.real)
    s1 = stddev._derive((p, 1), (stddev.strides[0], 0))
    s2 = stddev._derive((1, p), (0, stddev.strides[0]))
    if c.dtype.kind != "c":
        return _memo(("corr",), _normalize)(c, s1, s2)
    r = _memo(("corr_complex",), _normalize_complex)(c, s1, s2)
    UFUNCS["clip"](r.real, -1, 1, out=r.real)
    UFUNCS["clip"](r.imag, -1, 1, out=r.imag)
    return r


# -- correlate, convolve ----------------------------------------------------------------------

def _mode(mode) -> int:
    """NumPy's parsing of a convolve/correlate mode: 'valid', 'same', 'full' or 0, 1, 2."""
    if isinstance(mode, str):
        exact = {"valid": 0, "same": 1, "full": 2}
        if mode in exact:
            return exact[mode]
        if mode[:1] in ("v", "V", "s", "S", "f", "F"):
            raise ValueError("Use one of 'valid', 'same', or 'full' for convolve/correlate mode")
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    if isinstance(mode, (bool, np.bool_)):
        raise TypeError("convolve/correlate mode not understood")
    try:
        number = operator.index(mode)
    except TypeError:
        raise TypeError("convolve/correlate mode not understood") from None
    if not -2**31 <= number < 2**31:
        raise TypeError("convolve/correlate mode not understood")
    if number not in (0, 1, 2):
        raise ValueError("integer convolve/correlate mode must be 0, 1, or 2")
    return number


def window(N: int, M: int, mode: int) -> tuple[int, int]:
    """(k0, L): the result holds ``c[k0 + i]`` for i < L, where ``c[k] = sum_n a[n + k] *
    v[n]`` (terms outside ``a`` are zero) for ``len(a) == N`` and ``len(v) == M``: NumPy's
    choice for each mode (with its swap when ``a`` is the shorter)."""
    if mode == 2:
        return -(M - 1), N + M - 1
    if mode == 0:
        return (0, N - M + 1) if N >= M else (-(M - N), M - N + 1)
    return (-(M // 2), N) if N >= M else (N // 2 - (M - 1), M)


def _window_sum(conj, rdt, masked=False):
    def window_sum(w, v):
        return _multiply(w, _conj(v) if conj else v).sum(axis=-1, dtype=rdt)

    def masked_sum(w, v, inside):
        # a term outside ``a`` is left out, as NumPy's sums leave it (0 * NaN would be NaN);
        # -0.0 is the exact identity of a float sum
        from .._sorting.search import where

        zero = 0 if rdt.kind in "biu" else -0.0
        return where(inside, _multiply(w, _conj(v) if conj else v), zero).sum(axis=-1, dtype=rdt)
    return masked_sum if masked else window_sum


def _dot_windows(a, v, mode: int, conj: bool):
    """``c[k0 + i]`` of :func:`window`: a sliding-window view of ``a`` (padded when the
    windows run past its ends, the padding's terms left out) times ``v``, summed in one fused
    kernel."""
    N, M = a.size, v.size
    rdt = np.result_type(a.dtype, v.dtype)
    k0, L = window(N, M, mode)
    lo, hi = k0, k0 + L - 1 + M - 1            # the elements of a the windows touch
    cj = bool(conj and rdt.kind == "c")
    if lo >= 0 and hi <= N - 1:
        s = a.strides[0]
        w = a._derive((L, M), (s, s), lo * s)
        return _memo(("window", cj, rdt), lambda: _window_sum(cj, rdt))(w, v)
    base = ndarray._empty((hi - lo + 1,), a.dtype)
    base[...] = 0
    base[-lo:-lo + N] = a
    inside = ndarray._empty((hi - lo + 1,), np.dtype(bool))
    inside[...] = False
    inside[-lo:-lo + N] = True
    s = base.strides[0]
    w = base._derive((L, M), (s, s))
    m = inside._derive((L, M), (1, 1))
    return _memo(("window", cj, rdt, "masked"), lambda: _window_sum(cj, rdt, True))(w, v, m)


def correlate(a, v, mode="valid"):
    """Cross-correlation of two 1-d arrays (numpy.correlate): ``c[k] = sum_n a[n + k] *
    conj(v[n])``, NumPy's 'valid' (default), 'same' and 'full' windows and result dtype; a
    direct sum per output (see the module notes)."""
    x, y = args.array(a, "correlate"), args.array(v, "correlate")
    md = _mode(mode)
    for z in (x, y):
        if z.ndim == 0:
            raise ValueError("object of too small depth for desired array")
        if z.ndim > 1:
            raise ValueError("object too deep for desired array")
    if x.size == 0:
        raise ValueError("first array argument cannot be empty")
    if y.size == 0:
        raise ValueError("second array argument cannot be empty")
    return _dot_windows(x, y, md, True)


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-d arrays (numpy.convolve): correlation with
    ``v`` reversed (a view), no conjugation; 'full' (default), 'same', 'valid'."""
    x, y = args.array(a, "convolve"), args.array(v, "convolve")
    x = x.reshape((1,)) if x.ndim == 0 else x
    y = y.reshape((1,)) if y.ndim == 0 else y
    if len(x) == 0:
        raise ValueError("a cannot be empty")
    if len(y) == 0:
        raise ValueError("v cannot be empty")
    if len(y) > len(x):
        x, y = y, x
    md = _mode(mode)
    if x.ndim > 1 or y.ndim > 1:
        raise ValueError("object too deep for desired array")
    return _dot_windows(x, y[::-1], md, False)
