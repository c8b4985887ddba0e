"""Differences and integrals along an axis: ``diff``, ``ediff1d``, ``gradient``,
``trapezoid``.

Each is NumPy's algorithm on views (slices of the input, no copies) and elementwise kernels,
so the results are NumPy's bit for bit where NumPy computes elementwise (the operations, their
order and their dtypes are NumPy's own, decided by the same type resolution); ``trapezoid``
is one fused kernel (the elementwise part and the sum). Small host values that NumPy accepts
besides arrays (scalars and lists for ``prepend``/``append``, ``to_begin``/``to_end``, the
spacings of ``gradient``) are uploaded; a NumPy array there raises, as any host array does.
"""

from __future__ import annotations

import numpy as np

from ..core import args, memo
from ..core.fusion.function import fuse
from ..core.ndarray import ndarray
from .ufuncs import UFUNCS

_subtract, _not_equal = UFUNCS["subtract"], UFUNCS["not_equal"]
_NO_VALUE = np._NoValue
_fused = memo.table("differences.fused")


def _small(value, what: str) -> ndarray:
    """A GPU array, or a host scalar or list uploaded (NumPy's ``asanyarray``)."""
    g = args.as_gpu(value, what)
    if g is not None:
        return g
    from .._creation.from_data import upload

    return upload(np.asarray(value))


def diff(a, n=1, axis=-1, prepend=_NO_VALUE, append=_NO_VALUE):
    """The n-th discrete difference along ``axis`` (numpy.diff): ``a[1:] - a[:-1]`` applied
    ``n`` times (``not_equal`` for bool), after joining ``prepend`` and ``append`` (scalars
    broadcast to one slice)."""
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    x = args.array(a, "diff")
    nd = x.ndim
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = args.axis(axis, nd)
    combined = []
    for extra, first in ((prepend, True), (append, False)):
        if extra is _NO_VALUE:
            continue
        e = _small(extra, "diff's " + ("prepend" if first else "append"))
        if e.ndim == 0:
            shape = list(x.shape)
            shape[axis] = 1
            e = e._broadcast_to(tuple(shape))
        combined.append(e)
    if combined:
        from .._manipulation.joining import concatenate

        parts = ([combined[0]] if prepend is not _NO_VALUE else []) + [x] + \
            ([combined[-1]] if append is not _NO_VALUE else [])
        x = concatenate(parts, axis)
    op = _not_equal if x.dtype == np.bool_ else _subtract
    for _ in range(n):
        # x[1:] and x[:-1] along the axis, made as views directly (no index parsing: host time)
        shape = list(x.shape)
        step = x.strides[axis] if shape[axis] > 0 else 0
        shape[axis] = max(shape[axis] - 1, 0)
        shape = tuple(shape)
        x = op(x._derive(shape, x.strides, step), x._derive(shape, x.strides, 0))
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened array (numpy.ediff1d), in
    its dtype, with ``to_begin`` and ``to_end`` joined (cast under 'same_kind')."""
    x = args.array(ary, "ediff1d").ravel()
    dtype_req = x.dtype
    if to_begin is None and to_end is None:
        return x[1:] - x[:-1]
    parts = {}
    for name, v in (("to_begin", to_begin), ("to_end", to_end)):
        if v is None:
            parts[name] = None
            continue
        g = args.as_gpu(v, "ediff1d's " + name)
        vdt = g.dtype if g is not None else np.asarray(v).dtype
        if not np.can_cast(vdt, dtype_req, casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the "
                            "`same_kind` rule.")
        parts[name] = (g if g is not None else _small(v, name)).ravel()
    lb = 0 if parts["to_begin"] is None else parts["to_begin"].size
    le = 0 if parts["to_end"] is None else parts["to_end"].size
    ld = max(x.size - 1, 0)
    result = ndarray._empty((ld + lb + le,), dtype_req)
    if lb:
        result[:lb] = parts["to_begin"]
    if le:
        result[lb + ld:] = parts["to_end"]
    _subtract(x[1:], x[:-1], out=result[lb:lb + ld])
    return result


def _ndim(v) -> int:
    return v.ndim if isinstance(v, ndarray) else np.ndim(v)


def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient by second-order central differences inside and first- or second-order
    one-sided differences at the edges (numpy.gradient), per axis; spacings are one scalar,
    or one scalar or 1-d coordinate array per axis. NumPy's algorithm, operation by
    operation: results and dtypes are NumPy's (float64 for integer input). Coordinate arrays
    that are evenly spaced take NumPy's uniform formula: deciding that reads one flag back."""
    y = args.array(f, "gradient")
    N = y.ndim
    axes = tuple(range(N)) if axis is None else args.axis_list(axis, N)
    len_axes = len(axes)
    n = len(varargs)
    if n == 0:
        dx = [1.0] * len_axes
    elif n == 1 and _ndim(varargs[0]) == 0:
        dx = list(varargs) * len_axes
    elif n == len_axes:
        dx = list(varargs)
        for i, distances in enumerate(dx):
            if _ndim(distances) == 0:
                continue
            distances = _small(distances, "a spacing of gradient")
            if distances.ndim != 1:
                raise ValueError("distances must be either scalars or 1d")
            if len(distances) != y.shape[axes[i]]:
                raise ValueError("when 1d, distances must match the length of the "
                                 "corresponding dimension")
            if distances.dtype.kind in "iu":
                distances = distances.astype(np.float64)
            diffx = diff(distances)
            if bool((diffx == diffx[0]).all()):                   # the one read back
                diffx = diffx[0]
            dx[i] = diffx
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")

    otype = y.dtype
    if otype.kind not in "fc":
        if otype.kind in "iu":
            y = y.astype(np.float64)
        otype = np.dtype(np.float64)
    outvals = []
    for ax, ax_dx in zip(axes, dx):
        if y.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        outvals.append(_gradient_axis(y, ax, ax_dx, edge_order, otype))
    if len_axes == 1:
        return outvals[0]
    return tuple(outvals)


def _gradient_axis(y, axis, ax_dx, edge_order, otype):
    """One axis of :func:`gradient`: NumPy's expressions, written into the result's slices."""
    N = y.ndim
    uniform = _ndim(ax_dx) == 0

    def sl(i):
        s = [slice(None)] * N
        s[axis] = i
        return tuple(s)

    # the interior: NumPy's expression, its last operation writing straight into the result
    # (NumPy's assignment casts unsafely; so does the ufunc here), which is allocated after the
    # first difference so that bool input raises first, as in NumPy
    if uniform:
        d = _subtract(y[sl(slice(2, None))], y[sl(slice(None, -2))])
        out = ndarray._empty(y.shape, otype)
        UFUNCS["true_divide"](d, 2. * ax_dx, out=out[sl(slice(1, -1))], casting="unsafe")
    else:
        out = ndarray._empty(y.shape, otype)
        dx1, dx2 = ax_dx[0:-1], ax_dx[1:]
        shape = [1] * N
        shape[axis] = -1
        a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
        b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
        c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
        UFUNCS["add"](a * y[sl(slice(None, -2))] + b * y[sl(slice(1, -1))],
                      c * y[sl(slice(2, None))], out=out[sl(slice(1, -1))], casting="unsafe")
    if edge_order == 1:
        dx_0 = ax_dx if uniform else ax_dx[0]
        out[sl(0)] = (y[sl(1)] - y[sl(0)]) / dx_0
        dx_n = ax_dx if uniform else ax_dx[-1]
        out[sl(-1)] = (y[sl(-1)] - y[sl(-2)]) / dx_n
        return out
    if uniform:
        a, b, c = -1.5 / ax_dx, 2. / ax_dx, -0.5 / ax_dx
    else:
        dx1, dx2 = ax_dx[0], ax_dx[1]
        a = -(2. * dx1 + dx2) / (dx1 * (dx1 + dx2))
        b = (dx1 + dx2) / (dx1 * dx2)
        c = -dx1 / (dx2 * (dx1 + dx2))
    out[sl(0)] = a * y[sl(0)] + b * y[sl(1)] + c * y[sl(2)]
    if uniform:
        a, b, c = 0.5 / ax_dx, -2. / ax_dx, 1.5 / ax_dx
    else:
        dx1, dx2 = ax_dx[-2], ax_dx[-1]
        a = dx2 / (dx1 * (dx1 + dx2))
        b = -(dx2 + dx1) / (dx1 * dx2)
        c = (2. * dx2 + dx1) / (dx2 * (dx1 + dx2))
    out[sl(-1)] = a * y[sl(-3)] + b * y[sl(-2)] + c * y[sl(-1)]
    return out


def _trapezoid_sum(axis):
    def trapezoid_sum(d, y1, y2):
        return (d * (y1 + y2) / 2.0).sum(axis=axis)
    return trapezoid_sum


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral along ``axis`` by the composite trapezoidal rule (numpy.trapezoid):
    ``sum(d * (y[1:] + y[:-1]) / 2)`` with ``d`` the spacing ``dx`` or ``diff(x)``; the
    elementwise part and the sum are one fused kernel."""
    yy = args.array(y, "trapezoid")
    if x is None:
        d = dx
    else:
        xx = args.array(x, "trapezoid")
        if xx.ndim == 1:
            d = diff(xx)
            shape = [1] * yy.ndim
            shape[axis] = d.shape[0]
            d = d.reshape(shape)
        else:
            d = diff(xx, axis=axis)
    nd = yy.ndim
    s1, s2 = [slice(None)] * nd, [slice(None)] * nd
    s1[axis] = slice(1, None)
    s2[axis] = slice(None, -1)
    key = ("trapezoid", int(axis))
    f = _fused.get(key)
    if f is None:
        f = _fused[key] = fuse(_trapezoid_sum(int(axis)))
    if isinstance(d, ndarray) or isinstance(d, (int, float, complex, np.generic)):
        return f(d, yy[tuple(s1)], yy[tuple(s2)])
    return f(_small(d, "trapezoid's dx"), yy[tuple(s1)], yy[tuple(s2)])
