"""``x[index]`` and ``x[index] = value`` with advanced indices, NumPy's full rules: integer
arrays (gpunb arrays, lists, NumPy arrays) broadcast together, negative indices, mixed with
integers, slices, ``newaxis`` and ``Ellipsis`` (the broadcast index shape replaces the
advanced axes where they are next to each other, else it comes first), boolean masks of any
rank (a mask stands for its ``nonzero()``), ``x[mask] = scalar`` / ``= array``,
``x[idx] = v`` and ``x[idx] += v``.

Differences from NumPy, as in CuPy:

- host index data (lists, NumPy arrays, masks) is small: it is checked on the host, with
  NumPy's ``IndexError`` messages, and uploaded; a host *value* array still raises (gpunb
  never copies data behind your back);
- where ``x[idx] = v`` repeats an index, which of its values lands is unspecified (one of
  them does); ``x[idx] += v`` is get, add, set, so a repeated index adds once, as in NumPy
  (``gpunb.add.at`` accumulates every one);
- a GPU index array is not read by the host: an out-of-bounds entry never reads or writes
  outside the array (a gather reads element 0 there, a scatter skips it) and raises NumPy's
  ``IndexError`` at the next synchronization (``gpunb.synchronize()``, ``.get()``,
  ``asnumpy``, ``.item()``, ``bool()``...), saying an earlier indexing call had it;
- a GPU boolean mask that sizes the result (``x[mask]``, ``x[mask] = array``) reads its count
  back (one small copy); ``x[mask] = scalar`` does not.
"""

from __future__ import annotations

from ..core.kernels.indexing.resolve import gather, scatter


def getitem(a, index):
    """``a[index]`` for an advanced index: a new array (see the module's notes)."""
    return gather(a, index)


def setitem(a, index, value) -> None:
    """``a[index] = value`` for an advanced index: ``value`` (a GPU array or a scalar)
    broadcast to ``a[index]``'s shape and cast (NumPy's unsafe assignment casting). Which value
    lands at a repeated index is unspecified."""
    scatter(a, index, value)
