"""``broadcast``: NumPy's broadcast object over GPU arrays (its shape, ``ndim``, ``size``,
``numiter``; iteration as NumPy's), with CuPy's ``values`` (the inputs as broadcast views)."""

from __future__ import annotations

import numpy as np

from .._creation.from_data import asnumpy
from ..core import args
from ..core.ndarray import ndarray


def _operand(value):
    g = args.as_gpu(value, "an input of broadcast")     # a host array: gpunb's TypeError
    if g is not None:
        return g
    if np.ndim(value) != 0:
        raise TypeError(f"broadcast needs GPU arrays or scalars, not {type(value).__name__}; "
                        "use gpunb.asarray() to move data to the GPU")
    return value


class broadcast:
    """The result of broadcasting the inputs against each other (numpy.broadcast).

    Parameters
    ----------
    *args : gpunb arrays, GPU arrays, scalars or broadcast objects
        At most 64 inputs in all, as NumPy (a broadcast object counts its own inputs).

    Attributes
    ----------
    shape, ndim, nd, size : the broadcast result's shape, its number of dimensions (``nd`` is
        NumPy's old name) and its number of elements.
    numiter : int
        The number of inputs.
    values : tuple
        The inputs, GPU arrays as views broadcast to ``shape`` (scalars as given): CuPy's
        attribute, and gpunb's way to use the broadcast without leaving the GPU.
    index, iters : NumPy's: the position of the iteration, and an iterator per input.

    Notes
    -----
    The shape, its errors and the limit on inputs are NumPy's, computed from the inputs'
    shapes without touching their data. Iterating (``next``, ``for``, ``iters``) yields tuples
    of NumPy scalars as NumPy's does: the GPU inputs are copied to the host once, on first
    use, and iterated there (one transfer per input rather than one per element).

    Examples
    --------
    >>> b = gpunb.broadcast(gpunb.ones((3, 1)), gpunb.ones(4))
    >>> b.shape, b.size, b.numiter
    ((3, 4), 12, 2)
    """

    __slots__ = ("_args", "_probe", "_host")

    def __init__(self, *args):
        operands = []
        for a in args:
            if isinstance(a, broadcast):        # as NumPy: its inputs join ours
                operands.extend(a._args)
            else:
                operands.append(_operand(a))
        self._args = tuple(operands)
        # NumPy's broadcast over stand-ins of the same shapes whose records are empty (no
        # memory): its shape, its errors, its limit on the number of inputs
        self._probe = np.broadcast(*(np.empty(a.shape if isinstance(a, ndarray) else np.shape(a),
                                              dtype=[]) for a in operands))
        self._host = None

    shape = property(lambda self: self._probe.shape, doc="The shape of the broadcast result.")
    ndim = property(lambda self: self._probe.ndim, doc="The number of dimensions of the result.")
    nd = property(lambda self: self._probe.nd, doc="The number of dimensions (NumPy's old name).")
    size = property(lambda self: self._probe.size, doc="The number of elements of the result.")
    numiter = property(lambda self: self._probe.numiter, doc="The number of inputs.")

    @property
    def values(self) -> tuple:
        """The inputs broadcast to :attr:`shape`: views of the GPU arrays, scalars as given
        (``cupy.broadcast.values``)."""
        shape = self.shape
        return tuple(a._broadcast_to(shape) if isinstance(a, ndarray) and a.shape != shape else a
                     for a in self._args)

    def _hosted(self) -> np.broadcast:
        if self._host is None:
            self._host = np.broadcast(*(asnumpy(a) if isinstance(a, ndarray) else np.asarray(a)
                                        for a in self._args))
        return self._host

    @property
    def index(self) -> int:
        """The current position in the broadcast result (0 before iterating)."""
        return 0 if self._host is None else self._host.index

    @property
    def iters(self) -> tuple:
        """One NumPy flat iterator per input, over its host copy, broadcast to :attr:`shape`."""
        return self._hosted().iters

    def reset(self) -> None:
        """Start the iteration again from the first element."""
        if self._host is not None:
            self._host.reset()

    def __iter__(self):
        return self

    def __next__(self) -> tuple:
        return next(self._hosted())
