"""Radix sorts, planned: CUB's onesweep temporary storage, passes and portions for ``n`` keys
(what ``DispatchRadixSort::InvokeOnesweep`` computes on the host). Pure, tested on the CPU."""

from __future__ import annotations

from dataclasses import dataclass

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
