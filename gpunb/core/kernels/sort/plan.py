"""Radix sorts, planned: CUB's onesweep temporary storage, passes and portions for ``n`` keys
(what ``DispatchRadixSort::InvokeOnesweep`` computes on the host). Pure, tested on the CPU."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import codegen as cg

PORTION_LIMIT = (1 << 28) - 1     # CUB: look-back counts of one portion stay below 2^30
MINMAX_BYTES = 256                # the histogram's smallest and largest key, then the bins aligned


@dataclass(frozen=True)
class OnesweepPlan:
    n: int
    passes: int
    portions: int
    portion_size: int
    digits: int
    bins_offset: int          # bytes: the smallest and largest key (2 uint64) at 0, bins (uint64) here,
    ctrs_offset: int          # then the counters (int32),
    lookback_offset: int      # then the look-back flags (int32), 256-byte aligned
    temp_bytes: int
    zero_words: int           # 32-bit words of extremes, bins and counters zeroed before the histogram


def _align(x: int, a: int = 256) -> int:
    return -(-x // a) * a


def onesweep_plan(n: int, tile: int, bits: int) -> OnesweepPlan:
    """The plan for ``n`` > 0 keys of ``bits`` sorted bits, onesweep tiles of ``tile`` items."""
    digits = 1 << cg.RADIX_BITS
    passes = -(-bits // cg.RADIX_BITS)
    portion = PORTION_LIMIT // tile * tile
    portions = -(-n // portion)
    max_blocks = -(-min(n, portion) // tile)
    bins_bytes = portions * passes * digits * 8
    ctrs_bytes = portions * passes * 4
    bins = MINMAX_BYTES
    ctrs = bins + bins_bytes
    lookback = _align(ctrs + ctrs_bytes)
    total = lookback + max_blocks * digits * 4
    return OnesweepPlan(n, passes, portions, portion, digits, bins, ctrs, lookback, _align(total),
                        (ctrs + ctrs_bytes) // 4)


@dataclass(frozen=True)
class SegmentPlan:
    """A segmented sort of 8-byte keys: the digit passes ``digits`` (the top ones) group the
    keys by their bits [``bit``, ``bit + nbits``) (2^``shift`` values to a group, ``groups``
    groups), then each group's bits [``begin``, ``end``) are sorted in shared memory (``end``:
    ``bit + shift``, the grouping bits that differ within a group included)."""
    digits: tuple
    bit: int
    nbits: int
    shift: int
    groups: int
    begin: int

    @property
    def end(self) -> int:
        return self.bit + self.shift


SEG_MEAN = 1024           # keys a group on average (the larger tile holds twice as many)
SEG_SPREAD = 4            # a top digit's fullest bin at most this many times its even share


def segment_plan(counts: np.ndarray, n: int) -> SegmentPlan | None:
    """The segmented sort of ``n`` 8-byte keys with digit histograms ``counts`` (int64, passes
    x 256, padding removed), or None where the digit passes are as fast: fewer than 6 passes move, or
    the top digits are too uneven for the groups to fit a block (a plan is still checked on
    the GPU: run.py falls back when a group does not fit). Pure."""
    digits = 1 << cg.RADIX_BITS
    most = counts.max(axis=1)           # (NumPy throughout: a sort waits on this plan)
    moving = [int(q) for q in np.flatnonzero(most != n)]
    if len(moving) < 6:
        return None
    h = moving[-1]
    used = np.flatnonzero(counts[h])
    lo, hi = int(used[0]), int(used[-1])
    for t in (2, 3):
        span = (hi - lo + 1) << (cg.RADIX_BITS * (t - 1))       # group ids in use at most
        if span * SEG_MEAN * 3 // 2 >= n:       # a mean of up to 1.5 SEG_MEAN keys a group
            break
    else:
        return None
    below = [q for q in moving if q <= h - t]
    if len(below) < 3:
        return None
    if int(most[h]) * (hi - lo + 1) > SEG_SPREAD * n or any(
            int(most[q]) * digits > SEG_SPREAD * n for q in range(h - t + 1, h) if q in moving):
        return None
    shift = max(0, (span * SEG_MEAN // n).bit_length() - 1)
    bit = cg.RADIX_BITS * (h - t + 1)
    groups = ((((hi + 1) << (cg.RADIX_BITS * (t - 1))) - 1) >> shift) + 1
    return SegmentPlan(tuple(q for q in range(h - t + 1, h + 1) if q in moving), bit,
                       cg.RADIX_BITS * t, shift, groups, cg.RADIX_BITS * below[0])
