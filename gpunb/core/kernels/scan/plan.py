"""Scans, planned: which kernel of :mod:`.codegen` runs a scan of a C-contiguous array along
one axis, and with what geometry. Pure (shapes in, a plan out), tested on the CPU.

The input is viewed as ``(outer, L, inner)`` with the scan along ``L``:

- ``flat``: ``outer == inner == 1``, one long scan (single pass, decoupled look-back);
- ``rows``: ``inner == 1``, ``outer`` rows along the contiguous axis: the segmented single
  pass, as fast for rows of 3 elements as for rows of millions;
- ``cols``: ``inner > 1`` and enough columns (``outer * inner``) to occupy the GPU, or
  columns short enough that a sequential loop per thread is cheap: threads own columns;
- ``moved``: a few long columns: the scan axis is moved last (a tiled transposing copy), run
  as ``rows``, and moved back; three passes over the data instead of a sequential loop of
  ``L`` steps on a few threads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import codegen as cg

MIN_COLUMNS = 8192      # columns (threads) that keep enough loads in flight for the cols kernel
SHORT_COLUMN = 256      # a column this short is a short loop however few columns there are


@dataclass(frozen=True)
class ScanPlan:
    kind: str          # 'flat', 'rows', 'cols' or 'moved'
    outer: int
    L: int
    inner: int

    @property
    def n(self) -> int:
        return self.outer * self.L * self.inner


def plan(shape, axis: int) -> ScanPlan:
    """How to scan a C-contiguous array of ``shape`` (non-empty, ndim >= 1) along ``axis``."""
    outer = math.prod(shape[:axis])
    L = shape[axis]
    inner = math.prod(shape[axis + 1:])
    if inner == 1:
        return ScanPlan("flat" if outer == 1 else "rows", outer, L, 1)
    if L == 1 or outer * inner >= MIN_COLUMNS or L <= SHORT_COLUMN:
        return ScanPlan("cols", outer, L, inner)
    return ScanPlan("moved", outer, L, inner)


def tiles(n: int, items: int) -> int:
    """Tiles (blocks) of a single pass over ``n`` elements."""
    return -(-n // (cg.THREADS * items))


def cols_grid(columns: int, sm_count: int, blocks_per_sm: int) -> int:
    """Blocks of the cols kernel: one thread per column, no more blocks than are resident."""
    return max(1, min(-(-columns // cg.THREADS), sm_count * blocks_per_sm))
