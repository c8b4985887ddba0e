"""Changing and reading the shape: ``reshape``, ``ravel``, ``shape``, ``ndim``, ``size``."""

from __future__ import annotations

from ..core import args


def reshape(a, /, shape=None, order="C", *, newshape=None):
    """A view with a new shape when the strides allow it, else a copy (numpy.reshape)."""
    return args.array(a, "reshape").reshape(shape if shape is not None else newshape, order=order)


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
