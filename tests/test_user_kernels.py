"""User kernels in CuPy's language: ElementwiseKernel, ReductionKernel, and RawModule's
loose ends. CPU: parameter parsing, CuPy's errors, type resolution, and every generated
variant compiled by NVRTC for sm_90. GPU: CuPy's documented examples against NumPy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core.build.compiler import compile as nvrtc
from gpunb.core.dtypes import SUPPORTED
from gpunb.core.kernels.reduction import codegen as rc
from gpunb.core.kernels.reduction import ir as rir
from gpunb.core.kernels.user import codegen as ucg
from gpunb.core.kernels.user import ir as uir
from gpunb.core.ndarray import MemoryPointer, ndarray
from tests import data

DTYPES = [np.dtype(d) for d in SUPPORTED]


def fake(shape=(3, 4), dtype="float32", strides=None):
    dt = np.dtype(dtype)
    if strides is None:
        strides = tuple(int(s) for s in np.empty(shape, dt).strides)
    return ndarray._view(MemoryPointer(0x10000), shape, strides, dt, None)


SQDIFF = ("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")
SQDIFF_T = ("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff_generic")


# -- parameters --------------------------------------------------------------------------------

def test_parse_params():
    ps = uir.parse_params("float32 x, T y, raw T z, raw _non_const int8 w", True)
    assert [(p.name, p.dtype, p.ctype, p.raw, p.is_const) for p in ps] == [
        ("x", np.dtype("float32"), "float", False, True), ("y", None, "T", False, True),
        ("z", None, "T", True, True), ("w", np.dtype("int8"), "signed char", True, False)]
    assert uir.parse_params("", False) == ()


@pytest.mark.parametrize("text, exc, msg", [
    ("x", ValueError, "Syntax error: x"),
    ("float32 x, y", ValueError, "Syntax error:  y"),
    ("const float32 x", ValueError, 'Unknown keyword "const"'),
    ("floot32 x", TypeError, "floot32"),
    ("float32 1x", ValueError, "Syntax error"),
])
def test_bad_parameter_strings(text, exc, msg):
    with pytest.raises(exc, match=msg):
        gp.ElementwiseKernel(text, "T z", "z = 0")


def test_bad_names():
    with pytest.raises(ValueError, match="Can not use 'i' as a parameter name"):
        gp.ElementwiseKernel("T i", "T z", "z = i")
    with pytest.raises(ValueError, match='Invalid kernel name: "my kernel"'):
        gp.ElementwiseKernel("T x", "T z", "z = x", "my kernel")
    with pytest.raises(ValueError, match="Duplicated parameter name"):
        gp.ElementwiseKernel("T x", "T x", "x = x")
    with pytest.raises(TypeError, match="operation must be a str"):
        gp.ElementwiseKernel("T x", "T z", None)


def test_decide_types_cupy_rules():
    ins = uir.parse_params("T x, T y, float32 w", True)
    outs = uir.parse_params("T z", False)
    f4, i4 = np.dtype("float32"), np.dtype("int32")
    assert uir.decide_types(ins, outs, (i4, None, f4), ()) == ((i4, i4, f4), (i4,), (("T", i4),))
    with pytest.raises(TypeError, match="Type is mismatched. y float32 int32 T"):
        uir.decide_types(ins, outs, (i4, f4, f4), ())
    with pytest.raises(TypeError, match="Type is mismatched. w int32 float32"):
        uir.decide_types(ins, outs, (i4, i4, i4), ())
    # an output given decides T before the inputs (CuPy's order)
    with pytest.raises(TypeError, match="Type is mismatched. x int32 float32 T"):
        uir.decide_types(ins, outs, (i4, None, f4), (f4,))
    # a placeholder only scalars meet: CuPy's KeyError, also a TypeError here
    with pytest.raises(KeyError):
        uir.decide_types(ins, outs, (None, None, f4), ())
    with pytest.raises(TypeError, match="Cannot determine the type of 'T'"):
        uir.decide_types(ins, outs, (None, None, f4), ())


def test_call_errors_before_any_launch():
    k = gp.ElementwiseKernel(*SQDIFF)
    x, y = fake(), fake()
    with pytest.raises(TypeError, match=r"Wrong number of arguments for 'squared_diff'. It must be "
                                        r"either 2 or 3 \(with outputs\), but given 1."):
        k(x)
    with pytest.raises(TypeError, match="Wrong arguments"):
        k(x, y, bogus=1)
    with pytest.raises(ValueError, match="Loop size is undecided."):
        k(1.0, 2.0)
    with pytest.raises(ValueError, match="Specified 'size' can be used only if all of the ndarray are 'raw'."):
        k(x, y, size=12)
    with pytest.raises(TypeError, match="Type is mismatched. x int32 float32"):
        k(fake(dtype="int32"), y)
    with pytest.raises(ValueError, match="Out shape is mismatched"):
        k(x, y, fake((4,)))
    with pytest.raises(TypeError, match="Output arguments type must be gpunb.ndarray"):
        k(x, y, 3.0)
    with pytest.raises(TypeError, match="Type is mismatched. z float64 float32"):
        k(x, y, fake(dtype="float64"))
    with pytest.raises(ValueError, match="could not be broadcast"):
        k(fake((3, 4)), fake((5,)))
    with pytest.raises(TypeError, match="NumPy array in host memory"):
        k(np.ones((3, 4), np.float32), y)
    kt = gp.ElementwiseKernel(*SQDIFF_T)
    with pytest.raises(TypeError, match="Type is mismatched. y float64 float32 T"):
        kt(x, fake(dtype="float64"))
    raw_out = gp.ElementwiseKernel("T x", "raw T y", "y[i] = x", "to_raw")
    with pytest.raises(ValueError, match="Output array size is Undecided"):
        raw_out(x)
    all_raw = gp.ElementwiseKernel("raw T x", "raw T y", "y[i] = x[i]", "copy_raw")
    with pytest.raises(ValueError, match="Loop size is undecided."):
        all_raw(x, fake())


def test_reduction_kernel_errors():
    with pytest.raises(NotImplementedError, match="2 outputs"):
        gp.ReductionKernel("T x", "T y, T z", "x", "a + b", "y = a", "0")
    with pytest.raises(NotImplementedError, match="raw"):
        gp.ReductionKernel("raw T x", "T y", "x", "a + b", "y = a", "0")
    rk = gp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    with pytest.raises(TypeError, match="Wrong number of arguments for l2norm"):
        rk()
    with pytest.raises(ValueError, match="cannot specify 'out' as both"):
        rk(fake(), fake((3,)), out=fake((3,)))
    with pytest.raises(ValueError, match="Out shape is mismatched"):
        rk(fake(), out=fake((4,)), axis=1)
    with pytest.raises(np.exceptions.AxisError):
        rk(fake(), axis=2)


def test_reads_output():
    def k(op):
        return uir.UserElementwise("k", (uir.Arg("y", np.dtype("f4"), "array", False, True),), op,
                                   "", "", "", ())
    a = k("").args[0]
    assert not ucg.reads_output(k("y = 1"), a)
    assert not ucg.reads_output(k("y = x == 1"), a)
    assert ucg.reads_output(k("y += 1"), a)
    assert ucg.reads_output(k("y = y * 2"), a)
    assert ucg.reads_output(k("y == 1 ? 0 : 1"), a)
    assert not ucg.has_vec(k("if (i > 3) return; y = 1"))
    assert ucg.has_vec(k("y = 1"))


def test_prepared_launch_sets_parameters_in_order(monkeypatch):
    """The prepared (repeat-call) path without a GPU: pointers, converted scalars, outputs and
    the element count land in the launch's parameter objects in the kernel's order."""
    import itertools
    import struct

    from gpunb.core.kernels.user import run as urun
    from gpunb.core.runtime import driver

    class Ctx:
        prepared: dict = {}
        default_handle = 7
        # the pool the prepared calls allocate their outputs from
        pool = type("Pool", (), {"malloc": lambda self, nbytes: MemoryPointer(next(ptrs))})()

        def remember(self, key, value):     # DeviceContext.remember, without the limit
            self.prepared[key] = value
            return value

    ptrs = itertools.count(0x20000, 0x1000)

    def new(shape, dt):
        a = ndarray._view(MemoryPointer(next(ptrs)), shape, (np.dtype(dt).itemsize,), np.dtype(dt), None)
        a._cc = True
        return a

    monkeypatch.setattr(driver, "active", Ctx())
    monkeypatch.setattr(driver, "context", lambda *a: driver.active)
    monkeypatch.setattr(driver, "current_stream", lambda: (None, 7))
    monkeypatch.setattr(driver._current, "ctx", driver.active)
    monkeypatch.setattr(driver._current, "stream", None)
    monkeypatch.setattr(ndarray, "_empty", classmethod(lambda cls, shape, dt: new(shape, dt)))
    # the parameters as the driver reads them: one packed buffer
    launched = data.record_launches(monkeypatch)
    f4, f8 = np.dtype("float32"), np.dtype("float64")
    lk = type("Loaded", (), {"functions": {"k_vec": 1}, "vec": 4})()
    k = gp.ElementwiseKernel("T x, float64 c", "T z, T w", "z = x * c; w = x", "two_out")
    x = new((1000,), f4)
    urun._prepare(k, (x, 2), lk, ("k_vec", 1), (f4, f4), (f4, f8))
    z, w = k(x, 3)
    assert [(s, b, struct.unpack_from("@PdPPI", p)) for s, b, p in launched] == [
        (7, 1, (x.data.ptr, 3.0, z.data.ptr, w.data.ptr, 1000))]
    assert z.shape == w.shape == (1000,) and z.dtype == w.dtype == f4
    ki = gp.ElementwiseKernel("T x, int8 c", "T z", "z = x * c", "int8_scalar")
    urun._prepare(ki, (x, 2), lk, ("k_vec", 1), (f4,), (f4, np.dtype("int8")))
    with pytest.raises(OverflowError):
        ki(x, 300)                                      # NumPy's conversion: out of range
    assert len(launched) == 1
    # what the call was not prepared for is a miss, launching nothing: another dtype, a
    # misaligned or a strided view, another scalar type, unequal shapes
    from gpunb.core.kernels import fastgen
    x8, y = new((1000,), f8), new((1000,), f4)
    off = ndarray._view(MemoryPointer(x.data.ptr + 4), (999,), (4,), f4, None)
    step = ndarray._view(MemoryPointer(x.data.ptr), (500,), (8,), f4, None)
    for call in ((x8, 3), (off, 3), (step, 3), (x, 3j), (x, "3")):
        assert urun._fast_call(k, call) is fastgen.MISS
    assert len(launched) == 1
    add = gp.ElementwiseKernel("T x, T y", "T z", "z = x + y", "add2")
    urun._prepare(add, (x, y), lk, ("k_vec", 1), (f4,), (f4, f4))
    assert urun._fast_call(add, (x, new((999,), f4))) is fastgen.MISS
    # a no_return kernel given its output launches once and returns None
    acc = gp.ElementwiseKernel("T x", "T z", "z = z + x", "acc", no_return=True)
    out = new((1000,), f4)
    urun._prepare(acc, (x, out), lk, ("k_vec", 1), (f4,), (f4,))
    assert acc(x, out) is None
    assert len(launched) == 2 and struct.unpack_from("@PPI", launched[-1][2]) == (x.data.ptr, out.data.ptr, 1000)


# -- every generated variant compiles ----------------------------------------------------------

def _variant(dt, layout, ndim=1, raw_cc=True, op="z = x * y + x; w[i % w.size()];"):
    dt = np.dtype(dt)
    args = (uir.Arg("x", dt, "array", True), uir.Arg("y", dt, "scalar", True),
            uir.Arg("w", dt, "raw", True, ndim=ndim, cc=raw_cc),
            uir.Arg("z", dt, "array", False, True))
    return uir.UserElementwise("user_k", args, op, "", "", "", (("T", dt),), layout, ndim)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_elementwise_variants_compile(dt):
    for k in (_variant(dt, "contiguous"), _variant(dt, "strided", 3, False),
              _variant(dt, "contiguous", 0, op="if (i == 0) return; z = x;")):
        nvrtc(ucg.render(k), (), "sm_90")


def test_elementwise_kernel_features_compile():
    f4 = np.dtype("float32")
    args = (uir.Arg("x", f4, "array", True), uir.Arg("y", f4, "array", True, True))
    k = uir.UserElementwise("feat", args, "y += x * _ind.size() + _ind.get() + helper(i)",
                            "__device__ float helper(long long j) { return j; }",
                            "float acc = 0;", "(void)acc;", (), "contiguous", 1, ("-DFOO=1",))
    src = ucg.render(k)
    assert "feat_vec" in src and "feat_flat" in src
    nvrtc(src, ("-DFOO=1",), "sm_90")


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_reduction_variants_compile(dt):
    hdr = "\n".join([ucg.header((("T", dt),), ""), "typedef T _type_reduce;", ""])
    for no, nr, ops in ((1, 1, 1), (2, 2, 1), (1, 1, 2)):
        operands = tuple(rir.ir.Operand(dt, "array") for _ in range(ops))
        names = ("x", "y")[:ops]
        k = rir.UserReduction("sumsq", operands, names, (uir.user_type(dt),) * ops,
                              " * ".join(names), "a + b", "out0 = a", "0", "T", dt, "out0",
                              uir.user_type(dt), hdr, no, nr)
        nvrtc(rc.render(k), (), "sm_90")


def test_reduction_render_unchanged_for_gpunb_kernels():
    # user reductions are additive: gpunb's own kernels render without a header
    k = rir.kernel_for("sum", "float32", None, 1, 1)
    assert "typedef" not in rc.render(k).split("namespace")[0].split("gpunb_vec")[-1]
    assert rc.nvrtc_options(k) == ()


# -- RawModule ---------------------------------------------------------------------------------

def test_ptx_entries():
    from gpunb.core.kernels.raw.module import ptx_kernels
    ptx = (".visible .entry add(\n .param .u64 add_param_0,\n .param .f32 add_param_1,\n"
           " .param .align 8 .b8 add_param_2[16]\n)\n{\n ret;\n}\n.visible .entry nop()\n{\n ret;\n}")
    ks = ptx_kernels(ptx)
    assert set(ks) == {"add", "nop"}
    assert ks["add"].param_sizes == (8, 4, 16) and ks["add"].param_offsets == (0, 8, 16)
    assert ks["nop"].param_sizes == ()


def test_raw_module_path_and_jitify(tmp_path):
    src = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1; }'
    p = tmp_path / "k.cu"
    p.write_text(src)
    m = gp.RawModule(path=str(p))
    assert m.code == src and m.path is None
    with pytest.warns(UserWarning, match="NVRTC directly"):
        mj = gp.RawModule(code=src, jitify=True)
    assert mj.jitify
    mc = gp.RawModule(code=src, enable_cooperative_groups=True)
    assert mc.enable_cooperative_groups
    with pytest.raises(TypeError, match="give exactly one of code="):
        gp.RawModule()


def test_raw_kernel_attribute_names():
    from gpunb.core.kernels.raw import module
    for name in ("max_threads_per_block", "num_regs", "shared_size_bytes", "const_size_bytes",
                 "local_size_bytes", "ptx_version", "binary_version",
                 "max_dynamic_shared_size_bytes", "preferred_shared_memory_carveout"):
        assert isinstance(getattr(module.RawKernel, name), property)
        assert name in module._ATTRIBUTES
    assert module.RawKernel.max_dynamic_shared_size_bytes.fset is not None


# -- GPU: CuPy's documented examples against NumPy -----------------------------------------------

RNG = np.random.default_rng(13)


@pytest.mark.gpu
def test_squared_difference():
    xh = np.arange(10, dtype=np.float32).reshape(2, 5)
    yh = np.arange(5, dtype=np.float32)
    k = gp.ElementwiseKernel(*SQDIFF)
    z = k(gp.asarray(xh), gp.asarray(yh))          # broadcasting
    np.testing.assert_array_equal(z.get(), (xh - yh) ** 2)
    kt = gp.ElementwiseKernel(*SQDIFF_T)
    for dt in ("float32", "float64", "int32"):
        a, b = xh.astype(dt), yh.astype(dt)
        r = kt(gp.asarray(a), gp.asarray(b))
        assert r.dtype == dt
        np.testing.assert_array_equal(r.get(), (a - b) ** 2)
    out = gp.empty((2, 5), np.float32)
    assert k(gp.asarray(xh), gp.asarray(yh), out) is out
    np.testing.assert_array_equal(out.get(), (xh - yh) ** 2)


@pytest.mark.gpu
@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_every_placeholder_dtype(dt):
    k = gp.ElementwiseKernel("T x, T y", "T z", "z = x * y + x", "mul_add")
    for shape in ((1000,), (7, 33), ()):
        a = data.rand(shape, dt, rng=RNG, bound=10)
        b = data.rand(shape, dt, rng=RNG, bound=10)
        with np.errstate(all="ignore"):
            want = a * b + a
        for _ in range(2):              # the second call takes the prepared launch
            got = k(gp.asarray(a), gp.asarray(b))
            assert got.dtype == dt and got.shape == shape
            if dt == np.float16:
                np.testing.assert_allclose(got.get(), want, rtol=2e-3, atol=2e-3)
            elif dt.kind in "fc":
                # x * y + x contracts to one FMA (CUDA's default, as in CuPy): one rounding
                np.testing.assert_allclose(got.get(), want, rtol=1e-5 if dt.itemsize <= 8 else 1e-12,
                                           atol=1e-6 if dt.itemsize <= 8 else 1e-14)
            else:
                np.testing.assert_array_equal(got.get(), want)


@pytest.mark.gpu
def test_scalars_and_weak_typing():
    k = gp.ElementwiseKernel("T x, T c", "T z", "z = x + c", "add_scalar")
    a = data.rand((100,), "float32", rng=RNG)
    for c in (2, 2.5, np.float64(1.25), np.int8(3)):
        got = k(gp.asarray(a), c)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.get(), a + np.float32(c))
    ka = gp.ElementwiseKernel("int16 x, float64 c", "float64 z", "z = x * c", "mixed")
    ai = data.rand((50,), "int16", rng=RNG)
    np.testing.assert_array_equal(ka(gp.asarray(ai), 3).get(), ai * 3.0)


@pytest.mark.gpu
def test_raw_arguments_and_index():
    # CuPy's user guide: reverse through a raw argument with i and _ind.size()
    k = gp.ElementwiseKernel("raw T x", "T y", "y = x[_ind.size() - i - 1]", "reverse")
    a = data.rand((1000,), "float64", rng=RNG)
    out = gp.empty(1000, np.float64)
    k(gp.asarray(a), out)
    np.testing.assert_array_equal(out.get(), a[::-1])
    # i over a broadcast 2-d loop, a non-contiguous raw input indexed in C order
    k2 = gp.ElementwiseKernel("T x, raw T w", "T y", "y = x + w[i] + (T)_ind.get()", "idx")
    a2 = data.rand((6, 8), "float32", rng=RNG)
    w = data.rand((8, 12), "float32", rng=RNG)
    got = k2(gp.asarray(a2), gp.asarray(w)[:, ::2])    # a strided raw view, (8, 6)
    want = a2 + w[:, ::2].ravel().reshape(6, 8) + np.arange(48, dtype=np.float32).reshape(6, 8)
    np.testing.assert_allclose(got.get(), want, rtol=1e-6)


@pytest.mark.gpu
def test_size_no_return_return_tuple():
    k = gp.ElementwiseKernel("raw T x", "raw T y", "y[i] = x[i] * 2", "double_raw", no_return=True)
    a = data.rand((64,), "int32", rng=RNG)
    y = gp.zeros(64, np.int32)
    assert k(gp.asarray(a), y, size=32) is None
    want = np.zeros(64, np.int32)
    want[:32] = a[:32] * 2
    np.testing.assert_array_equal(y.get(), want)
    kt = gp.ElementwiseKernel("T x", "T y, T z", "y = x + 1; z = x - 1", "two", return_tuple=True)
    r = kt(gp.asarray(a))
    assert isinstance(r, tuple) and len(r) == 2
    np.testing.assert_array_equal(r[0].get(), a + 1)
    np.testing.assert_array_equal(r[1].get(), a - 1)
    k1 = gp.ElementwiseKernel("T x", "T y", "y = x", "one", return_tuple=True)
    assert isinstance(k1(gp.asarray(a)), tuple)


@pytest.mark.gpu
def test_non_contiguous_and_in_place():
    k = gp.ElementwiseKernel(*SQDIFF_T)
    a = data.rand((40, 30), "float32", rng=RNG)
    b = data.rand((30, 40), "float32", rng=RNG)
    ga, gb = gp.asarray(a), gp.asarray(b)
    for x, y, xh, yh in ((ga[::2, ::-1], gb.T[::2, ::-1], a[::2, ::-1], b.T[::2, ::-1]),
                         (ga.T, gb, a.T, b), (ga[:, :1], gb.T, a[:, :1], b.T)):
        np.testing.assert_array_equal(k(x, y).get(), (xh - yh) ** 2)
    f = gp.asarray(np.asfortranarray(a))
    np.testing.assert_array_equal(k(f, f).get(), np.zeros_like(a))
    inc = gp.ElementwiseKernel("T x", "T y", "y += x", "accumulate")
    acc = gp.asarray(b.T.copy())
    inc(ga, acc)
    np.testing.assert_allclose(acc.get(), b.T + a, rtol=1e-6)
    out = gp.empty((30, 40), np.float32).T          # a non-contiguous output
    k(ga, ga * 0, out)
    np.testing.assert_array_equal(out.get(), a * a)


@pytest.mark.gpu
def test_empty_and_options():
    k = gp.ElementwiseKernel("T x", "T y", "y = x * SCALE", "scaled", options=("-DSCALE=3",),
                             preamble="// preamble", loop_prep="", after_loop="")
    assert k(gp.empty((0, 4), np.float32)).shape == (0, 4)
    a = data.rand((17,), "int64", rng=RNG)
    np.testing.assert_array_equal(k(gp.asarray(a)).get(), a * 3)
    assert "SCALE" in k.cached_code


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=4), st.sampled_from(DTYPES[1:]),
       st.integers(0, 3))
@pytest.mark.gpu
def test_hypothesis_broadcast(shape, dt, drop):
    shape = tuple(shape)
    bshape = shape[drop:] if drop < len(shape) else ()
    a = data.rand(shape, dt, rng=RNG, bound=5)
    b = data.rand(bshape, dt, rng=RNG, bound=5)
    k = gp.ElementwiseKernel("T x, T y", "T z", "z = x - y", "sub")
    with np.errstate(all="ignore"):
        want = a - b
    np.testing.assert_array_equal(k(gp.asarray(a), gp.asarray(b)).get(), want)


@pytest.mark.gpu
def test_l2_norm_reduction():
    rk = gp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    for dt in ("float32", "float64"):
        a = data.rand((10, 300), dt, rng=RNG)
        ga = gp.asarray(a)
        for axis in (None, 0, 1, (0, 1), -1):
            for keepdims in (False, True):
                got = rk(ga, axis=axis, keepdims=keepdims)
                want = np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))
                assert got.dtype == dt and got.shape == want.shape
                np.testing.assert_allclose(got.get(), want, rtol=1e-5)
        out = gp.empty((10,), dt)
        assert rk(ga, axis=1, out=out) is out
        np.testing.assert_allclose(out.get(), np.sqrt(np.sum(a * a, axis=1)), rtol=1e-5)
        outs = gp.empty((300, 2), dt)[:, 0]            # a non-contiguous out
        rk(ga, outs, axis=0)
        np.testing.assert_allclose(outs.get(), np.sqrt(np.sum(a * a, axis=0)), rtol=1e-5)
        f = gp.asarray(np.asfortranarray(a))
        np.testing.assert_allclose(rk(f[:, ::-3], axis=0).get(),
                                   np.sqrt(np.sum(a[:, ::-3] ** 2, axis=0)), rtol=1e-5)
    e = rk(gp.empty((0, 5), np.float32), axis=0)
    np.testing.assert_array_equal(e.get(), np.zeros(5, np.float32))


@pytest.mark.gpu
def test_reduction_kernel_types_and_inputs():
    # two inputs (a dot product), a fixed reduce type, every integer dtype summed exactly
    dot = gp.ReductionKernel("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "dot")
    a, b = data.rand((64, 50), "float64", rng=RNG), data.rand((50,), "float64", rng=RNG)
    np.testing.assert_allclose(dot(gp.asarray(a), gp.asarray(b), axis=1).get(), a @ b, rtol=1e-10,
                               atol=1e-12)
    mx = gp.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", "-1e30", "maxk",
                            reduce_type="double")
    c = data.rand((33, 70), "float32", rng=RNG)
    np.testing.assert_array_equal(mx(gp.asarray(c), axis=0).get(), c.max(axis=0))
    s = gp.ReductionKernel("T x", "int64 y", "x", "a + b", "y = a", "0", "isum",
                           reduce_type="long long")
    for dt in ("int8", "uint16", "int32", "bool"):
        d = data.rand((20, 30), dt, rng=RNG)
        np.testing.assert_array_equal(s(gp.asarray(d), axis=1).get(), d.sum(axis=1, dtype=np.int64))
    sc = gp.ReductionKernel("T x, T w", "T y", "x * w", "a + b", "y = a", "0", "scaled_sum")
    np.testing.assert_allclose(sc(gp.asarray(a), 2.0).get(), 2 * a.sum(), rtol=1e-10)


@pytest.mark.gpu
def test_raw_module_globals_attributes_cooperative(tmp_path):
    src = r'''
    __device__ float table[4];
    extern "C" __global__ void fill(float v) { table[threadIdx.x] = v * threadIdx.x; }
    extern "C" __global__ void read(float* out) { out[threadIdx.x] = table[threadIdx.x]; }
    '''
    m = gp.RawModule(code=src)
    m.get_function("fill")((1,), (4,), (np.float32(2),))
    ptr = m.get_global("table")
    view = gp.ndarray((4,), np.float32, memptr=ptr)
    np.testing.assert_array_equal(view.get(), np.arange(4, dtype=np.float32) * 2)
    out = gp.empty(4, np.float32)
    m.get_function("read")((1,), (4,), (out,))
    np.testing.assert_array_equal(out.get(), view.get())
    with pytest.raises(ValueError, match="no global 'nope'"):
        m.get_global("nope")
    k = m.get_function("fill")
    attrs = k.attributes
    assert attrs["max_threads_per_block"] == k.max_threads_per_block >= 32
    assert k.num_regs == attrs["num_regs"] >= 1 and k.binary_version >= 90
    k.max_dynamic_shared_size_bytes = 64 * 1024
    assert k.max_dynamic_shared_size_bytes == 64 * 1024
    p = tmp_path / "m.cu"
    p.write_text(src)
    mp = gp.RawModule(path=p)
    mp.get_function("fill")((1,), (4,), (np.float32(1),))
    np.testing.assert_array_equal(gp.ndarray((4,), np.float32, memptr=mp.get_global("table")).get(),
                                  np.arange(4, dtype=np.float32))
    coop = gp.RawModule(code=COOP, enable_cooperative_groups=True)
    xs = gp.zeros(8, np.int32)
    coop.get_function("c")((8,), (32,), (xs,))          # grid.sync(): needs a cooperative launch
    np.testing.assert_array_equal(xs.get(), np.arange(8) + (np.arange(8) + 1) % 8)


COOP = r"""#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void c(int* x) {
    cg::grid_group g = cg::this_grid();
    if (threadIdx.x == 0) x[blockIdx.x] = blockIdx.x;
    g.sync();
    if (threadIdx.x == 0) x[blockIdx.x] += (blockIdx.x + 1) % gridDim.x;
}"""


def test_cooperative_module_compiles():
    m = gp.RawModule(code=COOP, enable_cooperative_groups=True)
    if not any(o.startswith("-I") for o in m.options):
        pytest.skip("no CUDA runtime headers found for <cooperative_groups.h>")
    m.compile(arch="sm_90")
    assert "c" in m.kernel_names("sm_90")


@pytest.mark.gpu
def test_raw_module_ptx(tmp_path):
    from gpunb.core.build.compiler import compile_program
    src = 'extern "C" __global__ void k(int* x, int v) { x[threadIdx.x] = v + threadIdx.x; }'
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = compile_program(src, (), gp.core.runtime.driver.current_arch(), want_ptx=True)
    ptx = getattr(prog, "ptx", None)
    if not ptx:
        pytest.skip("this build's compile_program gives no PTX")
    p = tmp_path / "k.ptx"
    p.write_bytes(ptx if isinstance(ptx, bytes) else ptx.encode())
    x = gp.zeros(16, np.int32)
    gp.RawModule(path=p).get_function("k")((1,), (16,), (x, np.int32(5)))
    np.testing.assert_array_equal(x.get(), np.arange(16) + 5)
