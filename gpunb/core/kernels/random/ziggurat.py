"""float64 normals and exponentials by the ziggurat (Marsaglia and Tsang's, 256 layers, as
NumPy's ``random_standard_normal`` / ``random_standard_exponential`` draw them from one
64-bit word): the fast path is a table lookup, a multiply and a compare; the rest (1.5% of
normals, 2.2% of exponentials: the wedges and the tail, which need ``exp`` or ``log1p``)
goes to a queue of the thread block's, finished after its stores, drawing further words
from blocks of their own. Box-Muller in double precision left these kernels bound by their
instruction count (~100 a double: 0.53 ms for 2**27 normals on an H100, 0.62 of the write
bandwidth); the ziggurat's fast path needs a third of that.

The layers come from (r, v): the base layer's edge r and the common area v of the 256
layers (the base's rectangle plus the tail), solved here once in 50 digits (mpmath) for the
closure x_0 = 0; the tables are made from them in float64 by the usual recursion, within
1e-14 of NumPy's (whose tables are the same construction). Pure: returns strings.
"""

from __future__ import annotations

import functools
import math

# (r, v) of the 256-layer ziggurats: the normal's exp(-x**2 / 2) and the exponential's exp(-x)
NORMAL_R, NORMAL_V = 3.654152885361009, 0.004928673233974655
EXP_R, EXP_V = 7.69711747013105, 0.003949659822581557
NORMAL_SCALE, EXP_SCALE = 2.0 ** 52, 2.0 ** 53      # the word's bits a draw keeps


def _f_normal(x):
    return math.exp(-0.5 * x * x)


def _f_exp(x):
    return math.exp(-x)


def _inv_normal(y):
    return math.sqrt(-2.0 * math.log(y))


def _inv_exp(y):
    return -math.log(y)


@functools.lru_cache(maxsize=2)
def tables(kind: str) -> tuple[list[int], list[float], list[float]]:
    """``(k, w, f)`` of the ``"normal"`` or ``"exponential"`` ziggurat: a draw's integer part
    ``i`` of layer ``idx`` is ``x = i * w[idx]``, accepted at once when ``i < k[idx]`` (inside
    the layer's rectangle under the next one); ``f[idx]`` is the density at the layer's
    edge (the wedge test)."""
    r, v, f, inv, m = ((NORMAL_R, NORMAL_V, _f_normal, _inv_normal, NORMAL_SCALE) if kind == "normal"
                       else (EXP_R, EXP_V, _f_exp, _inv_exp, EXP_SCALE))
    k, w, fs = [0] * 256, [0.0] * 256, [0.0] * 256
    q = v / f(r)                    # the base layer's width: its rectangle and the tail
    k[0], w[0], fs[0] = int((r / q) * m), q / m, 1.0
    w[255], fs[255] = r / m, f(r)
    x = t = r
    for i in range(254, 0, -1):
        x = inv(v / x + f(x))
        k[i + 1] = int((x / t) * m)
        t = x
        fs[i] = f(x)
        w[i] = x / m
    return k, w, fs


def _array(ctype: str, name: str, values) -> str:
    body = ", ".join((f"{v}ULL" if isinstance(v, int) else repr(float(v))) for v in values)
    return f"__device__ const {ctype} {name}[256] = {{{body}}};\n"


@functools.lru_cache(maxsize=2)
def library(kind: str) -> str:
    """The tables and the slow path of ``kind``'s kernel (CUDA source, after continuous.LIB's
    uniforms and PHILOX32's blocks)."""
    k, w, f = tables(kind)
    p = "ZN" if kind == "normal" else "ZE"
    src = _array("unsigned long long", p + "K", k) + _array("double", p + "W", w) + _array("double", p + "F", f)
    src += r"""
struct zig_entry { u64 k; double w; };

// Element e's further 64-bit words, two a block of further_block's (continuous.PHILOX32).
struct zig_words { u32 w[4]; int pos; u32 j; long long e; u64 S; u32 k0, k1; };
__device__ __forceinline__ u64 zig_next(zig_words& s) {
    if (s.pos == 2) {
        further_block(s.w, s.e, s.j, s.S, s.k0, s.k1);
        ++s.j; s.pos = 0;
    }
    const u64 x = s.w[2 * s.pos] | ((u64)s.w[2 * s.pos + 1] << 32);
    ++s.pos;
    return x;
}
"""
    if kind == "normal":
        src += r"""
// NumPy's random_standard_normal from its first word r on (the word the fast path rejected).
__device__ __noinline__ double zig_slow(u64 r, u64 S, u32 k0, u32 k1, long long e) {
    zig_words s; s.pos = 2; s.j = 1; s.e = e; s.S = S; s.k0 = k0; s.k1 = k1;
    for (;;) {
        const int idx = (int)(r & 0xff);
        r >>= 8;
        const u64 rabs = (r >> 1) & 0x000fffffffffffffULL;
        double x = (double)rabs * ZNW[idx];
        if (r & 1) x = -x;
        if (rabs < ZNK[idx]) return x;
        if (idx == 0) {         // the tail beyond r: Marsaglia's method
            for (;;) {
                const double xx = -(1.0 / %(r)r) * log1p(-closed_u(zig_next(s)));
                const double yy = -log1p(-closed_u(zig_next(s)));
                if (yy + yy > xx * xx) return ((rabs >> 8) & 1) ? -(%(r)r + xx) : %(r)r + xx;
            }
        }
        if ((ZNF[idx - 1] - ZNF[idx]) * closed_u(zig_next(s)) + ZNF[idx] < exp(-0.5 * x * x)) return x;
        r = zig_next(s);
    }
}
""" % {"r": NORMAL_R}
    else:
        src += r"""
// NumPy's random_standard_exponential from its first word r on.
__device__ __noinline__ double zig_slow(u64 r, u64 S, u32 k0, u32 k1, long long e) {
    zig_words s; s.pos = 2; s.j = 1; s.e = e; s.S = S; s.k0 = k0; s.k1 = k1;
    for (;;) {
        r >>= 3;
        const int idx = (int)(r & 0xff);
        r >>= 8;
        const double x = (double)r * ZEW[idx];
        if (r < ZEK[idx]) return x;
        if (idx == 0) return %(r)r - log1p(-closed_u(zig_next(s)));
        if ((ZEF[idx - 1] - ZEF[idx]) * closed_u(zig_next(s)) + ZEF[idx] < exp(-x)) return x;
        r = zig_next(s);
    }
}
""" % {"r": EXP_R}
    return src


# A thread block draws TILES tiles of 1024 elements, queueing the words its fast path
# rejects (expected: 120 of its 8192 normals, 180 exponentials), and then finishes them with
# all its threads: the slow path's latency (a Philox block, exp) is paid once a thread block.
# H100, 2**27 float64 normals / exponentials, ms: 1 tile 0.53 / 0.49 (the tail held each
# block's resources for most of its life), 4 tiles 0.453 / 0.449, 8 tiles 0.440 / 0.435,
# 16 tiles 0.547 / 0.628; the fast path alone 0.330 (the write bandwidth). Past the queue
# (not expected), a thread finishes its own words after it.
TILES = 8
QUEUE = 512
assert TILES * 4 <= 64      # the overflow bits of a thread: its tiles' four words


def fast(kind: str, THREADS: int, bpt: int) -> str:   # noqa: N803
    """The fast path of ``kind`` for the dist kernel's two 64-bit words ``x0``, ``x1`` of a
    block (part ``part``): ``v[h]``; a rejected word goes to the thread block's queue, or
    when that is full (not expected), through the slow path at once."""
    if kind == "normal":
        body = """
            u64 r = h ? x1 : x0;
            const zig_entry z = zt[r & 0xff];
            r >>= 8;
            const u64 rabs = (r >> 1) & 0x000fffffffffffffULL;
            const double x = (double)rabs * z.w;
            v[h] = (r & 1) ? -x : x;
            if (rabs >= z.k) {"""
    else:
        body = """
            u64 r = (h ? x1 : x0) >> 3;
            const zig_entry z = zt[r & 0xff];
            r >>= 8;
            v[h] = (double)r * z.w;
            if (r >= z.k) {"""
    return f"""
        #pragma unroll
        for (int h = 0; h < 2; ++h) {{{body}
                const int q = atomicAdd(&zq_n, 1);
                if (q < {QUEUE}) {{ zq_word[q] = h ? x1 : x0; zq_e[q] = (int)((B - B0 + threadIdx.x + tile * {THREADS * bpt}) * 2 + h); }}
                else rej |= 1ull << (tile * {2 * bpt} + part * 2 + h);
            }}
        }}"""


def table_load(kind: str, THREADS: int) -> str:   # noqa: N803
    """The thread block's copy of the fast path's (k, w) pairs into shared memory (a random
    layer a lane: shared memory's banks serve them, where global memory's cache lines did
    not), before any thread returns."""
    p = "ZN" if kind == "normal" else "ZE"
    copy = (f"if (threadIdx.x < 256) {{ zt[threadIdx.x].k = {p}K[threadIdx.x]; zt[threadIdx.x].w = {p}W[threadIdx.x]; }}"
            if THREADS >= 256 else
            f"for (int i = threadIdx.x; i < 256; i += {THREADS}) {{ zt[i].k = {p}K[i]; zt[i].w = {p}W[i]; }}")
    return f"""
    __shared__ zig_entry zt[256];
    __shared__ u64 zq_word[{QUEUE}];
    __shared__ int zq_e[{QUEUE}], zq_n;
    {copy}
    if (threadIdx.x == 0) zq_n = 0;
    __syncthreads();
    unsigned long long rej = 0;     // (words past the queue: tile, part and word, 64 at most)"""


def patch(kind: str, THREADS: int, bpt: int) -> str:   # noqa: N803
    """After the stores: each queued element, finished by :func:`library`'s slow path,
    scaled and stored, by the thread block's threads together (where each warp with a
    rejection paid for a slow path of its own, 2**27 normals took 0.73 against 0.33 ms)."""
    scaled = "scale * x" if kind == "exponential" else "loc + scale * x"
    return f"""
    __syncthreads();        // (the queue complete; the stores it overwrites made)
    const long long E0 = blockIdx.x * (long long){TILES * THREADS * bpt * 2};     // the thread block's first
    for (int q = threadIdx.x; q < min(zq_n, {QUEUE}); q += {THREADS}) {{
        const long long e = E0 + zq_e[q];
        if (e >= a.n) continue;
        double x = zig_slow(zq_word[q], a.c[0], (u32)a.k[0], (u32)a.k[1], e);
        if (a.f[2] != 0.0) {{ const double loc = a.f[0], scale = a.f[1]; (void)loc; x = {scaled}; }}
        out[e] = x;
    }}
    while (rej) {{
        const int i = __ffsll(rej) - 1;
        rej &= rej - 1;
        const int tile = i / {2 * bpt}, part = (i / 2) % {bpt};
        const long long B = (blockIdx.x * (long long){TILES} + tile) * {THREADS * bpt} + part * {THREADS} + threadIdx.x;
        const long long e = B * 2 + (i & 1);
        if (e >= a.n) continue;
        u32 w[4] = {{(u32)B, (u32)((u64)B >> 32), (u32)a.c[0], (u32)(a.c[0] >> 32)}};
        philox32(w, rk);
        double x = zig_slow((i & 1) ? (w[2] | ((u64)w[3] << 32)) : (w[0] | ((u64)w[1] << 32)),
                            a.c[0], (u32)a.k[0], (u32)a.k[1], e);
        if (a.f[2] != 0.0) {{ const double loc = a.f[0], scale = a.f[1]; (void)loc; x = {scaled}; }}
        out[e] = x;
    }}
"""
