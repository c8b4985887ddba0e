"""Gathers and scatters, planned: the iteration space collapsed and the kernel's argument
struct, from shapes and strides alone (pure, tested on the CPU)."""

from __future__ import annotations

from dataclasses import dataclass

from ... import layout

INT32_LIMIT = 2**31 - 1


@dataclass(frozen=True)
class Index:
    """One integer index array as the kernel reads it: its byte strides over the iteration
    space (``strides``, 0 where it is broadcast), and the axis of the indexed array it
    selects: ``size`` (extent), ``step`` (byte stride), ``axis`` (its number, for the error
    message) and ``mode`` ('raise', 'wrap' or 'clip')."""

    strides: tuple
    size: int
    step: int
    axis: int
    mode: str = "raise"


@dataclass(frozen=True)
class Plan:
    shape: tuple          # the collapsed iteration space
    words: tuple          # the argument struct, 64-bit words
    n: int                # points

    @property
    def wide(self) -> bool:
        return self.n > INT32_LIMIT


def plan(space, a_strides, o_strides, indices, mask_strides=None) -> Plan:
    """The collapsed iteration space and argument words (see :func:`.codegen.source`) for a
    kernel over ``space`` (a shape) where the indexed array moves by ``a_strides`` bytes per
    step along each axis, the other operand by ``o_strides``, each :class:`Index` by its
    ``strides`` and the mask (if any) by ``mask_strides``."""
    space = tuple(space)
    lists = [tuple(a_strides), tuple(o_strides)] + [tuple(ix.strides) for ix in indices]
    if mask_strides is not None:
        lists.append(tuple(mask_strides))
    n = 1
    for d in space:
        n *= d
    if len(space) == 0:
        shape, coll = (1,), [(0,) for _ in lists]
    else:
        shape, coll = layout.collapse(space, lists)
    words = [n, *shape, *coll[0], *coll[1]]
    for c in coll[2:2 + len(indices)]:
        words += c
    if mask_strides is not None:
        words += coll[-1]
    words += [ix.size for ix in indices] + [ix.step for ix in indices] + [ix.axis for ix in indices]
    return Plan(tuple(shape), tuple(words), n)
