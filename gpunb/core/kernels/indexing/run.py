"""Gathers and scatters, run: load the kernel of :mod:`.codegen`, plan (:mod:`.plan`) and
launch; and the deferred out-of-bounds error.

Out-of-bounds GPU indices: a kernel never reads or writes outside the array. With mode
'raise', an out-of-bounds index is replaced by 0 (a gather reads element 0 there; a scatter
or ``ufunc.at`` skips the element) and the first such index is written, with its axis and
size, to a word of host memory mapped into the device (no copy, no wait). The next
synchronization point (``gpunb.synchronize()``, ``.get()``, ``asnumpy``, ``.item()``,
``bool``/``int``/``float`` of an array) reads the word and raises NumPy's ``IndexError``,
saying that an earlier indexing call had the index (:func:`check`). Host index data (lists,
NumPy arrays) is checked on the host before any launch, so its errors are immediate.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from ... import memo
from ...runtime import driver, fastcall
from .. import loader
from . import codegen as cg
from .plan import Index, plan

__all__ = ["Index", "launch", "check", "error_word"]

_err_dev = None       # the error word's device address (host memory, mapped)
_plans = memo.table("indexing.plans")     # launch layout -> (Plan, kernel key, argument words)
_names = memo.table("indexing.names")     # kernel key -> entry point name
# One thread per point (the kernel's grid-stride loop runs once), not as many blocks as stay
# resident with each thread looping: a gather of 2**26 float32 by random int64 indices on an
# H100 took 2.244 ms so, 2.273 the other way (CuPy 2.28-2.36, same run).
MAX_GRID = (1 << 31) - 1
_launches = memo.table("indexing.launches")   # (CUfunction, launch layout) -> prepared launch


def error_word() -> int:
    """The device address of the error word (allocated on first use, once per process:
    pinned host memory mapped into every context, read by the host without a CUDA call)."""
    global _err_dev
    if _err_dev is None:
        d = driver._driver_module()
        driver.context()
        flags = d.CU_MEMHOSTALLOC_PORTABLE | d.CU_MEMHOSTALLOC_DEVICEMAP
        (host,) = driver.check(d.cuMemHostAlloc(8 * cg.ERROR_WORDS, flags), "allocating the index error word")
        host = int(host)
        ctypes.memset(host, 0, 8 * cg.ERROR_WORDS)
        (dev,) = driver.check(d.cuMemHostGetDevicePointer(host, 0), "mapping the index error word")
        _err_dev = int(dev)
        driver.index_flag = (ctypes.c_int64 * cg.ERROR_WORDS).from_address(host)
    return _err_dev


def check() -> None:
    """Raise the IndexError of an out-of-bounds GPU index seen by an earlier kernel, if any,
    and clear it (called by the synchronization points through ``driver.index_flag``)."""
    w = driver.index_flag
    if w is None or not w[0]:
        return
    unsigned, value, axis, size = w[0] == 2, w[1], w[2], w[3]
    w[0] = 0
    if unsigned:
        value &= 2**64 - 1
    raise IndexError(f"index {value} is out of bounds for axis {axis} with size {size} (in an "
                     "earlier indexing call: gpunb checks GPU index arrays at the next "
                     "synchronization, without waiting at each call)")


def launch(kind, a, o, indices, space, a_strides, o_strides, *, mask=None, mask_strides=None,
           value=None, op=None, loop=None) -> None:
    """Launch the ``kind`` kernel (see :mod:`.codegen`) over the shape ``space``.

    ``a``: the indexed array (its data pointer at element ``[0, ..., 0]`` of the axes the
    kernel reads); ``o``: the other operand (gather: the output; scatter/at: the values) or
    None (fill); ``indices``: ``(array, Index)`` pairs; ``a_strides``/``o_strides``: byte
    strides over ``space``; ``mask``/``mask_strides``: a bool predicate (fill); ``value``:
    the fill value (a NumPy scalar of ``a``'s dtype); ``op``/``loop``: ``at``'s ufunc name and
    loop dtype. An empty space launches nothing.
    """
    ixs = tuple(ix for _, ix in indices)
    key = (kind, a._dtype, tuple(arr._dtype for arr, _ in indices), ixs, None if o is None else o._dtype,
           op, loop, tuple(space), tuple(a_strides), tuple(o_strides), mask_strides)
    hit = _plans.get(key)
    if hit is None:     # plan once per layout: a repeated call costs a lookup (host time)
        p = plan(space, a_strides, o_strides, ixs, mask_strides)
        kkey = (kind, a.dtype, key[2], tuple(ix.mode for ix in ixs), len(p.shape), key[4], op, loop,
                mask is not None, p.wide)
        _plans[key] = hit = (p, kkey, (ctypes.c_int64 * len(p.words))(*p.words))
    p, kkey, words = hit
    if p.n == 0:
        return
    for ix in ixs:
        if ix.size == 0:
            raise IndexError(f"index out of bounds for axis {ix.axis} with size 0" if ix.mode == "raise"
                             else "cannot do a non-empty take from an empty axes.")
    lk = loader.get(cg, kkey, lambda: cg.IndexKernel(*kkey))
    name = _names.get(kkey)
    if name is None:
        name = _names[kkey] = lk.kernel.name
    fn = lk.functions[name]
    entry = _launches.get((fn, key))
    if entry is None:       # the launch's parameter objects, made once per layout and kernel
        grid = (min(-(-p.n // cg.THREADS), MAX_GRID),)
        objs = [ctypes.c_void_p() for _ in range(3 + len(indices) + (mask is not None))] + [words]
        if kind == "fill":
            objs.append((ctypes.c_char * a._dtype.itemsize)())
        entry = _launches[(fn, key)] = (fastcall.Prepared(fn, grid, (cg.THREADS,), objs), objs,
                                        threading.Lock())
    prepared, objs, lock = entry
    stream = driver.stream_handle()
    with lock:
        objs[0].value = a._data.ptr
        objs[1].value = o._data.ptr if o is not None else 0
        j = 2
        for arr, _ in indices:
            objs[j].value = arr._data.ptr
            j += 1
        if mask is not None:
            objs[j].value = mask._data.ptr
            j += 1
        objs[j].value = _err_dev or error_word()
        if kind == "fill":
            bits = np.asarray(value, a._dtype).tobytes()
            ctypes.memmove(objs[-1], bits, len(bits))
        prepared.launch(stream)
