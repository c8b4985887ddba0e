"""Radix sort kernels: CUB's onesweep agents and ``cub::BlockRadixSort``, with NumPy's order.

One source (one NVRTC compile) per :class:`SortKernel` (key dtype, value dtype or none,
ascending or descending), with these entry points:

- ``<name>_zero``: zero a buffer of 32-bit words (bins, counters, look-back flags);
- ``<name>_hist``: the histograms of every digit pass in one read of the keys
  (``AgentRadixSortHistogram``);
- ``<name>_scan``: the exclusive sums of those histograms, one block per pass;
- ``<name>_onesweep``: one 8-bit digit pass: rank, look back, scatter keys (and values)
  (``AgentRadixSortOnesweep``), one block per tile, in portions of at most 2^28 items;
- ``<name>_onesweep_iota``: argsort's first digit pass: the same agent with its value loads
  specialized to generate the positions (int64 or int32 values), so no position array is
  written and read; ``<name>_widen`` turns int32 positions into argsort's int64;
- ``<name>_block`` / ``<name>_block_small``: one block sorts one segment (a short array, or
  one row of many) in shared memory (``cub::BlockRadixSort``); with ``iota`` the values are
  the positions in the segment (argsort) instead of loaded;
- ``<name>_iota``, ``<name>_rowkey``, ``<name>_gather``: positions, row numbers and gathers
  of the sorts of many long rows (two stable sorts) and of ``lexsort``;
- ``<name>_bounds``, ``<name>_segmax``, ``<name>_segs`` (8-byte keys, ascending): segmented
  sorts, after the digit passes of the top 2 or 3 digits (their source: :mod:`.segments`).

Integer keys of 2 to 8 bytes: ``<name>_hist`` also finds the smallest and largest key (bit
ordered: two words after the bins' area). An offset source (``offset=True``: integer keys,
ascending) has only ``_zero``, ``_hist``, ``_scan`` and ``_onesweep``; its key type
(``gpunb_sort::okey``) orders ``key - offset`` instead, ``offset`` a launch parameter: keys
that straddle zero, or a byte boundary, in a narrow range (int64 keys in [-1000, 1000] differ
in all 8 bytes, their differences from the smallest in 2) need only the digit passes of that
range; :mod:`.run` picks it from the read-back smallest and largest keys.

A row-composite source (``rows=True``: keys of at most 4 bytes, keys only) sorts
``(row << bits) | key`` 64-bit keys (``gpunb_sort::rkey``) instead: ``<name>_compose`` and
``<name>_extract`` build them and take the keys back, and it has no block kernels.

These are the bodies of CUB's ``DeviceRadixSort*Kernel`` templates
(``cub/device/dispatch/kernels/kernel_radix_sort.cuh``) written as ``extern "C"`` kernels with
gpunb's own policies, so no name expressions and no host dispatch header are needed; the host
side (passes, portions, temporary storage, grids) is :mod:`.run`.

NumPy's order without a separate key-transform pass: floating keys are wrapped in key types
whose ``cub::NumericTraits`` twiddle is the usual order-preserving bit flip (bijective, so the
sorted keys keep their exact bits, -0.0 and NaN payloads included), and whose digit extractor
(``cub::BaseDigitExtractor``, which CUB already uses to make -0.0 equal to +0.0) also maps
every NaN to the largest key: NaN sorts last and NaNs tie, as NumPy sorts. Complex keys are
one 64- or 128-bit key ordered as NumPy orders complex numbers: ``[R + Rj, R + nanj, nan + Rj,
nan + nanj]``, lexicographic within each group. Every digit pass therefore reads the original
keys: the transform is fused into all of them.

Pure: imports nothing from CUDA, returns a string.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...build import cccl
from . import keys as _keys
from . import segments as _segments
from .keys import _OKEY, _TYPES, _UNSIGNED, key_type

THREADS = 256            # the block size the loader's occupancy query uses (block kernels)
RADIX_BITS = 8
HIST_THREADS, HIST_ITEMS = 128, 16      # CUB's sm90 histogram policy
SCAN_THREADS = 256
SMALL_THREADS, SMALL_ITEMS = 64, 4      # ``_block_small``: segments of at most 256 items
# ``_segs`` (8-byte keys): one block a group of at most SEG_THREADS * SEG_ITEMS keys; bins of
# at most SEG_BIN keys ordered by insertion, else SEG_RADIX bits a shared-memory pass
SEG_THREADS, SEG_ITEMS, SEG_BIN, SEG_RADIX = 256, 8, 24, 4

key_bits = _keys.key_bits     # (run.py and the tests ask codegen)


def onesweep_tuning(key_size: int, value_size: int) -> tuple[int, int]:
    """(threads, items per thread) of the onesweep pass: CUB's sm90 tuning
    (``tuning_radix_sort.cuh``), scaled by the larger of key and value as CUB scales it;
    4-byte keys alone take 512 x 21 (tiles of 10752 keys), measured on an H100 (2**26 keys,
    ms: float32 1.536 against CUB's 384 x 19's 1.735, int32 1.416 against 1.450; of nine
    tunings the fastest for float32, within 0.5% of the fastest for int32). 8-byte keys keep
    CUB's: no larger tile fits 48 KiB of static shared memory, and the smaller ones measured
    were slower."""
    dominant = max(key_size, value_size)
    if key_size <= 2:
        threads, items = (512, 19) if value_size == 0 else (384, 23) if value_size >= 8 else (512, 17)
    elif key_size == 4:
        threads, items = (512, 21) if value_size == 0 else (384, 23 if value_size < 8 else 30)
    else:
        threads, items = 384, (30 if value_size < 8 else 24)
    items = max(1, items * 4 // max(4, dominant))
    threads = min(threads, -(-(48 * 1024 // (dominant * items)) // 32) * 32)
    # the policy below scales once more, as for 4-byte items (cub::detail::RegBoundScaling)
    threads = min(threads, -(-(48 * 1024 // (4 * items)) // 32) * 32)
    return threads, items


def block_items(key_size: int, value_size: int) -> int:
    """Items per thread of ``_block``: a tile of 4096 4-byte keys, 2048 8-byte ones, staged
    in at most 32 KiB of shared memory."""
    return max(4, min(16, 64 // max(key_size, value_size, 1)))


@dataclass(frozen=True)
class SortKernel:
    """Radix sort of ``key`` keys, carrying ``value`` values (None: keys only), ascending or
    ``descending`` (descending: NaN still last)."""

    key: np.dtype
    value: np.dtype | None = None
    descending: bool = False
    rows: bool = False          # (row, key) composites of keys of at most 4 bytes, keys only
    offset: bool = False        # integer keys ordered as ``key - offset`` (see the module docstring)

    def __post_init__(self):
        object.__setattr__(self, "key", np.dtype(self.key))
        if self.value is not None:
            object.__setattr__(self, "value", np.dtype(self.value))
        if self.descending and self.key.kind == "c":
            raise ValueError("descending radix sort of complex keys is not supported")
        if self.rows and (self.key.itemsize > 4 or self.value is not None or self.descending):
            raise ValueError("row composites hold keys of at most 4 bytes, ascending, keys only")
        if self.offset and (self.key.kind not in "iu" or not 2 <= self.key.itemsize <= 8 or self.rows
                            or self.descending):
            raise ValueError("offset keys are integer keys of 2 to 8 bytes, ascending")

    @cached_property
    def name(self) -> str:
        pairs = f"_by_{self.value.name}" if self.value is not None else ""
        rows = "rows_" if self.rows else ""
        off = "_off" if self.offset else ""
        return f"radix_sort_{rows}{self.key.name}{pairs}{'_desc' if self.descending else ''}{off}"

    @cached_property
    def label(self) -> str:
        """What the compile events show: ``radix sort for float32``."""
        what = "radix sort" if self.value is None else "radix sort (pairs)"
        what += " of rows" if self.rows else ""
        what += " of offset keys" if self.offset else ""
        return f"{what} for {self.key.name}" + (" descending" if self.descending else "")

    @cached_property
    def minmax(self) -> bool:
        """Whether ``_hist`` also finds the smallest and largest key (integer keys of 2 to 8
        bytes; not row composites, not offset sources, whose histograms are of offset keys)."""
        return self.key.kind in "iu" and 2 <= self.key.itemsize <= 8 and not (self.rows or self.offset)

    @cached_property
    def iota(self) -> int:
        """Has ``_onesweep_iota`` (argsort's first pass: positions generated): 1 for int64
        values, 2 for int32 ones (and ``_widen``), else 0."""
        if (self.value is None or self.value.kind != "i" or self.value.itemsize not in (4, 8)
                or self.offset):
            return 0
        return 1 if self.value.itemsize == 8 else 2

    @cached_property
    def segments(self) -> bool:
        """Has ``_bounds``, ``_segmax`` and ``_segs`` (segmented sorts of the low bits after
        the passes of the top ones): 8-byte keys, ascending, not row composites or offsets."""
        return self.key.itemsize == 8 and not (self.descending or self.rows or self.offset)

    @cached_property
    def key_size(self) -> int:
        """Bytes of a sorted key (a row composite: 8)."""
        return 8 if self.rows else self.key.itemsize

    @cached_property
    def value_size(self) -> int:
        return 0 if self.value is None else self.value.itemsize

    @cached_property
    def onesweep(self) -> tuple[int, int]:
        return onesweep_tuning(self.key_size, self.value_size)

    @cached_property
    def tile(self) -> int:
        """Items of one onesweep tile."""
        return self.onesweep[0] * self.onesweep[1]

    @cached_property
    def block_tile(self) -> int:
        """Items one ``_block`` sorts (0: row-composite and offset sources have no block
        kernels)."""
        return 0 if self.rows or self.offset else THREADS * block_items(self.key.itemsize, self.value_size)


_BODY = r"""
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
using OffsetT = unsigned long long;   // bins: any number of items (CUB's choose_offset_t)
using PortionT = int;           // within a portion of at most 2^28 items (CUB's PortionOffsetT)

extern "C" __global__ void CAT(NAME, _zero)(unsigned int* __restrict__ p, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        p[i] = 0u;
}

// The policies by their public names of CCCL 3.0 (deprecated aliases in 3.5): both compile.
using HistPolicy = cub::AgentRadixSortHistogramPolicy<HIST_THREADS, HIST_ITEMS, 1, int, RADIX_BITS>;
using HistAgent = cub::detail::radix_sort::AgentRadixSortHistogram<HistPolicy, DESC, Key, OffsetT>;

#if MINMAX
// The smallest and largest bit-ordered key, found as the histogram loads the keys (CUB's
// LoadTileKeys, plus the two running extremes of the loaded keys, padding left out).
namespace gpunb_sort { __shared__ unsigned long long lo, hi; }
template <>
__device__ __forceinline__ void HistAgent::LoadTileKeys(OffsetT tile_offset, bit_ordered_type (&keys)[HistAgent::ITEMS_PER_THREAD]) {
    const OffsetT left = num_items - tile_offset;
    if (left >= TILE_ITEMS)
        cub::LoadDirectStriped<BLOCK_THREADS>(threadIdx.x, d_keys_in + tile_offset, keys);
    else
        cub::LoadDirectStriped<BLOCK_THREADS>(threadIdx.x, d_keys_in + tile_offset, keys, (int)left,
                                              Twiddle::DefaultKey(decomposer));
    unsigned long long lo = ~0ull, hi = 0ull;
    #pragma unroll
    for (int u = 0; u < ITEMS_PER_THREAD; ++u) {
        keys[u] = Twiddle::In(keys[u], decomposer);
        if (left >= TILE_ITEMS || threadIdx.x + u * BLOCK_THREADS < left) {
            lo = lo < (unsigned long long)keys[u] ? lo : (unsigned long long)keys[u];
            hi = hi > (unsigned long long)keys[u] ? hi : (unsigned long long)keys[u];
        }
    }
    atomicMin(&gpunb_sort::lo, lo);
    atomicMax(&gpunb_sort::hi, hi);
}
#endif

// minmax: two words, the complement of the smallest and the largest bit-ordered key (zeroed
// before: both by atomicMax); off: the offset of an offset source's keys
extern "C" __global__ void __launch_bounds__(HIST_THREADS)
CAT(NAME, _hist)(OffsetT* bins, const Key* keys, OffsetT n, int begin_bit, int end_bit,
                 unsigned long long* minmax, unsigned long long off) {
    __shared__ typename HistAgent::TempStorage s;
#if OFFSET
    OFF_SET
#endif
#if MINMAX
    if (threadIdx.x == 0) { gpunb_sort::lo = ~0ull; gpunb_sort::hi = 0ull; }
    // (Process's Init ends in a barrier before any tile is loaded; Process ends in one)
#endif
    HistAgent(s, bins, keys, n, begin_bit, end_bit).Process();
#if MINMAX
    if (threadIdx.x == 0 && gpunb_sort::hi >= gpunb_sort::lo) {
        atomicMax(minmax, ~gpunb_sort::lo);
        atomicMax(minmax + 1, gpunb_sort::hi);
    }
#endif
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS) CAT(NAME, _scan)(OffsetT* bins) {
    constexpr int DIGITS = 1 << RADIX_BITS;
    constexpr int PER = (DIGITS + SCAN_THREADS - 1) / SCAN_THREADS;
    using Scan = cub::BlockScan<OffsetT, SCAN_THREADS>;
    __shared__ typename Scan::TempStorage s;
    OffsetT b[PER];
    const long long start = (long long)blockIdx.x * DIGITS;
    #pragma unroll
    for (int u = 0; u < PER; ++u) {
        const int bin = threadIdx.x * PER + u;
        b[u] = bin < DIGITS ? bins[start + bin] : 0;
    }
    Scan(s).ExclusiveSum(b, b);
    #pragma unroll
    for (int u = 0; u < PER; ++u) {
        const int bin = threadIdx.x * PER + u;
        if (bin < DIGITS) bins[start + bin] = b[u];
    }
}

using OnePolicy = cub::AgentRadixSortOnesweepPolicy<ONE_THREADS, ONE_ITEMS, int, 1,
    cub::RADIX_RANK_MATCH_EARLY_COUNTS_ANY, cub::BLOCK_SCAN_RAKING_MEMOIZE, cub::RADIX_SORT_STORE_DIRECT,
    RADIX_BITS>;
static_assert(OnePolicy::BLOCK_THREADS == ONE_THREADS && OnePolicy::ITEMS_PER_THREAD == ONE_ITEMS,
              "the host launches the onesweep pass with ONE_THREADS threads");
using OneAgent = cub::detail::radix_sort::AgentRadixSortOnesweep<OnePolicy, DESC, Key, Value, OffsetT, PortionT>;

extern "C" __global__ void __launch_bounds__(ONE_THREADS)
CAT(NAME, _onesweep)(PortionT* lookback, PortionT* ctrs, OffsetT* bins_out, const OffsetT* bins_in,
                     Key* keys_out, const Key* keys_in, Value* values_out, const Value* values_in,
                     PortionT n, int current_bit, int num_bits, unsigned long long off) {
    __shared__ typename OneAgent::TempStorage s;
#if OFFSET
    OFF_SET
#endif
    OneAgent(s, lookback, ctrs, bins_out, bins_in, keys_out, keys_in, values_out, values_in, n,
             current_bit, num_bits).Process();
}

#if IOTA
// argsort's first digit pass: the values are the positions, generated, not loaded (CUB's
// LoadValues of this agent specialized; the values pointer carries the portion's first
// position and is never read)
namespace gpunb_sort { template <typename T> struct iota_t { T v; }; }
using Iota = gpunb_sort::iota_t<Value>;      // int64 positions, or int32 ones (widened after)
using IotaAgent = cub::detail::radix_sort::AgentRadixSortOnesweep<OnePolicy, DESC, Key, Iota, OffsetT, PortionT>;
template <>
__device__ __forceinline__ void IotaAgent::LoadValues(OffsetT tile_offset, Iota (&values)[IotaAgent::ITEMS_PER_THREAD]) {
    const long long first = (long long)(reinterpret_cast<unsigned long long>(d_values_in) / sizeof(Iota))
                          + (long long)tile_offset;
    // CUB's warp-striped arrangement (LoadDirectWarpStriped)
    const long long base = first + (long long)(threadIdx.x >> 5) * 32 * ITEMS_PER_THREAD + (threadIdx.x & 31);
    #pragma unroll
    for (int u = 0; u < ITEMS_PER_THREAD; ++u) values[u].v = (Value)(base + u * 32);
}

extern "C" __global__ void __launch_bounds__(ONE_THREADS)
CAT(NAME, _onesweep_iota)(PortionT* lookback, PortionT* ctrs, OffsetT* bins_out, const OffsetT* bins_in,
                          Key* keys_out, const Key* keys_in, Iota* values_out,
                          const Iota* first, PortionT n, int current_bit, int num_bits,
                          unsigned long long) {
    __shared__ typename IotaAgent::TempStorage s;
    IotaAgent(s, lookback, ctrs, bins_out, bins_in, keys_out, keys_in, values_out, first, n,
              current_bit, num_bits).Process();
}
#endif

#if IOTA == 2
// int32 positions to argsort's int64 result
extern "C" __global__ void CAT(NAME, _widen)(const unsigned int* __restrict__ in, long long* __restrict__ out,
                                             long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = (long long)in[i];
}
#endif

#if !ROWS && !OFFSET
// One block sorts one segment of at most BT * IT items: a short array, or a row of many.
template <int BT, int IT>
__device__ __forceinline__ void block_sort(const Key* __restrict__ keys_in, Key* __restrict__ keys_out,
                                           const Value* __restrict__ values_in, Value* __restrict__ values_out,
                                           long long L, int iota, int begin_bit, int end_bit) {
    using Bits = typename cub::Traits<Key>::UnsignedBits;
    using Sort = cub::BlockRadixSort<Key, BT, IT, Value, 4>;
    __shared__ typename Sort::TempStorage s;
    const long long base = (long long)blockIdx.x * L;
    Key k[IT];
    Value v[IT];
    Key pad;        // sorts last: its digits are the largest in every pass
    *reinterpret_cast<Bits*>(&pad) = cub::Traits<Key>::MAX_KEY;
    #pragma unroll
    for (int j = 0; j < IT; ++j) {
        const int i = threadIdx.x * IT + j;        // blocked: the sort is stable in this order
        k[j] = i < L ? keys_in[base + i] : pad;
        if constexpr (!KEYS_ONLY) {
            if (iota) v[j] = (Value)i;
            else if (i < L) v[j] = values_in[base + i];
        }
    }
    if constexpr (KEYS_ONLY) Sort(s).Sort(k, begin_bit, end_bit);
    else Sort(s).Sort(k, v, begin_bit, end_bit);
    #pragma unroll
    for (int j = 0; j < IT; ++j) {
        const int i = threadIdx.x * IT + j;
        if (i < L) {
            keys_out[base + i] = k[j];
            if constexpr (!KEYS_ONLY) values_out[base + i] = v[j];
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
CAT(NAME, _block)(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                  long long L, int iota, int begin_bit, int end_bit) {
    block_sort<THREADS, BLOCK_ITEMS>(keys_in, keys_out, values_in, values_out, L, iota, begin_bit, end_bit);
}

extern "C" __global__ void __launch_bounds__(SMALL_THREADS)
CAT(NAME, _block_small)(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                        long long L, int iota, int begin_bit, int end_bit) {
    block_sort<SMALL_THREADS, SMALL_ITEMS>(keys_in, keys_out, values_in, values_out, L, iota, begin_bit, end_bit);
}
#endif

"""

_HELPERS = r"""
// argsort's initial values: 0, 1, ..., n - 1
extern "C" __global__ void CAT(NAME, _iota)(long long* __restrict__ out, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = i;
}

// rows longer than a block: after a stable sort of (key, flat position) over all rows, the
// row of each position is the key of a second stable sort that groups the rows
extern "C" __global__ void CAT(NAME, _rowkey)(const long long* __restrict__ pos, int* __restrict__ row,
                                              long long n, long long L) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        row[i] = (int)(pos[i] / L);
}

// then the sorted keys are gathered by flat position, and the positions made row positions
extern "C" __global__ void CAT(NAME, _gather)(const Key* __restrict__ keys, const long long* __restrict__ pos,
                                              Key* __restrict__ keys_out, long long* __restrict__ pos_out,
                                              long long n, long long L) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long p = pos[i];
        if (keys_out) keys_out[i] = keys[p];
        if (pos_out) pos_out[i] = p % L;
    }
}
"""

_ROWS = r"""
// many long rows, keys only: one flat sort of (row, key) composites, then the keys back
using IU = typename cub::Traits<Inner>::UnsignedBits;
extern "C" __global__ void CAT(NAME, _compose)(const IU* __restrict__ keys, unsigned long long* __restrict__ out,
                                               long long n, long long L) {
    constexpr int B = sizeof(IU) * 8;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = ((unsigned long long)(i / L) << B) | (unsigned long long)keys[i];
}

extern "C" __global__ void CAT(NAME, _extract)(const unsigned long long* __restrict__ in, IU* __restrict__ keys,
                                               long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        keys[i] = (IU)in[i];
}
"""

_HEADERS = """#include <cub/agent/agent_radix_sort_histogram.cuh>
#include <cub/agent/agent_radix_sort_onesweep.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
"""


def nvrtc_options(kernel) -> tuple[str, ...]:
    """The loader's hook: CUB's include directory and the CCCL version (in the cache key);
    no programmatic dependent launch (NVRTC does not declare its runtime calls)."""
    extra = ("--device-int128",) if kernel.key.itemsize == 16 else ()     # complex128 keys
    return (*cccl.options(), "-DCCCL_DISABLE_PDL", "-DCCCL_IGNORE_DEPRECATED_API", *extra)


def vector_width(kernel) -> int:
    return 1


def render(k: SortKernel) -> str:
    """The complete CUDA C++ source of a :class:`SortKernel`."""
    threads, items = k.onesweep
    value = "cub::NullType" if k.value is None else _UNSIGNED[k.value.itemsize]
    defs = (f"#define NAME {k.name}\n#define RADIX_BITS {RADIX_BITS}\n"
            f"#define HIST_THREADS {HIST_THREADS}\n#define HIST_ITEMS {HIST_ITEMS}\n"
            f"#define SCAN_THREADS {SCAN_THREADS}\n#define ONE_THREADS {threads}\n"
            f"#define ONE_ITEMS {items}\n#define THREADS {THREADS}\n"
            f"#define BLOCK_ITEMS {block_items(k.key.itemsize, k.value_size)}\n"
            f"#define SMALL_THREADS {SMALL_THREADS}\n#define SMALL_ITEMS {SMALL_ITEMS}\n"
            f"constexpr bool DESC = {'true' if k.descending else 'false'};\n"
            f"constexpr bool KEYS_ONLY = {'true' if k.value is None else 'false'};\n"
            f"#define ROWS {int(k.rows)}\n#define IOTA {k.iota}\n"
            f"#define MINMAX {int(k.minmax)}\n#define OFFSET {int(k.offset)}\n"
            f"#define SEGS {int(k.segments)}\n#define SEG_THREADS {SEG_THREADS}\n"
            f"#define SEG_ITEMS {SEG_ITEMS}\n#define SEG_BIN {SEG_BIN}\n#define SEG_RADIX {SEG_RADIX}\n")
    inner = key_type(k.key, k.descending)
    if k.rows:
        defs += f"using Inner = {inner};\nusing Key = gpunb_sort::rkey<Inner>;\nusing Value = {value};\n"
        return _HEADERS + _TYPES + defs + _BODY + _ROWS
    if k.offset:
        defs += f"using Key = gpunb_sort::okey<{inner}>;\nusing Value = {value};\n"
        return _HEADERS + _TYPES + _OKEY + defs + _BODY
    defs += f"using Key = {inner};\nusing Value = {value};\n"
    return _HEADERS + _TYPES + defs + _BODY + _HELPERS + _segments.SOURCE


def entry_points(k: SortKernel) -> tuple[str, ...]:
    if k.rows:
        return tuple(k.name + s for s in ("_zero", "_hist", "_scan", "_onesweep", "_compose", "_extract"))
    if k.offset:
        return tuple(k.name + s for s in ("_zero", "_hist", "_scan", "_onesweep"))
    return tuple(k.name + s for s in ("_zero", "_hist", "_scan", "_onesweep", "_block", "_block_small",
                                      "_iota", "_rowkey", "_gather") + (("_onesweep_iota",) if k.iota else ())
                 + (("_widen",) if k.iota == 2 else ())
                 + (("_bounds", "_segmax", "_segs") if k.segments else ()))


def warm_kernels() -> list[SortKernel]:
    """What ``gpunb cache warm`` builds ahead: keys, (key, int64 index) and (key, int32 index)
    pairs of the common dtypes (argsort: short arrays, long ones), float32's row composites,
    and the offset sources of int32 and int64 keys (sort, and argsort of long arrays)."""
    out = []
    for d in ("float32", "float64", "int32", "int64"):
        out += [SortKernel(d), SortKernel(d, "int64"), SortKernel(d, "int32")]
    out += [SortKernel(d, v, offset=True) for d in ("int32", "int64") for v in (None, "int32")]
    return out + [SortKernel("float32", rows=True)]
