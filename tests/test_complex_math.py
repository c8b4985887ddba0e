"""Complex transcendental ufuncs against NumPy (which calls glibc's C99 complex functions).

Every check runs on two backends:

* ``gpu``: the real thing, ``gp.sin(gp.asarray(z))`` (marked ``gpu``: skipped without one);
* ``host``: the very same ``prelude.cuh`` functions compiled for the CPU by the host C++ compiler
  (``__device__`` and friends defined away, the host libm's real functions standing in for
  CUDA's). It runs anywhere a ``c++`` is installed, so the algorithms, branch cuts, signed zeros
  and special values are checked without a GPU; the GPU backend adds CUDA's own real functions
  (within 1 to 4 ulp) and FMA contraction.

Random inputs are compared like ``assert_allclose`` (the error's modulus against ``rtol`` times
the expected modulus), leaving out the points where the function itself is ill-conditioned
(``|z f'(z) / f(z)| > 100``), where any two few-ulp algorithms differ by more. Branch cuts and
special values are compared part by part: NaNs where NumPy has them, the sign of every other
part (signed zeros and infinities included), and the finite values within ``rtol``.
"""

import ctypes
import warnings
import zlib

import numpy as np
import pytest

from gpunb.core.kernels.prelude import prelude
from tests.data import HOST_PRELUDE, host_library

# NumPy's name -> the prelude's function
FUNCS = {
    "sin": "sin_", "cos": "cos_", "tan": "tan_", "arcsin": "asin_", "arccos": "acos_",
    "arctan": "atan_", "sinh": "sinh_", "cosh": "cosh_", "tanh": "tanh_", "arcsinh": "asinh_",
    "arccosh": "acosh_", "arctanh": "atanh_", "exp": "exp_", "exp2": "exp2_", "expm1": "expm1_",
    "log": "log_", "log2": "log2_", "log10": "log10_", "log1p": "log1p_", "sqrt": "sqrt_",
    "rint": "rint_", "sign": "sign_",
}
UNARY = sorted(FUNCS)
BINARY = {"power": "pow_"}
CTYPES = [np.dtype("complex64"), np.dtype("complex128")]
RTOL = {np.dtype("complex64"): 1e-5, np.dtype("complex128"): 1e-13}
REAL = {np.dtype("complex64"): np.float32, np.dtype("complex128"): np.float64}

LN2, LN10 = np.log(2.0), np.log(10.0)
# f'(z), for the condition number |z f'(z) / f(z)|
DERIVATIVE = {
    "sin": np.cos, "cos": lambda z: -np.sin(z), "tan": lambda z: 1 + np.tan(z) ** 2,
    "sinh": np.cosh, "cosh": np.sinh, "tanh": lambda z: 1 - np.tanh(z) ** 2,
    "arcsin": lambda z: 1 / np.sqrt(1 - z * z), "arccos": lambda z: -1 / np.sqrt(1 - z * z),
    "arctan": lambda z: 1 / (1 + z * z), "arcsinh": lambda z: 1 / np.sqrt(1 + z * z),
    "arccosh": lambda z: 1 / (np.sqrt(z - 1) * np.sqrt(z + 1)), "arctanh": lambda z: 1 / (1 - z * z),
    "exp": np.exp, "exp2": lambda z: LN2 * np.exp2(z), "expm1": np.exp, "log": lambda z: 1 / z,
    "log2": lambda z: 1 / (z * LN2), "log10": lambda z: 1 / (z * LN10), "log1p": lambda z: 1 / (1 + z),
    "sqrt": lambda z: 0.5 / np.sqrt(z), "rint": lambda z: 0 * z, "sign": lambda z: 0 * z,  # not analytic
}


# ---- backends -------------------------------------------------------------------------------------

def _host_source() -> str:
    # CUDA's round-to-nearest products, as plain (uncontracted at -O2) host products
    lines = [*HOST_PRELUDE, prelude()]
    for T in ("float", "double"):
        c = f"gpunb::complex<{T}>"
        for name, fn in FUNCS.items():
            lines.append(f'extern "C" void {name}_{T}(const {c}* a, {c}* o, long n) '
                         f"{{ for (long i = 0; i < n; ++i) o[i] = gpunb::{fn}(a[i]); }}")
        for name, fn in {**BINARY, "multiply": "operator*"}.items():
            lines.append(f'extern "C" void {name}_{T}(const {c}* a, const {c}* b, {c}* o, long n) '
                         f"{{ for (long i = 0; i < n; ++i) o[i] = gpunb::{fn}(a[i], b[i]); }}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def host_lib(tmp_path_factory):
    return host_library(tmp_path_factory, "prelude_host", _host_source())


class _Host:
    def __init__(self, lib):
        self.lib = lib

    def __call__(self, name, *args):
        args = [np.ascontiguousarray(a) for a in args]
        out = np.empty_like(args[0])
        T = "float" if args[0].dtype == np.complex64 else "double"
        ptrs = [a.ctypes.data_as(ctypes.c_void_p) for a in args + [out]]
        getattr(self.lib, f"{name}_{T}")(*ptrs, ctypes.c_long(out.size))
        return out


def _gpu(name, *args):
    import gpunb as gp

    return getattr(gp, name)(*[gp.asarray(np.ascontiguousarray(a)) for a in args]).get()


@pytest.fixture(params=["host", pytest.param("gpu", marks=pytest.mark.gpu)])
def backend(request):
    if request.param == "gpu":
        return _gpu
    return _Host(request.getfixturevalue("host_lib"))


# ---- comparisons ----------------------------------------------------------------------------------

def _numpy(name, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return getattr(np, name)(*args)


def _well_conditioned(name, z, limit=100.0):
    """Mask of the points where |z f'(z) / f(z)| <= limit (computed in complex128)."""
    z = z.astype(np.complex128)
    with np.errstate(all="ignore"):
        f = getattr(np, name)(z)
        cond = np.abs(z * DERIVATIVE[name](z)) / np.abs(f)
    return np.isfinite(cond) & (cond <= limit) | (z == 0)


def assert_close(actual, expected, rtol, what, atol=0.0):
    """allclose on the modulus, as np.testing.assert_allclose for complex; NaNs must match."""
    assert actual.dtype == expected.dtype, (what, actual.dtype, expected.dtype)
    an, en = np.isnan(actual), np.isnan(expected)
    bad = an != en
    fin = ~an & ~en
    with np.errstate(all="ignore"):
        err = np.abs(actual - expected)
        bad |= fin & ~(err <= atol + rtol * np.abs(expected)) & ~(actual == expected)
    if bad.any():
        i = np.flatnonzero(bad)[:8]
        pytest.fail(f"{what}: {bad.sum()} of {bad.size} differ, e.g.\n" + "\n".join(
            f"  got {actual.flat[k]!r} expected {expected.flat[k]!r}" for k in i))


def assert_parts(actual, expected, rtol, what, inputs=None, atol=0.0, inf_zero_sign=True):
    """Part by part: NaN where NumPy has NaN, otherwise the same sign (zeros and infinities
    included) and a value within rtol of the modulus of the expected finite parts. The sign
    of a part is not compared where both are rounding noise (within rtol of that modulus, or
    atol) without both being exact zeros: e.g. the 6e-17 real part of (-1) ** -0.5."""
    assert actual.dtype == expected.dtype, (what, actual.dtype, expected.dtype)
    bad = np.zeros(actual.shape, bool)
    # A zero computed from a NaN input takes its sign from the NaN's sign bit on the host;
    # GPU NaNs carry no meaningful sign, so such zeros are compared by value only.
    nan_in = np.zeros(actual.shape, bool)
    for z in inputs or ():
        nan_in |= np.isnan(np.real(z)) | np.isnan(np.imag(z))
        if not inf_zero_sign:
            nan_in |= np.isinf(np.real(z)) | np.isinf(np.imag(z))
    re, im = np.real(expected), np.imag(expected)
    with np.errstate(all="ignore"):
        mod = np.hypot(np.where(np.isfinite(re), re, 0), np.where(np.isfinite(im), im, 0))
    for part in (np.real, np.imag):
        a, e = part(actual), part(expected)
        an, en = np.isnan(a), np.isnan(e)
        bad |= an != en
        ok = ~an & ~en
        with np.errstate(all="ignore"):
            noise = np.maximum(atol, rtol * mod)
            zero = (np.abs(a) <= noise) & (np.abs(e) <= noise) & ~((a == 0) & (e == 0))
            unsigned = nan_in & (a == 0) & (e == 0)
            bad |= ok & ~zero & ~unsigned & (np.signbit(a) != np.signbit(e))
            same = (a == e) | zero
            fin = ok & np.isfinite(a) & np.isfinite(e)
            bad |= ok & ~same & ~(fin & (np.abs(a - e) <= rtol * mod))
    if bad.any():
        def show(k):
            zin = "" if inputs is None else ", ".join(_c(z.flat[k]) for z in inputs) + " -> "
            return f"  {zin}got {_c(actual.flat[k])} expected {_c(expected.flat[k])}"
        pytest.fail(f"{what}: {bad.sum()} of {bad.size} differ, e.g.\n"
                    + "\n".join(show(k) for k in np.flatnonzero(bad)[:12]))


def _c(v):
    v = complex(v)
    return f"({v.real!r}, {v.imag!r})"


# ---- inputs -----------------------------------------------------------------------------------------

N = 4000


def _rng(*key):
    """A generator seeded by the test's key: each test sees the same inputs whatever ran before
    it, on both backends."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _polar(rng, n, mag):
    """Random points of modulus ~mag (log-uniform over a decade either side), any direction."""
    r = mag * 10 ** rng.uniform(-1, 1, n)
    t = rng.uniform(-np.pi, np.pi, n)
    return r * np.exp(1j * t)


def normal_inputs(name, dt):
    rng = _rng("normal", name, str(dt))
    return (rng.standard_normal(N) * 2 + 1j * rng.standard_normal(N) * 2).astype(dt)


def tiny_inputs(name, dt):
    return _polar(_rng("tiny", name, str(dt)), N, 1e-6).astype(dt)


def large_inputs(name, dt):
    """|z| ~ 1e3 where the function stays finite: sinh, cosh, exp... grow like exp(|Re z|)
    and sin, cos like exp(|Im z|), so those get one part ~1e3 and the other up to where the
    result overflows (past where exp(x) alone would: the scaled path)."""
    rng = _rng("large", name, str(dt))
    big = rng.uniform(-1, 1, N) * 1e3
    mid = rng.uniform(-1, 1, N) * (89.0 if dt == np.complex64 else 710.0)
    if name in ("sinh", "cosh", "exp", "expm1"):
        z = mid + 1j * big
    elif name == "exp2":
        z = mid * 1.44 + 1j * big
    elif name in ("sin", "cos"):
        z = big + 1j * mid
    else:
        z = _polar(rng, N, 1e3)
    return z.astype(dt)


def extreme_inputs(dt):
    """Moduli near the ends of the range (overflow and underflow guards)."""
    rng = _rng("extreme", str(dt))
    info = np.finfo(REAL[np.dtype(dt)])
    hi, lo = float(info.max), float(info.tiny)
    mags = np.array([hi / 2, hi / 1e3, 1 / float(info.eps) * 4, lo * 1e3, lo * 4, lo / 4])
    z = np.concatenate([m * np.exp(1j * rng.uniform(-np.pi, np.pi, 50)) for m in mags])
    axes = np.array([hi / 2, -hi / 2, lo, -lo, lo * 1e6])
    z = np.concatenate([z, axes + 0j, 1j * axes, axes + 1j * axes[::-1], axes + 0.5j, 0.5 + 1j * axes])
    return z.astype(dt)


# on the cuts (signed-zero other part) and just beside them
_CUT_POINTS = [0.25, 0.5, 0.99, 1.0, 1.01, 1.5, 2.0, 10.0, 1e3]


def branch_cut_inputs(name, dt):
    xs = np.array(_CUT_POINTS + [-v for v in _CUT_POINTS])
    tiny = 1e-30 if dt == np.complex64 else 1e-300
    beside = np.array([0.0, -0.0, tiny, -tiny, 1e-3, -1e-3])
    re = np.repeat(xs, beside.size)
    im = np.tile(beside, xs.size)
    z = np.empty(2 * re.size, np.complex128)
    z.real[: re.size], z.imag[: re.size] = re, im          # along the real axis
    z.real[re.size:], z.imag[re.size:] = im, re            # along the imaginary axis
    return z.astype(dt)


SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, np.inf, -np.inf, np.nan, -np.nan]


def special_inputs(dt):
    v = np.array(SPECIAL)
    z = np.empty(v.size * v.size, np.complex128)
    z.real, z.imag = np.repeat(v, v.size), np.tile(v, v.size)
    return z.astype(dt)


def _atol(name, dt):
    """NumPy's log1p(z) is log(|1 + z|) + i arg(1 + z): its real part is accurate to an absolute
    (not relative) eps or so, and ours is the same formula, one hypot and one log apart."""
    return 4 * float(np.finfo(REAL[np.dtype(dt)]).eps) if name == "log1p" else 0.0


# ---- tests ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", CTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_random_inputs(backend, name, dt):
    rtol = RTOL[dt]
    for label, z in [("normal", normal_inputs(name, dt)), ("tiny", tiny_inputs(name, dt)),
                     ("large", large_inputs(name, dt))]:
        keep = _well_conditioned(name, z)
        z = z[keep]
        expected = _numpy(name, z)
        actual = backend(name, z)
        assert_close(actual, expected, rtol, f"{name} {dt} {label}", atol=_atol(name, dt))


@pytest.mark.parametrize("dt", CTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_extreme_moduli(backend, name, dt):
    z = extreme_inputs(dt)
    expected = _numpy(name, z)
    # only where NumPy's result is finite (elsewhere it is an overflow, checked as a special value)
    keep = np.isfinite(expected) & _well_conditioned(name, z)
    assert_parts(backend(name, z)[keep], expected[keep], RTOL[dt], f"{name} {dt} extreme", [z[keep]],
                 atol=_atol(name, dt))


@pytest.mark.parametrize("dt", CTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_branch_cuts_and_signed_zeros(backend, name, dt):
    z = branch_cut_inputs(name, dt)
    expected = _numpy(name, z)
    keep = np.isfinite(expected)
    assert_parts(backend(name, z)[keep], expected[keep], RTOL[dt], f"{name} {dt} cuts", [z[keep]],
                 atol=_atol(name, dt))


@pytest.mark.parametrize("dt", CTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_special_values(backend, name, dt):
    z = special_inputs(dt)
    assert_parts(backend(name, z), _numpy(name, z), RTOL[dt], f"{name} {dt} special", [z],
                 atol=_atol(name, dt))


@pytest.mark.parametrize("dt", CTYPES, ids=str)
def test_power(backend, dt):
    rtol = RTOL[dt]
    a, b = normal_inputs("power a", dt), normal_inputs("power b", dt)
    assert_close(backend("power", a, b), _numpy("power", a, b), rtol, f"power {dt} random")
    # integer exponents: NumPy multiplies (binary powering) for |n| < 100, then 1/r for n < 0
    n = np.array([0, 1, 2, 3, 4, 5, 7, -1, -2, -3, -4, -7, 16, 31, -31, 63, 99, -99, 100, -100, 2.5, -0.5])
    rng = _rng("power integer", str(dt))
    a = (np.exp(1j * rng.uniform(-np.pi, np.pi, 64)) * rng.uniform(0.9, 1.1, 64)).astype(dt)
    aa, nn = np.repeat(a, n.size), np.tile(n, a.size).astype(dt)
    # repeated multiplication: each product adds an ulp or two, and NumPy's order is kept
    assert_close(backend("power", aa, nn), _numpy("power", aa, nn), rtol * 10, f"power {dt} integer")
    # 0 ** b, a ** 0, and the special values
    v = np.array(SPECIAL + [3.0, 0.5j, -1j, 1 + 1j, -2 - 0.5j], np.complex128)
    a, b = np.repeat(v, v.size).astype(dt), np.tile(v, v.size).astype(dt)
    expected = _numpy("power", a, b)
    # With an infinite base or exponent NumPy's zero results carry the sign of glibc's
    # exp(inf * log a) intermediates (e.g. (2+0j) ** (-inf+0j) = 0-0j); only the value is
    # compared for those zeros.
    assert_parts(backend("power", a, b), expected, rtol, f"power {dt} special", [a, b],
                 inf_zero_sign=False)


@pytest.mark.parametrize("dt", CTYPES, ids=str)
def test_product_with_the_conjugate_is_real(backend, dt):
    """z * conj(z) has an imaginary part of exactly 0 (its two products are rounded alike, never
    fused into an fma), as in the BLAS products behind NumPy's cov and dot: an imaginary
    residual over a zero count is cov's inf where NumPy has nan."""
    z = normal_inputs("conj product", dt)
    p = backend("multiply", z, np.conj(z))
    assert np.count_nonzero(p.imag) == 0, p.imag[p.imag != 0][:5]
    assert_close(p, (z.astype(np.complex128) * np.conj(z)).astype(dt), RTOL[dt], f"z * conj(z) {dt}")


def test_every_complex_loop_renders_its_prelude_function():
    """CPU-only: each complex loop of these ufuncs calls the intended gpunb:: function."""
    from gpunb.core.kernels.elementwise.ops import OPS

    for name, fn in {**FUNCS, **BINARY}.items():
        op = OPS[name]
        for dt in CTYPES:
            loop = op.resolve((dt,) * op.nin)
            assert loop == (dt,) * (op.nin + 1)
            src = op.render(loop, ["a", "b"][: op.nin])
            assert src == f"gpunb::{fn}({', '.join(['a', 'b'][: op.nin])})", (name, dt, src)


def test_every_numpy_complex_loop_has_a_rendering():
    """CPU-only: no op that NumPy gives a complex loop raises for it any more."""
    from gpunb.core.kernels.elementwise.ops import OPS

    for name, op in OPS.items():
        for dt in CTYPES:
            try:
                loop = op.resolve((dt,) * op.nin)
            except TypeError:
                continue          # NumPy has no loop for this dtype (e.g. floor of complex)
            op.render(loop, ["a", "b", "c"][: op.nin])


def test_host_backend_source_is_the_prelude():
    # the host check compiles prelude() itself, not a copy of it
    assert prelude() in _host_source()
