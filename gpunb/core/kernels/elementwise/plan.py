"""Elementwise launches, planned: the layout class of a call, and the entry point, grid and
geometry of its launch.

Everything here is pure (shapes, byte strides, itemsizes and pointer alignment in; names and
numbers out), so the same planner serves a launch (:mod:`.run`) and ``gpunb.fuse``'s
``inspect``, and is tested on the CPU. The result of :func:`plan`, a
:class:`~gpunb.core.kernels.execute.Step`, depends only on shapes, strides, dtypes and
alignment, so callers that see the same layouts again keep it and skip straight to the
launch.
"""

from __future__ import annotations

import ctypes

from ... import layout
from ..execute import Step
from . import codegen as cg

BLOCK = cg.THREADS
# Elementwise grids: one thread per element (or vector) step, as CuPy and PyTorch launch, up
# to the hardware's limit; the kernels' grid-stride loops cover anything larger. A grid capped
# at the device's resident blocks (x GRID_WAVES, when set) loops inside each thread instead,
# and measured slower on the H100 for every fused benchmark (1 wave: where() over a newaxis
# broadcast at 0.90 of the copy ceiling, 64 waves 0.97, uncapped 0.98; benchmarks/NOTES.md).
GRID_WAVES: int | None = None
MAX_GRID = 2**31 - 1            # the hardware's limit on gridDim.x
INT32_LIMIT = 2**31 - 1         # the most elements (or bytes of reach) 32-bit indexing covers
# A contiguous launch of more elements than the vector entry counts (32 bits) runs as pieces of
# this many, each a vector launch (the 64-bit flat entry, one element a step, moved 2.0 TB/s on
# the H100 where the vector entry moves 2.9); a multiple of every vector width
PIECE = 1 << 30


def classify(shape, operands, outputs) -> tuple[tuple[str, ...], str, int]:
    """The operand kinds and the layout class of an elementwise launch over ``shape``.

    ``operands`` holds per operand None (a scalar) or its ``(shape, byte strides, itemsize)``;
    ``outputs`` the ``(byte strides, itemsize)`` of each output (of ``shape``). A one-element
    operand is 'uniform' (one load, broadcast everywhere), any other array is 'array' and is
    broadcast to ``shape``. Returns (kinds, layout, ndim), see :func:`layout.layout_class`.
    """
    kinds, views = [], []
    for o in operands:
        if o is None:
            kinds.append("scalar")
            continue
        oshape, ostrides, itemsize = o
        n = 1
        for d in oshape:
            n *= d
        if n == 1:
            kinds.append("uniform")
            continue
        kinds.append("array")
        st = ostrides if oshape == shape else layout.broadcast_to(oshape, ostrides, shape)
        views.append((shape, st, itemsize))
    views += [(shape, st, itemsize) for st, itemsize in outputs]
    lay, nd = layout.layout_class(shape, views)
    return tuple(kinds), lay, nd


def grid_cap(lk, entry: str) -> int:
    """The most blocks an elementwise launch of ``entry`` uses (see :data:`GRID_WAVES`)."""
    return MAX_GRID if GRID_WAVES is None else lk.sm_count * lk.occupancy[entry] * GRID_WAVES


def _grid(lk, work: int, entry: str) -> tuple[int]:
    return (max(1, min((work + BLOCK - 1) // BLOCK, grid_cap(lk, entry))),)


def plan(lk, inputs, outputs, shape) -> Step | None:
    """The launch of the loaded kernel ``lk`` (:class:`~gpunb.core.kernels.loader.Loaded`)
    over ``shape`` (None when it is empty). ``inputs`` are the operands' values as
    :func:`.run.launch` takes them (only arrays' strides and pointers' alignment are read);
    ``outputs`` the output ndarrays."""
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return None
    k = lk.kernel
    head = tuple(range(len(k.operands) + len(outputs)))
    if k.layout == "contiguous":
        E = lk.vec
        arrays = [v for o, v in zip(k.operands, inputs) if o.kind == "array"] + list(outputs)
        if n <= INT32_LIMIT and all(a.data.ptr % (E * a.itemsize) == 0 for a in arrays):
            name = f"{k.name}_vec"
            return Step(lk.functions[name], _grid(lk, -(-n // E), name), (BLOCK,),
                        head + (ctypes.c_uint32(n),))
        name = f"{k.name}_flat"
        return Step(lk.functions[name], _grid(lk, n, name), (BLOCK,),
                    head + (ctypes.c_int64(n),))
    arrays = [v for o, v in zip(k.operands, inputs) if o.kind == "array"] + list(outputs)
    cshape, cstrides = layout.collapse(shape, [a.strides for a in arrays])
    if len(cshape) != k.ndim:
        raise AssertionError(f"kernel built for {k.ndim} dims, launch has {len(cshape)}")
    E = lk.vec
    bcast = _row_vectors(cshape, cstrides, arrays, len(outputs), E)
    if bcast is not None:
        # E elements per step along the innermost dim: a geometry in vector units
        vshape = cshape[:-1] + (cshape[-1] // E,)
        vstrides = [st[:-1] + (st[-1] * E,) for st in cstrides]
        entry, geometry = _strided_geometry(n // E, vshape, vstrides)
        if entry == "strided32":
            name = f"{k.name}_rows"
            return Step(lk.functions[name], _grid(lk, n // E, name), (BLOCK,),
                        head + (*geometry, ctypes.c_uint32(bcast)))
    entry, geometry = _strided_geometry(n, cshape, cstrides)
    name = f"{k.name}_{entry}"
    return Step(lk.functions[name], _grid(lk, n, name), (BLOCK,), head + tuple(geometry))


def pieces(lk, inputs, outputs, shape):
    """The vector launches of a contiguous call over more than :data:`INT32_LIMIT` elements
    whose arrays are aligned to a vector: (first element, :class:`Step`) pairs, each over
    :data:`PIECE` elements or fewer, the array operands' and outputs' pointers to be moved by
    the first element's offset (uniform operands and scalars stay). None for other calls."""
    k = lk.kernel
    n = 1
    for s in shape:
        n *= s
    if k.layout != "contiguous" or n <= INT32_LIMIT:
        return None
    E = lk.vec
    arrays = [v for o, v in zip(k.operands, inputs) if o.kind == "array"] + list(outputs)
    if any(a.data.ptr % (E * a.itemsize) for a in arrays):
        return None
    name = f"{k.name}_vec"
    head = tuple(range(len(k.operands) + len(outputs)))
    return [(start, Step(lk.functions[name], _grid(lk, -(-min(PIECE, n - start) // E), name), (BLOCK,),
                         head + (ctypes.c_uint32(min(PIECE, n - start)),)))
            for start in range(0, n, PIECE)]


def _row_vectors(cshape, cstrides, arrays, n_out: int, E: int):
    """The ``bcast`` word of the rows entry, or None when that entry cannot run. Bit k: input
    k is broadcast along the innermost dim; bit 16 + k: input k runs backwards along it (a
    flipped view: one vector load, reversed in registers). It needs the innermost dim a
    multiple of ``E``, each input contiguous (forwards or backwards, its vectors aligned to
    ``E`` elements) or broadcast along it, and each output contiguous and aligned."""
    if E == 1 or cshape[-1] % E:
        return None
    bcast = 0
    n_in = len(arrays) - n_out
    for k, (a, st) in enumerate(zip(arrays, cstrides)):
        if k < n_in and st[-1] == 0:
            bcast |= 1 << k
            continue
        vb = E * a.itemsize
        if any(s % vb for s in st[:-1]):
            return None
        if k < n_in and k < 16 and st[-1] == -a.itemsize:
            # the vector of elements j..j+E-1 starts E-1 elements below element j
            if (a.data.ptr - (E - 1) * a.itemsize) % vb:
                return None
            bcast |= 1 << (16 + k)
            continue
        if st[-1] != a.itemsize or a.data.ptr % vb:
            return None
    if len(cshape) < 2 and not bcast >> 16:
        return None       # a 1-d strided copy with no reversed operand: nothing to gain
    return bcast


def _strided_geometry(n, cshape, cstrides) -> tuple[str, list]:
    """The strided entry point to launch and its last two parameters (``n``, the geometry
    struct by value): ``strided32`` when every index and byte offset fits in 31 bits."""
    strides = [s for st in cstrides for s in st]
    reach = max((sum(abs(s) * (m - 1) for s, m in zip(st, cshape)) for st in cstrides), default=0)
    if n <= INT32_LIMIT and reach <= INT32_LIMIT - 16:
        fast = [cg.fast_divisor(m) for m in cshape]
        flat = [*cshape, *(f[0] for f in fast), *(f[1] for f in fast)]
        flat += [s & 0xFFFFFFFF for s in strides]        # the struct's int strides, as bits
        return "strided32", [ctypes.c_uint32(n), (ctypes.c_uint32 * len(flat))(*flat)]
    flat = list(cshape) + strides
    return "strided", [ctypes.c_int64(n), (ctypes.c_int64 * len(flat))(*flat)]
