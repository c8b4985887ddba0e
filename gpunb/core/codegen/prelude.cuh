// gpunb prelude: types and NumPy-exact scalar functions for generated kernels.
// Inlined into every generated source (not #included), so the cache key covers it.
namespace gpunb {

// ---- limits and traits (no libcu++ headers: NVRTC has none built in) -------------------------
template <class T> struct lim;
#define GPUNB_LIM(T, LO, HI) template <> struct lim<T> { static __device__ __forceinline__ T min() { return LO; } static __device__ __forceinline__ T max() { return HI; } };
GPUNB_LIM(signed char, -128, 127)
GPUNB_LIM(short, -32768, 32767)
GPUNB_LIM(int, (-2147483647 - 1), 2147483647)
GPUNB_LIM(long long, (-9223372036854775807LL - 1), 9223372036854775807LL)
GPUNB_LIM(unsigned char, 0, 255)
GPUNB_LIM(unsigned short, 0, 65535)
GPUNB_LIM(unsigned int, 0U, 4294967295U)
GPUNB_LIM(unsigned long long, 0ULL, 18446744073709551615ULL)
#undef GPUNB_LIM
template <class T> struct is_signed_int { static const bool value = false; };
template <> struct is_signed_int<signed char> { static const bool value = true; };
template <> struct is_signed_int<short> { static const bool value = true; };
template <> struct is_signed_int<int> { static const bool value = true; };
template <> struct is_signed_int<long long> { static const bool value = true; };
template <class T> struct is_float { static const bool value = false; };
template <> struct is_float<float> { static const bool value = true; };
template <> struct is_float<double> { static const bool value = true; };

// ---- float16: stored as bits, computed in float (as NumPy's float16 loops do) ------------------
struct __align__(2) half { unsigned short x; };
__device__ __forceinline__ float to_float(half h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.x)); return f; }
__device__ __forceinline__ half to_half(float f) { half h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.x) : "f"(f)); return h; }
__device__ __forceinline__ half to_half(double d) { half h; asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h.x) : "d"(d)); return h; }

// ---- complex ------------------------------------------------------------------------------------
template <class T> struct __align__(2 * sizeof(T)) complex {
    T re, im;
    __device__ __forceinline__ complex() {}
    __device__ __forceinline__ complex(T r, T i = T(0)) : re(r), im(i) {}
    template <class U> __device__ __forceinline__ explicit complex(const complex<U>& o) : re(T(o.re)), im(T(o.im)) {}
};
template <class T> __device__ __forceinline__ complex<T> operator+(complex<T> a, complex<T> b) { return complex<T>(a.re + b.re, a.im + b.im); }
template <class T> __device__ __forceinline__ complex<T> operator-(complex<T> a, complex<T> b) { return complex<T>(a.re - b.re, a.im - b.im); }
template <class T> __device__ __forceinline__ complex<T> operator-(complex<T> a) { return complex<T>(-a.re, -a.im); }
template <class T> __device__ __forceinline__ complex<T> operator+(complex<T> a) { return a; }
template <class T> __device__ __forceinline__ complex<T> operator*(complex<T> a, complex<T> b) {
    return complex<T>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
// Smith's algorithm, as NumPy's complex division.
template <class T> __device__ __forceinline__ complex<T> operator/(complex<T> a, complex<T> b) {
    T abs_br = fabs(b.re), abs_bi = fabs(b.im);
    if (abs_br >= abs_bi) {
        if (abs_br == T(0) && abs_bi == T(0)) return complex<T>(a.re / abs_br, a.im / abs_bi);
        T rat = b.im / b.re, scl = T(1) / (b.re + b.im * rat);
        return complex<T>((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
    }
    T rat = b.re / b.im, scl = T(1) / (b.im + b.re * rat);
    return complex<T>((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}
template <class T> __device__ __forceinline__ bool operator==(complex<T> a, complex<T> b) { return a.re == b.re && a.im == b.im; }
template <class T> __device__ __forceinline__ bool operator!=(complex<T> a, complex<T> b) { return !(a == b); }
// NumPy orders complex numbers lexicographically (real part, then imaginary part).
template <class T> __device__ __forceinline__ bool operator<(complex<T> a, complex<T> b) { return a.re < b.re || (a.re == b.re && a.im < b.im); }
template <class T> __device__ __forceinline__ bool operator<=(complex<T> a, complex<T> b) { return a.re < b.re || (a.re == b.re && a.im <= b.im); }
template <class T> __device__ __forceinline__ bool operator>(complex<T> a, complex<T> b) { return b < a; }
template <class T> __device__ __forceinline__ bool operator>=(complex<T> a, complex<T> b) { return b <= a; }

// ---- casts with NumPy's rules ---------------------------------------------------------------------
template <class To, class From> struct caster { static __device__ __forceinline__ To go(From x) { return (To)x; } };
template <class From> struct caster<bool, From> { static __device__ __forceinline__ bool go(From x) { return x != From(0); } };
template <class T> struct caster<bool, complex<T> > { static __device__ __forceinline__ bool go(complex<T> x) { return x.re != T(0) || x.im != T(0); } };
template <class To, class T> struct caster<To, complex<T> > { static __device__ __forceinline__ To go(complex<T> x) { return (To)x.re; } };
template <class T, class From> struct caster<complex<T>, From> { static __device__ __forceinline__ complex<T> go(From x) { return complex<T>((T)x, T(0)); } };
template <class T, class U> struct caster<complex<T>, complex<U> > { static __device__ __forceinline__ complex<T> go(complex<U> x) { return complex<T>((T)x.re, (T)x.im); } };
template <class T> struct caster<complex<T>, complex<T> > { static __device__ __forceinline__ complex<T> go(complex<T> x) { return x; } };
template <> struct caster<bool, bool> { static __device__ __forceinline__ bool go(bool x) { return x; } };
template <class To, class From> __device__ __forceinline__ To cast(From x) { return caster<To, From>::go(x); }

// ---- storage <-> compute ------------------------------------------------------------------------
template <class T> __device__ __forceinline__ T load(const T& x) { return x; }
__device__ __forceinline__ float load(const half& x) { return to_float(x); }
template <class S, class C> struct storer { static __device__ __forceinline__ S go(C x) { return cast<S>(x); } };
template <class C> struct storer<half, C> { static __device__ __forceinline__ half go(C x) { return to_half(cast<float>(x)); } };
template <> struct storer<half, double> { static __device__ __forceinline__ half go(double x) { return to_half(x); } };
template <class S, class C> __device__ __forceinline__ S store(C x) { return storer<S, C>::go(x); }

// ---- predicates -----------------------------------------------------------------------------------
template <class T> __device__ __forceinline__ bool isnan_(T x) { return false; }
__device__ __forceinline__ bool isnan_(float x) { return isnan(x); }
__device__ __forceinline__ bool isnan_(double x) { return isnan(x); }
template <class T> __device__ __forceinline__ bool isnan_(complex<T> x) { return isnan(x.re) || isnan(x.im); }
template <class T> __device__ __forceinline__ bool isinf_(T x) { return false; }
__device__ __forceinline__ bool isinf_(float x) { return isinf(x); }
__device__ __forceinline__ bool isinf_(double x) { return isinf(x); }
template <class T> __device__ __forceinline__ bool isinf_(complex<T> x) { return isinf(x.re) || isinf(x.im); }
template <class T> __device__ __forceinline__ bool isfinite_(T x) { return true; }
__device__ __forceinline__ bool isfinite_(float x) { return isfinite(x); }
__device__ __forceinline__ bool isfinite_(double x) { return isfinite(x); }
template <class T> __device__ __forceinline__ bool isfinite_(complex<T> x) { return isfinite(x.re) && isfinite(x.im); }

// ---- integer arithmetic with NumPy's results where C++ is undefined ----------------------------------
template <class T> __device__ __forceinline__ T floor_divide(T a, T b) {
    if constexpr (is_float<T>::value) {        // NumPy's npy_divmod
        if (b == T(0)) return a / b;
        T mod = fmod(a, b), div = (a - mod) / b;
        if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
        if (div != T(0)) { T f = floor(div); if (div - f > T(0.5)) f += T(1); return f; }
        return copysign(T(0), a / b);
    } else {
        if (b == T(0)) return T(0);
        if constexpr (is_signed_int<T>::value) {
            if (b == T(-1)) return a == lim<T>::min() ? a : T(-a);
            T q = a / b;
            if ((a % b != T(0)) && ((a < T(0)) != (b < T(0)))) q -= T(1);
            return q;
        } else {
            return T(a / b);
        }
    }
}
template <class T> __device__ __forceinline__ T remainder(T a, T b) {
    if constexpr (is_float<T>::value) {
        T mod = fmod(a, b);
        if (b == T(0)) return mod;
        if (mod != T(0)) { if ((b < T(0)) != (mod < T(0))) mod += b; }
        else mod = copysign(T(0), b);
        return mod;
    } else {
        if (b == T(0)) return T(0);
        if constexpr (is_signed_int<T>::value) {
            if (b == T(-1)) return T(0);
            T r = a % b;
            if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
            return r;
        } else {
            return T(a % b);
        }
    }
}
template <class T> __device__ __forceinline__ T ipow(T a, T b) {
    if constexpr (is_signed_int<T>::value) { if (b < T(0)) return T(0); }   // NumPy raises
    T r = T(1);
    while (b != T(0)) { if (b & T(1)) r *= a; b >>= 1; a *= a; }
    return r;
}
template <class T> __device__ __forceinline__ T lshift(T a, T b) {
    return (unsigned long long)b < sizeof(T) * 8 ? T(a << b) : T(0);
}
template <class T> __device__ __forceinline__ T rshift(T a, T b) {
    if ((unsigned long long)b < sizeof(T) * 8) return T(a >> b);
    if constexpr (is_signed_int<T>::value) return a < T(0) ? T(-1) : T(0);
    return T(0);
}
template <class T> __device__ __forceinline__ T reciprocal_int(T a) {
    // NumPy computes 1/0 through a float-to-int conversion: INT_MIN for 32- and 64-bit ints,
    // which truncates to 0 for the narrower ones.
    if (a == T(0)) { if constexpr (is_signed_int<T>::value && sizeof(T) >= 4) return lim<T>::min(); else return T(0); }
    return T(T(1) / a);
}
template <class T> __device__ __forceinline__ T sign_(T a) {
    if constexpr (is_float<T>::value) return a > T(0) ? T(1) : (a < T(0) ? T(-1) : (a == T(0) ? T(0) : a));
    else return T((a > T(0)) - (a < T(0)));
}
template <class T> __device__ __forceinline__ T maximum_(T a, T b) { return (a >= b || isnan_(a)) ? a : b; }
template <class T> __device__ __forceinline__ T minimum_(T a, T b) { return (a <= b || isnan_(a)) ? a : b; }
template <class T> __device__ __forceinline__ T fmax_(T a, T b) { return (a >= b || isnan_(b)) ? a : b; }
template <class T> __device__ __forceinline__ T fmin_(T a, T b) { return (a <= b || isnan_(b)) ? a : b; }
template <class T> __device__ __forceinline__ T clip_(T x, T lo, T hi) { return minimum_(maximum_(x, lo), hi); }

// ---- complex functions (NumPy's definitions) -------------------------------------------------------------
template <class T> __device__ __forceinline__ T abs_(complex<T> z) { return hypot(z.re, z.im); }
template <class T> __device__ __forceinline__ complex<T> sign_(complex<T> z) {
    T r = hypot(z.re, z.im);
    if (r == T(0)) return complex<T>(T(0), T(0));
    if (isnan(r)) return complex<T>(r, r);
    return complex<T>(z.re / r, z.im / r);
}
template <class T> __device__ __forceinline__ complex<T> exp_(complex<T> z) {
    if (z.im == T(0)) return complex<T>(exp(z.re), z.im);
    T e = exp(z.re);
    return complex<T>(e * cos(z.im), e * sin(z.im));
}
template <class T> __device__ __forceinline__ complex<T> log_(complex<T> z) {
    return complex<T>(log(hypot(z.re, z.im)), atan2(z.im, z.re));
}
// Kahan's branch cuts, as C99 csqrt (which NumPy uses).
template <class T> __device__ __forceinline__ complex<T> sqrt_(complex<T> z) {
    T a = z.re, b = z.im;
    if (a == T(0) && b == T(0)) return complex<T>(T(0), b);
    if (isinf(b)) return complex<T>(fabs(b), b);
    if (isnan(a)) return complex<T>(a, (b - b) / (b - b));
    if (isinf(a)) {
        if (signbit(a)) return complex<T>(fabs(b - b), copysign(a, b));
        return complex<T>(a, copysign(b - b, b));
    }
    if (a >= T(0)) { T t = sqrt((a + hypot(a, b)) * T(0.5)); return complex<T>(t, b / (T(2) * t)); }
    T t = sqrt((-a + hypot(a, b)) * T(0.5));
    return complex<T>(fabs(b) / (T(2) * t), copysign(t, b));
}
template <class T> __device__ __forceinline__ complex<T> square_(complex<T> z) { return z * z; }
template <class T> __device__ __forceinline__ complex<T> reciprocal_(complex<T> z) { return complex<T>(T(1), T(0)) / z; }

}  // namespace gpunb
