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
// Products rounded one by one, never contracted into an fma, so z * conj(z) is exactly real, as the
// BLAS products behind NumPy's cov and dot are (a residual imaginary part / 0 is inf, NumPy's nan).
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
template <class T> __device__ __forceinline__ complex<T> operator*(complex<T> a, complex<T> b) {
    return complex<T>(mul_rn(a.re, b.re) - mul_rn(a.im, b.im), mul_rn(a.re, b.im) + mul_rn(a.im, b.re));
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
// To half in one correctly rounded step: through float, a double (or a complex<double>'s real
// part) would be rounded twice, NumPy rounds once. (Integers in half's range are exact in float.)
template <class C> struct storer<half, C> { static __device__ __forceinline__ half go(C x) { return to_half(cast<float>(x)); } };
template <> struct storer<half, double> { static __device__ __forceinline__ half go(double x) { return to_half(x); } };
template <> struct storer<half, complex<double> > { static __device__ __forceinline__ half go(complex<double> x) { return to_half(x.re); } };
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
template <class T> __device__ __forceinline__ T fmod_(T a, T b) {
    if constexpr (is_float<T>::value) { return fmod(a, b); }
    else {      // NumPy: the dividend's sign; 0 for a zero divisor (and for MIN % -1)
        if (b == T(0)) return T(0);
        if constexpr (is_signed_int<T>::value) { if (b == T(-1)) return T(0); }
        return T(a % b);
    }
}
template <class T> __device__ __forceinline__ unsigned long long uabs_(T a) {
    // |a| as NumPy's gcd and bitwise_count take it: MIN's magnitude, no overflow
    if constexpr (is_signed_int<T>::value) { return a < T(0) ? 0ULL - (unsigned long long)(long long)a : (unsigned long long)a; }
    else { return (unsigned long long)a; }
}
template <class T> __device__ __forceinline__ T gcd_(T a, T b) {
    unsigned long long x = uabs_(a), y = uabs_(b);
    while (x != 0ULL) { const unsigned long long c = x; x = y % x; y = c; }    // NumPy's Euclid
    return T(y);
}
template <bool WIDE> struct lcm_word { typedef unsigned int type; };
template <> struct lcm_word<true> { typedef unsigned long long type; };
template <class T> __device__ __forceinline__ T lcm_(T a, T b) {
    // NumPy: |a| / gcd * |b| in unsigned int (unsigned long long for 64-bit types), wrapping
    typedef typename lcm_word<(sizeof(T) > 4)>::type U;
    const U x = U(uabs_(a)), y = U(uabs_(b)), g = U(gcd_(x, y));
    return g == U(0) ? T(0) : T(x / g * y);
}
template <class T> __device__ __forceinline__ unsigned char bitwise_count_(T a) {
    return (unsigned char)__popcll(uabs_(a));
}
template <class T, class E> __device__ __forceinline__ T ldexp_(T x, E e) {
    // NumPy clamps a 64-bit exponent to int's range (ldexp overflows or underflows there)
    const int k = (long long)e > 2147483647LL ? 2147483647 : ((long long)e < -2147483647LL - 1 ? -2147483647 - 1 : (int)e);
    return ldexp(x, k);
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
// NumPy's npy_logaddexp(2): equal arguments (infinities of one sign included) first, then the
// larger plus log1p of the smaller's share; a NaN difference is returned as is.
template <class T> __device__ __forceinline__ T logaddexp_(T x, T y) {
    if (x == y) return x + T(0.693147180559945309417232121458176568);   // ln 2
    const T d = x - y;
    if (d > T(0)) return x + log1p(exp(-d));
    if (d <= T(0)) return y + log1p(exp(d));
    return d;
}
template <class T> __device__ __forceinline__ T logaddexp2_(T x, T y) {
    const T log2e = T(1.442695040888963407359924681001892137);
    if (x == y) return x + T(1);
    const T d = x - y;
    if (d > T(0)) return x + log2e * log1p(exp2(-d));
    if (d <= T(0)) return y + log2e * log1p(exp2(d));
    return d;
}

// ---- complex functions (NumPy's definitions) -------------------------------------------------------------
// NumPy's complex loops call the C library's C99 functions (glibc's on Linux). These follow the standard
// algorithms (Kahan's; Hull, Fairgrieve and Tang's for the inverse functions) with C99 Annex G's values
// for signed zeros, infinities and NaNs, and glibc's choices where Annex G leaves the choice open. Signs
// are taken from the inputs, never from a NaN computed here: a GPU's NaNs carry no sign.
template <class T> struct cconst;
template <> struct cconst<float> {
    static constexpr float eps = 0x1p-23f, max = 0x1.fffffep127f, min = 0x1p-126f;
    static constexpr float two_mant = 0x1p24f, mant_ln2 = 16.635532333438687f;   // 2**24, 24 ln 2
    static constexpr float ln2 = 0.693147180559945309f, log2e = 1.44269504088896341f, log10e = 0.434294481903251828f;
    static constexpr float pio2 = 0x1.921fb6p0f, pio2_lo = -4.37113900018624283e-8f;   // pio2 + pio2_lo = pi/2
    static constexpr float sqrt_min = 0x1p-63f, exp_big = 88.0f, trig_big = 9.0f, tanh_big = 11.0f;
    static constexpr float sqrt_6eps = 8.4572793338e-4f, sqrt_3eps = 5.9801995673e-4f;
};
template <> struct cconst<double> {
    static constexpr double eps = 0x1p-52, max = 0x1.fffffffffffffp1023, min = 0x1p-1022;
    static constexpr double two_mant = 0x1p53, mant_ln2 = 36.736800569677101;    // 2**53, 53 ln 2
    static constexpr double ln2 = 0.693147180559945309, log2e = 1.44269504088896341, log10e = 0.434294481903251828;
    static constexpr double pio2 = 0x1.921fb54442d18p0, pio2_lo = 6.123233995736766036e-17;
    static constexpr double sqrt_min = 0x1p-511, exp_big = 709.0, trig_big = 22.0, tanh_big = 22.0;
    static constexpr double sqrt_6eps = 3.65002414998885671e-08, sqrt_3eps = 2.5809568279517849e-8;
};
#ifdef __CUDACC__
__device__ __forceinline__ void sincos_(float x, float* s, float* c) { sincosf(x, s, c); }
__device__ __forceinline__ void sincos_(double x, double* s, double* c) { sincos(x, s, c); }
__device__ __forceinline__ float qnan_(float) { return __int_as_float(0x7fffffff); }
__device__ __forceinline__ double qnan_(double) { return __longlong_as_double(0x7fffffffffffffffLL); }
#else   // the same code compiled for the host (tests/test_complex_math.py checks the algorithms there)
template <class T> inline void sincos_(T x, T* s, T* c) { *s = sin(x); *c = cos(x); }
template <class T> inline T qnan_(T) { return T(__builtin_nan("")); }
#endif
template <class T> __device__ __forceinline__ T heaviside_(T x, T h0) {
    if (x != x) return qnan_(x);
    if (x == T(0)) return h0;
    return x < T(0) ? T(0) : T(1);
}

template <class T> __device__ __forceinline__ T abs_(complex<T> z) { return hypot(z.re, z.im); }
template <class T> __device__ __forceinline__ complex<T> conj_(complex<T> z) { return complex<T>(z.re, -z.im); }
// NumPy 2: z / |z|, 0 for 0; an infinite part (the other finite or NaN) gives +-1 or +-i
template <class T> __device__ __forceinline__ complex<T> sign_(complex<T> z) {
    T r = hypot(z.re, z.im);
    if (r == T(0)) return complex<T>(T(0), T(0));
    if (isnan(r)) return complex<T>(r, r);
    if (isinf(r)) {
        if (isinf(z.re)) return isinf(z.im) ? complex<T>(qnan_(r), qnan_(r)) : complex<T>(z.re > T(0) ? T(1) : T(-1), T(0));
        return complex<T>(T(0), z.im > T(0) ? T(1) : T(-1));
    }
    return complex<T>(z.re / r, z.im / r);
}
template <class T> __device__ __forceinline__ complex<T> rint_(complex<T> z) { return complex<T>(rint(z.re), rint(z.im)); }

// exp(x) * (c + i s) for finite x, without overflowing where the product does not
template <class T> __device__ __forceinline__ complex<T> exp_cis_(T x, T c, T s) {
    if (x < cconst<T>::exp_big) { const T e = exp(x); return complex<T>(e * c, e * s); }
    const T h = exp(T(0.5) * x);
    return complex<T>((h * c) * h, (h * s) * h);
}
// C99 cexp
template <class T> __device__ __forceinline__ complex<T> exp_(complex<T> z) {
    const T x = z.re, y = z.im;
    if (y == T(0)) return complex<T>(exp(x), y);
    if (isfinite(y)) {
        if (isnan(x)) return complex<T>(x, x);
        T s, c;
        sincos_(y, &s, &c);
        if (isfinite(x)) return exp_cis_(x, c, s);
        return x > T(0) ? complex<T>(x * c, x * s) : complex<T>(T(0) * c, T(0) * s);
    }
    if (isinf(x)) return x > T(0) ? complex<T>(x, qnan_(x)) : complex<T>(T(0), copysign(T(0), y));
    return complex<T>(qnan_(x), qnan_(x));
}
// log(hypot(a, b)) for a >= b >= 0: no overflow or underflow, accurate near 1 (a*a + b*b - 1 with fma)
template <class T> __device__ __forceinline__ T log_hypot_(T a, T b) {
    typedef cconst<T> K;
    if (a > K::max * T(0.25)) return log(hypot(a * T(0.25), b * T(0.25))) + T(2) * K::ln2;
    if (a < K::min) {
        if (a == T(0)) return log(a);
        return log(hypot(a * K::two_mant, b * K::two_mant)) - K::mant_ln2;
    }
    const T h = hypot(a, b);
    if (h >= T(0.71) && h <= T(1.73)) {
        const T p = b * b;
        return T(0.5) * log1p((fma(a, a, T(-1)) + p) + fma(b, b, -p));
    }
    return log(h);
}
// C99 clog
template <class T> __device__ __forceinline__ complex<T> log_(complex<T> z) {
    const T ax = fabs(z.re), ay = fabs(z.im), arg = atan2(z.im, z.re);
    if (isinf(ax) || isinf(ay)) return complex<T>(isinf(ax) ? ax : ay, arg);
    if (isnan(ax) || isnan(ay)) return complex<T>(ax + ay, arg);
    return complex<T>(ax >= ay ? log_hypot_(ax, ay) : log_hypot_(ay, ax), arg);
}
// NumPy's: exp(z ln 2), log(z) / ln 2, log(z) / ln 10
template <class T> __device__ __forceinline__ complex<T> exp2_(complex<T> z) {
    return exp_(complex<T>(z.re * cconst<T>::ln2, z.im * cconst<T>::ln2));
}
template <class T> __device__ __forceinline__ complex<T> log2_(complex<T> z) {
    const complex<T> l = log_(z);
    return complex<T>(l.re * cconst<T>::log2e, l.im * cconst<T>::log2e);
}
template <class T> __device__ __forceinline__ complex<T> log10_(complex<T> z) {
    const complex<T> l = log_(z);
    return complex<T>(l.re * cconst<T>::log10e, l.im * cconst<T>::log10e);
}
// NumPy's formulas (not C99 functions): expm1(x) cos(y) - 2 sin(y/2)**2 + i exp(x) sin(y), and
// log(|z + 1|) + i arg(z + 1), which loses relative accuracy for tiny |z| exactly as NumPy does.
template <class T> __device__ __forceinline__ complex<T> expm1_(complex<T> z) {
    const T a = sin(z.im / T(2));
    return complex<T>(expm1(z.re) * cos(z.im) - T(2) * a * a, exp(z.re) * sin(z.im));
}
template <class T> __device__ __forceinline__ complex<T> log1p_(complex<T> z) {
    const T xp1 = z.re + T(1);
    return complex<T>(log(hypot(xp1, z.im)), atan2(z.im, xp1));
}

// C99 csinh and ccosh
template <class T> __device__ __forceinline__ complex<T> sinh_(complex<T> z) {
    const T x = z.re, y = z.im, ax = fabs(x);
    if (isfinite(x) && isfinite(y)) {
        if (y == T(0)) return complex<T>(sinh(x), y);
        T s, c;
        sincos_(y, &s, &c);
        if (ax < cconst<T>::trig_big) return complex<T>(sinh(x) * c, cosh(x) * s);
        const complex<T> e = exp_cis_(ax, T(0.5) * c, T(0.5) * s);   // cosh(x) = |sinh(x)| = exp(|x|) / 2
        return complex<T>(x < T(0) ? -e.re : e.re, e.im);
    }
    if (x == T(0)) return complex<T>(x, qnan_(x));                    // +-0 + i(inf or nan)
    if (y == T(0)) return complex<T>(x, y);                          // (+-inf or nan) +- i0
    if (isfinite(x)) return complex<T>(qnan_(x), qnan_(x));
    if (isinf(x)) {
        if (!isfinite(y)) return complex<T>(ax, qnan_(x));
        T s, c;
        sincos_(y, &s, &c);
        return complex<T>(x * c, ax * s);
    }
    return complex<T>(x, qnan_(x));
}
template <class T> __device__ __forceinline__ complex<T> cosh_(complex<T> z) {
    const T x = z.re, y = z.im, ax = fabs(x);
    if (isfinite(x) && isfinite(y)) {
        if (y == T(0)) return complex<T>(cosh(x), x * y);
        T s, c;
        sincos_(y, &s, &c);
        if (ax < cconst<T>::trig_big) return complex<T>(cosh(x) * c, sinh(x) * s);
        const complex<T> e = exp_cis_(ax, T(0.5) * c, T(0.5) * s);
        return complex<T>(e.re, x < T(0) ? -e.im : e.im);
    }
    if (x == T(0)) return complex<T>(qnan_(x), T(0));                 // +-0 + i(inf or nan)
    if (y == T(0)) return complex<T>(ax + ax, isnan(x) ? y : copysign(T(0), x) * y);
    if (isfinite(x)) return complex<T>(qnan_(x), qnan_(x));
    if (isinf(x)) {
        if (!isfinite(y)) return complex<T>(ax, qnan_(x));
        T s, c;
        sincos_(y, &s, &c);
        return complex<T>(ax * c, x * s);
    }
    return complex<T>(x, qnan_(x));
}
// C99 ctanh: Kahan's formula; tanh(x) rounds to +-1 past tanh_big, where the imaginary part is
// 4 sin(y) cos(y) exp(-2|x|) (cosh**2 would overflow)
template <class T> __device__ __forceinline__ complex<T> tanh_(complex<T> z) {
    const T x = z.re, y = z.im;
    if (!isfinite(x)) {
        if (isnan(x)) return complex<T>(x, y == T(0) ? y : qnan_(x));
        T im = y;
        if (isfinite(y)) { T s, c; sincos_(y, &s, &c); im = s * c; }
        return complex<T>(copysign(T(1), x), copysign(T(0), im));
    }
    if (!isfinite(y)) return complex<T>(x == T(0) ? x : qnan_(x), qnan_(x));
    if (y == T(0)) return complex<T>(tanh(x), y);
    if (fabs(x) >= cconst<T>::tanh_big) {
        const T e = exp(-fabs(x));
        T s, c;
        sincos_(y, &s, &c);
        return complex<T>(copysign(T(1), x), T(4) * s * c * e * e);
    }
    const T t = tan(y), beta = T(1) + t * t, s = sinh(x), rho = sqrt(T(1) + s * s);
    const T denom = T(1) + beta * s * s;
    return complex<T>((beta * rho * s) / denom, t / denom);
}
// sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz)
template <class T> __device__ __forceinline__ complex<T> sin_(complex<T> z) {
    if (isinf(z.im) && !isfinite(z.re)) return complex<T>(qnan_(z.re), fabs(z.im));   // glibc's sign
    const complex<T> w = sinh_(complex<T>(-z.im, z.re));
    return complex<T>(w.im, -w.re);
}
template <class T> __device__ __forceinline__ complex<T> cos_(complex<T> z) { return cosh_(complex<T>(-z.im, z.re)); }
template <class T> __device__ __forceinline__ complex<T> tan_(complex<T> z) {
    const complex<T> w = tanh_(complex<T>(-z.im, z.re));
    return complex<T>(w.im, -w.re);
}

// ---- inverse functions: Hull, Fairgrieve and Tang, "Implementing the complex arcsine and arccosine
// functions using exception handling", ACM TOMS 23(3), 1997, in the form of FreeBSD's msun.
// With z = x + iy, x, y >= 0: A = (|z + i| + |z - i|) / 2, B = y / A,
// asinh(z) = log(A + sqrt(A*A - 1)) + i asin(B), acos(y + ix) = acos(B) - i log(A + sqrt(A*A - 1)).
// hull_f_(a, b, hypot(a, b)) = (hypot(a, b) - b) / 2 without cancellation
template <class T> __device__ __forceinline__ T hull_f_(T a, T b, T h) {
    if (b < T(0)) return (h - b) * T(0.5);
    if (b == T(0)) return a * T(0.5);
    return a * a / (h + b) * T(0.5);
}
// For finite x, y >= 0 below 1/eps: rx = log(A + sqrt(A*A - 1)); then either B (b_ok) or, where
// asin(B) would be inaccurate, sqrt(A*A - y*y) and y (both possibly scaled) for atan2.
template <class T> __device__ __forceinline__ void hull_(T x, T y, T& rx, bool& b_ok, T& B, T& sqrt_a2y2, T& ny) {
    typedef cconst<T> K;
    const T R = hypot(x, y + T(1)), S = hypot(x, y - T(1));
    T A = (R + S) * T(0.5);
    if (A < T(1)) A = T(1);
    if (A < T(10)) {
        if (y == T(1) && x < K::eps * K::eps / T(128)) {
            rx = sqrt(x);
        } else if (x >= K::eps * fabs(y - T(1))) {
            const T am1 = hull_f_(x, T(1) + y, R) + hull_f_(x, T(1) - y, S);
            rx = log1p(am1 + sqrt(am1 * (A + T(1))));
        } else if (y < T(1)) {
            rx = x / sqrt((T(1) - y) * (T(1) + y));
        } else {
            rx = log1p((y - T(1)) + sqrt((y - T(1)) * (y + T(1))));
        }
    } else {
        rx = log(A + sqrt(A * A - T(1)));
    }
    ny = y;
    if (y < T(4) * K::sqrt_min) {          // y / A could underflow: scale for atan2
        b_ok = false;
        sqrt_a2y2 = A * (T(2) / K::eps);
        ny = y * (T(2) / K::eps);
        return;
    }
    B = y / A;
    b_ok = B <= T(0.6417);
    if (b_ok) return;
    if (y == T(1) && x < K::eps / T(128)) {
        sqrt_a2y2 = sqrt(x) * sqrt((A + y) * T(0.5));
    } else if (x >= K::eps * fabs(y - T(1))) {
        const T amy = hull_f_(x, y + T(1), R) + hull_f_(x, y - T(1), S);
        sqrt_a2y2 = sqrt(amy * (A + y));
    } else if (y > T(1)) {
        const T scale = T(4) / K::eps / K::eps;
        sqrt_a2y2 = x * scale * y / sqrt((y + T(1)) * (y - T(1)));
        ny = y * scale;
    } else {
        sqrt_a2y2 = sqrt((T(1) - y) * (T(1) + y));
    }
}
// C99 casinh
template <class T> __device__ __forceinline__ complex<T> asinh_(complex<T> z) {
    typedef cconst<T> K;
    const T x = z.re, y = z.im, ax = fabs(x), ay = fabs(y);
    if (isnan(x) || isnan(y)) {
        if (isinf(x)) return complex<T>(x, y);              // +-inf + i nan
        if (isinf(y)) return complex<T>(copysign(ay, x), x);   // +-inf + i nan (glibc: the NaN's sign)
        if (y == T(0)) return z;                              // nan +- i0
        return complex<T>(qnan_(x), qnan_(x));
    }
    if (ax > T(1) / K::eps || ay > T(1) / K::eps) {         // asinh(z) = sign(x) log(2 sign(x) z) + O(1/z**2)
        const T rr = (ax >= ay ? log_hypot_(ax, ay) : log_hypot_(ay, ax)) + K::ln2;
        return complex<T>(copysign(rr, x), copysign(atan2(ay, ax), y));
    }
    if (ax < K::sqrt_6eps / T(4) && ay < K::sqrt_6eps / T(4)) return z;   // asinh(z) = z + O(z**3)
    T rx, B = T(0), sqrt_a2y2 = T(0), ny;
    bool b_ok;
    hull_(ax, ay, rx, b_ok, B, sqrt_a2y2, ny);
    const T ry = b_ok ? asin(B) : atan2(ny, sqrt_a2y2);
    return complex<T>(copysign(rx, x), copysign(ry, y));
}
// C99 cacos
template <class T> __device__ __forceinline__ complex<T> acos_(complex<T> z) {
    typedef cconst<T> K;
    const T x = z.re, y = z.im, ax = fabs(x), ay = fabs(y);
    const bool sx = signbit(x), sy = signbit(y);
    if (isnan(x) || isnan(y)) {
        if (isinf(x)) return complex<T>(qnan_(x), sy ? ax : -ax);   // nan -+ i inf
        if (isinf(y)) return complex<T>(qnan_(x), -y);              // nan -+ i inf
        if (x == T(0)) return complex<T>(K::pio2, qnan_(x));        // pi/2 + i nan
        return complex<T>(qnan_(x), qnan_(x));
    }
    if (ax > T(1) / K::eps || ay > T(1) / K::eps) {
        const T rr = (ax >= ay ? log_hypot_(ax, ay) : log_hypot_(ay, ax)) + K::ln2;
        return complex<T>(fabs(atan2(y, x)), sy ? rr : -rr);
    }
    if (x == T(1) && y == T(0)) return complex<T>(T(0), -y);
    if (ax < K::sqrt_6eps / T(4) && ay < K::sqrt_6eps / T(4)) return complex<T>(K::pio2 - (x - K::pio2_lo), -y);
    T ry, B = T(0), sqrt_a2x2 = T(0), nx;
    bool b_ok;
    hull_(ay, ax, ry, b_ok, B, sqrt_a2x2, nx);
    const T rx = b_ok ? acos(sx ? -B : B) : atan2(sqrt_a2x2, sx ? -nx : nx);
    return complex<T>(rx, sy ? ry : -ry);
}
// C99 cacosh: +-i acos(z), the sign making the real part >= 0
template <class T> __device__ __forceinline__ complex<T> acosh_(complex<T> z) {
    const complex<T> w = acos_(z);
    if (isnan(w.re) && isnan(w.im)) return w;
    if (isnan(w.re)) return complex<T>(fabs(w.im), w.re);           // +inf + i nan
    if (isnan(w.im)) return complex<T>(w.im, w.re);                // nan + i pi/2 for +-0 + i nan (glibc)
    return complex<T>(fabs(w.im), copysign(w.re, z.im));
}
// x / (x*x + y*y) without overflow or spurious underflow, for |x| or |y| > 1/eps
template <class T> __device__ __forceinline__ T real_recip_(T x, T y) {
    if (isinf(x)) return T(1) / x;
    if (isinf(y)) return x / y / y;
    const int e = ilogb(fmax(fabs(x), fabs(y)));
    const T xs = ldexp(x, -e), ys = ldexp(y, -e);
    return ldexp(xs / (xs * xs + ys * ys), -e);
}
// C99 catanh
template <class T> __device__ __forceinline__ complex<T> atanh_(complex<T> z) {
    typedef cconst<T> K;
    const T x = z.re, y = z.im, ax = fabs(x), ay = fabs(y);
    if (y == T(0) && ax <= T(1)) return complex<T>(atanh(x), y);
    if (x == T(0)) return complex<T>(x, atan(y));
    if (isnan(x) || isnan(y)) {
        if (isinf(x)) return complex<T>(copysign(T(0), x), qnan_(x));                // +-0 + i nan
        if (isinf(y)) return complex<T>(copysign(T(0), x), copysign(K::pio2, y));    // +-0 +- i pi/2
        return complex<T>(qnan_(x), qnan_(x));
    }
    if (ax > T(1) / K::eps || ay > T(1) / K::eps) return complex<T>(real_recip_(x, y), copysign(K::pio2, y));
    if (ax < K::sqrt_3eps / T(2) && ay < K::sqrt_3eps / T(2)) return z;   // atanh(z) = z + O(z**3)
    T rx;
    if (ax == T(1) && ay < K::eps) {
        rx = (K::ln2 - log(ay)) * T(0.5);
    } else {
        const T d = ax - T(1), sq = ay < K::sqrt_min ? d * d : d * d + ay * ay;
        rx = log1p(T(4) * ax / sq) * T(0.25);
    }
    T ry;
    if (ax == T(1)) ry = atan2(T(2), -ay) * T(0.5);
    else if (ay < K::eps) ry = atan2(T(2) * ay, (T(1) - ax) * (T(1) + ax)) * T(0.5);
    else ry = atan2(T(2) * ay, (T(1) - ax) * (T(1) + ax) - ay * ay) * T(0.5);
    return complex<T>(copysign(rx, x), copysign(ry, y));
}
// asin z = i conj(asinh(i conj z)), atan z = i conj(atanh(i conj z)): swap the parts around each
template <class T> __device__ __forceinline__ complex<T> asin_(complex<T> z) {
    const complex<T> w = asinh_(complex<T>(z.im, z.re));
    return complex<T>(w.im, w.re);
}
template <class T> __device__ __forceinline__ complex<T> atan_(complex<T> z) {
    const complex<T> w = atanh_(complex<T>(z.im, z.re));
    return complex<T>(w.im, w.re);
}

// NumPy's npy_cpow: a**0 = 1; 0**b = 0 for real(b) > 0, else nan; integer b with |b| < 100 by repeated
// multiplication (then the reciprocal for b < 0); otherwise the C library's cpow, exp(b log a).
template <class T> __device__ __forceinline__ complex<T> pow_(complex<T> a, complex<T> b) {
    const T br = b.re, bi = b.im;
    if (br == T(0) && bi == T(0)) return complex<T>(T(1), T(0));
    if (a.re == T(0) && a.im == T(0)) {
        if (br > T(0)) return complex<T>(T(0), T(0));
        return complex<T>(qnan_(br), qnan_(br));
    }
    if (bi == T(0) && br > T(-100) && br < T(100) && T(int(br)) == br) {
        const int n = int(br);
        if (n == 1) return a;
        if (n == 2) return a * a;
        if (n == 3) return a * (a * a);
        const int k = n < 0 ? -n : n;
        complex<T> r(T(1), T(0)), p = a;
        for (int mask = 1;;) {
            if (k & mask) r = r * p;
            mask <<= 1;
            if (k < mask) break;
            p = p * p;
        }
        return n < 0 ? complex<T>(T(1), T(0)) / r : r;
    }
    return exp_(b * log_(a));
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
    // sqrt(z) = 2 sqrt(z / 4) where |a| + |z| could overflow
    const bool scale = fabs(a) >= cconst<T>::max * T(0.25) || fabs(b) >= cconst<T>::max * T(0.25);
    if (scale) { a *= T(0.25); b *= T(0.25); }
    complex<T> r;
    if (a >= T(0)) { T t = sqrt((a + hypot(a, b)) * T(0.5)); r = complex<T>(t, b / (T(2) * t)); }
    else { T t = sqrt((-a + hypot(a, b)) * T(0.5)); r = complex<T>(fabs(b) / (T(2) * t), copysign(t, b)); }
    return scale ? complex<T>(T(2) * r.re, T(2) * r.im) : r;
}
template <class T> __device__ __forceinline__ complex<T> square_(complex<T> z) { return z * z; }
template <class T> __device__ __forceinline__ complex<T> reciprocal_(complex<T> z) { return complex<T>(T(1), T(0)) / z; }

}  // namespace gpunb
