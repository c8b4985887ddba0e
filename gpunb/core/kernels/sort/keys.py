"""Radix sort keys in NumPy's order: the C++ key types CUB sorts for each dtype.

Floating keys are wrapped in key types whose ``cub::NumericTraits`` twiddle is the usual
order-preserving bit flip and whose digit extractor maps every NaN to the largest key (NaN
last, -0.0 tied with 0.0); complex keys are one 64- or 128-bit key in NumPy's complex order;
row composites put the row above an inner key; offset keys order an integer key as its
difference from a launch parameter (see :mod:`.codegen`'s docstring for how each is used).

Pure: imports nothing from CUDA, returns strings.
"""

from __future__ import annotations

import numpy as np

_UNSIGNED = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long",
             16: "__uint128_t"}
_NATIVE = {"bool": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
           "int64": "long long", "uint8": "unsigned char", "uint16": "unsigned short",
           "uint32": "unsigned int", "uint64": "unsigned long long"}


def key_type(dt: np.dtype, descending: bool = False) -> str:
    """The C++ key type CUB sorts for ``dt`` (see the module docstring)."""
    if dt.kind == "f":
        return f"gpunb_sort::fkey<{_UNSIGNED[dt.itemsize]}, {int(descending)}>"
    if dt.kind == "c":
        half = dt.itemsize // 2
        return f"gpunb_sort::ckey<{_UNSIGNED[half]}, {_UNSIGNED[dt.itemsize]}>"
    return _NATIVE[dt.name]


def key_bits(dt: np.dtype) -> int:
    """Bits of the sorted key (bool: one digit pass of 8 bits)."""
    return 8 * np.dtype(dt).itemsize


_TYPES = r"""
namespace gpunb_sort {
// A floating key: its bits; ordered by cub::NumericTraits below.
template <typename U, int DESC> struct fkey { U bits; };
// A complex key: real then imaginary part's bits; W is the unsigned type of both.
template <typename U, typename W> struct alignas(sizeof(W)) ckey { U re; U im; };

template <typename U> struct fbits {
    static constexpr U HIGH = U(1) << (sizeof(U) * 8 - 1);
    static constexpr U INF = sizeof(U) == 2 ? U(0x7c00) : sizeof(U) == 4 ? U(0x7f800000u)
                                                        : U(0x7ff0000000000000ull);
    static constexpr U TW_PINF = INF | HIGH;          // twiddled +inf
    static constexpr U TW_NINF = U(~TW_PINF);         // twiddled -inf
    __host__ __device__ __forceinline__ static constexpr U in(U k) { return k ^ ((k & HIGH) ? U(~U(0)) : HIGH); }
    __host__ __device__ __forceinline__ static constexpr U out(U k) { return k ^ ((k & HIGH) ? HIGH : U(~U(0))); }
    // twiddled patterns outside [-inf, +inf] are NaN
    __host__ __device__ __forceinline__ static bool nan(U t) { return t > TW_PINF || t < TW_NINF; }
    // -0.0 ties with +0.0
    __host__ __device__ __forceinline__ static U zero(U t) { return t == U(HIGH - 1) ? HIGH : t; }
};
}  // namespace gpunb_sort

CUB_NAMESPACE_BEGIN
template <typename U, int DESC> struct NumericTraits<gpunb_sort::fkey<U, DESC>> {
    using T = gpunb_sort::fkey<U, DESC>;
    using UnsignedBits = U;
    using F = gpunb_sort::fbits<U>;
    static constexpr U LOWEST_KEY = F::out(U(0));
    static constexpr U MAX_KEY = F::out(U(~U(0)));
    static __host__ __device__ __forceinline__ U TwiddleIn(U k) { return F::in(k); }
    static __host__ __device__ __forceinline__ U TwiddleOut(U k) { return F::out(k); }
private:
    friend struct detail::is_primitive_impl;
    static constexpr bool is_primitive = false;
};

template <typename U, typename W> struct NumericTraits<gpunb_sort::ckey<U, W>> {
    using T = gpunb_sort::ckey<U, W>;
    using UnsignedBits = W;
    using F = gpunb_sort::fbits<U>;
    static constexpr int B = sizeof(U) * 8;
    // memory order (little-endian): the real part is the low half of the bits
    static __host__ __device__ __forceinline__ constexpr W In(W k) {
        return (W(F::in(U(k))) << B) | W(F::in(U(k >> B)));
    }
    static __host__ __device__ __forceinline__ constexpr W Out(W k) {
        return W(F::out(U(k >> B))) | (W(F::out(U(k))) << B);
    }
    static constexpr W LOWEST_KEY = Out(W(0));
    static constexpr W MAX_KEY = Out(W(~W(0)));
    static __host__ __device__ __forceinline__ W TwiddleIn(W k) { return In(k); }
    static __host__ __device__ __forceinline__ W TwiddleOut(W k) { return Out(k); }
private:
    friend struct detail::is_primitive_impl;
    static constexpr bool is_primitive = false;
};

// The digit extractors' hook (CUB maps -0.0 to +0.0 here): NaN is the largest key.
template <typename U, int DESC> struct BaseDigitExtractor<gpunb_sort::fkey<U, DESC>, false> {
    using UnsignedBits = U;
    using F = gpunb_sort::fbits<U>;
    static __device__ __forceinline__ U ProcessFloatMinusZero(U key) {
        if (DESC) {     // onesweep complements descending keys; NaN still goes last
            const U t = U(~key);
            return F::nan(t) ? U(~U(0)) : U(~F::zero(t));
        }
        return F::nan(key) ? U(~U(0)) : F::zero(key);
    }
};

// NumPy's complex order: [R + Rj, R + nanj, nan + Rj, nan + nanj]
template <typename U, typename W> struct BaseDigitExtractor<gpunb_sort::ckey<U, W>, false> {
    using UnsignedBits = W;
    using F = gpunb_sort::fbits<U>;
    static constexpr int B = sizeof(U) * 8;
    static __device__ __forceinline__ W ProcessFloatMinusZero(W key) {
        const U re = U(key >> B), im = U(key);
        const bool nr = F::nan(re), ni = F::nan(im);
        if (!nr && !ni) return (W(F::zero(re)) << B) | W(F::zero(im));
        if (!nr) return (W(F::TW_PINF + 1) << B) | W(F::zero(re));
        if (!ni) return (W(F::TW_PINF + 2) << B) | W(F::zero(im));
        return W(~W(0));
    }
};

// A row-composite key: the row in the high bits above an inner key's raw bits (sorts of many
// long rows: one flat sort groups the rows and orders each). The inner key keeps its exact
// bits; its twiddle and its digit extractor (NaN last, -0.0 = 0.0) apply to the low bits.
CUB_NAMESPACE_END
namespace gpunb_sort {
template <typename K> struct rkey { unsigned long long bits; };
}
CUB_NAMESPACE_BEGIN
template <typename K> struct NumericTraits<gpunb_sort::rkey<K>> {
    using T = gpunb_sort::rkey<K>;
    using UnsignedBits = unsigned long long;
    using IU = typename Traits<K>::UnsignedBits;
    static constexpr int B = sizeof(IU) * 8;
    static constexpr unsigned long long LOW = B == 64 ? ~0ull : (1ull << B) - 1;
    static constexpr unsigned long long LOWEST_KEY = (unsigned long long)Traits<K>::LOWEST_KEY;
    static constexpr unsigned long long MAX_KEY = ~LOW | (unsigned long long)Traits<K>::MAX_KEY;
    static __host__ __device__ __forceinline__ unsigned long long TwiddleIn(unsigned long long w) {
        return (w & ~LOW) | (unsigned long long)Traits<K>::TwiddleIn(IU(w));
    }
    static __host__ __device__ __forceinline__ unsigned long long TwiddleOut(unsigned long long w) {
        return (w & ~LOW) | (unsigned long long)Traits<K>::TwiddleOut(IU(w));
    }
private:
    friend struct detail::is_primitive_impl;
    static constexpr bool is_primitive = false;
};
template <typename K> struct BaseDigitExtractor<gpunb_sort::rkey<K>, false> {
    using UnsignedBits = unsigned long long;
    using IU = typename Traits<K>::UnsignedBits;
    static constexpr unsigned long long LOW = NumericTraits<gpunb_sort::rkey<K>>::LOW;
    static __device__ __forceinline__ unsigned long long ProcessFloatMinusZero(unsigned long long w) {
        return (w & ~LOW) | (unsigned long long)BaseDigitExtractor<K>::ProcessFloatMinusZero(IU(w));
    }
};
CUB_NAMESPACE_END
"""

_OKEY = r"""
// An offset key: an integer key K ordered as (bit-ordered key - the launch's offset), so that
// keys in a narrow range have constant high digits. The offset is a launch parameter held in
// shared memory (set by the kernels' first lines); padding keys (CUB's largest raw key) stay
// the largest, and so does that key itself (it sorts after everything in any case).
namespace gpunb_sort {
template <typename K> struct okey { K bits; };
__shared__ unsigned long long koff;
}
CUB_NAMESPACE_BEGIN
template <typename K> struct NumericTraits<gpunb_sort::okey<K>> {
    using T = gpunb_sort::okey<K>;
    using UnsignedBits = typename Traits<K>::UnsignedBits;
    using U = UnsignedBits;
    static constexpr U LOWEST_KEY = Traits<K>::LOWEST_KEY;
    static constexpr U MAX_KEY = Traits<K>::MAX_KEY;
    static __host__ __device__ __forceinline__ U TwiddleIn(U k) {
#ifdef __CUDA_ARCH__
        return k == MAX_KEY ? U(~U(0)) : U(Traits<K>::TwiddleIn(k) - U(gpunb_sort::koff));
#else
        return k;
#endif
    }
    static __host__ __device__ __forceinline__ U TwiddleOut(U k) {
#ifdef __CUDA_ARCH__
        return k == U(~U(0)) ? MAX_KEY : Traits<K>::TwiddleOut(U(k + U(gpunb_sort::koff)));
#else
        return k;
#endif
    }
private:
    friend struct detail::is_primitive_impl;
    static constexpr bool is_primitive = false;
};
CUB_NAMESPACE_END
#define OFF_SET if (threadIdx.x == 0) gpunb_sort::koff = off; __syncthreads();
"""
