"""``block``: an array assembled from nested lists of blocks (numpy.block): NumPy's depth
checks and messages, then one concatenate per nesting level, innermost along the last axis.
Written against an array namespace ``xp`` (NumPy's in the CPU tests)."""

from __future__ import annotations


def _index(index) -> str:
    return "arrays" + "".join(f"[{i}]" for i in index)


def _depths(arrays, parent=()):
    """(index of a bottom element, the largest array ndim) with NumPy's errors."""
    if isinstance(arrays, tuple):
        raise TypeError(f"{_index(parent)} is a tuple. Only lists can be used to arrange blocks, "
                        "and np.block does not allow implicit conversion from tuple to ndarray.")
    if isinstance(arrays, list) and arrays:
        found = [_depths(a, parent + (i,)) for i, a in enumerate(arrays)]
        first, ndim = found[0]
        for index, nd in found[1:]:
            ndim = max(ndim, nd)
            if len(index) != len(first):
                raise ValueError("List depths are mismatched. First element was at depth "
                                 f"{len(first)}, but there is an element at depth {len(index)} "
                                 f"({_index(index)})")
            if index[-1] is None:
                first = index
        return first, ndim
    if isinstance(arrays, list):
        return parent + (None,), 0
    return parent, getattr(arrays, "ndim", 0)


def _block(xp, arrays):
    first, arr_ndim = _depths(arrays)
    if first and first[-1] is None:
        raise ValueError(f"List at {_index(first[:-1])} cannot be empty")
    depth = len(first)
    ndim = max(arr_ndim, depth)

    def rec(x, level):
        if level < depth:
            return xp.concatenate([rec(y, level + 1) for y in x], axis=-(depth - level))
        a = xp.asarray(x)
        return a.reshape((1,) * (ndim - a.ndim) + a.shape) if a.ndim < ndim else a
    return rec(arrays, 0)


def block(arrays):
    """Blocks in nested lists joined into one array (numpy.block): the innermost lists along
    the last axis, each outer level along the axis before."""
    import gpunb

    return _block(gpunb, arrays)
