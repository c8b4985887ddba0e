"""The continuous distributions' device code (``dist`` kernels of :mod:`.codegen`): the
uniform, normal and exponential transforms of Philox4x32 words (float32: ``ln_u``, Box-Muller
with the hardware's sine and cosine; float64 normals and exponentials: the ziggurat of
:mod:`.ziggurat`), Philox4x3210's integers, and the library the rejection samplers share
(gamma, beta, poisson, binomial), with each kernel's body. Von Mises, Zipf... are in
:mod:`.dists`.

Pure: imports nothing from CUDA, returns strings.
"""

from __future__ import annotations

import numpy as np

from . import ziggurat

# ln u's polynomial: atanh(s) = s + s**3 p(s*s), p(x) = (c2 x + c1) x + c0, near-minimax for
# |s| <= 3 - 2 sqrt(2) (0.02 ulp); tests/test_random.py evaluates ln_u with these in float32
LN_U_POLY = (0.14934366941452026, 0.19988836348056793, 0.3333338797092438)
# sqrt(1/2)'s bits: u's exponent is taken so that its mantissa m is in [sqrt(1/2), sqrt(2))
LN_U_SPLIT = 0x3F3504F3

LN_U = r"""
// ln u for u = (w + 1/2) 2**-32 as cuRAND makes it, within 6 ulp everywhere and never
// positive, with no branch (float32 normals and exponentials are bound by their instruction
// count; a branch on u diverges in every warp): u = 2**e m, m in [sqrt(1/2), sqrt(2)),
// ln u = e ln 2 + 2 atanh(s), s = (m - 1) / (m + 1) in [-0.1716, 0.1716] (m - 1 exact), and
// atanh(s) = s + s**3 p(s*s). Small exponentials and radii (u near 1: e = 0) keep their
// relative accuracy, where the hardware's __logf is off by up to 2**-21.4 absolute.
__device__ __forceinline__ float ln_u(u32 w) {
    const float u = fmaf((float)w, 2.3283064365386963e-10f, 1.1641532182693481e-10f);
    const int bits = __float_as_int(u), ebits = (bits - %(split)d) & (int)0xff800000u;
    const float m = __int_as_float(bits - ebits);
    const int e = ebits >> 23;                  // (an arithmetic shift)
    float r;
    asm("rcp.approx.ftz.f32 %%0, %%1;" : "=f"(r) : "f"(m + 1.0f));
    const float s = (m - 1.0f) * r, s2 = s * s;
    const float p = fmaf(fmaf(%(c2).17gf, s2, %(c1).17gf), s2, %(c0).17gf);
    const float t = fmaf(s * s2, p, s);
    return fmaf((float)e, 0.6931471805599453f, t + t);
}

""" % {"split": LN_U_SPLIT, "c2": LN_U_POLY[0], "c1": LN_U_POLY[1], "c0": LN_U_POLY[2]}

LIB = r"""
#define TWO_M53 (1.0 / 9007199254740992.0)
// Uniforms in (0, 1] (log-safe) and [0, 1) from 64- and 32-bit words.
__device__ __forceinline__ double open_u(u64 x) { return ((double)(x >> 11) + 1.0) * TWO_M53; }
__device__ __forceinline__ double closed_u(u64 x) { return (double)(x >> 11) * TWO_M53; }
__device__ __forceinline__ float open_uf(u32 x) { return ((float)(x >> 8) + 1.0f) * (1.0f / 16777216.0f); }
__device__ __forceinline__ float closed_uf(u32 x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }
// [1, 2) from a word's top 23 bits, without an int-to-float conversion (a slow instruction)
__device__ __forceinline__ float unit_bits(u32 x) { return __uint_as_float(0x3f800000u | (x >> 9)); }
""" + LN_U + r"""// Box-Muller's radius sqrt(-2 ln u): the hardware's square root (within 2**-23 relative)
__device__ __forceinline__ float bm_radius(u32 w) {
    float r;
    asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(-2.0f * ln_u(w)));
    return r;
}

// One standard normal from two words (Box-Muller, cosine branch), in double.
__device__ __forceinline__ double normal1(u64 x, u64 y) {
    return sqrt(-2.0 * log(open_u(x))) * cospi(2.0 * closed_u(y));
}

// Marsaglia-Tsang gamma(shape) with scale 1 for element b: its first attempt uses block
// (b, word 2 + w0), attempt j block (b, word 2 + w0 + j * step).
__device__ double gamma1(const rng_args& a, u64 b, double shape, u64 w0, u64 step) {
    if (shape <= 0.0) return 0.0;
    u64 c[4];
    block(a, b, w0, c);
    double boost = 1.0;
    if (shape < 1.0) {   // gamma(s) = gamma(s + 1) * U**(1/s)
        boost = pow(open_u(c[3]), 1.0 / shape);
        shape += 1.0;
    }
    const double d = shape - 1.0 / 3.0, cc = 1.0 / sqrt(9.0 * d);
    for (u64 j = 1;; ++j) {
        const double x = normal1(c[0], c[1]);
        double v = 1.0 + cc * x;
        if (v > 0.0) {
            v = v * v * v;
            const double u = open_u(c[2]);
            if (u < 1.0 - 0.0331 * (x * x) * (x * x) || log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
                return d * v * boost;
        }
        block(a, b, w0 + j * step, c);
    }
}

// Binomial(n, p): Knuth's splitting by beta order statistics (each split halves n; betas as
// gamma ratios on words (t + 1) << 32 + ...) down to n * min(p, 1 - p) < 30, then NumPy's
// inversion on blocks (b, word 2 + 0, 1, 2, ...).
__device__ double binomial1(const rng_args& a, u64 b, double n, double p) {
    if (n <= 0.0 || p <= 0.0) return 0.0;
    if (p >= 1.0) return n;
    double k = 0.0;
    for (u64 t = 1; n * fmin(p, 1.0 - p) >= 30.0; ++t) {
        const double aa = floor(0.5 * n) + 1.0, bb = n + 1.0 - aa;
        const double x = gamma1(a, b, aa, t << 32, 2), y = gamma1(a, b, bb, (t << 32) + 1, 2);
        const double X = x / (x + y);
        if (X >= p) { n = aa - 1.0; p = p / X; }
        else { k += aa; n = bb - 1.0; p = (p - X) / (1.0 - X); }
    }
    const bool flip = p > 0.5;
    const double pp = flip ? 1.0 - p : p, q = 1.0 - pp, qn = exp(n * log1p(-pp)), np_ = n * pp;
    const double bound = fmin(n, np_ + 10.0 * sqrt(np_ * q + 1.0));
    u64 c[4]; block(a, b, 0, c);
    int lane = 0; u64 j = 0;
    double X = 0.0, px = qn, U = closed_u(c[lane++]);
    while (U > px) {
        X += 1.0;
        if (X > bound) {
            X = 0.0; px = qn;
            if (lane == 4) { block(a, b, ++j, c); lane = 0; }
            U = closed_u(c[lane++]);
        } else {
            U -= px;
            px = ((n - X + 1.0) * pp * px) / (X * q);
        }
    }
    return k + (flip ? n - X : X);
}

// Poisson(lam): multiplication for lam < 10, else PTRS (Hormann 1993, as NumPy).
__device__ double poisson1(const rng_args& a, u64 b, double lam, u64 first[4]) {
    if (lam <= 0.0) return 0.0;
    u64 c[4] = {first[0], first[1], first[2], first[3]};
    int lane = 0;
    u64 j = 0;
    if (lam < 10.0) {
        const double enlam = exp(-lam);
        double prod = 1.0;
        long long k = 0;
        for (;;) {
            if (lane == 4) { block(a, b, ++j, c); lane = 0; }
            prod *= closed_u(c[lane++]);
            if (prod <= enlam) return (double)k;
            ++k;
        }
    }
    const double slam = sqrt(lam), loglam = log(lam), bb = 0.931 + 2.53 * slam;
    const double aa = -0.059 + 0.02483 * bb, invalpha = 1.1239 + 1.1328 / (bb - 3.4);
    const double vr = 0.9277 - 3.6224 / (bb - 2.0);
    for (;;) {
        if (lane > 2) { block(a, b, ++j, c); lane = 0; }
        const double U = closed_u(c[lane]) - 0.5, V = closed_u(c[lane + 1]);
        lane += 2;
        const double us = 0.5 - fabs(U);
        const double k = floor((2.0 * aa / us + bb) * U + lam + 0.43);
        if (us >= 0.07 && V <= vr) return k;
        if (k < 0.0 || (us < 0.013 && V > us)) continue;
        if (log(V) + log(invalpha) - log(aa / (us * us) + bb) <= -lam + k * loglam - lgamma(k + 1.0))
            return k;
    }
}
"""


PHILOX32 = r"""
// The ten rounds' keys, made by the host (k + r * Weyl constant): each round's xor reads
// its key from the parameter space as an operand, where adding the constants per thread
// cost 18 of the kernel's ~150 instructions (float32 normals are bound by their count).
struct philox32_keys { u32 k[20]; };

__device__ __forceinline__ void philox32(u32 c[4], const philox32_keys& rk) {
    #pragma unroll
    for (int r = 0; r < 10; ++r) {
        // high and low words as two multiplies (1% faster than one 64-bit product on an H100)
        const u32 h0 = __umulhi(0xD2511F53u, c[0]), l0 = 0xD2511F53u * c[0];
        const u32 h1 = __umulhi(0xCD9E8D57u, c[2]), l1 = 0xCD9E8D57u * c[2];
        const u32 n0 = h1 ^ c[1] ^ rk.k[2 * r], n2 = h0 ^ c[3] ^ rk.k[2 * r + 1];
        c[0] = n0; c[1] = l1; c[2] = n2; c[3] = l0;
    }
}

// Element e's further words (a rejected word's next attempts, j = 1, 2...): the block
// (e, 2**31 | j << 8 | e >> 32, S), which a draw's own blocks (B < 2**63) never reach, its
// round keys made from the key (k0, k1) where they are needed (rarely: no table).
__device__ __forceinline__ void further_block(u32 w[4], long long e, u32 j, u64 S, u32 k0, u32 k1) {
    w[0] = (u32)e; w[1] = 0x80000000u | (j << 8) | (u32)((u64)e >> 32); w[2] = (u32)S; w[3] = (u32)(S >> 32);
    #pragma unroll
    for (int r = 0; r < 10; ++r) {
        const u32 h0 = __umulhi(0xD2511F53u, w[0]), l0 = 0xD2511F53u * w[0];
        const u32 h1 = __umulhi(0xCD9E8D57u, w[2]), l1 = 0xCD9E8D57u * w[2];
        const u32 n0 = h1 ^ w[1] ^ (k0 + r * 0x9E3779B9u), n2 = h0 ^ w[3] ^ (k1 + r * 0xBB67AE85u);
        w[0] = n0; w[1] = l1; w[2] = n2; w[3] = l0;
    }
}
"""


def per_thread(what: str, dtype) -> int:
    """The Philox blocks a thread of ``what``'s dist kernel draws (the launch's grid: the
    blocks over THREADS times this): the ziggurat's thread blocks draw several tiles."""
    itemsize = np.dtype(dtype).itemsize
    n = BLOCKS_PER_THREAD[itemsize]
    return n * ziggurat.TILES if itemsize == 8 and what in ("normal", "exponential") else n


# Philox blocks a thread of the normal, exponential and uniform kernels, by the dtype's size
# (the launch's grid: the blocks over THREADS times this). SASS on the fast path, instructions
# a block for 1/2/4 (sm_90): float32 normal 145/123/111, exponential 160/143/133, uniform
# 97/79/69, within 32 registers; float64 normal 273/260/260 (38 registers at 4).
BLOCKS_PER_THREAD = {4: 4, 8: 2}


def kernel(k, per: int, THREADS: int, _CTYPE: dict) -> str:  # noqa: N803 (the template's names)
    """The ``dist`` kernel of ``k``: element e from block S + e / ``per`` (fresh blocks: the
    host starts at lane 0), ``THREADS`` threads a block, ``_CTYPE`` the dtypes' C types."""
    T = _CTYPE[k.dtype.name]
    f32 = k.dtype == np.float32
    bpt = BLOCKS_PER_THREAD[k.dtype.itemsize]
    if k.what in ("normal", "exponential", "uniform"):
        # Philox4x32-10 blocks (4 words each; a quarter of a 4x64 block's multiply work per
        # word): counter (B, first 4x64 block of the draw), key derived from the 4x64 key.
        if f32:
            u = {"normal": """
        // cuRAND's Box-Muller (CuPy's and torch's normals) with the radius of bm_radius (an
        // accurate logf and sqrtf made the kernel compute-bound), and the angle's sine and
        // cosine by the hardware's __sincosf as cuRAND's (within 2**-21.4 on [-pi, pi]; an
        // angle in [-pi, pi) gives the distribution [0, 2 pi) does).
        #pragma unroll
        for (int q = 0; q < 2; ++q) {
            float s, co;
            const float r = bm_radius(w[2 * q]);
            __sincosf(fmaf(unit_bits(w[2 * q + 1]), 6.2831853071795865f, -9.4247779607693797f), &s, &co);
            v[2 * q] = r * co; v[2 * q + 1] = r * s;
        }""", "exponential": """
        #pragma unroll
        for (int h = 0; h < 4; ++h) v[h] = -ln_u(w[h]);""",
                 "uniform": """
        #pragma unroll
        for (int h = 0; h < 4; ++h) v[h] = closed_uf(w[h]);"""}[k.what]
        elif k.what == "uniform":
            u = """
        v[0] = closed_u(x0); v[1] = closed_u(x1);"""
        else:           # float64 normals and exponentials: the ziggurat (:mod:`.ziggurat`)
            u = ziggurat.fast(k.what, THREADS, bpt)
        zig = not f32 and k.what != "uniform"
        post = ziggurat.patch(k.what, THREADS, bpt) if zig else ""
        if zig:     # ziggurat.TILES tiles a thread block, then its queue of slow elements
            head = (f"    {ziggurat.table_load(k.what, THREADS)}\n"
                    f"    for (int tile = 0; tile < {ziggurat.TILES}; ++tile) {{\n"
                    f"    const long long B0 = (blockIdx.x * (long long){ziggurat.TILES} + tile) * {THREADS * bpt}"
                    f" + threadIdx.x;\n    if (B0 < a.nblocks) {{")
        else:
            head = (f"    const long long B0 = blockIdx.x * (long long){THREADS * bpt} + threadIdx.x;\n"
                    f"    if (B0 >= a.nblocks) return;")
        affine = ("v[h] = scale * v[h];" if k.what == "exponential" else
                  "v[h] = loc + scale * v[h];")
        C = "float" if f32 else "double"
        store = ("float4 t; t.x = v[0]; t.y = v[1]; t.z = v[2]; t.w = v[3];" if f32 else
                 "double2 t; t.x = v[0]; t.y = v[1];")
        vec = "float4" if f32 else "double2"
        return PHILOX32 + (ziggurat.library(k.what) if zig else "") + f"""
extern "C" __global__ void __launch_bounds__({THREADS}) {k.name}({T}* __restrict__ out, const rng_args a,
                                                                const philox32_keys rk) {{
    // {bpt} Philox blocks a thread, {THREADS} apart (each store instruction stays
    // coalesced): the index, the round keys' loads and the store set-up are shared (a
    // fifth of a float32 normal's instructions). Blocks past the last are computed and not
    // stored (pure: cheaper than a branch per block).
{head}
    {C} vv[{bpt}][{per}];
    #pragma unroll
    for (int part = 0; part < {bpt}; ++part) {{
        const long long B = B0 + part * {THREADS};
        u32 w[4] = {{(u32)B, (u32)((u64)B >> 32), (u32)a.c[0], (u32)(a.c[0] >> 32)}};
        philox32(w, rk);
        const u64 x0 = w[0] | ((u64)w[1] << 32), x1 = w[2] | ((u64)w[3] << 32);
        (void)x0; (void)x1;
        {C}* v = vv[part];
        {u}
    }}
    if (a.f[2] != 0.0) {{       // loc and scale given: converted only then (per thread)
        const {C} loc = ({C})a.f[0], scale = ({C})a.f[1];
        (void)loc;
        #pragma unroll
        for (int part = 0; part < {bpt}; ++part) {{
            {C}* v = vv[part];
            #pragma unroll
            for (int h = 0; h < {per}; ++h) {affine}
        }}
    }}
    if ((B0 + {(bpt - 1) * THREADS} + 1) * {per} <= a.n && a.o == 0) {{
        #pragma unroll
        for (int part = 0; part < {bpt}; ++part) {{   // whole and aligned: vectors
            const {C}* v = vv[part];
            {store}
            *reinterpret_cast<{vec}*>(out + (B0 + part * {THREADS}) * {per}) = t;
        }}
    }} else {{
        #pragma unroll
        for (int part = 0; part < {bpt}; ++part) {{
            const long long e0 = (B0 + part * {THREADS}) * {per};
            #pragma unroll
            for (int h = 0; h < {per}; ++h) if (e0 + h < a.n) out[e0 + h] = vv[part][h];
        }}
    }}{"}}" if zig else ""}{post}
}}
"""
    # one element per block, parameters from arrays of n elements (broadcast by the host)
    if k.what == "gamma":
        value = "gamma1(a, B, s0, 0, 1)"
        params = "const double* __restrict__ p0"
    elif k.what == "beta":
        value = ("0.0; { const double x = gamma1(a, B, s0, 0, 2), y = gamma1(a, B, s1, 1, 2); "
                 "r = (x + y > 0.0) ? x / (x + y) : (s0 >= s1 ? 1.0 : 0.0); }")
        params = "const double* __restrict__ p0, const double* __restrict__ p1"
    elif k.what == "binomial":
        value = "binomial1(a, B, s0, s1)"
        params = "const double* __restrict__ p0, const double* __restrict__ p1"
    else:
        value = "poisson1(a, B, s0, c)"
        params = "const double* __restrict__ p0"
    return f"""
extern "C" __global__ void __launch_bounds__({THREADS}) {k.name}({T}* __restrict__ out, {params}, const rng_args a) {{
    const long long B = blockIdx.x * (long long){THREADS} + threadIdx.x;
    if (B >= a.n) return;
    // a parameter is an array of n (a null pointer: the scalar a.f[0] / a.f[1])
    const double s0 = p0 ? p0[B] : a.f[0]{", s1 = p1 ? p1[B] : a.f[1]" if k.what in ("beta", "binomial") else ""};
    u64 c[4]; block(a, B, 0, c);
    double r = {value};
    out[B] = ({T})r;
}}
"""


# Philox4x32 blocks a thread of the integer kernel (as float64's draws)
INT_BLOCKS_PER_THREAD = 2
_VEC = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "uint2", 16: "uint4"}


def int_chunks(k) -> tuple[int, int]:
    """``(E, C)``: a thread's elements of one Philox block are stored as ``C`` chunks of ``E``
    (at most 16 bytes each: a thread storing 32 contiguous bytes wrote at half the speed)."""
    per = 4 if k.width == 32 else 2
    E = min(per, 16 // k.dtype.itemsize)
    return E, per // E


def integer_kernel(k, THREADS: int, _CTYPE: dict) -> str:  # noqa: N803 (the template's names)
    """The ``dist`` kernel of integers (``k.what == "int"``: :class:`gpunb.random.Philox4x3210`'s
    ``integers``, ``bytes`` and ``random_raw``): element ``e`` is ``off + `` Lemire's
    multiply-shift of word ``e`` of the Philox4x32-10 blocks ``(B, S)`` (``k.width`` 32: a
    32-bit word each, four elements a block; 64: a pair of words, two a block; ``k.full``: the
    64-bit word itself). A rejected word (under 2**-16 of them for the 32-bit words, which
    serve ranges below 2**16 and the full 32-bit one) is drawn again from blocks whose counter
    word 1 has its top bit set, which a draw's blocks (``B < 2**63``) never reach: elements stay
    independent and the stream's advance fixed, unlike NumPy's sequential rejection."""
    T = _CTYPE[k.dtype.name]
    per = 4 if k.width == 32 else 2
    bpt = INT_BLOCKS_PER_THREAD
    if k.width == 32:
        # a.rng = range + 1 (up to 2**32), a.threshold = 2**32 mod it: accept the low half >= it
        take = "const u64 m = (u64)w[q] * a.rng; if ((u32)m >= (u32)a.threshold) return m >> 32;"
        word = "const u64 m = (u64)w[h] * a.rng;"
        value = "(m >> 32)"
        accept = "(u32)m >= (u32)a.threshold"
        tries = 4
    else:
        take = ("const u64 x = w[2 * q] | ((u64)w[2 * q + 1] << 32); "
                "if (x * a.rng >= a.threshold) return __umul64hi(x, a.rng);")
        word = "const u64 x = w[2 * h] | ((u64)w[2 * h + 1] << 32);"
        value = "x" if k.full else "__umul64hi(x, a.rng)"
        accept = "true" if k.full else "x * a.rng >= a.threshold"
        tries = 2
    E, C = int_chunks(k)
    vec = _VEC[E * k.dtype.itemsize]
    # word h of part p of thread t is element Bp per + (h / E) THREADS E + t E + h % E (Bp: the
    # part's first block): each store instruction writes consecutive E-element chunks
    element = f"Bp * {per} + (h / {E}) * {THREADS * E} + threadIdx.x * {E} + h % {E}"
    stores = "\n".join(
        f"{{ {vec} t; memcpy(&t, reinterpret_cast<const char*>(vv[part]) + {c * E * k.dtype.itemsize}, "
        f"{E * k.dtype.itemsize}); reinterpret_cast<{vec}*>(out + Bp * {per} + {c * THREADS * E})[threadIdx.x] = t; }}"
        for c in range(C))
    return PHILOX32 + f"""
// Element e's further attempts: rare, so out of line.
__device__ __noinline__ u64 redraw(u64 S, u64 rng, u64 threshold, u32 k0, u32 k1, long long e) {{
    for (u32 j = 1; ; ++j) {{
        u32 w[4];
        further_block(w, e, j, S, k0, k1);
        #pragma unroll
        for (int q = 0; q < {tries}; ++q) {{ {take.replace("a.rng", "rng").replace("a.threshold", "threshold")} }}
    }}
}}

extern "C" __global__ void __launch_bounds__({THREADS}) {k.name}({T}* __restrict__ out, const rng_args a,
                                                                const philox32_keys rk) {{
    const long long B0 = blockIdx.x * (long long){THREADS * bpt} + threadIdx.x;
    if (B0 >= a.nblocks) return;
    __align__(16) {T} vv[{bpt}][{per}];
    u32 rej = 0;        // the elements whose word was rejected, patched after the stores
    #pragma unroll
    for (int part = 0; part < {bpt}; ++part) {{
        const long long B = B0 + part * {THREADS};
        u32 w[4] = {{(u32)B, (u32)((u64)B >> 32), (u32)a.c[0], (u32)(a.c[0] >> 32)}};
        philox32(w, rk);
        #pragma unroll
        for (int h = 0; h < {per}; ++h) {{
            {word}
            vv[part][h] = ({T})(a.off + {value});
            if (!({accept})) rej |= 1u << (part * {per} + h);
        }}
    }}
    if ((blockIdx.x + 1) * (long long){THREADS * bpt * per} <= a.n && a.o == 0) {{
        #pragma unroll
        for (int part = 0; part < {bpt}; ++part) {{   // whole and aligned: vectors
            const long long Bp = blockIdx.x * (long long){THREADS * bpt} + part * {THREADS};
            {stores}
        }}
    }} else {{
        #pragma unroll
        for (int part = 0; part < {bpt}; ++part) {{
            const long long Bp = blockIdx.x * (long long){THREADS * bpt} + part * {THREADS};
            #pragma unroll
            for (int h = 0; h < {per}; ++h) {{
                const long long e = {element};
                if (e < a.n) out[e] = vv[part][h];
            }}
        }}
    }}
    while (rej) {{
        const int i = __ffs(rej) - 1, h = i % {per};
        rej &= rej - 1;
        const long long Bp = blockIdx.x * (long long){THREADS * bpt} + (i / {per}) * {THREADS};
        const long long e = {element};
        if (e < a.n) out[e] = ({T})(a.off + redraw(a.c[0], a.rng, a.threshold, (u32)a.k[0], (u32)a.k[1], e));
    }}
}}
"""
