"""Device code of the ``dist`` kernels for von Mises, Zipf, logarithmic series,
hypergeometric, multinomial and multivariate hypergeometric draws (NumPy's algorithms).

Like gamma and poisson in :mod:`.codegen`, element ``b`` of a draw owns the Philox blocks
``(S + b, word 2 + j)``, ``j = 0, 1, 2, ...``: its rejection loop reads them in order (the
:c:type:`wstream` below) and no other element or later draw reaches them, so a draw of ``n``
elements advances the stream by exactly ``n`` blocks whatever the loops did.

- ``vonmises``: Best and Fisher's rejection (NumPy's ``random_vonmises``: uniform below
  ``kappa = 1e-8``, a Taylor expansion of ``s`` below ``1e-5``, a wrapped normal above ``1e6``).
- ``zipf``: NumPy's rejection from the continuous Pareto bound (``random_zipf``).
- ``logseries``: Kemp's second accelerated generator (NumPy's ``random_logseries``).
- ``hypergeometric``: NumPy's ``random_hypergeometric``: Stadlober's ratio of uniforms
  (HRUA) for ``10 <= sample <= total - 10``, else sequential selection (at most 9 exact
  uniform integers, Lemire's method with rejection). HRUA's acceptance test needs
  ``log k!`` differences of nearby large numbers: Stirling's series written as a difference
  (``log1p``), exact to rounding for any population, where ``lgamma(a) - lgamma(b)`` loses
  all digits beyond ``2**53 / log`` of the arguments.
- ``multinomial``: one thread per sample vector, NumPy's sequential binomials over the
  categories (``random_multinomial``); the binomial of (row ``r``, category ``j``) is
  element ``r * d + j`` of a binomial draw (:func:`binomial1` of :mod:`.codegen`).
- ``mvhg``: one thread per sample vector, NumPy's marginals (``random_mvhg_marginals``):
  sequential hypergeometric draws over the colors, element ``r * d + j`` again.

Pure: a string.
"""

from __future__ import annotations

import numpy as np

# one element per thread; params: float64 arrays (or scalars), the kernel's output type
PER_ELEMENT = {"vonmises": 2, "zipf": 1, "logseries": 1, "hypergeometric": 3}
ROWS = ("multinomial", "mvhg")
WHATS = tuple(PER_ELEMENT) + ROWS
DTYPES = {"vonmises": np.dtype(np.float64)} | {w: np.dtype(np.int64) for w in WHATS if w != "vonmises"}

LIB = r"""
#define PI_D 3.141592653589793
// Element b's own words: blocks (b, word 2 + w), w = w0, w0 + 1, ... read lane by lane.
struct wstream {
    const rng_args* a; u64 b, w; u64 c[4]; int lane;
    __device__ void init(const rng_args& args, u64 bb, u64 w0) { a = &args; b = bb; w = w0; lane = 0; block(args, bb, w0, c); }
    __device__ u64 next() { if (lane == 4) { block(*a, b, ++w, c); lane = 0; } return c[lane++]; }
    __device__ double u() { return closed_u(next()); }      // [0, 1), NumPy's next_double
};

// Uniform integer in [0, r) for r > 0: Lemire's multiply-shift with rejection (exact).
__device__ u64 below(wstream& s, u64 r) {
    u64 x = s.next(), lo = x * r;
    if (lo < r) {
        const u64 t = (0ULL - r) % r;
        while (lo < t) { x = s.next(); lo = x * r; }
    }
    return __umul64hi(x, r);
}

__device__ double vonmises1(wstream& s, double mu, double kappa) {
    if (isnan(kappa)) return kappa;
    if (kappa < 1e-8) return PI_D * (2.0 * s.u() - 1.0);
    double sv;
    if (kappa < 1e-5) {
        sv = 1.0 / kappa + kappa;
    } else if (kappa <= 1e6) {
        const double r = 1.0 + sqrt(1.0 + 4.0 * kappa * kappa);
        const double rho = (r - sqrt(2.0 * r)) / (2.0 * kappa);
        sv = (1.0 + rho * rho) / (2.0 * rho);
    } else {    // a wrapped normal
        const u64 x = s.next(), y = s.next();
        double result = mu + sqrt(1.0 / kappa) * normal1(x, y);
        if (result < -PI_D) result += 2.0 * PI_D;
        if (result > PI_D) result -= 2.0 * PI_D;
        return result;
    }
    double W;
    for (;;) {
        const double U = s.u(), Z = cospi(U);
        W = (1.0 + sv * Z) / (sv + Z);
        const double Y = kappa * (sv - W), V = s.u();
        if (Y * (2.0 - Y) - V >= 0.0 || log(Y / V) + 1.0 - Y >= 0.0) break;
    }
    double result = acos(W);
    if (s.u() < 0.5) result = -result;
    result += mu;
    double mod = fmod(fabs(result) + PI_D, 2.0 * PI_D) - PI_D;
    return result < 0.0 ? -mod : mod;
}

__device__ long long zipf1(wstream& s, double a) {
    if (a >= 1025.0) return 1;
    const double am1 = a - 1.0, b = pow(2.0, am1), umin = pow(9223372036854775807.0, -am1);
    for (;;) {
        const double u01 = s.u(), U = u01 * umin + (1.0 - u01), V = s.u();
        const double X = floor(pow(U, -1.0 / am1));
        if (X > 9223372036854775807.0 || X < 1.0) continue;
        const double T = pow(1.0 + 1.0 / X, am1);
        if (V * X * (T - 1.0) / (b - 1.0) <= T / b)
            return X >= 9223372036854775807.0 ? 9223372036854775807LL : (long long)X;
    }
}

__device__ long long logseries1(wstream& s, double p) {
    const double r = log1p(-p);
    for (;;) {
        const double V = s.u();
        if (V >= p) return 1;
        const double q = -expm1(r * s.u());
        if (V <= q * q) {
            const double k = floor(1.0 + log(V) / log(q));
            if (k < 1.0 || V == 0.0) continue;
            return k >= 9223372036854775807.0 ? 9223372036854775807LL : (long long)k;
        }
        return V >= q ? 1 : 2;
    }
}

// log(x!) - log(y!) for x, y >= 0
__device__ double lfdiff(long long x, long long y) {
    if (x == y) return 0.0;
    if (x < 1000000LL || y < 1000000LL) return lgamma((double)x + 1.0) - lgamma((double)y + 1.0);
    // Stirling: log z! = (z + 1/2) log z - z + log(2 pi) / 2 + 1 / (12 z) - ..., as a difference
    const double d = (double)(x - y), xd = (double)x, yd = (double)y;
    return (xd + 0.5) * log1p(d / yd) + d * (log(yd) - 1.0) - d / (12.0 * xd * yd);
}

__device__ long long hyper_sample(wstream& s, long long good, long long bad, long long sample) {
    const long long total = good + bad;
    long long computed = sample > total / 2 ? total - sample : sample;
    long long rt = total, rg = good;
    while (computed > 0 && rg > 0 && rt > rg) {
        --rt;
        if ((long long)below(s, (u64)rt + 1) < rg) --rg;     // uniform in [0, rt]
        --computed;
    }
    if (rt == rg) rg -= computed;
    return sample > total / 2 ? rg : good - rg;
}

__device__ long long hyper_hrua(wstream& s, long long good, long long bad, long long sample) {
    const long long pop = good + bad, cs = min(sample, pop - sample);
    const long long mn = min(good, bad), mx = max(good, bad);
    const double p = (double)mn / pop, q = (double)mx / pop;
    const double a = cs * p + 0.5;
    const double var = (double)(pop - cs) * cs * p * q / (pop - 1);
    const double c = sqrt(var + 0.5), h = 1.7155277699214135 * c + 0.8989161620588988;
    long long m = (long long)floor((double)(cs + 1) * ((double)mn + 1.0) / ((double)pop + 2.0));
    m = max(0LL, min(m, min(cs, mn)));
    const double b = fmin((double)(min(cs, mn) + 1), floor(a + 16.0 * c));
    long long K;
    for (;;) {
        const double U = s.u(), V = s.u();
        const double X = a + h * (V - 0.5) / U;
        if (!(X >= 0.0 && X < b)) continue;
        K = (long long)floor(X);
        // T = log f(K) - log f(m), f the unnormalized pmf
        const double T = lfdiff(m, K) + lfdiff(mn - m, mn - K) + lfdiff(cs - m, cs - K)
                         + lfdiff(mx - cs + m, mx - cs + K);
        if (U * (4.0 - U) - 3.0 <= T) break;
        if (U * (U - T) >= 1.0) continue;
        if (2.0 * log(U) <= T) break;
    }
    if (good > bad) K = cs - K;
    if (cs < sample) K = good - K;
    return K;
}

__device__ long long hypergeometric1(wstream& s, long long good, long long bad, long long sample) {
    if (sample >= 10 && sample <= good + bad - 10) return hyper_hrua(s, good, bad, sample);
    return hyper_sample(s, good, bad, sample);
}
"""


def source(k, threads: int, ctype: dict) -> str:
    """The kernel of :class:`.codegen.RandomKernel` ``k`` (kind ``dist``, ``k.what`` in
    :data:`WHATS`), after :data:`LIB`."""
    T = ctype[k.dtype.name]
    head = f'extern "C" __global__ void __launch_bounds__({threads}) {k.name}('
    index = f"const long long B = blockIdx.x * (long long){threads} + threadIdx.x;"
    if k.what == "multinomial":
        # out: rows x d; n: per row (null: the scalar a.f[0]); pv: rows of d, a.off apart
        return head + f"""{T}* __restrict__ out, const double* __restrict__ n, const double* __restrict__ pv, const rng_args a) {{
    {index}
    if (B >= a.n) return;
    const long long d = a.limit;
    const double* p = pv + B * (long long)a.off;
    {T}* o = out + B * d;
    double dn = n ? n[B] : a.f[0], remaining = 1.0;
    for (long long j = 0; j + 1 < d; ++j) {{
        double x = 0.0;
        if (dn > 0.0) {{
            const double pj = p[j];
            const double q = pj <= 0.0 ? 0.0 : (pj >= remaining ? 1.0 : pj / remaining);
            x = binomial1(a, (u64)(B * d + j), dn, q);
            dn -= x;
            remaining -= pj;
        }}
        o[j] = ({T})x;
    }}
    o[d - 1] = ({T})(dn > 0.0 ? dn : 0.0);
}}
"""
    if k.what == "mvhg":
        # out: rows x d; colors: d counts; a.off: their total, a.rng: the sample size
        return head + f"""{T}* __restrict__ out, const long long* __restrict__ colors, const rng_args a) {{
    {index}
    if (B >= a.n) return;
    const long long d = a.limit, total = (long long)a.off;
    long long nsample = (long long)a.rng;
    const bool more = nsample > total / 2;     // draw the complement
    if (more) nsample = total - nsample;
    {T}* o = out + B * d;
    long long num = nsample, remaining = total;
    for (long long j = 0; j < d; ++j) {{
        long long v = 0;
        if (j + 1 < d) {{
            if (num > 0) {{
                remaining -= colors[j];
                wstream s; s.init(a, (u64)(B * d + j), 0);
                v = hypergeometric1(s, colors[j], remaining, num);
                num -= v;
            }}
        }} else {{
            v = num;
        }}
        o[j] = more ? colors[j] - v : v;
    }}
}}
"""
    n = PER_ELEMENT[k.what]
    params = ", ".join(f"const double* __restrict__ p{i}" for i in range(n))
    loads = ", ".join(f"s{i} = p{i} ? p{i}[B] : a.f[{i}]" for i in range(n))
    value = {"vonmises": "vonmises1(s, s0, s1)", "zipf": "zipf1(s, s0)",
             "logseries": "logseries1(s, s0)",
             "hypergeometric": "hypergeometric1(s, (long long)s0, (long long)s1, (long long)s2)"}[k.what]
    return head + f"""{T}* __restrict__ out, {params}, const rng_args a) {{
    {index}
    if (B >= a.n) return;
    const double {loads};
    wstream s; s.init(a, (u64)B, 0);
    out[B] = ({T})({value});
}}
"""
