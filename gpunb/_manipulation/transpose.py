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
