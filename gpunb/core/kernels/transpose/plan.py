"""Transposing copies, planned: whether a copy suits the tiled kernel, and how it maps
onto it.

``b = a.T.copy()``, ``out[...] = a.T`` or ``b.T[...] = a`` read one array along its
contiguous axis and write the other along a different one. The general strided elementwise
kernel then coalesces only one side; the tiled kernel (:mod:`.codegen`) stages a tile in
shared memory so that both the reads and the writes are coalesced.

:func:`plan` decides, from shapes and strides alone (pure, tested on the CPU), whether a copy
has that form and how to map it onto the kernel; :func:`.run.try_copy` runs it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import layout
from . import codegen as cg

# The smaller of the two tiled extents must reach this: a slab a few elements wide fills few
# of a tile's rows, and the strided elementwise kernel is nearly coalesced there anyway
# (its accesses along the short axis stay within a few cache lines).
MIN_EXTENT = 16


@dataclass(frozen=True)
class Plan:
    """A copy as the tiled kernel sees it: ``dst[b, i, j] = src[b, i, j]`` where the source
    has element stride 1 along ``i`` and the destination element stride 1 along ``j``.

    Strides are in elements (of each array's own dtype). ``batch`` holds at most
    ``MAX_BATCH_DIMS`` extents (``(1,)`` when there is no batch axis). ``src_offset`` and
    ``dst_offset`` are the byte offsets, from each view's data pointer, of element
    ``[0, 0, 0]`` (nonzero where a unit-stride axis ran backwards and was turned around).
    """

    I: int
    J: int
    src_j: int
    dst_i: int
    batch: tuple[int, ...]
    src_b: tuple[int, ...]
    dst_b: tuple[int, ...]
    src_offset: int = 0
    dst_offset: int = 0


def _unit_axis(strides, itemsize):
    """The one axis whose stride is +-itemsize, or None if there is none or more than one."""
    found = [k for k, s in enumerate(strides) if abs(s) == itemsize]
    return found[0] if len(found) == 1 else None


def plan(shape, src_strides, dst_strides, src_itemsize: int, dst_itemsize: int) -> Plan | None:
    """How the tiled kernel performs ``dst[...] = src`` over ``shape``, or None when it does
    not apply (the caller then uses the elementwise kernel).

    Strides are in bytes, ``src`` already broadcast to ``shape``. After merging the axes
    that are contiguous with each other in both arrays (:func:`gpunb.core.layout.collapse`),
    the tiled kernel applies when all of these hold:

    - at least two axes remain and none has a zero stride (no broadcasting) and every stride
      is a multiple of its array's itemsize;
    - the source has exactly one axis ``i`` of stride +-itemsize, the destination exactly one
      axis ``j`` of stride +-itemsize, and ``i != j`` (the same axis: the elementwise kernel
      is coalesced on both sides already);
    - both ``i`` and ``j`` are at least ``MIN_EXTENT`` long;
    - the other axes (the batch) merge into at most ``MAX_BATCH_DIMS`` axes.

    A unit axis running backwards (stride -itemsize) is turned around in both arrays, which
    an elementwise copy allows. Empty copies return None: there is nothing to launch.
    """
    shape = tuple(shape)
    if 0 in shape or len(shape) < 2:
        return None
    for n, s, d in zip(reversed(shape), reversed(src_strides), reversed(dst_strides)):
        if n != 1:     # both unit-stride on the innermost axis: i == j below; decide it cheaply
            if s == src_itemsize and d == dst_itemsize:
                return None
            break
    cshape, (cs, cd) = layout.collapse(shape, [src_strides, dst_strides])
    if len(cshape) < 2:
        return None
    if any(s == 0 or s % src_itemsize for s in cs) or any(s == 0 or s % dst_itemsize for s in cd):
        return None
    i, j = _unit_axis(cs, src_itemsize), _unit_axis(cd, dst_itemsize)
    if i is None or j is None or i == j:
        return None
    I, J = cshape[i], cshape[j]
    if min(I, J) < MIN_EXTENT:
        return None
    cs, cd = list(cs), list(cd)
    src_offset = dst_offset = 0
    for axis, lead in ((i, cs), (j, cd)):
        if lead[axis] < 0:              # visit this axis forwards, in both arrays
            src_offset += (cshape[axis] - 1) * cs[axis]
            dst_offset += (cshape[axis] - 1) * cd[axis]
            cs[axis], cd[axis] = -cs[axis], -cd[axis]
    rest = [k for k in range(len(cshape)) if k not in (i, j)]
    batch, (bs, bd) = layout.collapse([cshape[k] for k in rest],
                                      [[cs[k] for k in rest], [cd[k] for k in rest]])
    if len(batch) > cg.MAX_BATCH_DIMS:
        return None
    return Plan(I, J, cs[j] // src_itemsize, cd[i] // dst_itemsize, tuple(batch),
                tuple(s // src_itemsize for s in bs), tuple(s // dst_itemsize for s in bd),
                src_offset, dst_offset)


def arguments(p: Plan, src_dtype, dst_dtype) -> list[int]:
    """The kernel's by-value argument struct, as 64-bit words (see
    :func:`.codegen.source`)."""
    ti, tj = cg.tile_shape(src_dtype, dst_dtype)
    tiles_i, tiles_j = -(-p.I // ti), -(-p.J // tj)
    nbatch = 1
    for n in p.batch:
        nbatch *= n
    pad = cg.MAX_BATCH_DIMS - len(p.batch)
    words = [p.I, p.J, p.src_j, p.dst_i, tiles_i, tiles_j, nbatch * tiles_i * tiles_j]
    words += list(p.batch) + [1] * pad + list(p.src_b) + [0] * pad + list(p.dst_b) + [0] * pad
    assert len(words) == cg.ARG_WORDS
    return words
