"""gpunb.vectorize (one fused kernel), gpunb.poly1d and gpunb.polydiv against NumPy's.

Without a GPU: the registry, NumPy's errors, vectorize's trace errors and output dtypes, its
kernels compiled by NVRTC, and its values: the traced kernel's IR evaluated on the host with
NumPy's ufuncs against ``numpy.vectorize``; poly1d's every method and polydiv's algorithm on
NumPy's namespace against ``numpy.poly1d`` and ``numpy.polydiv``, bit for bit. On the GPU
(``gpu`` marker): the same comparisons with gpunb arrays.
"""

import math
import warnings
from math import floor, sin

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb import _registry as R
from gpunb._math.poly1d import poly1d as _poly1d
from gpunb._math.polynomial import _polydiv
from gpunb.core.fusion.vectorize import vectorize as _vectorize
from gpunb.core.kernels import ir
from tests.data import fake, rand

rng = np.random.default_rng(4242)
gpu = pytest.mark.gpu
ARCH = "sm_90"


# -- the functions vectorized (module level: they read math from this module's globals) ------

def f_affine(a, b):
    return a * b + 1


def f_pair(a, b):
    return a + b, a > b


def f_where(a, b):
    return gp.where(a > b, a - b, a + b)


def n_where(a, b):      # NumPy's docstring example, as NumPy's vectorize runs it per element
    "Return a-b if a>b, otherwise return a+b"
    if a > b:
        return a - b
    else:
        return a + b


def f_math(a, b):
    return math.sin(a) * b + math.hypot(a, b) + floor(a) - math.log(abs(a) + 1, 2) + sin(b)


def f_math_int(a, b):
    return math.floor(a * 2.5) + math.isnan(b)


def f_const(a, b):
    return 2.5


def f_tuple_const(a, b):
    return a - b, 7


def f_powers(a, b):
    return abs(a) ** 2 - b / 3


def mypolyval(p, x):        # NumPy's docstring example for excluded=
    _p = list(p)
    res = _p.pop(0)
    while _p:
        res = res * x + _p.pop(0)
    return res


# (vectorized function, the same per element for numpy.vectorize, dtype kinds it takes,
# whether NaN and infinities may be among the inputs)
CASES = {
    "affine": (f_affine, f_affine, "biufc", True),
    "pair": (f_pair, f_pair, "biuf", True),
    "where": (f_where, n_where, "iuf", True),
    "math": (f_math, f_math, "iuf", False),
    "math_int": (f_math_int, f_math_int, "iuf", False),
    "const": (f_const, f_const, "biufc", True),
    "tuple_const": (f_tuple_const, f_tuple_const, "ifc", True),    # (NumPy: uint a - b overflows)
    "powers": (f_powers, f_powers, "iufc", True),
}
DTYPES = ["bool", "int8", "int32", "uint16", "float32", "float64", "complex64", "complex128"]
CASE_DTYPES = [(name, dt) for name in sorted(CASES) for dt in DTYPES if np.dtype(dt).kind in CASES[name][2]]


def _inputs(finite, dt, shapes):
    return [rand(s, dt, rng=rng, bound=5, special=None if finite else "mixed") for s in shapes]


def _tolerance(*dts):
    dt = np.result_type(*dts)
    return (0, 0) if dt.kind in "biu" else ((1e-5, 1e-5) if dt.itemsize <= 4 or dt == np.complex64
                                              else (1e-12, 1e-12))


def _same_values(got, want, rtol, atol):
    got_t, want_t = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    assert len(got_t) == len(want_t)
    for g, w in zip(got_t, want_t):
        g = gp.asnumpy(g)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


def _numpy_vectorize(func, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.vectorize(func, **kwargs)(*args)


# -- the traced kernel evaluated on the host --------------------------------------------------

def _eval(node, operands):
    if isinstance(node, ir.Arg):
        return np.asarray(operands[node.index])
    if isinstance(node, ir.Const):
        return np.asarray(node.value[1]).astype(node.dtype)
    if isinstance(node, ir.Cast):
        return _eval(node.arg, operands).astype(node.dtype)
    args = [_eval(a, operands) for a in node.args]
    f = np.where if node.op == "where" else getattr(np, node.op)
    r = f(*args)
    return np.asarray(r[node.output] if isinstance(r, tuple) else r).astype(node.dtype)


def on_host(v, *args, **kwargs):
    """What ``v``'s one fused kernel computes for these (NumPy) arguments: its IR evaluated
    with NumPy's ufuncs, each node in its dtype, as the kernel computes it."""
    fused, vals = v._prepare(args, kwargs, stand_ins=True)
    i = fused.inspect(*vals)
    assert i.kind == "elementwise"                  # one elementwise kernel
    t = list(fused._traced.values())[-1]
    operands = [vals[arg] for arg, _ in t.operands]
    shape = np.broadcast_shapes(*[np.shape(x) for x in vals])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = tuple(np.broadcast_to(_eval(node, operands), shape).astype(dt) for dt, node in t.outputs)
    return outs if t.tuple_result else outs[0]


# ---- no GPU needed ------------------------------------------------------------------------------

def test_registry_lines():
    for name in ("vectorize", "poly1d"):
        e = R.ENTRIES[name]
        assert e.kind == "class" and e.numpy is None
    assert gp.vectorize is _vectorize and gp.poly1d is _poly1d
    assert R.numpy_function(np.polydiv) is R.ENTRIES["polydiv"] and gp.polydiv.__doc__
    assert {"vectorize", "poly1d", "polydiv"} <= set(gp.__all__)


@pytest.mark.parametrize("name, dt", CASE_DTYPES)
@pytest.mark.parametrize("shapes", [((5,), (5,)), ((3, 1), (4,)), ((), (2, 3)), ((), ())])
def test_traced_kernel_computes_numpys_vectorize(name, dt, shapes):
    func, np_func, _, special = CASES[name]
    a, b = _inputs(not special, dt, shapes)
    want = _numpy_vectorize(np_func, a, b)
    got = on_host(gp.vectorize(func), a, b)
    _same_values(got, want, *_tolerance(dt))


@pytest.mark.parametrize("b", [2, 2.5, True, 1j, np.float32(3), np.int8(-2), np.array(1.5)])
def test_scalar_arguments_are_typed_as_numpy_asarray_types_them(b):
    a = rand(4, "float32", rng=rng)
    want = _numpy_vectorize(f_affine, a, b)
    assert on_host(gp.vectorize(f_affine), a, b).dtype == want.dtype
    assert on_host(gp.vectorize(f_affine), b, b).dtype == _numpy_vectorize(f_affine, b, b).dtype


@pytest.mark.parametrize("otypes", ["d", "f", "i", "?", [np.int16], [np.complex64], "F", ["float64"]])
def test_otypes_cast_the_outputs(otypes):
    a = rand(6, "float64", rng=rng, scale=3)
    want = _numpy_vectorize(f_affine, a, a, otypes=otypes)
    got = on_host(gp.vectorize(f_affine, otypes=otypes), a, a)
    _same_values(got, want, 1e-7, 1e-7)
    assert gp.vectorize(f_affine, otypes=otypes).otypes == np.vectorize(f_affine, otypes=otypes).otypes
    pair = on_host(gp.vectorize(f_pair, otypes="fb"), a, a)
    assert (pair[0].dtype, pair[1].dtype) == (np.float32, np.int8)


def test_excluded_arguments_are_python_constants():
    x = np.arange(3.0)
    vp = gp.vectorize(mypolyval, excluded=["p"])
    got = on_host(vp, p=[1, 2, 3], x=x)
    _same_values(got, np.vectorize(mypolyval, excluded=["p"])(p=[1, 2, 3], x=x), 0, 0)
    _same_values(on_host(vp, p=[1.5, 2], x=x), np.array([2, 3.5, 5.0]), 0, 0)
    assert len(vp._kernels) == 2                          # a new value: a new trace
    on_host(vp, p=[1, 2, 3], x=x)
    assert len(vp._kernels) == 2                          # the same value: the same one
    vpos = gp.vectorize(lambda a, k: a * k, excluded={1})
    assert on_host(vpos, x.astype(np.float32), 2).dtype == np.float32     # weak, as in Python
    assert on_host(vpos, x.astype(np.float32), 2.0).dtype == np.float32
    assert len(vpos._kernels) == 2                        # 2 and 2.0 trace apart
    called = []
    v = gp.vectorize(lambda a, b: called.append((a, b)) or "ran", excluded={0, "b"})
    assert v(1, b=2) == "ran" and called == [(1, 2)]     # NumPy: nothing to vectorize, one call


def test_kernels_compile_with_nvrtc_and_are_traced_once():
    a, b = np.zeros((4, 1), np.float32), np.zeros(3, np.int32)
    for name, (func, _, _, _) in sorted(CASES.items()):
        v = gp.vectorize(func)
        i = v.inspect(a, b, arch=ARCH)
        assert i.kind == "elementwise" and len(i.compile()) > 0, name
        v.inspect(a, b)
        assert [f.traces for f in v._kernels.values()] == [1], name
    i = gp.vectorize(f_math).inspect(np.zeros(8), np.zeros(8), arch=ARCH)
    assert "sin(" in i.source and "hypot(" in i.source and "floor(" in i.source


def test_attributes_doc_and_decorator_forms():
    v = gp.vectorize(n_where)
    assert v.pyfunc is n_where and v.__name__ == "n_where" and v.__doc__ == n_where.__doc__
    assert gp.vectorize(n_where, doc="Vectorized `myfunc`").__doc__ == "Vectorized `myfunc`"
    assert v.otypes is None and v.excluded == set() and v.cache is False
    assert gp.vectorize(n_where, excluded=[1, "b"], cache=True).excluded == {1, "b"}

    @gp.vectorize
    def identity(x):
        "doc of identity"
        return x

    @gp.vectorize(otypes=[float], doc="as float")
    def as_float(x):
        return x

    assert isinstance(identity, gp.vectorize) and identity.__doc__ == "doc of identity"
    assert as_float.__name__ == "as_float" and as_float.__doc__ == "as float"
    assert on_host(as_float, np.arange(3)).dtype == np.float64
    assert on_host(identity, np.arange(3, dtype=np.int16)).dtype == np.int16


@pytest.mark.parametrize("kwargs, exc, msg", [
    ({"pyfunc": 3}, TypeError, "When used as a decorator, only accepts keyword arguments."),
    ({"pyfunc": abs, "otypes": "dZ!"}, ValueError, "Invalid otype specified: Z"),
    ({"pyfunc": abs, "otypes": 3}, ValueError, "Invalid otype specification"),
])
def test_constructor_errors_are_numpys(kwargs, exc, msg):
    for vec in (np.vectorize, gp.vectorize):
        with pytest.raises(exc, match=msg.replace("!", "")):
            vec(**kwargs)


def test_what_gpunb_refuses_at_construction():
    with pytest.raises(NotImplementedError, match="does not support signature="):
        gp.vectorize(abs, signature="(n)->()")
    with pytest.raises(TypeError, match="object"):
        gp.vectorize(abs, otypes="O")


@pytest.mark.parametrize("func, match", [
    (n_where, r"Python control flow.*gpunb\.where\(c, a, b\)"),
    (lambda a, b: a if a > b else b, r"control flow.*gpunb\.where"),
    (lambda a, b: a > 0 and b > 0, r"control flow.*gpunb\.logical_and"),
    (lambda a, b: max(a, b), r"control flow.*gpunb\.minimum/maximum"),
    (lambda a, b: float(a) + b, r"float\(\).*math functions work when"),
    (lambda a, b: __import__("math").sin(a), r"float\(\).*gpunb's ufuncs"),
    (lambda a, b: int(b), r"int\(\)"),
])
def test_python_control_flow_raises_naming_the_replacement(func, match):
    with pytest.raises(TypeError, match=match) as info:
        gp.vectorize(func).inspect(np.zeros(3), np.zeros(3))
    assert "gpunb.vectorize(" in str(info.value) and "never calls the function per element" in str(info.value)


@pytest.mark.parametrize("func, kwargs, exc, match", [
    (lambda a: a.sum(), {}, gp.FusionError, "reduces a value"),
    (lambda a: "text", {}, TypeError, "returned str"),
    (lambda a: (a,), {}, ValueError, "tuple of 1 values"),
    (lambda a: (), {}, ValueError, "tuple of 0 values"),
    (lambda a: a, {"otypes": "dd"}, ValueError, "returned 1 output but otypes names 2"),
    (lambda a: a * 1j, {"otypes": "d"}, TypeError, "complex and otypes names float64"),
    (lambda a: math.sin(a * 1j), {}, TypeError, r"math\.sin\(\) of a complex value"),
    (lambda a: a[None], {}, gp.FusionError, "of a computed value"),
])
def test_what_a_vectorized_function_cannot_return_or_do(func, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gp.vectorize(func, **kwargs).inspect(np.zeros(3))


def test_argument_errors():
    v = gp.vectorize(f_affine)
    for vec in (np.vectorize(f_affine), v.inspect):
        with pytest.raises(ValueError, match="cannot call `vectorize` on size 0 inputs unless `otypes` is set"):
            vec(np.zeros(0), np.zeros(3))
        with pytest.raises(ValueError, match=r"operands could not be broadcast together with shapes \(3,\) \(4,\)"):
            vec(np.zeros(3), np.zeros(4))
    assert on_host(gp.vectorize(f_affine, otypes="f"), np.zeros((0, 2)), 1.0).shape == (0, 2)
    with pytest.raises(TypeError, match="input 0 of vectorize.f_affine. is a NumPy array in host memory"):
        v(np.zeros(3), 1)
    with pytest.raises(TypeError, match="input 1 of vectorize.f_affine. must be a GPU array or a scalar, not list"):
        v(fake((3,)), [1, 2, 3])
    with pytest.raises(ValueError, match="operands could not be broadcast"):
        v(fake((3,)), fake((2,)))
    with pytest.raises(ValueError, match="cannot call `vectorize` on size 0"):
        v(fake((0,)), 2)


# -- poly1d and polydiv on NumPy's namespace --------------------------------------------------

class HostPoly(_poly1d):
    """gpunb's poly1d over NumPy arrays: every method's steps checked against numpy.poly1d."""
    _ns = staticmethod(lambda: np)


def check_poly(got, want, cls, what=""):
    """``got`` (a ``cls`` poly1d, an array or a tuple of them) is NumPy's ``want``: dtypes,
    shapes and every value, bit for bit (complex values within a few ulps of the largest:
    NumPy's complex scalar product, which its polydiv uses, and its array loop round apart);
    poly1d's repr, str and variable."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), what
        for g, w in zip(got, want):
            check_poly(g, w, cls, what)
        return
    if isinstance(want, np.poly1d):
        assert type(got) is cls, (what, type(got))
        if want.coeffs.dtype.kind != "c":
            assert repr(got) == repr(want) and str(got) == str(want), (what, repr(got), repr(want))
        assert got.variable == want.variable and got.order == want.order == len(got), what
        got, want = got.coeffs, want.coeffs
    got, want = gp.asnumpy(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.kind == "c":
        tol = 1e-5 if want.dtype == np.complex64 else 1e-12
        scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isinf(want), 0, want)), initial=0)))
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


POLYS = [([1, 2, 3], [2, 1]), ([0, 0, 1.5, -2, 0.25], [3]), ([1j, 2, 0.5 - 1j], [1, 1]),
         (np.float32([1, 2, 3]), np.float32([1, 0])), ([0], [0, 0]), (np.array([3], np.int8), [1, 2]),
         ([4, 0, 0, 1], [2, -1, 1]), ([True, False, True], [1.0]), ([1, np.nan, 2], [1, 3])]


def poly_examples(cls, c, d):
    """Every poly1d operation on ``cls`` polynomials of ``c`` and ``d``, in a fixed order
    (those that write coefficients on copies: a poly1d writes into the array it was made of)."""
    p, q = cls(c), cls(d)
    neg = p if np.asarray(c).dtype == bool else -p          # (NumPy has no bool negative)
    out = [p, q, p + q, p - q, q - p, p * q, p * 2.5, 3 * p, p + 1, 1 - p, neg, +p, p ** 3, p ** 0,
           p / 2, 2 / p if np.all(np.asarray(c) != 0) else p, p / q, p / [1, 2], [1, 2, 3] / q,
           p.deriv(), p.deriv(2), p.integ(), p.integ(2, 3), p(q), p.coeffs, p.c, p.coef,
           p.coefficients, p[-1], p[0], p[1], p[7], list(p), cls(p, variable="s"), cls(c, variable="z")]
    s = cls(np.array(c))
    s[5] = 7
    out.append(s)
    s[0] = 2
    out.append(s)
    t = cls(np.array(c))
    t[t.order] = 0                          # NumPy keeps the leading zero: order stays
    out += [t, t + 1]
    return out


@pytest.mark.parametrize("c, d", POLYS)
def test_poly1d_methods_are_numpys_steps(c, d):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = poly_examples(HostPoly, c, d), poly_examples(np.poly1d, c, d)
        for i, (g, w) in enumerate(zip(got, want)):
            check_poly(g, w, HostPoly, f"example {i}")
        p, q, pw, qw = HostPoly(c), HostPoly(d), np.poly1d(c), np.poly1d(d)
        check_poly(p(np.arange(4.0)), pw(np.arange(4.0)), HostPoly)
        check_poly(p(2), pw(2), HostPoly)
        assert (p == q) == (pw == qw) and (p != q) == (pw != qw)
        assert (p == HostPoly(c)) == (pw == np.poly1d(c)) and HostPoly(d) == q   # (NaN != NaN)
        assert (p == 3) is False and p != "x"            # NotImplemented: Python's fallback
        if np.all(np.isfinite(np.asarray(c, complex))) and pw.order > 0:
            np.testing.assert_allclose(np.sort_complex(p.roots), np.sort_complex(pw.r))
        np.testing.assert_array_equal(np.asarray(p), np.asarray(pw))
        assert np.asarray(p, dtype=complex).dtype == complex


def test_poly1d_construction_and_errors_are_numpys():
    check_poly(HostPoly([1, 2], r=True), np.poly1d([1, 2], r=True), HostPoly)
    check_poly(HostPoly([], r=True), np.poly1d([], r=True), HostPoly)
    check_poly(HostPoly(np.poly1d([0, 1, 2], variable="t")), np.poly1d([1, 2], variable="t"), HostPoly)
    check_poly(HostPoly(5), np.poly1d(5), HostPoly)
    assert str(HostPoly([1, 2, 3])) == "   2\n1 x + 2 x + 3"      # NumPy's docstring
    for bad, exc in [(lambda m: m([[1, 2], [3, 4]]), ValueError), (lambda m: m([1, 2]) ** -1, ValueError),
                     (lambda m: m([1, 2]) ** 1.5, ValueError), (lambda m: m([1, 2]) ** 2.0, TypeError),
                     (lambda m: m([1]).__setitem__(-1, 2), ValueError),
                     (lambda m: setattr(m([1]), "coeffs", np.ones(1)), AttributeError)]:
        msgs = []
        for m in (HostPoly, np.poly1d):
            with pytest.raises(exc) as info:
                bad(m)
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1]
    p = HostPoly([1, 2])
    p.coeffs = p.coeffs                     # NumPy's: the same object may be set (p.coeffs *= 2)
    with pytest.raises(ValueError, match="Polynomial must be 1d only."):
        gp.poly1d(fake((2, 2)))             # checked before any kernel


@pytest.mark.parametrize("dt", ["bool", "int32", "float16", "float32", "float64", "complex64", "complex128"])
def test_polydiv_is_numpys_algorithm(dt):
    cases = [([3, 5, 2], [2, 1]), ([1], [2, 3, 4]), ([1e-9, 1, 2], [1]), ([0, 0, 0], [1, 1]), (5, 2),
             ([1, 2, 3], 4), ([1, 4, 6, 4, 1], [1, 2, 1]), ([2, 0], [0, 1])]
    # (NumPy's complex scalar product rounds apart from array loops: the leading remainder
    # terms, roundoff that should be 0, are then not NumPy's, and in complex64 they may exceed
    # its 1e-8 trimming tolerance, so random complex64 cases keep other terms; complex128's
    # stay far below it. Random complex divisors have two terms or more: with one, the
    # whole remainder is roundoff)
    lo = 2 if np.dtype(dt).kind == "c" else 1
    cases += [(rand(rng.integers(1, 9), dt, rng=rng), rand(rng.integers(lo, 5), dt, rng=rng))
              for _ in range(0 if dt == "complex64" else 20)]
    for u, v in cases:
        u, v = np.asarray(u).astype(dt), np.asarray(v).astype(dt)
        with np.errstate(all="ignore"):
            check_poly(_polydiv(np, u, v), np.polydiv(u, v), HostPoly, f"{u} / {v}")


@settings(max_examples=150, deadline=None)
@given(u=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1, max_size=9),
       v=st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=5),
       dt=st.sampled_from(["float16", "float32", "float64"]))
def test_polydiv_matches_numpy_on_any_coefficients(u, v, dt):
    with np.errstate(all="ignore"):
        u, v = np.asarray(u, dt), np.asarray(v, dt)
        check_poly(_polydiv(np, u, v), np.polydiv(u, v), HostPoly)


def test_polydiv_errors():
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        np.polydiv([], [1])
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        gp.polydiv(fake((0,)), fake((2,)))
    with pytest.raises(ValueError, match="0-d or 1-d"):
        gp.polydiv(fake((2, 2)), fake((2,)))


# ---- on the GPU -----------------------------------------------------------------------------------

def _gpu_args(host, noncontiguous=False):
    out = []
    for h in host:
        if noncontiguous and h.ndim:
            g = gp.asarray(np.repeat(h, 2, axis=-1))[..., ::2]
        else:
            g = gp.asarray(h)
        out.append(g)
    return out


@gpu
@pytest.mark.parametrize("name, dt", CASE_DTYPES)
@pytest.mark.parametrize("shapes", [((7,), (7,)), ((3, 1), (4,)), ((), (2, 3)), ((), ()), ((0, 3), (3,))])
def test_gpu_vectorize_matches_numpy(name, dt, shapes):
    func, np_func, _, special = CASES[name]
    a, b = _inputs(not special, dt, shapes)
    empty = 0 in np.broadcast_shapes(a.shape, b.shape)
    kw = {}
    if empty:   # NumPy needs otypes for size 0: take them from a nonempty call
        r = _numpy_vectorize(np_func, np.ones(1, dt), np.ones(1, dt))
        kw["otypes"] = [x.dtype for x in r] if isinstance(r, tuple) else [r.dtype]
    want = _numpy_vectorize(np_func, a, b, **kw)
    v = gp.vectorize(func, **kw)
    # the results' dtypes set the tolerance (integers into math functions give float64,
    # where the GPU's libm and the host's may differ by an ulp)
    tol = _tolerance(*(w.dtype for w in (want if isinstance(want, tuple) else (want,))))
    for noncontiguous in (False, True):
        _same_values(v(*_gpu_args((a, b), noncontiguous)), want, *tol)
    _same_values(v(gp.asarray(a), b[()] if b.ndim == 0 else gp.asarray(b)), want, *tol)


@gpu
def test_gpu_vectorize_is_one_launch_and_one_trace():
    x, y = gp.asarray(rand((50, 3), "float32", rng=rng)), gp.asarray(rand(3, "float32", rng=rng))
    v = gp.vectorize(f_math)
    v(x, y)
    v(x, y)
    (fused,) = v._kernels.values()
    assert fused.traces == 1
    assert [len(p.prepared) for p in fused._plans.values()] == [1]


@gpu
def test_gpu_numpy_docstring_examples():
    with pytest.raises(TypeError, match=r"gpunb\.where"):
        gp.vectorize(n_where)(gp.asarray([1, 2, 3, 4]), 2)
    vfunc = gp.vectorize(f_where)
    _same_values(vfunc(gp.asarray([1, 2, 3, 4]), 2), np.array([3, 4, 1, 2]), 0, 0)
    _same_values(gp.vectorize(f_where, otypes=[float])(gp.asarray([1, 2, 3, 4]), 2),
                 np.array([3.0, 4.0, 1.0, 2.0]), 0, 0)
    vpolyval = gp.vectorize(mypolyval, excluded=["p"])
    _same_values(vpolyval(p=[1, 2, 3], x=gp.asarray([0, 1])), np.array([3, 6]), 0, 0)
    vpolyval.excluded.add(0)
    _same_values(vpolyval([1, 2, 3], x=gp.asarray([0, 1])), np.array([3, 6]), 0, 0)

    @gp.vectorize(otypes=[float])
    def as_float(x):
        return x

    _same_values(as_float(gp.asarray([0, 1, 2])), np.array([0.0, 1.0, 2.0]), 0, 0)
    _same_values(gp.vectorize(f_affine, otypes="f")(gp.asarray(np.zeros((0, 2))), 1), np.zeros((0, 2), np.float32), 0, 0)


@gpu
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_gpu_vectorize_random_broadcasts(data):
    nd = data.draw(st.integers(0, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd)))
    sub = tuple(1 if data.draw(st.booleans()) else s for s in shape)
    dt_a, dt_b = data.draw(st.sampled_from(["float32", "int16", "float64"])), data.draw(st.sampled_from(["float32", "uint8", "bool"]))
    a, b = rand(shape, dt_a, rng=rng, bound=5), rand(sub, dt_b, rng=rng, bound=5)
    want = _numpy_vectorize(f_powers, a, b)
    # gpunb computes each element with NumPy scalars of the arrays' dtypes (NumPy's first
    # call, which sets the output dtype); NumPy's later calls get Python floats, so a float32
    # intermediate (b / 3) differs by its rounding: the exact reference is the function on
    # the arrays (NEP 50: the scalars' rules), NumPy's vectorize within float32 rounding
    with np.errstate(all="ignore"):
        exact = np.asarray(f_powers(a, b)).astype(want.dtype)
    _same_values(exact, want, *_tolerance("float32"))
    _same_values(gp.vectorize(f_powers)(gp.asarray(a), gp.asarray(b)), exact, *_tolerance(dt_a, dt_b))


@gpu
@pytest.mark.parametrize("c, d", POLYS)
def test_gpu_poly1d_matches_numpy(c, d):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = poly_examples(gp.poly1d, c, d), poly_examples(np.poly1d, c, d)
        for i, (g, w) in enumerate(zip(got, want)):
            check_poly(g, w, gp.poly1d, f"example {i}")
        p, pw = gp.poly1d(c), np.poly1d(c)
        assert isinstance(p.coeffs, gp.ndarray)
        check_poly(p(gp.asarray(np.arange(4.0))), pw(np.arange(4.0)), gp.poly1d)
        assert (p == gp.poly1d(d)) == (pw == np.poly1d(d)) and gp.poly1d(d) == gp.poly1d(d)
        if np.all(np.isfinite(np.asarray(c, complex))) and pw.order > 0:
            np.testing.assert_allclose(np.sort_complex(gp.asnumpy(p.r)), np.sort_complex(pw.r))
        check_poly(p.get(), pw, np.poly1d)


@gpu
def test_gpu_poly1d_numpy_docstring_and_interop():
    p = gp.poly1d([1, 2, 3])
    assert str(p) == "   2\n1 x + 2 x + 3" and repr(p) == "poly1d([1, 2, 3])"
    assert float(p(0.5)) == 4.25 and p.order == 2 and int(p[1]) == 2
    check_poly(p * p, np.poly1d([1, 4, 10, 12, 9]), gp.poly1d)
    check_poly((p ** 3 + 4) / p, (np.poly1d([1.0, 4.0, 10.0, 12.0, 9.0]), np.poly1d([4.0])), gp.poly1d)
    check_poly(np.square(p), np.array([1, 4, 9]), gp.poly1d)          # NumPy's ufunc: gpunb's
    check_poly(np.float64(2) * p, np.array([2.0, 4.0, 6.0]), gp.poly1d)
    assert isinstance(np.square(p), gp.ndarray)
    check_poly(gp.poly1d([1, 2], True), np.poly1d([1.0, -3.0, 2.0]), gp.poly1d)
    assert str(gp.poly1d([1, 2, 3], variable="z")) == "   2\n1 z + 2 z + 3"
    check_poly(gp.asarray(p), np.array([1, 2, 3]), gp.poly1d)         # its coefficients
    check_poly(gp.add(p, 1), np.array([2, 3, 4]), gp.poly1d)
    check_poly(np.asarray(p), np.array([1, 2, 3]), gp.poly1d)


@gpu
def test_gpu_polynomial_functions_take_and_give_poly1d():
    p, q = gp.poly1d([1.0, 2, 3]), gp.poly1d([2, -1])
    pw, qw = np.poly1d([1.0, 2, 3]), np.poly1d([2, -1])
    for name in ("polyadd", "polysub", "polymul", "polydiv"):
        g, w = getattr(gp, name), getattr(np, name)
        check_poly(g(p, q), w(pw, qw), gp.poly1d, name)
        check_poly(g(p, gp.asarray([2.0, -1])), w(pw, [2.0, -1]), gp.poly1d, name)
        check_poly(g(gp.asarray([1.0, 2, 3]), q), w([1.0, 2, 3], qw), gp.poly1d, name)
        check_poly(w(p, q), w(pw, qw), gp.poly1d, name)                 # NumPy's dispatch
        check_poly(g(gp.asarray([1.0, 2, 3]), gp.asarray([2.0, -1])), w([1.0, 2, 3], [2.0, -1]), gp.poly1d, name)
    check_poly(gp.polyder(p, 2), np.polyder(pw, 2), gp.poly1d)
    check_poly(gp.polyint(p, 2, k=[1, 2]), np.polyint(pw, 2, k=[1, 2]), gp.poly1d)
    check_poly(gp.polyval(p, q), np.polyval(pw, qw), gp.poly1d)
    check_poly(gp.polyval(p, gp.asarray([0.5, 2])), np.polyval(pw, [0.5, 2]), gp.poly1d)
    check_poly(gp.polyval(gp.asarray([1.0, 2, 3]), q), np.polyval([1.0, 2, 3], qw), gp.poly1d)
    np.testing.assert_allclose(np.sort_complex(gp.asnumpy(gp.roots(p))), np.sort_complex(np.roots(pw)))
    check_poly(gp.polymul(gp.asarray([0.0, 0, 1, 2]), gp.asarray([0, 3.0])), np.polymul([0.0, 0, 1, 2], [0, 3.0]),
               gp.poly1d)                                            # NumPy trims leading zeros


@gpu
@pytest.mark.parametrize("dt", ["bool", "int32", "float16", "float32", "float64", "complex64", "complex128"])
def test_gpu_polydiv_matches_numpy(dt):
    cases = [([3, 5, 2], [2, 1]), ([1], [2, 3, 4]), ([1e-9, 1, 2], [1]), ([0, 0, 0], [1, 1]), (5, 2),
             ([1, 2, 3], 4), ([1, 4, 6, 4, 1], [1, 2, 1]), ([1, np.nan, 2], [1, 1]), ([1, np.inf, 0], [2, 1])]
    lo = 2 if np.dtype(dt).kind == "c" else 1      # (as in test_polydiv_is_numpys_algorithm)
    cases += [(rand(rng.integers(1, 12), dt, rng=rng), rand(rng.integers(lo, 6), dt, rng=rng))
              for _ in range(0 if dt == "complex64" else 10)]
    for u, v in cases:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            u, v = np.asarray(u).astype(dt), np.asarray(v).astype(dt)
            want = np.polydiv(u, v)
        check_poly(gp.polydiv(gp.asarray(u), gp.asarray(v)), want, gp.poly1d, f"{u} / {v}")
        check_poly(np.polydiv(gp.asarray(u), gp.asarray(v)), want, gp.poly1d, f"{u} / {v}")


@gpu
@settings(max_examples=30, deadline=None)
@given(u=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1, max_size=9),
       v=st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=5),
       dt=st.sampled_from(["float16", "float32", "float64"]))
def test_gpu_polydiv_any_coefficients(u, v, dt):
    with np.errstate(all="ignore"):
        u, v = np.asarray(u, dt), np.asarray(v, dt)
        want = np.polydiv(u, v)
    check_poly(gp.polydiv(gp.asarray(u), gp.asarray(v)), want, gp.poly1d)
