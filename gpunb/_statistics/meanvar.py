"""Averages and variances: ``mean``, ``var``, ``std`` (the reduction family); ``average``
(weighted), ``nanmean``, ``nanvar``, ``nanstd`` (fused reductions).

The NaN-ignoring forms follow NumPy's ``nanfunctions`` step by step, so that results and
dtypes are NumPy's: the count of non-NaN elements and the NaN-as-zero sum are reductions,
the squared deviations from the mean (computed in the input's dtype, as NumPy does in place)
are one fused reduction that reads the sum and the count as per-output operands, and a last
small elementwise kernel divides (NaN where the degrees of freedom are <= 0). NumPy's
RuntimeWarnings are given when they are known without reading the device: for an empty
reduction (every slice empty) and when ``N - ddof <= 0`` for every slice; a slice that is
all NaN gives NaN without the warning (knowing it would wait for the GPU).
"""

from __future__ import annotations

import math

import numpy as np

from ..core import args, memo
from ..core.errors import warn
from ..core.fusion.function import fuse
from ..core.kernels.reduction.run import moment, reduce
from ..core.kernels.user.reduction import ReductionKernel
from ..core.ndarray import ndarray
from .._math.ufuncs import UFUNCS

_isnan, _where, _divide = UFUNCS["isnan"], UFUNCS["where"], UFUNCS["true_divide"]
_subtract, _multiply, _conj, _sqrt = (UFUNCS["subtract"], UFUNCS["multiply"], UFUNCS["conjugate"],
                                      UFUNCS["sqrt"])
_INTP = np.dtype(np.intp)
_fused = memo.table("meanvar.fused")    # (what, axes, keepdims, dtypes...) -> a fused function


def _memo(key, build):
    """One fused function per key: the axes and dtypes are constants of its trace."""
    f = _fused.get(key)
    if f is None:
        f = _fused[key] = fuse(build())
    return f


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Arithmetic mean (numpy.mean): ints in float64, float16 accumulated in float32; the
    mean of an empty slice is NaN with NumPy's RuntimeWarning."""
    return reduce("mean", a, axis, dtype, out, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    """Variance (numpy.var): mean of squared deviations from the mean, divided by N - ddof;
    complex input gives a real result. ``correction`` is the array API's name of ``ddof``."""
    return moment("var", a, axis, dtype, out, _ddof(ddof, correction), keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    """Standard deviation (numpy.std): the square root of :func:`var`."""
    return moment("std", a, axis, dtype, out, _ddof(ddof, correction), keepdims)


def _ddof(ddof, correction):
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


# -- average --------------------------------------------------------------------------------

def _weighted_sum(axes, keepdims, rdt):
    def weighted_sum(a, w):
        return _multiply(a, w, dtype=rdt).sum(axis=axes, keepdims=keepdims)
    return weighted_sum


def _any_zero():
    def any_zero(s):
        return (s == 0).any()
    return any_zero


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average (numpy.average): ``sum(a * w) / sum(w)`` over ``axis``, in NumPy's
    dtype (float64 for integer and bool input). ``weights`` has ``a``'s shape, or the shape
    of ``a`` along ``axis``. With weights, deciding NumPy's ZeroDivisionError (weights that
    sum to zero) reads one flag back from the GPU, as CuPy does; the weighted sum is queued
    first so that only the one wait is paid. ``returned`` also gives the sum of the weights
    (``a.size / avg.size`` as avg's dtype without weights, as NumPy), broadcast to the
    average's shape."""
    x = args.array(a, "average")
    axes = None if axis is None else args.axis_list(axis, x.ndim, "axis")
    if weights is None:
        avg = reduce("mean", x, axes, None, None, keepdims)
        scl = avg.dtype.type(x.size / avg.size)
    else:
        w = args.array(weights, "average")
        if x.dtype.kind in "biu":
            rdt = np.result_type(x.dtype, w.dtype, "f8")
        else:
            rdt = np.result_type(x.dtype, w.dtype)
        if x.shape != w.shape:
            if axes is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if w.shape != tuple(x.shape[ax] for ax in axes):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            w = w.transpose(tuple(int(i) for i in np.argsort(axes)))
            w = w.reshape(tuple(s if ax in axes else 1 for ax, s in enumerate(x.shape)))
        red = tuple(range(x.ndim)) if axes is None else tuple(sorted(axes))
        scl = reduce("sum", w, red, rdt, None, keepdims)
        kd = bool(keepdims)
        total = _memo(("average", red, kd, rdt), lambda: _weighted_sum(red, kd, rdt))(x, w)
        avg = _divide(total, scl)
        if bool(_memo(("any_zero",), _any_zero)(scl)):     # the one read back
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    if not returned:
        return avg
    if getattr(scl, "shape", ()) != avg.shape:
        full = ndarray._empty(avg.shape, np.dtype(scl.dtype))
        full[...] = scl
        scl = full
    return avg, scl


# -- nanmean, nanvar, nanstd ----------------------------------------------------------------

def _count(axes, keepdims):
    def nan_count(x):
        return (~_isnan(x)).sum(axis=axes, dtype=_INTP, keepdims=keepdims)
    return nan_count


def _squares(axes, keepdims, dtype, xdt, tdt):
    """The sum of squared deviations from the mean, NumPy's ``nanvar`` in one kernel: the
    mean is ``tot / cnt`` cast to the sum's dtype (``_divide_by_count``), the deviation is
    computed in the input's dtype (NumPy subtracts in place), NaNs count as zero."""
    real = np.dtype(np.float32 if xdt == np.complex64 else np.float64)

    def nan_squares(x, tot, cnt):
        avg = _divide(tot, cnt).astype(tdt)
        d = _where(_isnan(x), 0, _subtract(x, avg).astype(xdt))
        sq = _multiply(d, _conj(d)).astype(real) if xdt.kind == "c" else _multiply(d, d)
        return sq.sum(axis=axes, dtype=dtype, keepdims=keepdims)
    return nan_squares


def _finish(root):
    """``v / (cnt - ddof)`` in v's dtype (NumPy's ``_divide_by_count``), NaN where the
    degrees of freedom are <= 0; the square root for nanstd."""
    def nan_var_finish(v, cnt, ddof):
        dof = cnt - ddof
        r = _where(dof <= 0, np.nan, _divide(v, dof).astype(v.dtype))
        return _sqrt(r) if root else r
    return nan_var_finish


def _inexact_args(func, x, dtype, out):
    dt = args.dtype(dtype)
    if dt is not None and dt.kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")
    out = args.out_array(out, func)
    if out is not None and out.dtype.kind not in "fc":
        raise TypeError("If a is inexact, then out must be inexact")
    return dt, out


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Mean ignoring NaN (numpy.nanmean): the NaN-as-zero sum divided by the count of
    non-NaN elements, in the sum's dtype; an all-NaN slice gives NaN. NumPy's 'Mean of empty
    slice' warning is given for empty slices, not for all-NaN ones (that would read the
    device). Integer and bool input: :func:`mean`."""
    x = args.array(a, "nanmean")
    if x.dtype.kind not in "fc":
        return mean(x, axis, dtype, out, keepdims)
    dt, out = _inexact_args("nanmean", x, dtype, out)
    axes = args.axes(axis, x.ndim)
    kd = bool(keepdims)
    if dt is None and out is None:      # the common call: one kernel
        if x.size == 0 and math.prod(x.shape[d] for d in range(x.ndim) if d not in axes):
            warn("Mean of empty slice")
        return _nanmean_kernel(x.dtype)(x, axis=axes, keepdims=kd)
    cnt = _memo(("count", axes, kd), lambda: _count(axes, kd))(x)
    # NumPy sums into out: in out's dtype when dtype= is not given
    tot = reduce("nansum", x, axes, dt if dt is not None or out is None else out.dtype, out, kd)
    if math.prod(x.shape[d] for d in axes) == 0 and cnt.size:
        warn("Mean of empty slice")
    return _divide(tot, cnt, out=tot, casting="unsafe")


_NANMEAN_PREAMBLE = r"""
template <class S> struct gpunb_nansum_count { S s; long long n; };
template <class S> __device__ __forceinline__ gpunb_nansum_count<S> gpunb_snc(const S s, const long long n) {
    gpunb_nansum_count<S> r; r.s = s; r.n = n; return r;
}
"""
_NANMEAN_TYPES = {"float16": ("float16", "float"), "float32": ("float", "float"),
                  "float64": ("double", "double"), "complex64": ("complex<float>", "complex<float>"),
                  "complex128": ("complex<double>", "complex<double>")}
_nanmean_kernels = memo.table("meanvar.nanmean")


def _nanmean_kernel(dt: np.dtype) -> ReductionKernel:
    """NumPy's ``nanmean`` of ``dt`` in one reduction, as CuPy's: the state is the NaN-as-zero
    sum (in the compute type) and the count of non-NaN elements; the output is the sum rounded
    to ``dt`` (NumPy's ``nansum`` result) divided by the count in float64 (complex128), cast
    back to ``dt`` (NumPy's ``_divide_by_count``), NaN for an all-NaN or empty slice."""
    k = _nanmean_kernels.get(dt)
    if k is None:
        t, ct = _NANMEAN_TYPES[dt.name]
        state = f"gpunb_nansum_count<{ct} >"
        if dt.kind == "c":
            isnan, wide = "(real(x) != real(x) || imag(x) != imag(x))", "complex<double>"
            mean = f"{t}({wide}({t}(a.s)) / {wide}((double)a.n))"
        else:
            isnan, wide = "(x != x)", "double"
            mean = f"({t})((double)({t})(a.s) / (double)a.n)"
        k = _nanmean_kernels[dt] = ReductionKernel(
            f"{dt.name} x", f"{dt.name} y",
            f"{isnan} ? gpunb_snc<{ct} >({ct}(0), 0) : gpunb_snc<{ct} >(({ct})x, 1)",
            f"gpunb_snc<{ct} >(a.s + b.s, a.n + b.n)", f"y = {mean}", f"gpunb_snc<{ct} >({ct}(0), 0)",
            f"gpunb_nanmean_{dt.name}", reduce_type=state, preamble=_NANMEAN_PREAMBLE)
    return k


def _nanvar(func, a, axis, dtype, out, ddof, keepdims, root):
    x = args.array(a, func)
    if x.dtype.kind not in "fc":
        return moment("std" if root else "var", x, axis, dtype, out, ddof, keepdims)
    dt, out = _inexact_args(func, x, dtype, out)
    axes = args.axes(axis, x.ndim)
    kd = bool(keepdims)
    cnt = _memo(("count", axes, True), lambda: _count(axes, True))(x)
    tot = reduce("nansum", x, axes, dt, None, True)
    sdt = dt if dt is not None or out is None else out.dtype     # NumPy sums into out
    sq = _memo(("squares", axes, kd, sdt, x.dtype, tot.dtype),
               lambda: _squares(axes, kd, sdt, x.dtype, tot.dtype))(x, tot, cnt)
    if out is not None:                     # NumPy sums into out, then divides there
        if out.shape != sq.shape:
            raise ValueError(f"output parameter for reduction operation add has the wrong "
                             f"shape: expected {sq.shape}, got {out.shape}")
        out[...] = sq
        sq = out
    K = math.prod(x.shape[d] for d in axes)
    if K - ddof <= 0 and sq.size:
        warn("Degrees of freedom <= 0 for slice.")
    r = _memo(("finish", root), lambda: _finish(root))(sq, cnt.reshape(sq.shape), ddof)
    if out is None:
        return r
    out[...] = r
    return out


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance ignoring NaN (numpy.nanvar): NumPy's algorithm (the mean of the non-NaN
    elements, then the sum of squared deviations, divided by count - ddof) in three
    reductions and one small elementwise kernel; NaN for a slice with count - ddof <= 0.
    Integer and bool input: :func:`var`."""
    return _nanvar("nanvar", a, axis, dtype, out, ddof, keepdims, False)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation ignoring NaN (numpy.nanstd): the square root of :func:`nanvar`."""
    return _nanvar("nanstd", a, axis, dtype, out, ddof, keepdims, True)

