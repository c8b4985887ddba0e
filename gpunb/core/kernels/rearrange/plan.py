"""Roll launches, planned: the collapsed geometry and the entry point. Pure (shapes, byte
strides and shifts in; numbers out), so it is tested on the CPU."""

from __future__ import annotations

from dataclasses import dataclass

from ..elementwise.codegen import fast_divisor
from . import codegen as cg

INT32_LIMIT = 2**31 - 1


@dataclass(frozen=True)
class RollPlan:
    entry: str            # 'vec', 'one' or 'wide'
    ndim: int
    n: int                # thread steps: elements, or vectors for 'vec'
    words: tuple          # the geometry struct's fields, flattened in order
    wide: bool


def collapse(shape, strides, shifts):
    """``(extents, strides, rolls)`` with size-1 axes dropped and an axis merged into the
    one outside it when it is not rolled and the source is contiguous across the two
    (rolling the outer axis by ``s`` is rolling the merged one by ``s`` times the inner
    extent). ``rolls[d]`` is ``-shift mod n``: where index 0 reads."""
    ext, st, roll = [], [], []
    for n, s, sh in zip(shape, strides, shifts):
        if n == 1:
            continue
        r = (-sh) % n
        if ext and r == 0 and st[-1] == s * n:
            ext[-1], st[-1], roll[-1] = ext[-1] * n, s, roll[-1] * n
            continue
        ext.append(n), st.append(s), roll.append(r)
    if not ext:
        return [1], [0], [0]
    return ext, st, roll


def plan(shape, strides, itemsize: int, shifts) -> RollPlan:
    """The launch of a roll of the (non-empty) view (``shape``, byte ``strides``) by
    ``shifts`` (one per axis) into a new C-ordered array."""
    ext, st, roll = collapse(shape, strides, shifts)
    nd = len(ext)
    size = 1
    for n in ext:
        size *= n
    reach = sum(abs(s) * (n - 1) for s, n in zip(st, ext))
    if size > INT32_LIMIT or reach > INT32_LIMIT - 16:
        return RollPlan("wide", nd, size, (*ext, *ext, *roll, *st), True)
    E = cg.vector_width(cg.RollKernel(itemsize, nd))
    entry = "vec" if E > 1 and ext[-1] % E == 0 else "one"
    iter_shape = list(ext)
    if entry == "vec":
        iter_shape[-1] //= E
        size //= E
    fast = [fast_divisor(n) for n in iter_shape]
    words = (*iter_shape, *(f[0] for f in fast), *(f[1] for f in fast), *ext, *roll,
             *(s & 0xFFFFFFFF for s in st))
    return RollPlan(entry, nd, size, words, False)


@dataclass(frozen=True)
class PadPlan:
    entry: str            # 'vec', 'one' or 'wide'
    ndim: int
    n: int                # thread steps: elements, or vectors for 'vec'
    words: tuple          # the geometry struct's fields, flattened in order
    wide: bool
    perm: tuple           # the kernel's axes, as axes of the array (reversed for Fortran order)


def plan_pad(shape, strides, itemsize: int, widths, fortran: bool) -> PadPlan:
    """The launch of a one-pass pad of the view (``shape``, byte ``strides``) by ``widths``
    (``(before, after)`` per axis) into a new array, C-ordered or (``fortran``) F-ordered:
    then the kernel walks the axes reversed, so that its output is contiguous. Axes of one
    element that are not padded are dropped; ``prio`` is each axis' own number (in NumPy's
    sequential padding, the last axis' constant fills a corner)."""
    axes = list(range(len(shape)))[::-1] if fortran else list(range(len(shape)))
    axes = [d for d in axes if not (shape[d] == 1 and widths[d] == (0, 0))] or [None]
    ext, before, n, st, prio = [], [], [], [], []
    for d in axes:
        if d is None:
            ext.append(1), before.append(0), n.append(1), st.append(0), prio.append(-1)
            continue
        b, a = widths[d]
        ext.append(b + shape[d] + a), before.append(b), n.append(shape[d]), st.append(strides[d])
        prio.append(d)
    nd = len(ext)
    size = 1
    for e in ext:
        size *= e
    reach = sum(abs(s) * max(m - 1, 0) for s, m in zip(st, n))
    if size > INT32_LIMIT or reach > INT32_LIMIT - 16 or max(ext) > INT32_LIMIT:
        return PadPlan("wide", nd, size, (*ext, *before, *n, *st, *prio), True, tuple(axes))
    E = cg.vector_width(cg.PadKernel(itemsize, nd, "constant"))
    entry = "vec" if E > 1 and ext[-1] % E == 0 else "one"
    iter_shape = list(ext)
    if entry == "vec":
        iter_shape[-1] //= E
        size //= E
    fast = [fast_divisor(m) for m in iter_shape]
    words = (*iter_shape, *(f[0] for f in fast), *(f[1] for f in fast), *before, *n,
             *(s & 0xFFFFFFFF for s in st), *(p & 0xFFFFFFFF for p in prio))
    return PadPlan(entry, nd, size, words, False, tuple(axes))
