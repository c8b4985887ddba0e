"""Scan and stream-compaction kernels, CUDA C++ source built on CUB's block-level pieces.

Two kernel kinds, each one source (one NVRTC compile) with several entry points:

:class:`ScanKernel` (``cumsum``, ``cumprod`` and their NaN forms) reads ``In`` elements,
combines them in ``Acc`` (float16 computes in float) and stores ``Out`` ones:

- ``<name>_flat``: one long contiguous scan, single pass with decoupled look-back: one block
  per tile, in ``blockIdx`` order; a tile's aggregate is published in a tile-state array
  (``cub::ScanTileState``) and the next tiles' warp 0 looks back over it
  (``cub::TilePrefixCallbackOp``). Loads and stores go through shared memory in striped order
  (``BLOCK_LOAD_WARP_TRANSPOSE``) so that global accesses are coalesced.
- ``<name>_rows``: many rows of length ``L`` along the contiguous last axis, as the same
  single pass over the flattened array with a segmented operator: ``(head, value)`` pairs
  restart at each row's first element. Any row length runs at the flat scan's speed.
- ``<name>_cols``: the scan axis is not the last: ``in[o, i, c]`` for ``i`` along ``L``;
  threads own ``(o, c)`` columns, consecutive threads consecutive ``c``, so every step of the
  sequential loop is a coalesced row read.
- ``<name>_init_flat``, ``<name>_init_rows``: reset a tile-state array before a single pass.

:class:`CompactKernel` (``x[mask]``, ``nonzero``) selects in two passes over tiles:
``<name>_count`` counts each tile's nonzero mask elements and scans the counts with the
same look-back, writing each tile's output offset and (last tile) the total; the host reads
the total (the output size), allocates, and ``<name>_scatter`` rescans each tile's flags in
the block, gathers the selected values (or their flat positions, or their N-d indices) into
shared memory in order and writes them out coalesced.

Pure: imports nothing from CUDA, returns a string.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...build import cccl
from ...dtypes import compute_type, storage_type
from ..prelude import prelude

# 128 threads x 40 float32 per tile measured best for the single-pass scan on the H100 (0.84 of
# copy bandwidth against 0.74 for 256 x 16; rows of 1000 0.32 ms against 0.38; NOTES.md)
THREADS = 128
MAX_NDIM = 8          # nonzero's N-d index output (the array's shape in the argument struct)

_HEADERS = """#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/agent/single_pass_scan_operators.cuh>
"""


def items_per_thread(*dtypes) -> int:
    """Elements per thread: 40 for types of up to 4 bytes, fewer for wider ones, so that a
    tile staged in shared memory stays within 20 KiB (the load's and the store's staging share
    it: a union)."""
    size = max(np.dtype(d).itemsize for d in dtypes)
    return max(4, min(40, 160 // max(size, 1)))


def nvrtc_options(kernel) -> tuple[str, ...]:
    """The loader's hook: CUB's include directory and the CCCL version (in the cache key)."""
    return cccl.options()


def vector_width(kernel) -> int:
    return 1


def _nan_test(dt: np.dtype) -> str:
    """C++ predicate ``isnan_in(x)`` on a stored input element (false for non-float types)."""
    if dt.kind == "c":
        return "return isnan(x.re) || isnan(x.im);"
    if dt.kind == "f":
        return "return isnan(gpunb::load(x));"
    return "return false;"


# ---- scans ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ScanKernel:
    """``out = op-scan(in)``: ``src`` elements combined in ``acc`` and stored as ``dst``.

    ``op`` is ``'sum'`` or ``'prod'``; ``nan`` treats NaN inputs as the identity (nancumsum);
    ``exclusive`` makes element ``i`` the combination of the elements before it."""

    src: np.dtype
    acc: np.dtype
    dst: np.dtype
    op: str
    nan: bool = False
    exclusive: bool = False

    def __post_init__(self):
        for f in ("src", "acc", "dst"):
            object.__setattr__(self, f, np.dtype(getattr(self, f)))
        if self.op not in ("sum", "prod"):
            raise ValueError(f"unknown scan op {self.op!r}")

    @cached_property      # computed once: dtype names are slow to read per call
    def name(self) -> str:
        kind = ("nan" if self.nan else "") + ("cumsum" if self.op == "sum" else "cumprod")
        ex = "_exclusive" if self.exclusive else ""
        return f"scan_{kind}{ex}_{self.src.name}_{self.acc.name}_{self.dst.name}"

    @cached_property
    def items(self) -> int:
        return items_per_thread(self.src, self.acc, self.dst)


def _scan_source(k: ScanKernel) -> str:
    acc_c = compute_type(k.acc)
    if k.acc.kind == "b":
        combine = "a || b" if k.op == "sum" else "a && b"
    else:
        combine = f"({acc_c})(a {'+' if k.op == 'sum' else '*'} b)"
    identity = f"({acc_c})({0 if k.op == 'sum' else 1})"
    return f"""
using In = {storage_type(k.src)};
using Acc = {acc_c};
using Out = {storage_type(k.dst)};
#define NAME {k.name}
#define ITEMS {k.items}
#define EXCLUSIVE {int(k.exclusive)}
__device__ __forceinline__ bool isnan_in(const In& x) {{ {_nan_test(k.src) if k.nan else "return false;"} }}
__device__ __forceinline__ Acc identity() {{ return {identity}; }}
struct Op {{
    __device__ __forceinline__ Acc operator()(const Acc& a, const Acc& b) const {{ return {combine}; }}
}};
__device__ __forceinline__ Acc value_of(const In& x) {{
    return isnan_in(x) ? identity() : gpunb::cast<Acc>(gpunb::load(x));
}}
""" + _SCAN_BODY


_SCAN_BODY = r"""
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
constexpr int TILE = THREADS * ITEMS;

// (head, value): a segmented scan restarts at each head (a row's first element).
struct Seg { int head; Acc v; };
struct SegOp {
    __device__ __forceinline__ Seg operator()(const Seg& a, const Seg& b) const {
        Seg r; r.head = a.head | b.head; r.v = b.head ? b.v : Op()(a.v, b.v); return r;
    }
};

using LoadT = cub::BlockLoad<In, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
using StoreT = cub::BlockStore<Out, THREADS, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
using FlatState = cub::ScanTileState<Acc>;
using SegState = cub::ScanTileState<Seg>;
using FlatScan = cub::BlockScan<Acc, THREADS, cub::BLOCK_SCAN_WARP_SCANS>;
using SegScan = cub::BlockScan<Seg, THREADS, cub::BLOCK_SCAN_WARP_SCANS>;
using FlatPrefix = cub::TilePrefixCallbackOp<Acc, Op, FlatState>;
using SegPrefix = cub::TilePrefixCallbackOp<Seg, SegOp, SegState>;

extern "C" __global__ void CAT(NAME, _init_flat)(void* state, size_t bytes, int ntiles) {
    FlatState s; s.Init(ntiles, state, bytes); s.InitializeStatus(ntiles);
}
extern "C" __global__ void CAT(NAME, _init_rows)(void* state, size_t bytes, int ntiles) {
    SegState s; s.Init(ntiles, state, bytes); s.InitializeStatus(ntiles);
}

extern "C" __global__ void __launch_bounds__(THREADS)
CAT(NAME, _flat)(const In* __restrict__ in, Out* __restrict__ out, long long n, void* state, size_t bytes, int ntiles) {
    __shared__ union {
        typename LoadT::TempStorage load;
        typename StoreT::TempStorage store;
        struct { typename FlatScan::TempStorage scan; typename FlatPrefix::TempStorage prefix; } s;
    } sh;
    FlatState ts; ts.Init(ntiles, state, bytes);
    const int tile = blockIdx.x;
    const long long start = (long long)tile * TILE;
    const int valid = (int)min((long long)TILE, n - start);
    In raw[ITEMS];
    if (valid == TILE) LoadT(sh.load).Load(in + start, raw);
    else LoadT(sh.load).Load(in + start, raw, valid);
    Acc v[ITEMS];
    #pragma unroll
    for (int j = 0; j < ITEMS; ++j)
        v[j] = (threadIdx.x * ITEMS + j < valid) ? value_of(raw[j]) : identity();
    __syncthreads();
    if (tile == 0) {
        Acc agg;
#if EXCLUSIVE
        FlatScan(sh.s.scan).ExclusiveScan(v, v, identity(), Op(), agg);
#else
        FlatScan(sh.s.scan).InclusiveScan(v, v, Op(), agg);
#endif
        if (threadIdx.x == 0 && ntiles > 1) ts.SetInclusive(0, agg);
    } else {
        FlatPrefix prefix(ts, sh.s.prefix, Op(), tile);
#if EXCLUSIVE
        FlatScan(sh.s.scan).ExclusiveScan(v, v, Op(), prefix);
#else
        FlatScan(sh.s.scan).InclusiveScan(v, v, Op(), prefix);
#endif
    }
    __syncthreads();
    Out o[ITEMS];
    #pragma unroll
    for (int j = 0; j < ITEMS; ++j) o[j] = gpunb::store<Out>(v[j]);
    if (valid == TILE) StoreT(sh.store).Store(out + start, o);
    else StoreT(sh.store).Store(out + start, o, valid);
}

extern "C" __global__ void __launch_bounds__(THREADS)
CAT(NAME, _rows)(const In* __restrict__ in, Out* __restrict__ out, long long n, long long L,
                 void* state, size_t bytes, int ntiles) {
    __shared__ union {
        typename LoadT::TempStorage load;
        typename StoreT::TempStorage store;
        struct { typename SegScan::TempStorage scan; typename SegPrefix::TempStorage prefix; } s;
    } sh;
    SegState ts; ts.Init(ntiles, state, bytes);
    const int tile = blockIdx.x;
    const long long start = (long long)tile * TILE;
    const int valid = (int)min((long long)TILE, n - start);
    In raw[ITEMS];
    if (valid == TILE) LoadT(sh.load).Load(in + start, raw);
    else LoadT(sh.load).Load(in + start, raw, valid);
    const long long first = start + (long long)threadIdx.x * ITEMS;
    long long pos = first % L;       // position in its row of this thread's first element
    Seg v[ITEMS];
    #pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        v[j].head = pos == 0;
        v[j].v = (threadIdx.x * ITEMS + j < valid) ? value_of(raw[j]) : identity();
        if (++pos == L) pos = 0;
    }
    __syncthreads();
    if (tile == 0) {
        Seg agg;
#if EXCLUSIVE
        Seg init; init.head = 0; init.v = identity();
        SegScan(sh.s.scan).ExclusiveScan(v, v, init, SegOp(), agg);
#else
        SegScan(sh.s.scan).InclusiveScan(v, v, SegOp(), agg);
#endif
        if (threadIdx.x == 0 && ntiles > 1) ts.SetInclusive(0, agg);
    } else {
        SegPrefix prefix(ts, sh.s.prefix, SegOp(), tile);
#if EXCLUSIVE
        SegScan(sh.s.scan).ExclusiveScan(v, v, SegOp(), prefix);
#else
        SegScan(sh.s.scan).InclusiveScan(v, v, SegOp(), prefix);
#endif
    }
    __syncthreads();
    Out o[ITEMS];
    pos = first % L;
    #pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        // exclusive: the pairs before a row's head belong to other rows
        o[j] = gpunb::store<Out>((EXCLUSIVE && pos == 0) ? identity() : v[j].v);
        if (++pos == L) pos = 0;
    }
    if (valid == TILE) StoreT(sh.store).Store(out + start, o);
    else StoreT(sh.store).Store(out + start, o, valid);
}

extern "C" __global__ void __launch_bounds__(THREADS)
CAT(NAME, _cols)(const In* __restrict__ in, Out* __restrict__ out, long long outer, long long L, long long inner) {
    const long long columns = outer * inner;
    for (long long t = (long long)blockIdx.x * THREADS + threadIdx.x; t < columns; t += (long long)gridDim.x * THREADS) {
        const long long o = t / inner, c = t - o * inner;
        const In* p = in + o * L * inner + c;
        Out* q = out + o * L * inner + c;
        Acc a = identity();
        long long i = 0;
        // loads issued in groups before their values are combined, so several are in flight
        for (; i + 8 <= L; i += 8) {
            In r[8];
            #pragma unroll
            for (int j = 0; j < 8; ++j) r[j] = p[(i + j) * inner];
            #pragma unroll
            for (int j = 0; j < 8; ++j) {
#if EXCLUSIVE
                q[(i + j) * inner] = gpunb::store<Out>(a); a = Op()(a, value_of(r[j]));
#else
                a = Op()(a, value_of(r[j])); q[(i + j) * inner] = gpunb::store<Out>(a);
#endif
            }
        }
        for (; i < L; ++i) {
#if EXCLUSIVE
            q[i * inner] = gpunb::store<Out>(a); a = Op()(a, value_of(p[i * inner]));
#else
            a = Op()(a, value_of(p[i * inner])); q[i * inner] = gpunb::store<Out>(a);
#endif
        }
    }
}
"""


# ---- stream compaction ---------------------------------------------------------------------------

@dataclass(frozen=True)
class CompactKernel:
    """Select where ``mask`` (any dtype: nonzero) is true: ``what`` is ``'values'`` (the
    elements of a ``values`` array of dtype ``value``), ``'flat'`` (int64 flat positions) or
    ``'nd'`` (int64 N-d indices, one row per axis)."""

    mask: np.dtype
    what: str
    value: np.dtype = np.dtype("int64")

    def __post_init__(self):
        object.__setattr__(self, "mask", np.dtype(self.mask))
        object.__setattr__(self, "value", np.dtype(self.value if self.what == "values" else "int64"))
        if self.what not in ("values", "flat", "nd"):
            raise ValueError(f"unknown compaction {self.what!r}")

    @cached_property      # computed once: dtype names are slow to read per call
    def name(self) -> str:
        v = f"_{self.value.name}" if self.what == "values" else ""
        return f"compact_{self.what}_{self.mask.name}{v}"

    @cached_property
    def items(self) -> int:
        # the tile's selected values (or int64 positions) are staged in 32 KiB of shared memory
        size = max(self.mask.itemsize, self.value.itemsize)
        return max(4, min(32, 32768 // (THREADS * size)))


def _compact_source(k: CompactKernel) -> str:
    m = k.mask
    if m.kind == "c":
        test = "return x.re != 0 || x.im != 0;"
    elif m == np.float16:
        test = "return (x.x & 0x7fff) != 0;"      # +-0 are the only zeros; NaN is nonzero
    else:
        test = "return x != 0;" if m.kind != "b" else "return x;"
    what = {"values": 0, "flat": 1, "nd": 2}[k.what]
    return f"""
using M = {storage_type(m)};
using V = {storage_type(k.value)};
#define NAME {k.name}
#define ITEMS {k.items}
#define WHAT {what}
#define MAX_NDIM {MAX_NDIM}
__device__ __forceinline__ bool nonzero(const M& x) {{ {test} }}
""" + _COMPACT_BODY


_COMPACT_BODY = r"""
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
constexpr int TILE = THREADS * ITEMS;
struct Sum { __device__ __forceinline__ long long operator()(long long a, long long b) const { return a + b; } };
using CountState = cub::ScanTileState<long long>;
using CountPrefix = cub::TilePrefixCallbackOp<long long, Sum, CountState>;
using MLoad = cub::BlockLoad<M, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
using CountReduce = cub::BlockReduce<int, THREADS>;
using FlagScan = cub::BlockScan<int, THREADS, cub::BLOCK_SCAN_WARP_SCANS>;
struct nd_args { long long ndim; long long shape[MAX_NDIM]; };

extern "C" __global__ void CAT(NAME, _init)(void* state, size_t bytes, int ntiles) {
    CountState s; s.Init(ntiles, state, bytes); s.InitializeStatus(ntiles);
}

// offsets[t] = selected elements before tile t; offsets[ntiles] = all of them.
extern "C" __global__ void __launch_bounds__(THREADS)
CAT(NAME, _count)(const M* __restrict__ mask, long long n, long long* __restrict__ offsets,
                  void* state, size_t bytes, int ntiles) {
    __shared__ union {
        typename CountReduce::TempStorage reduce;
        typename CountPrefix::TempStorage prefix;
    } sh;
    __shared__ long long block_total;
    CountState ts; ts.Init(ntiles, state, bytes);
    const int tile = blockIdx.x;
    const long long start = (long long)tile * TILE;
    const int valid = (int)min((long long)TILE, n - start);
    // a count needs no order: striped loads, coalesced without a shared-memory transpose
    M m[ITEMS];
    if (valid == TILE) cub::LoadDirectStriped<THREADS>(threadIdx.x, mask + start, m);
    else cub::LoadDirectStriped<THREADS>(threadIdx.x, mask + start, m, valid);
    int c = 0;
    #pragma unroll
    for (int j = 0; j < ITEMS; ++j) c += (j * THREADS + threadIdx.x < valid) && nonzero(m[j]);
    int count = CountReduce(sh.reduce).Sum(c);
    if (threadIdx.x == 0) block_total = count;
    __syncthreads();
    long long agg = block_total, before = 0;
    if (tile == 0) {
        if (threadIdx.x == 0 && ntiles > 1) ts.SetInclusive(0, agg);
    } else if (threadIdx.x < 32) {
        CountPrefix prefix(ts, sh.prefix, Sum(), tile);
        before = prefix(agg);
    }
    if (threadIdx.x == 0) {
        offsets[tile] = before;
        if (tile == ntiles - 1) offsets[ntiles] = before + agg;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
CAT(NAME, _scatter)(const M* __restrict__ mask, const V* __restrict__ values, long long n,
                    const long long* __restrict__ offsets, V* __restrict__ out, long long nout,
                    const nd_args nd) {
    __shared__ union {
        typename MLoad::TempStorage load;
        typename FlagScan::TempStorage scan;
        alignas(16) unsigned char bytes[TILE * sizeof(V)];   // V may not be trivially constructible
    } sh;
    V* buf = reinterpret_cast<V*>(sh.bytes);
    const int tile = blockIdx.x;
    const long long start = (long long)tile * TILE;
    const int valid = (int)min((long long)TILE, n - start);
    M m[ITEMS];
    if (valid == TILE) MLoad(sh.load).Load(mask + start, m);
    else MLoad(sh.load).Load(mask + start, m, valid);
    int c = 0;
    unsigned flags = 0;
    #pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const bool f = (threadIdx.x * ITEMS + j < valid) && nonzero(m[j]);
        flags |= (unsigned)f << j;
        c += f;
    }
    __syncthreads();
    int local, count;
    FlagScan(sh.scan).ExclusiveSum(c, local, count);
    __syncthreads();
    const long long first = start + (long long)threadIdx.x * ITEMS;
    #pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        if (flags >> j & 1) {
#if WHAT == 0
            buf[local++] = values[first + j];
#else
            buf[local++] = first + j;
#endif
        }
    }
    __syncthreads();
    const long long base = offsets[tile];
#if WHAT == 2
    // one output row per axis: unravel the flat position (C order)
    for (int i = threadIdx.x; i < count; i += THREADS) {
        long long r = buf[i];
        for (int d = nd.ndim - 1; d > 0; --d) {
            const long long q = r / nd.shape[d];
            out[d * nout + base + i] = r - q * nd.shape[d];
            r = q;
        }
        out[base + i] = r;
    }
#else
    for (int i = threadIdx.x; i < count; i += THREADS) out[base + i] = buf[i];
#endif
}
"""


# ---- the family's interface (what the loader calls) ------------------------------------------------

def render(k) -> str:
    """The complete CUDA C++ source of a :class:`ScanKernel` or :class:`CompactKernel`."""
    body = _scan_source(k) if isinstance(k, ScanKernel) else _compact_source(k)
    return _HEADERS + prelude() + f"\n#define THREADS {THREADS}\n" + body


def entry_points(k) -> tuple[str, ...]:
    if isinstance(k, ScanKernel):
        return tuple(k.name + s for s in ("_init_flat", "_init_rows", "_flat", "_rows", "_cols"))
    return tuple(k.name + s for s in ("_init", "_count", "_scatter"))


def state_bytes(ntiles: int, acc) -> int:
    """Bytes of a tile-state array for ``ntiles`` tiles of ``acc`` (or (head, acc)) values:
    an upper bound of ``cub::ScanTileState::AllocationSize`` (a status word and two payloads
    per tile, 32 padding tiles, three 256-byte aligned parts). A ``(head, complex128)`` pair
    is 32 bytes."""
    size = np.dtype(acc).itemsize
    payload = 16 + 2 * (2 * max(size, 8) + 16)     # (head, value) padded to the value's alignment
    return (ntiles + 32) * payload + 4 * 256
