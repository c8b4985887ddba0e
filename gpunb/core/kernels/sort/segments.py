"""Radix sorts, segmented: the CUDA source of the group kernels of 8-byte keys (``SEGS``),
rendered into the same source as :mod:`.codegen`'s kernels (its ``Key``, ``Value``,
``KEYS_ONLY`` and ``SEG_*`` definitions). After the digit passes of the top 2 or 3 digits
(:mod:`.run`, :func:`.plan.segment_plan`) the keys are grouped by those bits:

- ``<name>_bounds``: where each group starts (one read of the keys);
- ``<name>_segmax``: the largest group (one word, read back while the groups are sorted);
- ``<name>_segs``: one block a group of at most ``SEG_THREADS * SEG_ITEMS`` keys orders its
  low bits in shared memory: one more 8-bit digit places each key in one of 256 bins (about
  4 keys each for random bits) and each thread orders one bin by insertion on (key, position
  in the group), so equal keys keep their order; where a bin holds more than ``SEG_BIN``
  keys, the group is sorted by ``cub::BlockRadixSort`` instead.

Pure: imports nothing from CUDA, returns a string.
"""

SOURCE = r"""
#if SEGS
// Segmented sorts of 8-byte keys (see SEGMENTS in run.py): after the digit passes of the top
// bits, the keys are grouped by those bits; ``_bounds`` finds where each group starts, and
// ``_segs`` sorts each group's low bits in shared memory, one block a group.
namespace gpunb_sort {
using SegTraits = cub::detail::radix::traits_t<Key>;
using SegBits = typename SegTraits::bit_ordered_type;
// a key's group: its digits' bits [bit, bit + nbits) as the onesweep passes see them (NaN the
// largest, -0.0 as 0.0), 2^shift values to a group
__device__ __forceinline__ long long seg_of(const Key& k, int bit, int nbits, int shift) {
    const SegBits b = cub::RadixSortTwiddle<false, Key>::In(reinterpret_cast<const SegBits&>(k));
    return (long long)(SegTraits::template digit_extractor<cub::ShiftDigitExtractor<Key>>(
        bit, nbits, cub::detail::identity_decomposer_t{}).Digit(b) >> shift);
}
// the key as the digit passes order it (bit-ordered, NaN the largest, -0.0 as 0.0)
__device__ __forceinline__ SegBits proc(const Key& k) {
    return cub::BaseDigitExtractor<Key>::ProcessFloatMinusZero(
        cub::RadixSortTwiddle<false, Key>::In(reinterpret_cast<const SegBits&>(k)));
}
template <int IT>
struct SegSort {
    using Sort = cub::BlockRadixSort<Key, SEG_THREADS, IT, Value, SEG_RADIX>;
    using TempStorage = typename Sort::TempStorage;
    static __device__ __forceinline__ void run(TempStorage& s, const Key* __restrict__ keys_in, Key* __restrict__ keys_out,
                                               const Value* __restrict__ values_in, Value* __restrict__ values_out,
                                               long long a, int m, int begin_bit, int end_bit) {
        using Bits = typename cub::Traits<Key>::UnsignedBits;
        Key k[IT];
        Value v[IT];
        Key pad;        // sorts last (and after equal keys: it comes last in the blocked order)
        *reinterpret_cast<Bits*>(&pad) = cub::Traits<Key>::MAX_KEY;
        #pragma unroll
        for (int j = 0; j < IT; ++j) {
            const int i = threadIdx.x * IT + j;     // blocked: the sort is stable in this order
            k[j] = i < m ? keys_in[a + i] : pad;
            if constexpr (!KEYS_ONLY) if (i < m) v[j] = values_in[a + i];
        }
        if constexpr (KEYS_ONLY) Sort(s).SortBlockedToStriped(k, begin_bit, end_bit);
        else Sort(s).SortBlockedToStriped(k, v, begin_bit, end_bit);
        #pragma unroll
        for (int j = 0; j < IT; ++j) {                // striped: coalesced stores
            const int i = j * SEG_THREADS + threadIdx.x;
            if (i < m) {
                keys_out[a + i] = k[j];
                if constexpr (!KEYS_ONLY) values_out[a + i] = v[j];
            }
        }
    }
};
}  // namespace gpunb_sort

// starts[s]: the first position whose group is >= s (starts[nseg] = n) of n keys sorted by group
extern "C" __global__ void CAT(NAME, _bounds)(const Key* __restrict__ keys, long long n, int bit, int nbits,
                                              int shift, long long* __restrict__ starts, long long nseg) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i <= n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long prev = i == 0 ? -1 : gpunb_sort::seg_of(keys[i - 1], bit, nbits, shift);
        const long long cur = i == n ? nseg : gpunb_sort::seg_of(keys[i], bit, nbits, shift);
        for (long long s = prev + 1; s <= cur; ++s) starts[s] = i;
    }
}

// the largest group (one word, zeroed before), read back while ``_segs`` runs
extern "C" __global__ void CAT(NAME, _segmax)(const long long* __restrict__ starts, long long nseg,
                                              unsigned long long* __restrict__ out) {
    unsigned long long m = 0;
    for (long long s = blockIdx.x * (long long)blockDim.x + threadIdx.x; s < nseg;
         s += (long long)gridDim.x * blockDim.x) {
        const unsigned long long d = (unsigned long long)(starts[s + 1] - starts[s]);
        m = d > m ? d : m;
    }
    #pragma unroll
    for (int o = 16; o; o >>= 1) {
        const unsigned long long t = __shfl_xor_sync(0xffffffffu, m, o);
        m = t > m ? t : m;
    }
    if ((threadIdx.x & 31) == 0 && m) atomicMax(out, m);
}

// one block a group of at most SEG_THREADS * SEG_ITEMS keys: bits [begin_bit, end_bit) sorted
// in shared memory. Fast path: one 8-bit digit (the top of those bits) places each key in
// one of 256 bins (about 4 keys each for random bits); each thread then orders one bin by
// insertion on (key, position in the group), so equal keys keep their order. Where a bin
// holds more than SEG_BIN keys, the block sorts the group by cub::BlockRadixSort instead.
// A group longer than the tile is left for the host (it reads ``_segmax``'s word).
extern "C" __global__ void __launch_bounds__(SEG_THREADS)
CAT(NAME, _segs)(const Key* __restrict__ keys_in, Key* __restrict__ keys_out,
                 const Value* __restrict__ values_in, Value* __restrict__ values_out,
                 const long long* __restrict__ starts, int begin_bit, int end_bit) {
    constexpr int IT = SEG_ITEMS, CAP = SEG_THREADS * IT, BINS = 256;
    static_assert(BINS == SEG_THREADS, "one bin a thread");
    using P = gpunb_sort::SegBits;
    using Scan = cub::BlockScan<int, SEG_THREADS>;
    using Slow = gpunb_sort::SegSort<IT>;
    struct Fast {
        Key key[CAP];
        Value val[KEYS_ONLY ? 1 : CAP];
        unsigned short pos[CAP];
        int cursor[BINS];
        int big;
        typename Scan::TempStorage scan;
    };
    __shared__ union { Fast f; typename Slow::TempStorage slow; } s;
    const long long a = starts[blockIdx.x];
    const long long m = starts[blockIdx.x + 1] - a;
    if (m <= 1 || m > CAP) {
        if (m == 1 && threadIdx.x == 0) {
            keys_out[a] = keys_in[a];
            if constexpr (!KEYS_ONLY) values_out[a] = values_in[a];
        }
        return;
    }
    const int t = threadIdx.x;
    const int dbit = end_bit - 8 > begin_bit ? end_bit - 8 : begin_bit;
    const unsigned dmask = (1u << (end_bit - dbit)) - 1u;
    s.f.cursor[t] = 0;
    if (t == 0) s.f.big = 0;
    __syncthreads();
    Key k[IT];
    Value v[IT];
    unsigned d[IT];
    #pragma unroll
    for (int j = 0; j < IT; ++j) {                  // striped: coalesced loads
        const int i = j * SEG_THREADS + t;
        if (i < m) {
            k[j] = keys_in[a + i];
            if constexpr (!KEYS_ONLY) v[j] = values_in[a + i];
            d[j] = (unsigned)(gpunb_sort::proc(k[j]) >> dbit) & dmask;
            atomicAdd(&s.f.cursor[d[j]], 1);
        }
    }
    __syncthreads();
    const int count = s.f.cursor[t];
    int first;
    Scan(s.f.scan).ExclusiveSum(count, first);
    if (count > SEG_BIN) s.f.big = 1;
    __syncthreads();
    if (s.f.big) {                  // uneven low bits: the block's radix sort of the group
        __syncthreads();            // (every thread has read big before the union is reused)
        Slow::run(s.slow, keys_in, keys_out, values_in, values_out, a, (int)m, begin_bit, end_bit);
        return;
    }
    s.f.cursor[t] = first;
    __syncthreads();
    #pragma unroll
    for (int j = 0; j < IT; ++j) {
        const int i = j * SEG_THREADS + t;
        if (i < m) {
            const int at = atomicAdd(&s.f.cursor[d[j]], 1);
            s.f.key[at] = k[j];
            if constexpr (!KEYS_ONLY) s.f.val[at] = v[j];
            s.f.pos[at] = (unsigned short)i;
        }
    }
    __syncthreads();
    for (int x = first + 1; x < first + count; ++x) {       // this thread's bin, by insertion
        const Key kx = s.f.key[x];
        const P px = gpunb_sort::proc(kx);
        const unsigned short qx = s.f.pos[x];
        Value vx;
        if constexpr (!KEYS_ONLY) vx = s.f.val[x];
        int y = x - 1;
        for (; y >= first; --y) {
            const P py = gpunb_sort::proc(s.f.key[y]);
            if (py < px || (py == px && s.f.pos[y] < qx)) break;
            s.f.key[y + 1] = s.f.key[y];
            s.f.pos[y + 1] = s.f.pos[y];
            if constexpr (!KEYS_ONLY) s.f.val[y + 1] = s.f.val[y];
        }
        s.f.key[y + 1] = kx;
        s.f.pos[y + 1] = qx;
        if constexpr (!KEYS_ONLY) s.f.val[y + 1] = vx;
    }
    __syncthreads();
    for (int i = t; i < m; i += SEG_THREADS) {              // striped: coalesced stores
        keys_out[a + i] = s.f.key[i];
        if constexpr (!KEYS_ONLY) values_out[a + i] = s.f.val[i];
    }
}
#endif
"""
