"""Rearranging kernels, run: ``roll`` of any view into a new array in one launch, the
index array of a per-element ``repeat``, and contiguous pieces joined in one launch."""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from ... import dtypes, memo
from ...ndarray import ndarray
from ...runtime import driver, fastcall
from .. import loader
from ..execute import Step, execute, replay
from . import codegen as cg
from .plan import plan, plan_pad

MAX_GRID = 2**31 - 1
# plans depend only on shapes, strides, itemsizes and the shifts or widths (the kernels check
# pointer alignment themselves): planned once per layout
_roll_plans = memo.table("rearrange.roll_plans")
_pad_plans = memo.table("rearrange.pad_plans")


def _grid(n: int) -> tuple[int]:
    return (max(1, min(-(-n // cg.THREADS), MAX_GRID)),)


def roll(x: ndarray, shifts) -> ndarray:
    """A new C-ordered array: ``x`` rolled by ``shifts[d]`` along each axis ``d``."""
    out = ndarray._empty(x.shape, x.dtype)
    if out.size == 0:
        return out
    key = (x.shape, x.strides, x.itemsize, tuple(shifts))

    def make():
        p = _roll_plans.get(key)
        if p is None:
            p = _roll_plans[key] = plan(*key)
        k = cg.RollKernel(x.itemsize, p.ndim)
        lk = loader.get(cg, ("roll", k.itemsize, k.ndim), lambda: k)
        geo = (ctypes.c_int64 if p.wide else ctypes.c_uint32) * len(p.words)
        count = (ctypes.c_int64 if p.wide else ctypes.c_uint32)(p.n)
        return (Step(lk.functions[f"{k.name}_{p.entry}"], _grid(p.n), (cg.THREADS,),
                     (0, 1, count, geo(*p.words))),)

    replay(("rearrange.roll", key), make, (x._data.ptr, out._data.ptr))
    return out


def pad(x: ndarray, widths, mode: str, constants, fortran: bool) -> ndarray:
    """A new array: ``x`` padded by ``widths`` (``(before, after)`` per axis) in one pass, in
    ``mode`` ('constant', 'edge', 'wrap', or NumPy's even 'reflect' and 'symmetric');
    ``constants`` (host, shape (ndim, 2), ``x``'s dtype) are the constant mode's values."""
    shape = tuple(b + n + a for n, (b, a) in zip(x.shape, widths))
    out = ndarray(shape, x.dtype, order="F" if fortran else "C")
    if out.size == 0:
        return out
    key = (x.shape, x.strides, x.itemsize, tuple(widths), fortran)
    # the launch depends on the layout, the mode and the constants' bytes
    replay(("rearrange.pad", key, mode, constants.tobytes()), lambda: (_pad_step(key, mode, constants),),
           (x._data.ptr, out._data.ptr))
    return out


def _pad_step(key, mode: str, constants) -> Step:
    p = _pad_plans.get(key)
    if p is None:
        p = _pad_plans[key] = plan_pad(*key)
    k = cg.PadKernel(key[2], p.ndim, mode)
    lk = loader.get(cg, ("pad", k.itemsize, k.ndim, k.mode), lambda: k)
    geo = (ctypes.c_int64 if p.wide else ctypes.c_uint32) * len(p.words)
    words = p.words if p.wide else [w & 0xFFFFFFFF for w in p.words]
    count = (ctypes.c_int64 if p.wide else ctypes.c_uint32)(p.n)
    table = b"".join((constants[d] if d is not None else np.zeros(2, constants.dtype)).tobytes()
                     for d in p.perm)
    consts = (ctypes.c_uint8 * len(table)).from_buffer_copy(table)
    return Step(lk.functions[f"{k.name}_{p.entry}"], _grid(p.n), (cg.THREADS,),
                (0, 1, count, geo(*words), consts))


def repeat_last(x: ndarray, count: int) -> ndarray:
    """A new C-ordered array: the C-contiguous ``x`` with each element repeated ``count``
    times along its last axis (``numpy.repeat(x, count, -1)``)."""
    shape = x.shape[:-1] + (x.shape[-1] * count,)
    out = ndarray._empty(shape, x.dtype)
    n = out.size
    if n == 0:
        return out

    def make():
        k = cg.RepeatKernel(x.itemsize)
        lk = loader.get(cg, ("repeat", k.itemsize), lambda: k)
        wide = n >= 2**31
        I = ctypes.c_uint64 if wide else ctypes.c_uint32
        return (Step(lk.functions[f"{k.name}_{'wide' if wide else 'vec'}"],
                     _grid(-(-n // cg.vector_width(k))), (cg.THREADS,), (0, 1, I(n), I(count))),)

    replay(("rearrange.repeat", x.itemsize, n, count), make, (x._data.ptr, out._data.ptr))
    return out


def repeat_index(cum: ndarray, total: int) -> ndarray:
    """The int64 index of a per-element repeat: position ``j`` of the result takes element
    ``i``, the first with ``cum[i] > j`` (``cum``: the contiguous int64 inclusive running sum
    of the counts)."""
    out = ndarray._empty((total,), dtypes.check("int64"))
    if total == 0:
        return out
    k = cg.RepeatIndexKernel()
    lk = loader.get(cg, ("repeat_index",), lambda: k)
    step = Step(lk.functions[k.name], _grid(total), (cg.THREADS,),
                (0, ctypes.c_int64(cum.size), 1, ctypes.c_int64(total)))
    execute((step,), [ctypes.c_void_p(cum.data.ptr), ctypes.c_void_p(out.data.ptr)])
    return out


def join(out_ptr: int, sources, sizes) -> None:
    """Copy ``sizes[i]`` bytes (each > 0) from each address ``sources[i]`` to ``out_ptr``, one
    range after another, on the current stream: one launch per :data:`~.codegen.JOIN_PIECES`
    ranges. The launches are planned once per (word, sizes) and replayed; each call sets the
    output and source addresses in their parameter objects."""
    bits = out_ptr
    for a, n in zip(sources, sizes):
        bits |= a | n
    word = 16 if not bits & 15 else 8 if not bits & 7 else 4 if not bits & 3 else 2 if not bits & 1 else 1
    key = ("rearrange.join", word, tuple(sizes))
    ctx = driver.active or driver.context()
    entry = ctx.prepared.get(key)
    if entry is None:
        entry = _join_plan(word, sizes)
        ctx.remember(key, entry)
    launches, lock = entry
    handle = driver.stream_handle()
    i = 0
    with lock:      # the parameter objects are shared by every call of this layout
        for prepared, out, table, offset, count in launches:
            out.value = out_ptr + offset
            table[:count] = sources[i:i + count]
            i += count
            prepared.launch(handle)


def _join_plan(word: int, sizes):
    k = cg.JoinKernel(word)
    lk = loader.get(cg, ("join", word), lambda: k)
    pieces, launches, offset = cg.JOIN_PIECES, [], 0
    for g in range(0, len(sizes), pieces):
        group = [n // word for n in sizes[g:g + pieces]]
        table = (ctypes.c_uint64 * (2 * pieces))()
        end = 0
        for j, n in enumerate(group):
            end += n
            table[pieces + j] = end
        # a block per THREADS words of the longest range, at most 8 waves (then grid-stride)
        blocks = max(1, min(-(-max(group) // cg.THREADS), lk.sm_count * 8))
        out = ctypes.c_void_p()
        launches.append((fastcall.Prepared(lk.functions[k.name], (blocks, len(group)), (cg.THREADS,),
                                           [out, table]), out, table, offset, len(group)))
        offset += end * word
    return tuple(launches), threading.Lock()
