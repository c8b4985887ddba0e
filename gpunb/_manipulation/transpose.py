"""Transpose-like operations: ``transpose``, ``swapaxes``, ``moveaxis`` (views)."""

from __future__ import annotations

from ..core import args


def transpose(a, axes=None):
    """The axes permuted (reversed by default): a view (numpy.transpose)."""
    return args.array(a, "transpose").transpose(axes)


def swapaxes(a, axis1, axis2):
    """Two axes exchanged: a view (numpy.swapaxes)."""
    return args.array(a, "swapaxes").swapaxes(axis1, axis2)


def moveaxis(a, source, destination):
    """Axes moved to new positions, the others keeping their order: a view (numpy.moveaxis)."""
    x = args.array(a, "moveaxis")
    src = args.axis_list(source, x.ndim, "source")
    dst = args.axis_list(destination, x.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x.transpose(order)


def rollaxis(a, axis, start=0):
    """``axis`` rolled back to ``start``: a view (numpy.rollaxis; :func:`moveaxis` says it
    more plainly)."""
    x = args.array(a, "rollaxis")
    n = x.ndim
    axis = args.axis(axis, n)
    if not (-n <= start <= n):
        from numpy.exceptions import AxisError

        raise AxisError(f"start arg requires {-n} <= start < {n + 1} but {start} was passed in")
    if start < 0:
        start += n
    if axis < start:
        start -= 1
    if axis == start:
        return x[...]
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return x.transpose(axes)


def isfortran(a) -> bool:
    """Whether ``a`` is Fortran-contiguous and not C-contiguous (numpy.isfortran)."""
    x = args.array(a, "isfortran")
    return bool(x.flags.f_contiguous and not x.flags.c_contiguous)
