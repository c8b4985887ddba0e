"""Reduction launches, planned: the (outputs x reduced elements) geometry of a call, its
thread layout, and the :class:`~gpunb.core.kernels.execute.Step` s that launch it.

The input is viewed as (outputs x reduced elements): the reduced axes are collapsed (and, when
order does not matter, sorted by stride, largest outermost), the kept ones collapsed in the
output's order. The thread layout follows the strides: lanes along the reduction when it is
the contiguous axis, consecutive outputs per thread when the outputs are, and a split of the
reduction, combined by the last block of each output group, when there are too few outputs
to fill the device.
:func:`geometry` is pure and serves both the launch and ``gpunb.fuse``'s ``inspect``.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

from ... import layout
from ..execute import Step
from . import codegen as rc
from . import state as rs

SUBSCRIPTION = 1       # waves of blocks when the reduction is split (2 and 4 measured no better)
# splits of one output at most: the last block reads them all (H100, 64 MiB float32 sums back
# to back: 512 splits 27.8 us each, 1024 28.9, 256 29.1; 2048 or 4096 smaller ones 30-35)
SPLIT_CAP = 512
SPLIT_RUNS = 16        # runs of lanes x vec elements per split, at least
# partial states per thread of a split's combining last block, at most, else fewer splits
# (H100, column sums: 16 gave 11.3 us for 65536 x 64 float32, 32 13.0, 64 19.5; two launches
# 15.5). States larger than SMALL_STATE bytes (arg reductions, complex128, users') keep the
# second launch of many blocks: argmax over the same columns took 23 us so, 27-32 in one.
SPLIT_LOADS = 16
SMALL_STATE = 8
STATE_BYTES = 32       # the largest partial state: complex128 value + int64 index, aligned


@dataclass(frozen=True)
class Geometry:
    """A reduction over ``axes`` of an input of ``shape``, collapsed: ``oshape``/``rshape``
    the output and reduced extents, ``ostr``/``rstr`` each strided operand's byte strides
    along them, ``slot`` the position of the reduced 'array' operand among the strided ones,
    ``M`` outputs of ``K`` elements each."""

    oshape: tuple
    rshape: tuple
    ostr: list
    rstr: list
    slot: int
    M: int
    K: int


def geometry(shape, axes, kinds, strides, keep_order: bool) -> Geometry:
    """The collapsed geometry of a reduction over ``axes`` of ``shape``. ``kinds`` are the
    operands' kinds ('array', 'outer', 'scalar'); ``strides`` the byte strides of the strided
    ('array' and 'outer') operands, in order, each broadcast to ``shape``. Unless
    ``keep_order``, the reduced axes are walked largest stride (of the 'array' operand)
    outermost."""
    kept = [d for d in range(len(shape)) if d not in axes]
    red = list(axes)
    slot = [k for k in kinds if k != "scalar"].index("array")
    if not keep_order:    # the order of a commutative reduction is free
        red.sort(key=lambda d: -abs(strides[slot][d]))
    oshape, ostr = layout.collapse([shape[d] for d in kept], [[s[d] for d in kept] for s in strides])
    rshape, rstr = layout.collapse([shape[d] for d in red], [[s[d] for d in red] for s in strides])
    return Geometry(oshape, rshape, ostr, rstr, slot, math.prod(shape[d] for d in kept),
                    math.prod(shape[d] for d in red))


def _pow2ceil(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


@dataclass(frozen=True)
class Plan:
    """How a reduction is spread over threads: ``lanes`` threads per output (consecutive
    threads when ``lane_fast``), ``vec`` elements per load, the reduction shared by
    ``splits`` blocks (``blockIdx.y``, interleaved runs of ``lanes * vec`` elements), ``grid``
    blocks."""

    lane_fast: bool
    lanes: int
    vec: int
    splits: int
    grid: tuple


def lanes_along_reduction(M: int, reduce_stride: int, outer_stride: int) -> bool:
    """Whether consecutive threads should walk the reduction (it is the more contiguous
    axis, or there is one output) rather than take consecutive outputs."""
    return M == 1 or outer_stride == 0 or reduce_stride <= outer_stride


def plan(M: int, K: int, reduce_stride: int, outer_stride: int, vec: int, resident_blocks: int,
         block: int = rc.THREADS) -> Plan:
    """The thread layout for ``M`` outputs of ``K`` elements each. ``reduce_stride`` and
    ``outer_stride`` are the input's innermost byte strides along the reduction and along the
    outputs; ``vec`` the elements per 16-byte load when the ``_vec`` entry applies (else 1);
    ``resident_blocks`` how many blocks the device runs at once."""
    lane_fast = lanes_along_reduction(M, reduce_stride, outer_stride)
    E = vec if lane_fast else 1
    if lane_fast:      # the lanes of one output read consecutive elements
        G = min(block, _pow2ceil(-(-K // E)))
    else:              # consecutive threads take consecutive outputs; the block's rest splits K
        G = min(block // min(32, _pow2ceil(M)), _pow2ceil(K))
    out_blocks = -(-M // (block // G))
    S = 1
    if 0 < out_blocks < min(resident_blocks, rs.TICKETS + 1) and K:
        # several waves of splits (as CUB's grid subscription): blocks that finish early take
        # the next ones, instead of the slowest SM setting the time of a single wave
        S = max(1, min(SUBSCRIPTION * resident_blocks // out_blocks, K // (G * E * SPLIT_RUNS), SPLIT_CAP))
    return Plan(lane_fast, G, E, S, (min(out_blocks, 2**31 - 1), S))


def combine_plan(M: int, S: int, block: int = rc.THREADS) -> Plan:
    """The layout of the pass that combines ``S`` partial states for each of ``M`` outputs
    (stored as [S, M]) in blocks of their own."""
    return plan(M, S, M * STATE_BYTES, STATE_BYTES, 1, 0, block)


def split_combine_plan(M: int, S: int, block: int = rc.THREADS) -> Plan:
    """How one block combines ``S`` partial states (stored as [S, M]) for each of ``M``
    outputs: lanes along the states for one output, else consecutive threads on consecutive
    outputs (coalesced) with as many lanes each as let all ``M`` be done in one pass."""
    if M == 1:
        return Plan(True, min(block, _pow2ceil(S)), 1, 1, (1, 1))
    return Plan(False, max(1, min(block // _pow2ceil(M), _pow2ceil(S))), 1, 1, (1, 1))


def _geometry_param(g: Geometry):
    flat = [*g.oshape, *g.rshape, *(s for st in g.ostr for s in st), *(s for st in g.rstr for s in st)]
    return (ctypes.c_int64 * len(flat))(*flat)


def steps(lk, g: Geometry, n_operands: int, x, divisor: float):
    """The :class:`Step` s of a reduction with geometry ``g`` by the loaded kernel ``lk``
    (:class:`~gpunb.core.kernels.loader.Loaded`), and the bytes of scratch they need
    (:mod:`gpunb.core.runtime.scratch`: tickets, then the partial states).
    ``x`` is the reduced 'array' operand (its alignment picks the entry point). The steps'
    parameters refer to the operands (0..n-1), the result (n) and the scratch (n + 1)."""
    k = lk.kernel
    M, K, slot = g.M, g.K, g.slot
    ostr, rstr, oshape = g.ostr, g.rstr, g.oshape
    vec_ok = (rc.has_vec(k) and len(g.rshape) == 1 and rstr[slot][0] == x.itemsize
              and x.data.ptr % rc.VEC_BYTES == 0 and all(s % rc.VEC_BYTES == 0 for s in ostr[slot]))
    lane_fast = lanes_along_reduction(M, abs(rstr[slot][-1]), abs(ostr[slot][-1]))
    E = lk.vec
    # column reductions: E adjacent outputs per thread, one 16-byte load per row
    cols_ok = (not lane_fast and E > 1 and rc.has_cols(k) and len(g.rshape) == 1
               and ostr[slot][-1] == x.itemsize and oshape[-1] % E == 0
               and rstr[slot][0] % rc.VEC_BYTES == 0 and x.data.ptr % rc.VEC_BYTES == 0
               and all(s % rc.VEC_BYTES == 0 for s in ostr[slot][:-1]))
    if cols_ok:
        entry = f"{k.name}_cols"
        p = plan(M // E, K, abs(rstr[slot][0]), x.itemsize, 1, lk.sm_count * lk.occupancy[entry])
    else:
        entry = f"{k.name}_vec" if vec_ok and lane_fast else f"{k.name}_main"
        p = plan(M, K, abs(rstr[slot][-1]), abs(ostr[slot][-1]), E if vec_ok else 1,
                 lk.sm_count * lk.occupancy[entry])
    result, scratch = n_operands, n_operands + 1
    group = (rc.THREADS // p.lanes) * (E if cols_ok else 1)     # outputs of one output group
    S, mode = p.splits, 1                   # mode: 1 written at once, 0 last block, 2 combine pass
    if S > 1 and rs.state_bytes(k) > SMALL_STATE:
        mode = 2
    elif S > 1:
        mode = 0
        if S * group > rc.THREADS * SPLIT_LOADS:
            S = max(2, rc.THREADS * SPLIT_LOADS // group)
            p = Plan(p.lane_fast, p.lanes, p.vec, S, (p.grid[0], S))
    last = split_combine_plan(group, S)    # the combining last block's lanes
    main = Step(
        lk.functions[entry], p.grid, (rc.THREADS,),
        (*range(n_operands), scratch if S > 1 else ctypes.c_void_p(0), result, ctypes.c_int64(M),
         ctypes.c_int64(K), ctypes.c_int(p.lanes), ctypes.c_int(int(p.lane_fast)),
         ctypes.c_int(mode), ctypes.c_double(divisor), ctypes.c_int(last.lanes),
         ctypes.c_int(int(last.lane_fast)), _geometry_param(g)))
    temp = rs.TICKET_BYTES + S * M * STATE_BYTES if S > 1 else 0
    if mode != 2:
        return (main,), temp
    c = combine_plan(M, S)
    combine = Step(
        lk.functions[f"{k.name}_combine"], c.grid, (rc.THREADS,),
        (scratch, result, ctypes.c_int64(M), ctypes.c_int64(S), ctypes.c_int(c.lanes),
         ctypes.c_int(int(c.lane_fast)), ctypes.c_double(divisor)))
    return (main, combine), temp
