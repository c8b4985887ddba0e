"""gpunb.fuse without a GPU: tracing, type promotion, constants as exact literals, broadcasting
views of inputs, tuple outputs, fused reductions, errors and the trace cache; every generated
kernel compiled by real NVRTC (many kernels per NVRTC call, so the suite stays quick)."""

import math

import numpy as np
import pytest

import gpunb as gp
from gpunb.core.fusion import function as fused_module
from gpunb.core.kernels import ir
from gpunb.core.kernels.elementwise import codegen as cg
from gpunb.core.kernels.reduction import codegen as rc
from gpunb.core.build.compiler import compile as nvrtc
from gpunb.core.dtypes import literal
from gpunb.core.kernels.elementwise.ops import OPS
from gpunb._math.ufuncs import UFUNCS

ARCH = "sm_90"


def _compile_all(inspections):
    """One NVRTC call for many inspected kernels: the prelude once, then each kernel's body."""
    seen, parts = set(), [cg.prelude(), cg.VEC_TYPE, ""]
    for i in inspections:
        if i.name in seen:
            continue
        seen.add(i.name)
        if i.kind == "elementwise":
            parts.append(cg.render(i.kernel)[len(cg.prelude()):].replace(cg.VEC_TYPE, ""))
        else:
            parts.append(rc.body(i.kernel))
    return nvrtc("\n".join(parts), (), ARCH)


def a(shape, dtype="float32"):
    return np.zeros(shape, dtype)


# -- elementwise ------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_x_times_y_plus_sin_z(dt):
    @gp.fuse
    def f(x, y, z):
        return x * y + gp.sin(z)

    i = f.inspect(a(100, dt), a(100, dt), a(100, dt), arch=ARCH)
    assert i.kind == "elementwise" and i.name.startswith("fused_f_")
    k = i.kernel
    assert k.layout == "contiguous" and [o.dtype for o in k.operands] == [np.dtype(dt)] * 3
    assert k.outputs[0][0] == np.dtype(dt)
    fn = "sinf(" if dt == "float32" else "sin("
    assert fn in i.source and f"{i.name}_vec" in i.source
    assert len(i.compile()) > 0
    assert i.cubin


def test_mixed_int32_float32_promotes_as_numpy():
    @gp.fuse
    def f(x, y, z):
        return x * y + gp.sin(z)

    i = f.inspect(a(10, "int32"), a(10, "float32"), a(10, "float32"))
    expect = (np.zeros(1, np.int32) * np.zeros(1, np.float32) + np.sin(np.zeros(1, np.float32))).dtype
    assert i.kernel.outputs[0][0] == expect == np.dtype("float64")
    assert "gpunb::cast<double>" in i.source
    _compile_all([i])


def test_numpy_ufuncs_and_operators_trace():
    @gp.fuse
    def f(x, y):
        return np.exp(-x) ** 2 + abs(y) / 3 - (x >= y) * 1.5 + 2 ** x + 1 - x % 2

    i = f.inspect(a(8), a(8), arch=ARCH)
    ref = (np.exp(-a(8)) ** 2 + abs(a(8)) / 3 - (a(8) >= a(8)) * 1.5 + 2 ** a(8) + 1 - a(8) % 2).dtype
    assert i.kernel.outputs[0][0] == ref
    ops_used = set()

    def walk(n):
        if isinstance(n, ir.Apply):
            ops_used.add(n.op)
            for c in n.args:
                walk(c)
        elif isinstance(n, ir.Cast):
            walk(n.arg)
    walk(i.kernel.outputs[0][1])
    assert {"exp", "negative", "square", "absolute", "true_divide", "greater_equal", "multiply",
            "power", "add", "subtract", "remainder"} <= ops_used
    i.compile()


def test_where_inf_over_newaxis_one_kernel():
    @gp.fuse
    def f(mask, points):
        return gp.where(mask[:, gp.newaxis], gp.inf, points)

    i = f.inspect(a(10, bool), a((10, 3)), arch=ARCH)
    k = i.kernel
    assert i.kind == "elementwise" and len(k.outputs) == 1
    assert "__int_as_float(0x7f800000)" in i.source           # exact float32 inf
    # the newaxis is an operand view: the traced operand reads mask[:, None]
    t = next(iter(f._traced.values()))
    assert any(steps == (("getitem", (slice(None), None)),) for _, steps in t.operands)
    assert k.layout == "strided"                               # the mask broadcasts along axis 1
    i.compile()


@pytest.mark.parametrize("view", [lambda m: m[:, None], lambda m: m[..., None],
                                  lambda m: m.reshape(-1, 1), lambda m: np.expand_dims(m, 1),
                                  lambda m: m[None].reshape(10, 1)])
def test_views_of_inputs(view):
    @gp.fuse
    def f(m, p):
        return gp.where(view(m), -gp.inf, p)

    i = f.inspect(a(10, bool), a((10, 3), "float64"))
    assert "(-__longlong_as_double(0x7ff0000000000000LL))" in i.source
    assert i.kernel.outputs[0][0] == np.dtype("float64")
    _compile_all([i])


def test_row_view_none_and_float64_nan():
    @gp.fuse
    def f(x, row):
        return gp.where(gp.isnan(x), gp.nan, x - row[None])

    i = f.inspect(a((4, 5), "float64"), a(5, "float64"))
    assert "__longlong_as_double(0x7ff8000000000000LL)" in i.source
    _compile_all([i])


@pytest.mark.parametrize("dt, const, expect_dt", [
    ("float32", 2.5, "float32"), ("float64", 0.1, "float64"), ("int32", 3, "int32"),
    ("int32", 2.5, "float64"), ("float32", 1j, "complex64"), ("int8", True, "int8"),
    ("float32", math.nan, "float32"), ("float32", gp.pi, "float32"), ("float64", gp.e, "float64"),
    ("float32", np.inf, "float32"), ("float64", -np.inf, "float64"), ("float16", 0.1, "float16"),
    ("float32", np.float64(0.1), "float64"), ("uint8", 200, "uint8"),
])
def test_constants_render_as_exact_literals_of_the_promoted_type(dt, const, expect_dt):
    @gp.fuse
    def f(x):
        return x + const

    i = f.inspect(a(6, dt))
    ref = (np.zeros(2, dt) + const).dtype
    assert np.dtype(expect_dt) == ref == i.kernel.outputs[0][0]
    consts = []

    def walk(n):
        if isinstance(n, ir.Const):
            consts.append(n)
        for c in getattr(n, "args", ()):
            walk(c)
        if isinstance(n, ir.Cast):
            walk(n.arg)
    walk(i.kernel.outputs[0][1])
    (c,) = consts
    cdt = np.dtype(const.dtype) if isinstance(const, np.generic) else \
        np.dtype(bool) if isinstance(const, bool) else i.kernel.outputs[0][0]
    if not isinstance(const, (np.generic, bool)) and isinstance(const, int) and np.dtype(dt).kind == "i":
        cdt = np.dtype(dt)
    assert c.dtype == cdt
    assert literal(c.value[1], c.dtype) in i.source
    _compile_all([i])


def test_integer_overflowing_constant_raises_as_numpy():
    @gp.fuse
    def f(x):
        return x + 300

    with pytest.raises(OverflowError):
        f.inspect(a(3, "int8"))


def test_scalar_argument_is_a_parameter_not_a_recompile():
    @gp.fuse
    def f(x, s):
        return x * s + 1.0

    i2 = f.inspect(a(8), 2.0)
    i3 = f.inspect(a(8), 3.0)
    assert (i2.name, i2.source) == (i3.name, i3.source) and f.traces == 1
    assert [o.kind for o in i2.kernel.operands] == ["array", "scalar"]
    assert "const double a1" in i2.source             # weak Python float: float32 loop, cast in kernel
    assert i2.kernel.outputs[0][0] == np.dtype("float32")        # NEP 50: x * 2.0 stays float32
    i = f.inspect(a(8), np.float64(2.0))                           # a NumPy scalar is strong
    assert i.kernel.outputs[0][0] == np.dtype("float64") and f.traces == 2
    i_int = f.inspect(a(8, "int16"), 7)
    assert i_int.kernel.outputs[0][0] == np.dtype("float64")     # int16 * int -> int16; + 1.0 -> float64
    _compile_all([i2, i, i_int])


def test_tuple_return_is_one_kernel_with_two_outputs():
    @gp.fuse
    def f(x, y):
        d = x - y
        return d * d, gp.sqrt(gp.abs(d)) > 1

    i = f.inspect(a(16), a(16), arch=ARCH)
    assert [dt for dt, _ in i.kernel.outputs] == [np.dtype("float32"), np.dtype(bool)]
    assert "o1" in i.source
    i.compile()


def test_astype_and_clip():
    @gp.fuse
    def f(x):
        return gp.clip(x, 0, 10).astype(np.int16) + np.clip(x, -1.5, None).astype("int8")

    i = f.inspect(a(5))
    assert i.kernel.outputs[0][0] == np.dtype("int16")
    _compile_all([i])


def _cases():
    for name in sorted(OPS):
        op = OPS[name]
        for dt in ("float32", "int32"):
            try:
                op.resolve((np.dtype(dt),) * op.nin)
            except TypeError:
                continue
            yield name, dt


def test_every_ufunc_traced_for_float32_and_int32_compiles():
    inspections = []
    for name, dt in _cases():
        u = UFUNCS[name]

        def f(*xs, u=u):
            return u(*xs)
        f.__name__ = f"op_{name}"
        fused = gp.fuse(f)
        inspections.append(fused.inspect(*[a(4, dt)] * u.nin))
        if u.nin == 2:      # with a weak constant
            const = 2 if dt == "int32" else 2.0

            def g(x, u=u, c=const):
                return u(x, c)
            g.__name__ = f"opc_{name}"
            try:
                inspections.append(gp.fuse(g).inspect(a(4, dt)))
            except TypeError:
                pass
    assert len(inspections) > 100
    assert _compile_all(inspections)


# -- reductions -------------------------------------------------------------------------------

def test_fused_reductions_compile():
    @gp.fuse
    def softmax_denominator(x, m):
        return gp.exp(x - m[:, None]).sum(axis=1)

    @gp.fuse
    def total(x, y):
        return (x * y).sum()

    @gp.fuse
    def rowmax(x, y):
        return gp.abs(x - y).max(axis=1, keepdims=True)

    @gp.fuse
    def avg(x):
        return (x * 2).mean(axis=1, keepdims=True)

    @gp.fuse
    def anyneg(x):
        return (x < 0).any()

    @gp.fuse
    def npsum(x):
        return np.sum(x * x, axis=0)

    X, m = a((10, 30)), a(10)
    insps = [softmax_denominator.inspect(X, m), total.inspect(X, X), rowmax.inspect(X, X),
             avg.inspect(a((10, 30), "int32")), anyneg.inspect(X), npsum.inspect(X)]
    for i in insps:
        assert i.kind == "reduction"
    k = insps[0].kernel
    assert k.reducer == "sum" and k.out == np.dtype("float32")
    # m[:, None] is constant along the reduced axis: read once per row, so x takes _vec
    assert [o.kind for o in k.operands] == ["array", "outer"] and rc.has_vec(k)
    assert [o.kind for o in insps[1].kernel.operands] == ["array", "array"]
    assert "expf(" in insps[0].source
    assert insps[1].kernel.ndim_outer == 1 and insps[1].kernel.reducer == "sum"
    assert insps[2].kernel.reducer == "max"
    assert insps[3].kernel.finish == "divide" and insps[3].kernel.out == np.dtype("float64")
    assert insps[4].kernel.reducer == "any" and insps[4].kernel.out == np.dtype(bool)
    assert _compile_all(insps)
    insps[0].arch = ARCH
    assert insps[0].compile()


def test_int32_sum_accumulates_in_int64():
    @gp.fuse
    def f(x, y):
        return (x + y).sum(axis=0)

    i = f.inspect(a((3, 4), "int32"), a((3, 4), "int32"))
    assert i.kernel.out == np.dtype("int64")
    _compile_all([i])


# -- errors -----------------------------------------------------------------------------------

def test_if_on_a_traced_value_raises():
    @gp.fuse
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="@fuse cannot trace Python control flow"):
        f.inspect(a(3))


def test_unsupported_function_raises():
    @gp.fuse
    def f(x):
        return np.linalg.norm(x)

    with pytest.raises(gp.FusionError, match="@fuse cannot trace numpy.linalg.norm"):
        f.inspect(a(3))

    @gp.fuse
    def g(x):
        return np.sort(x)

    with pytest.raises(NotImplementedError, match="numpy.sort"):
        g.inspect(a(3))

    @gp.fuse
    def h(x):
        return gp.sum(x * 2, axis=0)      # gpunb.sum of a traced value fuses, as x.sum() does

    assert h.inspect(a(3)).kind == "reduction"

    @gp.fuse
    def k(x):
        return gp.argmax(x)               # not a fusable reduction: named, not run unfused

    with pytest.raises((NotImplementedError, TypeError), match="argmax|trace"):
        k.inspect(a(3))


def test_reduction_followed_by_elementwise_raises():
    @gp.fuse
    def f(x):
        return x.sum(axis=0) + 1

    with pytest.raises(NotImplementedError, match=r"add after a reduction \(sum\)"):
        f.inspect(a((3, 3)))

    @gp.fuse
    def g(x):
        return x.sum(), x

    with pytest.raises(NotImplementedError, match="reduction among several outputs"):
        g.inspect(a(3))


def test_other_untraceable_operations_raise():
    cases = [
        (lambda x: len(x), TypeError, "len"),
        (lambda x: x[x > 0], NotImplementedError, "indexing with a traced value"),
        (lambda x: (x + 1)[:, None], NotImplementedError, "computed value"),
        (lambda x: x.shape[0] * x, NotImplementedError, "x.shape"),
        (lambda x: np.asarray(x), TypeError, "NumPy array"),
        (lambda x: float(x), TypeError, "float()"),
        (lambda x: x + np.ones(3), NotImplementedError, "ndarray"),
        (lambda x: 3.0, NotImplementedError, "returning float"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            gp.fuse(fn).inspect(a((3, 3)))


def test_in_place_operator_raises():
    def f(x):
        x += 1
        return x

    with pytest.raises(NotImplementedError, match="in-place"):
        gp.fuse(f).inspect(a(3))


# -- cache ------------------------------------------------------------------------------------

def test_trace_cache_per_dtype_and_ndim_not_shape():
    @gp.fuse()
    def f(x, y):
        return x + y

    f.inspect(a(5), a(5))
    f.inspect(a(500), a(500))
    f.inspect(a(7), a(1))
    assert f.traces == 1
    f.inspect(a((2, 3)), a(3))
    assert f.traces == 2
    f.inspect(a(5, "float64"), a(5))
    assert f.traces == 3
    f.inspect(a(5), 1.0)
    f.inspect(a(5), 2.0)
    assert f.traces == 4
    f.inspect(a(5), 1)
    assert f.traces == 5


def test_kernel_name_and_decorator_forms():
    @gp.fuse(kernel_name="my_kernel")
    def f(x):
        return x * 2

    i = f.inspect(a(4))
    assert i.name == "my_kernel" and "my_kernel_vec" in i.source
    with pytest.raises(ValueError):
        gp.fuse(kernel_name="not an identifier")
    g = gp.fuse(lambda x: x + 1)
    assert g.inspect(a(4)).name.startswith("fused__lambda__")
    assert gp.fuse is fused_module.fuse


def test_strided_and_uniform_layouts_in_inspect():
    @gp.fuse
    def f(x, y):
        return x * y

    i = f.inspect(a((6, 8))[:, ::2], a((6, 4)))
    assert i.kernel.layout == "strided"
    i = f.inspect(a((6, 4)), a(1))
    assert [o.kind for o in i.kernel.operands] == ["array", "uniform"]
    _compile_all([i])


# -- the traced IR evaluated with NumPy (checks tracing semantics without a GPU) --------------

def _evaluate(fused, *args):
    """Run the traced IR of ``fused`` for ``args`` with NumPy: what the kernel computes."""
    key = tuple(fused_module._arg_key(x, i) for i, x in enumerate(args))
    t = fused._trace(key)
    vals = []
    for (arg, steps), kind, dt in zip(t.operands, t.operand_kinds, t.operand_dtypes):
        vals.append(dt.type(args[arg]) if kind == "scalar" else fused_module._apply_steps(args[arg], steps, True))

    def ev(n):
        if isinstance(n, ir.Arg):
            return vals[n.index]
        if isinstance(n, ir.Const):
            return n.dtype.type(n.value[1])
        if isinstance(n, ir.Cast):
            return np.asarray(ev(n.arg)).astype(n.dtype)
        with np.errstate(all="ignore"):
            r = getattr(np, n.op)(*[np.asarray(ev(c)) for c in n.args])
        return np.asarray(r).astype(n.dtype)

    if t.reduction is None:
        outs = [np.asarray(ev(node)).astype(dt) for dt, node in t.outputs]
        return tuple(outs) if t.tuple_result else outs[0]
    r = t.reduction
    v = np.asarray(ev(r["value"]))
    arrays = [x for x, k in zip(vals, t.operand_kinds) if k == "array"]
    v = np.broadcast_to(v, np.broadcast_shapes(*[x.shape for x in arrays]))
    red = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any, "all": np.all}
    if r["func"] == "mean":
        out = np.sum(v, axis=r["axes"], keepdims=r["keepdims"]) / np.prod([v.shape[d] for d in r["axes"]])
    else:
        out = red[r["func"]](v, axis=r["axes"], keepdims=r["keepdims"])
    return np.asarray(out).astype(r["out"])


def _same(got, want):
    assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True) if got.dtype.kind in "fc" \
        else np.testing.assert_array_equal(got, want)


rng = np.random.default_rng(3)


@pytest.mark.parametrize("fn", [
    lambda xp, x, y, s: x * y + xp.sin(x),
    lambda xp, x, y, s: xp.where(x > 0, xp.inf, y * s),
    lambda xp, x, y, s: (x - y) ** 2 / (1 + abs(y)) - s,
    lambda xp, x, y, s: xp.clip(x, -0.5, 0.5) + y.astype(np.float64),
    lambda xp, x, y, s: xp.maximum(x, 0) * 3 + (y < s),
    lambda xp, x, y, s: x[:, None] * y[None, :] + s,
    lambda xp, x, y, s: xp.exp(x.reshape(-1, 1) - y[None]).sum(axis=1),
    lambda xp, x, y, s: (x * y - s).mean(),
    lambda xp, x, y, s: xp.abs(np.expand_dims(x, 0) - y[:, None]).max(axis=0, keepdims=True),
    lambda xp, x, y, s: (x > s).any(),
    lambda xp, x, y, s: xp.where(xp.isnan(x / y), xp.nan, xp.pi * x) // 2,
])
@pytest.mark.parametrize("dt", ["float32", "float64", "int32"])
@pytest.mark.parametrize("s", [2, 0.5, np.float32(1.5)])
def test_traced_ir_matches_numpy(fn, dt, s):
    x, y = (rng.standard_normal(12) * 4).astype(dt), (rng.standard_normal(12) * 4).astype(dt)
    f = gp.fuse(lambda x, y, s: fn(gp, x, y, s))
    with np.errstate(all="ignore"):
        want = np.asarray(fn(np, x, y, s))
    _same(_evaluate(f, x, y, s), want)


def test_traced_tuple_matches_numpy():
    def fn(x, y):
        return x * 2.5, x > y

    x, y = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    got = _evaluate(gp.fuse(fn), x, y)
    for g, w in zip(got, fn(x, y)):
        _same(g, w)


def test_weak_int_argument_that_its_int_loop_cannot_hold_raises_overflow():
    # NEP 50: int8 array + 1000 raises; the kernel would wrap, so the call checks first
    @gp.fuse
    def f(x, s):
        return x + s

    x8 = a(3, "int8")
    with pytest.raises(OverflowError, match="1000"):
        f(x8, 1000)
    with pytest.raises(OverflowError):
        f(x8, -129)
    # in range: the check passes and the call goes on to need GPU arrays
    with pytest.raises((TypeError, gp.GPUUnavailableError)):
        f(x8, 127)
    # a float loop takes any int, as NumPy does
    with pytest.raises((TypeError, gp.GPUUnavailableError)) as e:
        f(a(3, "float32"), 10**6)
    assert not isinstance(e.value, OverflowError)


def test_reduction_kinds():
    kinds = fused_module._reduction_kinds
    assert kinds([(64, 4), (4, 0), None], (1,)) == ("array", "outer", "scalar")
    assert kinds([(4, 0), (64, 4)], (1,)) == ("outer", "array")
    assert kinds([(0, 4), (64, 4)], (0,)) == ("outer", "array")
    assert kinds([(64, 4), (4, 0)], (0, 1)) == ("array", "array")
    assert kinds([(4, 0), (8, 0)], (1,)) == ("array", "outer")     # one must stay 'array'


def test_plan_signature_names_what_decides_the_launch(monkeypatch):
    # a plan is replayed for calls with an equal signature, so the signature must change with
    # anything that changes the launch (dtype, shape, strides, alignment, scalar kind) and
    # stay equal for new data in the same layout; other kinds of argument get no plan
    from gpunb.core.ndarray import MemoryPointer, ndarray
    from gpunb.core.runtime import driver

    assert fused_module._signature((1.0,)) is None      # no device in use yet: no plan
    monkeypatch.setattr(driver, "active", object())     # a device context (the first call's)

    def view(ptr, shape, strides, dt="float32"):
        return ndarray._view(MemoryPointer(ptr, None, 0), shape, strides, np.dtype(dt), None)

    sig = fused_module._signature
    base = sig((view(0x1000, (4, 8), (32, 4)), 2.0))
    assert sig((view(0x9000, (4, 8), (32, 4)), 5.5)) == base          # new data, new value
    assert sig((view(0x1010, (4, 8), (32, 4)), 2.0)) == base          # same alignment mod 16
    for other in [(view(0x1004, (4, 8), (32, 4)), 2.0),               # alignment
                  (view(0x1000, (4, 8), (64, 4)), 2.0),               # strides
                  (view(0x1000, (8, 4), (16, 4)), 2.0),               # shape
                  (view(0x1000, (4, 8), (32, 4), "int32"), 2.0),      # dtype
                  (view(0x1000, (4, 8), (32, 4)), 2),                 # weak int, not float
                  (view(0x1000, (4, 8), (32, 4)), np.float32(2.0)),   # NumPy scalar: strong
                  (view(0x1000, (4, 8), (32, 4)), True)]:
        assert sig(other) != base, other
    assert sig((np.zeros(3), 1.0)) is None                            # host arrays: never
    assert sig((np.float32(1),)) is not None and sig((np.array(1.0),)) is None


def test_isclose_traces_into_the_callers_kernel():
    @gp.fuse
    def close_and_positive(x, y):
        return gp.isclose(x, y) & (x > 0)

    @gp.fuse
    def count_close(x):
        return np.isclose(x * 2, 1.0, equal_nan=True).sum()

    @gp.fuse
    def close_to_inf(x):
        return gp.isclose(x, math.inf)

    i1 = close_and_positive.inspect(a(10), a(10, "float64"), arch=ARCH)
    i2 = count_close.inspect(a(10, "int32"), arch=ARCH)
    i3 = close_to_inf.inspect(a(10), arch=ARCH)
    assert (i1.kind, i2.kind, i3.kind) == ("elementwise", "reduction", "elementwise")
    _compile_all([i1, i2, i3])


_NULL_GPU_PLANS = r"""
import ctypes, struct, sys, threading
sys.path.insert(0, "benchmarks")
import host_null_gpu
host_null_gpu.install()
import numpy as np
import gpunb as gp
from gpunb.core.ndarray import ndarray
from gpunb.core.runtime import fastcall

made, log = {}, []
init = fastcall.Prepared.__init__
def register(self, *a):
    init(self, *a)
    made[self._params] = self
def values(p):
    return [o.value if isinstance(o, ctypes.c_void_p) else bytes(o) for o in p.objects]
def cu_launch(fn, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra):
    p = made.get(params)
    log.append(None if p is None else (p.function, gx, bx, values(p)))
    return (0,)
fastcall.Prepared.__init__ = register
fastcall._cu_launch = cu_launch
from gpunb.core.runtime import libcuda
libcuda.set_current = lambda handle: None       # (another thread makes the context current)

@gp.fuse
def f(x, y, s):
    return x[1:] * y[:-1] + s, x[1:] - s

@gp.fuse
def g(x, s):
    return (x * s).sum()

x, y = ndarray((1000,), np.float32), ndarray((1000,), np.float32)
runs = []
for k in range(6):
    log.clear()
    if k == 4:      # another thread: the plan's locked objects
        got = []
        t = threading.Thread(target=lambda: got.append((*f(x, y, 2.5), g(y, 3.0))))
        t.start()
        t.join()
        a, b, c = got[0]
    else:
        a, b, c = (*f(x, y, 2.5), g(y, 3.0))
    names = {}
    rows = []
    for row in log:
        if row is None:     # (the first call's general launches: not prepared objects)
            rows.append(None)
            continue
        fn, gx, bx, vals = row
        rows.append((fn, gx, bx, [names.setdefault(v, len(names)) if isinstance(v, int)
                                  else v.hex() if isinstance(v, bytes) else v for v in vals]))
    runs.append((rows, a.shape, b.shape, c.shape, x.data.ptr + 4 in names, a.data.ptr in names,
                 c.data.ptr in names))
print(repr(runs))
"""


def test_plans_replay_from_their_source_as_the_locked_path():
    """Without a GPU (the driver's calls made no-ops): fused calls with a scalar, views at
    an offset taken inside the function and two results, and a split reduction (a temporary buffer), replay under their
    plans' locks, then from
    the plan's generated source (main thread) and the locked objects (another thread), each
    launch with the same kernel, grid and parameters: the views' pointers at their offset,
    the new results', the scalar's bytes."""
    import ast
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-c", _NULL_GPU_PLANS], cwd=root, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    runs = ast.literal_eval(r.stdout.strip().splitlines()[-1])
    first_replay = runs[1]
    assert first_replay[0] and all(row is not None for row in first_replay[0])
    for k, run in enumerate(runs[1:], 1):
        assert run[0] == first_replay[0], k
        assert run[1:] == ((999,), (999,), (), True, True, True), k
