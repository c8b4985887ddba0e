"""The elementwise operations: NumPy's ufuncs, their loops (asked of NumPy) and how each loop
is written in CUDA C++. One line per op in the table below.

Type resolution is NumPy's own: ``ufunc.resolve_dtypes`` picks the loop for the operand dtypes
(Python scalars passed as ``int``/``float``/``complex`` are weak, NEP 50) and raises NumPy's
TypeError for unsupported combinations. Each op's ``render(loop, args)`` writes the loop body
as a C++ expression over arguments already converted to the loop's compute types. Unfused
calls (:class:`gpunb.ufunc`) and fusion's tracer both resolve through :func:`loop`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ... import memo
from ...dtypes import SUPPORTED, check, compute_type

_SUPPORTED = frozenset(SUPPORTED)


@dataclass(frozen=True)
class Op:
    """An elementwise operation: its name, the NumPy ufunc that defines its loops and
    semantics, and how a loop is written in C++. ``resolver`` stands in for the ufunc's type
    resolution where NumPy has no ufunc (``where``); then ``arity`` is (nin, nout)."""

    name: str
    ufunc: np.ufunc | None
    render: Callable[[tuple[np.dtype, ...], list[str]], str]
    resolver: Callable | None = None
    arity: tuple[int, int] = (0, 0)

    @property
    def nin(self) -> int:
        return self.ufunc.nin if self.ufunc is not None else self.arity[0]

    @property
    def nout(self) -> int:
        return self.ufunc.nout if self.ufunc is not None else self.arity[1]

    @property
    def reference(self):
        """NumPy's callable with this op's semantics (the ufunc, or ``numpy.<name>``)."""
        return self.ufunc if self.ufunc is not None else getattr(np, self.name)

    @property
    def types(self) -> list[str]:
        """The loops as ``ufunc.types`` lists them (``'ff->f'``)."""
        if self.ufunc is not None:
            return self.ufunc.types
        loops = [self.resolver((dt,) * self.nin) for dt in SUPPORTED]
        return [f"{''.join(d.char for d in lp[:self.nin])}->{''.join(d.char for d in lp[self.nin:])}"
                for lp in loops]

    def resolve(self, dtypes, out_dtypes=None) -> tuple[np.dtype, ...]:
        """The loop's dtypes (inputs then outputs) for these inputs; ``dtypes`` may hold the
        Python types int, float and complex for weak scalars."""
        if self.resolver is not None:
            loop = self.resolver(tuple(dtypes))
            if out_dtypes is not None:
                loop = loop[:self.nin] + tuple(np.dtype(d) for d in out_dtypes)
        else:
            outs = tuple(out_dtypes) if out_dtypes is not None else (None,) * self.nout
            loop = self.ufunc.resolve_dtypes(tuple(dtypes) + outs)
        return _supported(self, loop)


def _supported(op: Op, loop) -> tuple[np.dtype, ...]:
    for d in loop:
        if d not in _SUPPORTED:
            raise TypeError(f"ufunc {op.name!r} would need dtype {d}, which gpunb does not support "
                            "on the GPU")
    return tuple(loop)


_loops = memo.table("elementwise.loops")   # (op, input types, dtype, casting) -> loop


def loop(op: Op, in_types: tuple, dtype=None, casting: str = "same_kind") -> tuple[np.dtype, ...]:
    """The loop of ``op`` for ``in_types`` (dtypes, or the types int/float/complex for weak
    Python scalars), with ``dtype=`` forcing the output (and so the loop) as NumPy does:
    NumPy's own resolution and errors, asked once per combination."""
    key = (op.name, in_types, dtype, casting)
    found = _loops.get(key)
    if found is None:
        if dtype is not None:
            dt = check(dtype)
            if op.ufunc is None:
                raise TypeError(f"{op.name} takes no dtype argument")
            found = _supported(op, op.ufunc.resolve_dtypes(
                in_types + (None,) * op.nout, signature=(None,) * op.nin + (dt,) * op.nout,
                casting=casting))
        else:
            found = op.resolve(in_types)
        _loops[key] = found
    return found


def check_integer_power(base, exponent) -> None:
    """NumPy's error for an integer base to a negative integer scalar power. (An exponent
    array is not inspected: that would wait for the GPU; its negative entries give 0, or
    +-1 for a base of +-1.)"""
    if isinstance(exponent, (int, np.integer)) and not isinstance(exponent, bool) and exponent < 0:
        kind = base.dtype.kind if hasattr(base, "dtype") else ("i" if isinstance(base, int) else "f")
        if kind in "iu":
            raise ValueError("Integers to negative integer powers are not allowed.")


def _where_loop(dtypes) -> tuple[np.dtype, ...]:
    """``where(condition, x, y)``: the condition as bool, x and y in NumPy's
    ``result_type(x, y)`` (Python scalars weak, NEP 50)."""
    rt = check(np.result_type(*[t(0) if isinstance(t, type) else t for t in dtypes[1:]]))
    return (np.dtype(bool), rt, rt, rt)


def _fn(name: str, loop, args, complex_fn: str | None = None) -> str:
    """A CUDA math function call: ``sqrtf`` for float (and float16) compute, ``sqrt`` for
    double, the gpunb complex function for complex."""
    dt = loop[0]
    if dt.kind == "c":
        if complex_fn is None:
            raise TypeError(f"{name} of complex numbers is not supported on the GPU yet")
        return f"gpunb::{complex_fn}({', '.join(args)})"
    if dt.kind not in "f":
        raise TypeError(f"{name} needs a floating-point loop, got {dt}")
    suffix = "f" if compute_type(dt) == "float" else ""
    return f"{name}{suffix}({', '.join(args)})"


def _typed(loop, expr: str, which: int = -1) -> str:
    """Convert an expression back to the loop's compute type (C++ promotes small ints)."""
    return f"(({compute_type(loop[which])})({expr}))"


def _binary(sym: str, bool_sym: str | None = None):
    def render(loop, a):
        if loop[0].kind == "b" and bool_sym is not None:
            return f"({a[0]} {bool_sym} {a[1]})"
        return _typed(loop, f"{a[0]} {sym} {a[1]}")
    return render


def _compare(sym: str):
    return lambda loop, a: f"({a[0]} {sym} {a[1]})"


def _unary_math(name: str, complex_fn: str | None = None, int_identity: bool = False):
    def render(loop, a):
        if int_identity and loop[0].kind in "biu":
            return a[0]
        return _fn(name, loop, a, complex_fn)
    return render


def _binary_math(name: str):
    return lambda loop, a: _fn(name, loop, a)


def _nextafter(loop, a):
    """nextafter; float16 (computed in float, where nextafterf would step by a float's ulp)
    steps its own bits: one up in magnitude away from zero, one down toward it."""
    if loop[0] != np.float16:
        return _fn("nextafter", loop, a)
    return (f"([&]() -> float {{ const float x = {a[0]}, y = {a[1]}; if (x != x || y != y) return x + y; "
            "if (x == y) return y; unsigned short h = gpunb::to_half(x).x; "
            "if ((h & 0x7fff) == 0) h = (y > x) ? 0x0001 : 0x8001; "
            "else if ((x < y) == (x > 0)) h += 1; else h -= 1; "
            "gpunb::half r; r.x = h; return gpunb::to_float(r); }())")


def _int_or_float(int_fn: str, float_fn: Callable):
    def render(loop, a):
        if loop[0].kind in "iu":
            return f"gpunb::{int_fn}({', '.join(a)})"
        return float_fn(loop, a)
    return render


def _absolute(loop, a):
    k = loop[0].kind
    if k == "c":
        return f"gpunb::abs_({a[0]})"
    if k == "f":
        return _fn("fabs", loop, a)
    if k == "i":
        return _typed(loop, f"{a[0]} < 0 ? -{a[0]} : {a[0]}")
    return a[0]


def _reciprocal(loop, a):
    k = loop[0].kind
    if k == "c":
        return f"gpunb::reciprocal_({a[0]})"
    if k == "f":
        return f"(({compute_type(loop[0])})1 / {a[0]})"
    return f"gpunb::reciprocal_int({a[0]})"


def _power(loop, a):
    k = loop[0].kind
    if k in "iu":
        return f"gpunb::ipow({a[0]}, {a[1]})"
    return _fn("pow", loop, a, "pow_")     # complex: NumPy's npy_cpow


def _square(loop, a):
    return f"gpunb::square_({a[0]})" if loop[0].kind == "c" else _typed(loop, f"{a[0]} * {a[0]}")


def _negative(loop, a):
    return _typed(loop, f"-{a[0]}")


def _invert(loop, a):
    return f"(!{a[0]})" if loop[0].kind == "b" else _typed(loop, f"~{a[0]}")


def _signbit(loop, a):
    return f"signbit({a[0]})"


def _truth(loop, x: str) -> str:
    # NumPy has logical loops for every dtype (complex included): truth is "not zero"
    return x if loop[0].kind == "b" else f"gpunb::cast<bool>({x})"


def _logical(sym: str):
    return lambda loop, a: f"({_truth(loop, a[0])} {sym} {_truth(loop, a[1])})"


def _gpunb_call(fn):
    return lambda loop, a: f"gpunb::{fn}({', '.join(a)})"


_PI = "3.141592653589793238462643383279502884"


def _angle(numerator: str, denominator: str):
    """deg2rad / rad2deg: NumPy's ``x * (pi / 180)`` with the constant folded in the loop's
    type (``NPY_PIf / 180.0f`` for float)."""
    def render(loop, a):
        s = "f" if compute_type(loop[0]) == "float" else ""
        return _typed(loop, f"{a[0]} * ({numerator}{s} / {denominator}{s})")
    return render


def _spacing(loop, a):
    """NumPy's spacing: the step to the next value away from zero (toward +inf for -0.0), NaN
    for infinities. float16 is NumPy's ``npy_half_spacing`` bit for bit: always positive, and
    for a negative power of two the smaller step below it (checked on all 65536 halves)."""
    x, t = a[0], compute_type(loop[0])
    if loop[0] == np.float16:
        return (f"([&]() -> float {{ const unsigned short h = gpunb::to_half({x}).x, "
                "e = h & 0x7c00u, s = h & 0x03ffu; unsigned short r; "
                "if (e == 0x7c00u) return __int_as_float(0x7fc00000); "
                "if (h == 0x7bffu) r = 0x7c00u; "
                "else if ((h & 0x8000u) && s == 0) "
                "r = e > 0x2c00u ? e - 0x2c00u : e > 0x0400u ? 1u << ((e >> 10) - 2) : 1u; "
                "else r = e > 0x2800u ? e - 0x2800u : e > 0x0400u ? 1u << ((e >> 10) - 1) : 1u; "
                "gpunb::half o; o.x = r; return gpunb::to_float(o); }())")
    inf = "__int_as_float(0x7f800000)" if t == "float" else "__longlong_as_double(0x7ff0000000000000LL)"
    nxt = _nextafter(loop, [x, f"({x} < 0 ? -{inf} : {inf})"])
    return f"(gpunb::isinf_({x}) ? gpunb::qnan_({x}) : ({t})(({t})({nxt}) - {x}))"


def _divmod(loop, a, j=0):
    return f"gpunb::{('floor_divide', 'remainder')[j]}({a[0]}, {a[1]})"


def _modf(loop, a, j=0):
    """modf: (fractional part, integral part), each with the input's sign (C's modf)."""
    t = compute_type(loop[0])
    return f"([&]() -> {t} {{ {t} i; const {t} f = modf({a[0]}, &i); return {'f' if j == 0 else 'i'}; }}())"


def _frexp(loop, a, j=0):
    """frexp: (mantissa in [0.5, 1), int32 exponent), C's frexp."""
    t = compute_type(loop[0])
    return f"([&]() -> {t if j == 0 else 'int'} {{ int e; const {t} m = frexp({a[0]}, &e); return {'m' if j == 0 else 'e'}; }}())"


_u = np   # NumPy's ufuncs are the reference for names, loops and semantics
_OPS = [
    Op("add", _u.add, _binary("+", "||")),
    Op("subtract", _u.subtract, _binary("-")),
    Op("multiply", _u.multiply, _binary("*", "&&")),
    Op("true_divide", _u.true_divide, _binary("/")),
    Op("floor_divide", _u.floor_divide, _gpunb_call("floor_divide")),
    Op("remainder", _u.remainder, _gpunb_call("remainder")),
    Op("power", _u.power, _power),
    Op("negative", _u.negative, _negative),
    Op("positive", _u.positive, lambda loop, a: a[0]),
    Op("absolute", _u.absolute, _absolute),
    Op("sign", _u.sign, _gpunb_call("sign_")),
    Op("sqrt", _u.sqrt, _unary_math("sqrt", "sqrt_")),
    Op("cbrt", _u.cbrt, _unary_math("cbrt")),
    Op("square", _u.square, _square),
    Op("reciprocal", _u.reciprocal, _reciprocal),
    Op("exp", _u.exp, _unary_math("exp", "exp_")),
    Op("exp2", _u.exp2, _unary_math("exp2", "exp2_")),
    Op("expm1", _u.expm1, _unary_math("expm1", "expm1_")),
    Op("log", _u.log, _unary_math("log", "log_")),
    Op("log2", _u.log2, _unary_math("log2", "log2_")),
    Op("log10", _u.log10, _unary_math("log10", "log10_")),
    Op("log1p", _u.log1p, _unary_math("log1p", "log1p_")),
    Op("sin", _u.sin, _unary_math("sin", "sin_")),
    Op("cos", _u.cos, _unary_math("cos", "cos_")),
    Op("tan", _u.tan, _unary_math("tan", "tan_")),
    Op("arcsin", _u.arcsin, _unary_math("asin", "asin_")),
    Op("arccos", _u.arccos, _unary_math("acos", "acos_")),
    Op("arctan", _u.arctan, _unary_math("atan", "atan_")),
    Op("arctan2", _u.arctan2, _binary_math("atan2")),
    Op("sinh", _u.sinh, _unary_math("sinh", "sinh_")),
    Op("cosh", _u.cosh, _unary_math("cosh", "cosh_")),
    Op("tanh", _u.tanh, _unary_math("tanh", "tanh_")),
    Op("arcsinh", _u.arcsinh, _unary_math("asinh", "asinh_")),
    Op("arccosh", _u.arccosh, _unary_math("acosh", "acosh_")),
    Op("arctanh", _u.arctanh, _unary_math("atanh", "atanh_")),
    Op("hypot", _u.hypot, _binary_math("hypot")),
    Op("logaddexp", _u.logaddexp, _gpunb_call("logaddexp_")),
    Op("logaddexp2", _u.logaddexp2, _gpunb_call("logaddexp2_")),
    Op("floor", _u.floor, _unary_math("floor", int_identity=True)),
    Op("ceil", _u.ceil, _unary_math("ceil", int_identity=True)),
    Op("trunc", _u.trunc, _unary_math("trunc", int_identity=True)),
    Op("rint", _u.rint, _unary_math("rint", "rint_", int_identity=True)),
    Op("maximum", _u.maximum, lambda loop, a: f"({a[0]} || {a[1]})" if loop[0].kind == "b" else f"gpunb::maximum_({a[0]}, {a[1]})"),
    Op("minimum", _u.minimum, lambda loop, a: f"({a[0]} && {a[1]})" if loop[0].kind == "b" else f"gpunb::minimum_({a[0]}, {a[1]})"),
    Op("fmax", _u.fmax, lambda loop, a: f"({a[0]} || {a[1]})" if loop[0].kind == "b" else f"gpunb::fmax_({a[0]}, {a[1]})"),
    Op("fmin", _u.fmin, lambda loop, a: f"({a[0]} && {a[1]})" if loop[0].kind == "b" else f"gpunb::fmin_({a[0]}, {a[1]})"),
    Op("isnan", _u.isnan, _gpunb_call("isnan_")),
    Op("isinf", _u.isinf, _gpunb_call("isinf_")),
    Op("isfinite", _u.isfinite, _gpunb_call("isfinite_")),
    Op("signbit", _u.signbit, _signbit),
    Op("copysign", _u.copysign, _binary_math("copysign")),
    Op("nextafter", _u.nextafter, _nextafter),
    Op("equal", _u.equal, _compare("==")),
    Op("not_equal", _u.not_equal, _compare("!=")),
    Op("less", _u.less, _compare("<")),
    Op("less_equal", _u.less_equal, _compare("<=")),
    Op("greater", _u.greater, _compare(">")),
    Op("greater_equal", _u.greater_equal, _compare(">=")),
    Op("logical_and", _u.logical_and, _logical("&&")),
    Op("logical_or", _u.logical_or, _logical("||")),
    Op("logical_xor", _u.logical_xor, _logical("!=")),
    Op("logical_not", _u.logical_not, lambda loop, a: f"(!{_truth(loop, a[0])})"),
    Op("bitwise_and", _u.bitwise_and, _binary("&", "&&")),
    Op("bitwise_or", _u.bitwise_or, _binary("|", "||")),
    Op("bitwise_xor", _u.bitwise_xor, _binary("^", "!=")),
    Op("invert", _u.invert, _invert),
    Op("left_shift", _u.left_shift, _gpunb_call("lshift")),
    Op("right_shift", _u.right_shift, _gpunb_call("rshift")),
    Op("conjugate", _u.conjugate, lambda loop, a: f"gpunb::conj_({a[0]})" if loop[0].kind == "c" else a[0]),
    Op("clip", np._core.umath.clip, _gpunb_call("clip_")),
    Op("deg2rad", _u.deg2rad, _angle(_PI, "180.0")),
    Op("rad2deg", _u.rad2deg, _angle("180.0", _PI)),
    Op("fabs", _u.fabs, _unary_math("fabs")),
    Op("fmod", _u.fmod, _gpunb_call("fmod_")),
    Op("float_power", _u.float_power, _power),
    Op("heaviside", _u.heaviside, _gpunb_call("heaviside_")),
    Op("gcd", _u.gcd, _gpunb_call("gcd_")),
    Op("lcm", _u.lcm, _gpunb_call("lcm_")),
    Op("ldexp", _u.ldexp, _gpunb_call("ldexp_")),
    Op("bitwise_count", _u.bitwise_count, _gpunb_call("bitwise_count_")),
    Op("divmod", _u.divmod, _divmod),
    Op("modf", _u.modf, _modf),
    Op("frexp", _u.frexp, _frexp),
    Op("spacing", _u.spacing, _spacing),
    Op("where", None, lambda loop, a: f"({a[0]} ? {a[1]} : {a[2]})", _where_loop, (3, 1)),
]

OPS: dict[str, Op] = {op.name: op for op in _OPS}
ALIASES = {"divide": "true_divide", "mod": "remainder", "abs": "absolute",
           "bitwise_not": "invert", "conj": "conjugate", "radians": "deg2rad",
           "degrees": "rad2deg"}


def get(name: str) -> Op:
    try:
        return OPS[ALIASES.get(name, name)]
    except KeyError:
        raise NotImplementedError(f"gpunb has no GPU implementation of {name!r}") from None
