"""Random draws, run: load the Philox kernels of :mod:`.codegen` and launch them on a
:class:`.plan.StreamState`, advancing it as NumPy would.

``out`` arguments are C-contiguous gpunb arrays of the kernel's dtype (the API layer
allocates or checks them); every function writes ``out.size`` elements.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from ...ndarray import ndarray
from ...runtime import fastcall, memory
from .. import loader
from ..execute import Step, execute
from . import codegen as cg
from . import continuous
from . import plan as pl
from .reference import philox32_keys

_vp = ctypes.c_void_p
_I32, _I64 = np.dtype("int32"), np.dtype("int64")
_F64 = np.dtype("float64")
_NO_AFFINE = (0.0, 0.0, 0.0, 0.0)
_C256 = (1 << 256) - 1
_M64 = pl.MASK64
_functions: dict = {}      # (kind, what, dtype, width, full) -> (device context, CUfunction)


def _fn(kind, what="", dtype=_F64, width=64, full=False):
    """The kernel's CUfunction on the current device (compiled once; then one dict lookup,
    no IR object built per call)."""
    key = (kind, what, dtype, width, full)
    hit = _functions.get(key)
    ctx = loader.driver.active
    if hit is not None and hit[0] is ctx and ctx is not None:
        return hit[1]
    k = cg.RandomKernel(kind, what, dtype, width, full)
    f = loader.get(cg, k, lambda: k).functions[k.name]
    _functions[key] = (loader.driver.active, f)
    return f


def _grid(nblocks: int, threads: int = cg.THREADS) -> tuple:
    return (-(-nblocks // threads),)


_ARG_CODES = "".join("d" if f in cg.DOUBLES else "q" if f in pl.SIGNED_FIELDS else "Q"
                     for f in cg.ARG_FIELDS)


def param_codes(pointers: int, keys: int = 0) -> list[str]:
    """The ``struct`` codes of a Philox kernel's parameters: ``pointers`` pointers, the
    ``rng_args`` struct, then (``keys`` > 0) the ``philox32_keys`` struct of 32-bit words."""
    return ["P"] * pointers + [_ARG_CODES] + ([f"{keys}I"] if keys else [])


def _launch(fn: int, nblocks: int, ptrs: tuple, values: tuple, keys: tuple = (),
            per_thread: int = 1) -> None:
    """One launch of a kernel taking ``(T* out, [int* flag,] rng_args a[, philox32_keys])``
    over ``nblocks`` Philox blocks, ``per_thread`` a thread: the pointers, the struct's
    ``values`` and the round ``keys`` (32-bit words) packed by one ``struct`` call into a
    parameter buffer made once per kernel (a draw's host time is mostly building ctypes
    objects otherwise), kept in the device context (a reset forgets it with the function it
    launches)."""
    ctx = loader.driver.active
    entry = ctx.prepared.get(("random", fn))
    if entry is None:
        pack, buffer, objects = fastcall.packed(param_codes(len(ptrs), len(keys)))
        entry = ctx.remember(("random", fn), (fastcall.Prepared(fn, (1,), (cg.THREADS,), objects),
                                              pack, buffer, threading.Lock()))
    prepared, pack, buffer, lock = entry
    with lock:
        pack(buffer, 0, *ptrs, *values, *keys)
        prepared.launch(loader.driver.stream_handle(), -(-nblocks // (cg.THREADS * per_thread)))


def fill_random(state: pl.StreamState, out: ndarray, low: float | None = None,
                rng: float = 0.0) -> None:
    """NumPy's ``random`` (float64 or float32) into ``out``; ``low + rng * u`` when ``low``
    is given (NumPy's ``uniform``, float64)."""
    n = out._size
    if n == 0:
        return
    dt = out._dtype
    width = 64 if dt == _F64 else 32
    f = _NO_AFFINE if low is None else (low, rng, 1.0, 0.0)
    if state.buffer_pos >= 4 and (width == 64 or not state.has_uint32):
        # the stream at a block's start with no pending half (where a draw of a multiple of
        # 4 doubles or 8 floats leaves it): state.values(counter + 1, 0, n, nb, f=f) with
        # blocks_for's count at lane 0, written out (a small draw's host time; a CPU test
        # checks both against the plan's functions)
        S = (state.counter + 1) & _C256
        nb = -(-n // 4) if width == 64 else -(-n // 8)
        k0, k1 = state.key
        values = (S & _M64, (S >> 64) & _M64, (S >> 128) & _M64, S >> 192, k0, k1, 0, n, nb,
                  -1, 0, 0, 0, 0, *f, 0, 0, 0, 0)
    else:
        S, o = state.start()
        lead = state.lead() if width == 32 else (-1, 0)
        nb = pl.blocks_for(o, lead[0] != -1, n, width)
        values = state.values(S, o, n, nb, lead, f=f)
    _launch(_fn("fill", "random", dt), nb, (out._data.ptr,), values)
    pl.consume(state, width, n)


def fill_integers(state: pl.StreamState, out: ndarray, off: int, rng: int) -> None:
    """NumPy's ``integers`` with scalar bounds (``off = low``, ``rng = high - low``, closed)
    into ``out`` (any integer dtype or bool), bit for bit with NumPy's Philox."""
    n = out.size
    if n == 0:
        return
    width, full, threshold = pl.integer_plan(rng, out.dtype)
    if width == 0:                      # a single value: NumPy draws nothing
        from ..elementwise.run import assign
        assign(out, np.asarray(off & pl.MASK64, np.uint64).astype(out.dtype))
        return
    fill = full or threshold == 0
    while n > 0:
        S, o = state.start()
        lead = state.lead() if width < 64 else (-1, 0)
        if fill:
            nb = pl.blocks_for(o, lead[0] != -1, n, width)
            _launch(_fn("fill", "int", out.dtype, width, full), nb, (out.data.ptr,),
                    state.values(S, o, n, nb, lead, 0, off, rng + 1, 0))
            pl.consume(state, width, n)
            return
        if threshold * n < (1 << width) >> 5:
            # under 1/32 rejections expected: fill as if none, and check (one pass, no scan)
            nb = pl.blocks_for(o, lead[0] != -1, n, width)
            flag = ndarray._empty((1,), _I32)
            memory.fill_bytes(flag.data.ptr, 0, 4)
            _launch(_fn("try", "int", out.dtype, width), nb, (out.data.ptr, flag.data.ptr),
                    state.values(S, o, n, nb, lead, 0, off, rng + 1, threshold))
            if not int(flag.get()[0]):        # no word rejected: element i is word i
                pl.consume(state, width, n)
                return
        limit = pl.candidate_limit(n, width, threshold)
        nb = pl.blocks_for(o, lead[0] != -1, limit, width)
        tiles = -(-nb // cg.THREADS)
        counts = ndarray._empty((tiles,), _I64)
        result = ndarray._empty((2,), _I64)
        args = state.args(S, o, n, nb, lead, limit, off, rng + 1, threshold)
        execute((Step(_fn("count", "int", out.dtype, width), (tiles,), (cg.THREADS,), (1, args)),
                 Step(_fn("scan"), (1,), (cg.SCAN_THREADS,), (1, 2, ctypes.c_int64(tiles))),
                 Step(_fn("write", "int", out.dtype, width), (tiles,), (cg.THREADS,), (0, 1, 2, args))),
                [_vp(out.data.ptr), _vp(counts.data.ptr), _vp(result.data.ptr)])
        last, total = (int(v) for v in result.get())     # how far the stream went: 16 bytes
        if total >= n:
            pl.consume(state, width, last + 1)
            return
        # (essentially never: fewer than n accepted in `limit` words) go on after them
        pl.consume(state, width, limit)
        out = out.reshape(-1)[total:]
        n -= total


def fill_dist(state: pl.StreamState, out: ndarray, what: str, loc: float = 0.0,
              scale: float = 1.0) -> None:
    """``loc + scale * X`` for X standard normal, standard exponential or uniform [0, 1)
    (float32 or float64 ``out``; not NumPy's values: Box-Muller and the inverse CDF instead
    of NumPy's ziggurat). Philox4x32-10 blocks with counter ``(block, S)``, ``S`` the next
    4x64 block, and the 4x32 key of the 4x64 key; the 4x64 state then advances past as many
    blocks as bits were drawn, so no later draw reuses a counter."""
    n = out._size
    if n == 0:
        return
    dt = out._dtype
    nb = pl.dist_blocks(what, dt, n)        # Philox4x32 blocks
    S = (state.counter + 1) & _C256
    ptr = out._data.ptr
    k0, k1, keys = philox32_keys(state.key)
    # state.values(S, o, n, nb, f=(loc, scale, affine, 0)) with the 4x32 key, written out (a
    # keyword method call is a tenth of a small draw's host time; a CPU test ties the two):
    # o = 1 when the kernel may not store vectors, f[2] = 1 when loc and scale apply
    values = (S & _M64, (S >> 64) & _M64, (S >> 128) & _M64, S >> 192, k0, k1,
              0 if ptr & 15 == 0 else 1, n, nb, -1, 0, 0, 0, 0,
              loc, scale, 0.0 if loc == 0.0 and scale == 1.0 else 1.0, 0.0, 0, 0, 0, 0)
    _launch(_fn("dist", what, dt), nb, (ptr,), values, keys,
            continuous.per_thread(what, dt))
    state.advance_blocks((nb + 1) >> 1)     # as many 4x64 blocks as bits drawn, rounded up


def integer_words(rng: int) -> tuple[int, bool, int, int]:
    """``(width, full, multiplier, threshold)`` of :func:`fill_integers32` for the closed range
    ``rng`` (> 0): 32-bit words below 2**16 and for the whole 32-bit range (a word rejected
    with probability under 2**-16), else 64-bit words; Lemire's multiplier ``rng + 1`` and
    the threshold ``2**width mod (rng + 1)`` under which a word's low product is rejected."""
    r = rng + 1
    if rng == _M64:
        return 64, True, 0, 0
    width = 32 if rng < (1 << 16) or rng == 0xFFFFFFFF else 64
    return width, False, r, ((1 << width) - r) % r


def fill_integers32(state: pl.StreamState, out: ndarray, off: int, rng: int) -> None:
    """Integers ``off + [0, rng]`` (closed; any integer dtype or bool) from Philox4x32-10
    blocks (:class:`gpunb.random.Philox4x3210`): element ``e`` from word ``e`` of the blocks
    ``(B, S)`` (:func:`.continuous.integer_kernel`), with no read-back and one pass; the state
    advances as :func:`fill_dist`'s."""
    n = out._size
    if n == 0:
        return
    if rng == 0:                        # a single value: nothing to draw
        from ..elementwise.run import assign
        assign(out, np.asarray(off & _M64, np.uint64).astype(out._dtype))
        return
    width, full, r, threshold = integer_words(rng)
    per = 4 if width == 32 else 2
    nb = -(-n // per)
    size = per * out._dtype.itemsize
    if size > 16:       # stored as chunks THREADS apart (continuous.int_chunks): whole parts
        nb = -(-nb // cg.THREADS) * cg.THREADS
    S = (state.counter + 1) & _C256
    ptr = out._data.ptr
    k0, k1, keys = philox32_keys(state.key)
    vec = min(16, size)
    values = (S & _M64, (S >> 64) & _M64, (S >> 128) & _M64, S >> 192, k0, k1,
              0 if ptr % vec == 0 else 1, n, nb, -1, 0, off & _M64, r, threshold,
              0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0)
    _launch(_fn("dist", "int", out._dtype, width, full), nb, (ptr,), values, keys,
            continuous.INT_BLOCKS_PER_THREAD)
    state.advance_blocks((nb + 1) >> 1)


def fill_per_element(state: pl.StreamState, out: ndarray, what: str, params) -> None:
    """gamma / beta / poisson / binomial and the one-element kinds of :mod:`.dists`, one
    element per block; ``params`` (up to four, as the kernel takes them) are each a float
    (the same for all) or a C-contiguous float64 array of ``out.size``."""
    n = out.size
    if n == 0:
        return
    S = (state.counter + 1) & ((1 << 256) - 1)
    f = [0.0, 0.0, 0.0, 0.0]
    ptrs = [_vp(out.data.ptr)]
    for i, p in enumerate(params):
        if isinstance(p, ndarray):
            ptrs.append(_vp(p.data.ptr))
        else:
            f[i] = float(p)
            ptrs.append(_vp(0))
    args = state.args(S, 0, n, n, f=f)
    idx = tuple(range(len(ptrs)))
    execute((Step(_fn("dist", what, out.dtype), _grid(n), (cg.THREADS,), (*idx, args)),), ptrs)
    state.advance_blocks(n)


def fill_rows(state: pl.StreamState, out: ndarray, what: str, arrays, d: int, off: int = 0,
              rng: int = 0, f=(0.0, 0.0, 0.0, 0.0)) -> None:
    """multinomial / mvhg (:mod:`.dists`): one thread per row of ``d`` elements of ``out``
    (C-contiguous int64, rows times ``d``); ``arrays`` the kernel's pointer arguments after
    ``out`` (gpunb arrays, or None for a null pointer), ``d`` as ``limit``, ``off``, ``rng``
    and ``f`` the other arguments. Row ``r``'s category ``j`` draws as element ``r * d + j``
    of a per-element draw: the stream advances by ``rows * d`` blocks."""
    rows = out.size // d if d else 0
    if rows == 0:
        return
    S = (state.counter + 1) & ((1 << 256) - 1)
    ptrs = [_vp(out.data.ptr)] + [_vp(a.data.ptr if a is not None else 0) for a in arrays]
    args = state.args(S, 0, rows, rows * d, limit=d, off=off, rng=rng, f=tuple(f))
    execute((Step(_fn("dist", what, out.dtype), _grid(rows), (cg.THREADS,),
                  (*range(len(ptrs)), args)),), ptrs)
    state.advance_blocks(rows * d)
