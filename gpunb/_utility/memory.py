"""``shares_memory``: whether two GPU arrays share memory, exactly as NumPy decides it for host
arrays.

Two device views overlap only if their byte ranges do (the bounds test of
``may_share_memory``); when they do, gpunb asks NumPy's exact solver (a bounded linear
Diophantine problem over the views' offsets, strides and shapes, with NumPy's ``max_work``)
about host views of the same byte layout. Those views lie over a read-only private anonymous
mapping as long as both ranges: it costs address space, never memory (the solver reads no
element, and untouched pages of such a mapping are not even reserved), so a 100 GB pair of
views needs no more host memory than a 100 byte one.
"""

from __future__ import annotations

import mmap

import numpy as np

from ..core import args, layout
from ..core.ndarray import ndarray

_EMPTY = np.empty(0, np.uint8)


def _gpu(value) -> ndarray | None:
    if isinstance(value, np.ndarray):
        return None
    return args.as_gpu(value, "an input of shares_memory")


def _address_space(nbytes: int):
    """A host buffer of ``nbytes`` whose pages are never touched (see the module's notes)."""
    if hasattr(mmap, "MAP_PRIVATE"):
        return mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
    return mmap.mmap(-1, nbytes)        # Windows: zero pages, allocated only when touched


def host_twins(a: ndarray, b: ndarray):
    """NumPy arrays with the byte layout of the device views ``a`` and ``b`` relative to each
    other (same shapes, dtypes, strides, distance between starts), over one untouched host
    buffer; None when their byte ranges do not overlap (or one is empty)."""
    ea = layout.byte_extent(a.shape, a.strides, a.itemsize)
    eb = layout.byte_extent(b.shape, b.strides, b.itemsize)
    pa, pb = a.data.ptr, b.data.ptr
    if not layout.may_share_memory(ea, pa, eb, pb):
        return None
    low = min(pa + ea[0], pb + eb[0])
    buf = _address_space(max(pa + ea[1], pb + eb[1]) - low)
    return (np.ndarray(a.shape, a.dtype, buffer=buf, offset=pa - low, strides=a.strides),
            np.ndarray(b.shape, b.dtype, buffer=buf, offset=pb - low, strides=b.strides))


def shares_memory(a, b, /, max_work=None):
    """Whether two arrays share memory (numpy.shares_memory): exactly, by default.

    Parameters
    ----------
    a, b : gpunb arrays (or GPU arrays), or host data
    max_work : int, optional
        NumPy's: the most candidate solutions to try (None or -1: no limit, the exact answer;
        0: only compare the byte ranges, as :func:`may_share_memory`).

    Returns
    -------
    bool

    Raises
    ------
    numpy.exceptions.TooHardError
        When the problem needs more than ``max_work`` steps, as NumPy.

    Notes
    -----
    Arrays on different devices, or one on the GPU and one on the host, share nothing; two
    host arrays get NumPy's own answer. For two views of device memory, NumPy's exact solver
    answers about host views of the same byte layout (no data moves): the answer is the one
    NumPy gives for host arrays laid out alike.
    """
    ga, gb = _gpu(a), _gpu(b)
    if ga is None and gb is None:
        return np.shares_memory(a, b, max_work=max_work)
    np.shares_memory(_EMPTY, _EMPTY, max_work=max_work)    # NumPy's checks of max_work
    if ga is None or gb is None or ga.data.device_id != gb.data.device_id:
        return False
    twins = host_twins(ga, gb)
    return twins is not None and bool(np.shares_memory(*twins, max_work=max_work))
