"""Changing the number of dimensions: ``squeeze``, ``expand_dims``, ``broadcast_to`` (views)."""

from __future__ import annotations

from ..core import args, layout


def squeeze(a, axis=None):
    """Length-one axes removed: a view (numpy.squeeze)."""
    return args.array(a, "squeeze").squeeze(axis)


def expand_dims(a, axis):
    """Length-one axes inserted at ``axis``: a view (numpy.expand_dims)."""
    x = args.array(a, "expand_dims")
    return x._derive(*layout.expand_dims(x.shape, x.strides, axis))


def broadcast_to(array, shape):
    """A view of ``array`` broadcast to ``shape`` (numpy.broadcast_to); its elements repeat,
    so write to it only through a copy."""
    return args.array(array, "broadcast_to")._broadcast_to(shape)
