"""Changing and reading the shape: ``reshape``, ``ravel``, ``shape``, ``ndim``, ``size``."""

from __future__ import annotations

from ..core import args, layout


def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    """A view with a new shape when the strides allow it, else a copy (numpy.reshape);
    ``copy=True`` always copies, ``copy=False`` raises ValueError where a view cannot be."""
    x = args.array(a, "reshape")
    shape = shape if shape is not None else newshape
    if copy is False:       # decided from the strides, before any copy
        new = layout.resolve_shape(x.size, shape)
        if layout.reshape(x.shape, x.strides, x.itemsize, new, order) is None:
            raise ValueError("Unable to avoid creating a copy while reshaping.")
    r = x.reshape(shape, order=order)
    if copy and r.data.ptr == x.data.ptr and r.data.owner is x.data.owner:
        return r.copy()
    return r


def ravel(a, order="C"):
    """The flattened array: a view when possible (numpy.ravel)."""
    return args.array(a, "ravel").ravel(order=order)


def shape(a):
    """The shape of an array (numpy.shape)."""
    return args.array(a, "shape").shape


def ndim(a):
    """The number of dimensions of an array (numpy.ndim)."""
    return args.array(a, "ndim").ndim


def size(a, axis=None):
    """The number of elements, in all or along ``axis`` (numpy.size)."""
    x = args.array(a, "size")
    return x.size if axis is None else x.shape[args.axis(axis, x.ndim)]
