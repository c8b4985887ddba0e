"""NumPy's index tricks (numpy.lib.index_tricks) for GPU arrays: ``mgrid`` and ``ogrid``
(grids from slices), ``r_`` and ``c_`` (concatenation from an index expression), ``s_`` and
``index_exp``, ``ndindex`` and ``ndenumerate``.

Each trick parses its key on the host exactly as NumPy's code does (the same steps in the same
order, so the dtypes, values and errors are NumPy's), then builds the result on the GPU:

- ``mgrid``/``ogrid``: one 1-D vector per axis, made as ``gpunb.arange`` and
  ``gpunb.linspace`` make theirs (NumPy on the host, then uploaded: a few numbers), and for
  ``mgrid`` broadcast into the grid on the GPU; the grid itself never exists on the host.
- ``r_``/``c_``: every piece as a gpunb array (host pieces, the slices, scalars, lists and
  NumPy arrays, converted as NumPy converts them and uploaded; GPU arrays as views), joined by
  ``gpunb.concatenate``. ``r_`` builds new arrays, like ``gpunb.array``: host data in the key
  is uploaded, as in CuPy's ``r_``.
"""

from __future__ import annotations

import math

import numpy as np

from .._creation.from_data import asnumpy, upload
from .._manipulation.joining import concatenate
from ..core import args
from ..core.ndarray import ndarray

__all__ = ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp", "ndindex", "ndenumerate",
           "nd_grid", "AxisConcatenator"]

# They only build tuples of slices, integers and None from the key: nothing to put on a GPU,
# so NumPy's own objects (as in CuPy, whose s_ and index_exp are NumPy's too).
s_ = np.s_
index_exp = np.index_exp
# An iterator over the indices of a shape: no array in it, so NumPy's own.
ndindex = np.ndindex


def _is_complex(step) -> bool:
    return isinstance(step, (np.complexfloating, complex))


# -- mgrid, ogrid --------------------------------------------------------------------------------

def _grid_plan(key, sparse: bool):
    """The host side of ``mgrid[key]`` / ``ogrid[key]``: NumPy's ``nd_grid.__getitem__`` with
    each axis kept as its 1-D vector instead of the full grid.

    Returns ``('1d', vector)`` for a single slice, else ``('grid', shape, dtype, vectors)``:
    the grid's dtype and each axis' vector in the dtype of NumPy's result (cast to the grid's
    dtype for ``mgrid``, as NumPy's assignment into ``indices()`` casts). Raises NumPy's errors
    for a bad key.
    """
    try:
        size = []
        num_list = [0]     # as NumPy: a dtype at least as large as the default integer
        for k in range(len(key)):
            step, start, stop = key[k].step, key[k].start, key[k].stop
            if start is None:
                start = 0
            if step is None:
                step = 1
            if _is_complex(step):
                step = abs(step)
                size.append(int(step))
            else:
                size.append(math.ceil((stop - start) / step))
            num_list += [start, stop, step]
        typ = np.result_type(*num_list)
        if not sparse and min(size, default=0) < 0:
            raise ValueError("negative dimensions are not allowed")   # np.indices' error
        vectors = []
        for k, kk in enumerate(key):
            step, start = kk.step, kk.start
            if start is None:
                start = 0
            if step is None:
                step = 1
            if _is_complex(step):
                step = int(abs(step))
                if step != 1:
                    step = (kk.stop - start) / float(step - 1)
            # NumPy computes this on every row of indices(); each row is the same arange
            v = np.arange(size[k], dtype=typ) * step + start
            vectors.append(v if sparse else v.astype(typ, copy=False))
        return "grid", tuple(size), typ, vectors
    except (IndexError, TypeError):     # NumPy's fallback: the key is one slice
        step, stop, start = key.step, key.stop, key.start
        if start is None:
            start = 0
        if _is_complex(step):
            step_float = abs(step)
            step = length = int(step_float)
            if step != 1:
                step = (key.stop - start) / float(step - 1)
            typ = np.result_type(start, stop, step_float)
            return "1d", np.arange(0, length, 1, dtype=typ) * step + start
        return "1d", np.arange(start, stop, step)


class nd_grid:
    """A multi-dimensional grid built by indexing with slices (NumPy's ``nd_grid``): use the
    instances :data:`mgrid` (dense) and :data:`ogrid` (open).

    ``start:stop:step`` means ``arange(start, stop, step)`` along that axis; a complex step
    ``start:stop:Nj`` means ``N`` points from ``start`` to ``stop`` inclusive (as
    ``linspace``). The dtype is NumPy's: an integer one when every start, stop and step is an
    integer, else floating. The results are gpunb arrays.
    """

    __slots__ = ("sparse",)

    def __init__(self, sparse=False):
        self.sparse = sparse

    def __getitem__(self, key):
        plan = _grid_plan(key, self.sparse)
        if plan[0] == "1d":
            return upload(plan[1])
        _, shape, typ, vectors = plan
        n = len(shape)
        if self.sparse:     # each vector along its own axis: (1, .., size, .., 1), no kernel
            return tuple(upload(v.reshape((1,) * k + (v.size,) + (1,) * (n - k - 1)))
                         for k, v in enumerate(vectors))
        out = ndarray((n,) + shape, args.dtype(typ))
        if out.size:        # each axis' vector broadcast into its slab on the GPU
            for k, v in enumerate(vectors):
                out[k] = upload(v.reshape((1,) * k + (v.size,) + (1,) * (n - k - 1)))
        return out


class MGridClass(nd_grid):
    """A dense ("fleshed out") mesh grid from slices (numpy.mgrid): ``gpunb.mgrid[0:5, 0:3]``
    is one gpunb array of shape ``(2, 5, 3)``, the first axis holding each coordinate.

    ``start:stop:step`` is ``arange(start, stop, step)`` along that axis (stop excluded); a
    complex step ``start:stop:Nj`` gives ``N`` points with the stop included (as
    ``linspace``). Integer dtype when every bound and step is an integer, else floating, as
    NumPy's. A single slice gives a 1-D array.

    Examples
    --------
    >>> gpunb.mgrid[0:2, 0:3].shape
    (2, 2, 3)
    >>> gpunb.mgrid[-1:1:5j]
    array([-1. , -0.5,  0. ,  0.5,  1. ])
    """

    __slots__ = ()

    def __init__(self):
        super().__init__(sparse=False)


class OGridClass(nd_grid):
    """An open mesh grid from slices (numpy.ogrid): ``gpunb.ogrid[0:5, 0:3]`` is a tuple of
    gpunb arrays of shapes ``(5, 1)`` and ``(1, 3)``, which broadcast against each other to
    the full grid. Slices, complex steps and dtypes as :data:`mgrid`; a single slice gives a
    1-D array.
    """

    __slots__ = ()

    def __init__(self):
        super().__init__(sparse=True)


mgrid = MGridClass()
ogrid = OGridClass()


# -- r_, c_ --------------------------------------------------------------------------------------

def _as_matrix_shape(shape):
    """The shape numpy.matrix gives an array of ``shape`` (2-d; NumPy's errors): asked of NumPy
    itself on an array of empty records, which has no data."""
    return np.empty(shape, dtype=[]).view(np.matrix).shape


class AxisConcatenator:
    """Concatenation from an index expression (NumPy's ``AxisConcatenator``): use the
    instances :data:`r_` and :data:`c_`.

    gpunb has no matrix class: the directives ``'r'`` and ``'c'`` give the 2-D gpunb array of
    the shape NumPy's matrix would have, and a string key (NumPy's ``bmat`` syntax) is not
    supported.
    """

    __slots__ = ("axis", "matrix", "ndmin", "trans1d")

    def __init__(self, axis=0, matrix=False, ndmin=1, trans1d=-1):
        self.axis = axis
        self.matrix = matrix
        self.trans1d = trans1d
        self.ndmin = ndmin

    def _parts(self, key):
        """The pieces of ``self[key]`` before the join, parsed as NumPy parses them.

        Returns ``(pieces, dtype, axis, matrix, col)``: each piece is a NumPy array already in
        the final ``dtype`` and dimensions (host data: slices, scalars, lists, NumPy arrays) or
        a view of a GPU array in its own dtype (cast when joined).
        """
        if isinstance(key, str):
            raise NotImplementedError(
                "a string key builds a numpy.matrix (numpy.bmat's syntax); gpunb has no matrix "
                "class: build the array with gpunb.block or gpunb.concatenate")
        if not isinstance(key, tuple):
            key = (key,)
        # copied: the first entry of the key can override them
        trans1d, ndmin, matrix, axis = self.trans1d, self.ndmin, self.matrix, self.axis
        col = False
        objs, result_type_objs = [], []     # dtypes, or the scalars (weak for Python's)
        for k, item in enumerate(key):
            scalar = False
            if isinstance(item, slice):
                step, start, stop = item.step, item.start, item.stop
                if start is None:
                    start = 0
                if step is None:
                    step = 1
                if _is_complex(step):
                    newobj = np.linspace(start, stop, num=int(abs(step)))
                else:
                    newobj = np.arange(start, stop, step)
                if ndmin > 1:
                    newobj = np.array(newobj, copy=None, ndmin=ndmin)
                    if trans1d != -1:
                        newobj = newobj.swapaxes(-1, trans1d)
            elif isinstance(item, str):
                if k != 0:
                    raise ValueError("special directives must be the first entry.")
                if item in ("r", "c"):
                    matrix = True
                    col = item == "c"
                    continue
                if "," in item:
                    vec = item.split(",")
                    try:
                        axis, ndmin = [int(x) for x in vec[:2]]
                        if len(vec) == 3:
                            trans1d = int(vec[2])
                        continue
                    except Exception as e:
                        raise ValueError(f"unknown special directive {item!r}") from e
                try:
                    axis = int(item)
                    continue
                except (ValueError, TypeError) as e:
                    raise ValueError("unknown special directive") from e
            elif type(item) in np.ScalarType:
                scalar = True
                newobj = item
            else:
                g = args.as_gpu(item, "r_") if not isinstance(item, np.ndarray) else None
                item_ndim = g.ndim if g is not None else np.ndim(item)
                if g is not None:
                    newobj = g[(None,) * (ndmin - g.ndim)] if g.ndim < ndmin else g
                else:
                    newobj = np.array(item, copy=None, subok=True, ndmin=ndmin)
                if trans1d != -1 and item_ndim < ndmin:
                    k2 = ndmin - item_ndim
                    k1 = trans1d
                    if k1 < 0:
                        k1 += k2 + 1
                    defaxes = list(range(ndmin))
                    axes = defaxes[:k1] + defaxes[k2:] + defaxes[k1:k2]
                    newobj = newobj.transpose(axes)
            objs.append(newobj)
            result_type_objs.append(item if scalar else newobj.dtype)
        dt = None
        if result_type_objs:    # scalars do not up-cast the arrays unless they must (NEP 50)
            dt = np.result_type(*result_type_objs)
            objs = [o if isinstance(o, ndarray) else
                    np.array(o, copy=None, subok=True, ndmin=ndmin, dtype=dt) for o in objs]
        return objs, dt, axis, matrix, col

    def __getitem__(self, key):
        objs, dt, axis, matrix, col = self._parts(key)
        pieces = tuple(o.astype(dt, copy=False) if isinstance(o, ndarray) else upload(o)
                       for o in objs)
        res = concatenate(pieces, axis=axis)
        if matrix:
            oldndim = res.ndim
            res = res.reshape(_as_matrix_shape(res.shape))
            if oldndim == 1 and col:
                res = res.T
        return res

    def __len__(self):
        return 0


class RClass(AxisConcatenator):
    """Concatenation along the first axis from an index expression (numpy.r_), on the GPU.

    ``gpunb.r_[a, b, 0, 1:4, -1:1:5j]`` joins its entries, each made at least 1-D: GPU
    arrays as they are, scalars, lists and NumPy arrays as new arrays (uploaded), a slice
    ``start:stop:step`` as ``arange(start, stop, step)`` and one with a complex step
    ``start:stop:Nj`` as ``linspace(start, stop, N)``. The dtype is NumPy's ``result_type``
    of the entries (Python scalars do not up-cast arrays).

    A first entry that is a string changes the join: ``'1'`` joins along axis 1; ``'0,2'``
    along axis 0 after making each entry at least 2-D; ``'1,2,0'`` also says where the axes of
    the upgraded entries go (NumPy's ``trans1d``: ``0`` puts the added ones at the end).
    ``'r'`` and ``'c'`` (NumPy: a row or column matrix) give the 2-D gpunb array of that
    shape: gpunb has no matrix class.

    Examples
    --------
    >>> gpunb.r_[gpunb.array([1, 2, 3]), 0, 0, gpunb.array([4, 5, 6])]
    array([1, 2, 3, 0, 0, 4, 5, 6])
    >>> gpunb.r_['0,2,0', [1, 2, 3], [4, 5, 6]].shape
    (6, 1)
    """

    __slots__ = ()

    def __init__(self):
        AxisConcatenator.__init__(self, 0)


class CClass(AxisConcatenator):
    """Concatenation along the last axis, each entry at least 2-D with 1-D ones as columns
    (numpy.c_): ``gpunb.r_['-1,2,0', ...]``. ``gpunb.c_[x, y]`` of two 1-D arrays of ``n``
    is an ``(n, 2)`` array. Entries as in :data:`r_`.
    """

    __slots__ = ()

    def __init__(self):
        AxisConcatenator.__init__(self, -1, ndmin=2, trans1d=0)


r_ = RClass()
c_ = CClass()


# -- ndenumerate ---------------------------------------------------------------------------------

class ndenumerate(np.ndenumerate):
    """Pairs of (index tuple, value) over an array, last axis fastest (numpy.ndenumerate).

    The values are NumPy scalars, as NumPy's: a GPU array is copied to the host once, when the
    iterator is made, and iterated there (CuPy has no ndenumerate; element-by-element reads
    from the GPU would cost a transfer each). Host data is iterated as NumPy does.

    Examples
    --------
    >>> for index, x in gpunb.ndenumerate(gpunb.array([[1, 2], [3, 4]])):
    ...     print(index, x)
    (0, 0) 1
    (0, 1) 2
    (1, 0) 3
    (1, 1) 4
    """

    def __init__(self, arr):
        super().__init__(asnumpy(arr))
