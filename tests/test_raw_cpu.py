"""RawModule / RawKernel on a machine without a GPU: lazy compile, lookup, argument checks."""

from __future__ import annotations

import numpy as np
import pytest

import gpunb
from gpunb import GPUUnavailableError, KernelArgumentError
from gpunb.core.build.cache import kernel_cache
from gpunb.core.build.cubin import KernelInfo

ARCH = "sm_90"

SRC = r"""
struct Pair { float x, y; };
extern "C" __global__ void many(const float* a, double* b, int n, float f, Pair p) {
    b[threadIdx.x] = a[threadIdx.x] * f + n + p.x + p.y;
}
template <typename T>
__global__ void axpy(T alpha, const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += alpha * x[i];
}
__global__ void cpp_only(int* out) { out[0] = 1; }
extern "C" __global__ void small(unsigned char u8, short i16, unsigned u32, long long i64,
                                 double f64, bool flag) {}
"""
EXPRS = ["axpy<float>", "axpy<double>"]
PAIR = np.dtype([("x", "<f4"), ("y", "<f4")])


class FakeDeviceArray:
    """Just enough of a GPU array: __cuda_array_interface__ v3."""

    def __init__(self, ptr=0x1000, stream=None):
        self.__cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (ptr, False),
                                         "version": 3, "strides": None, "stream": stream}


def stats():
    return kernel_cache().stats()


@pytest.fixture
def mod(cache_dir):
    return gpunb.RawModule(code=SRC, name_expressions=EXPRS).compile(arch=ARCH)


@pytest.fixture
def many(mod):
    return mod.get_function("many")


def good_many_args():
    return [FakeDeviceArray(0x1000), FakeDeviceArray(0x2000), 3, 1.5, np.zeros((), PAIR)]


def prep(kernel, args):
    return kernel.prepare_args(args, arch=ARCH)


# -- lazy compile and the cache --------------------------------------------------------------

def test_constructing_compiles_nothing(cache_dir):
    m = gpunb.RawModule(code=SRC, name_expressions=EXPRS)
    k = gpunb.RawKernel(SRC, "axpy<float>")
    m.get_function("many")                   # looking up a name compiles nothing either
    assert not cache_dir.exists()            # the cache is not even opened
    s = stats()
    assert s["compiles"] == 0 and s["misses"] == 0 and s["entries"] == 0
    assert "axpy<float>" in k.module.name_expressions


def test_compile_for_named_arch_compiles_and_caches(cache_dir):
    m = gpunb.RawModule(code=SRC, name_expressions=EXPRS)
    assert m.compile(arch=ARCH) is m
    s = stats()
    assert s["compiles"] == 1 and s["misses"] == 1 and s["entries"] == 1
    assert m.cubin(ARCH).startswith(b"\x7fELF")
    assert "many" in m.kernel_names(ARCH)

    again = gpunb.RawModule(code=SRC, name_expressions=EXPRS).compile("sm_90")
    s = stats()
    assert s["compiles"] == 1 and s["memory_hits"] == 1
    assert again.cubin("sm_90") == m.cubin(ARCH)
    # the same module asked again does not even look in the cache
    m.compile(ARCH)
    assert stats()["memory_hits"] == 1


def test_different_options_or_arch_compile_again(cache_dir):
    gpunb.RawModule(code=SRC).compile(ARCH)
    gpunb.RawModule(code=SRC, options=("-DX=1",)).compile(ARCH)
    gpunb.RawModule(code=SRC).compile((8, 0))
    assert stats()["compiles"] == 3


def test_rawkernel_compile_and_info(cache_dir):
    k = gpunb.RawKernel(SRC, "axpy<float>").compile(arch=ARCH)
    info = k.info(ARCH)
    assert isinstance(info, KernelInfo)
    assert info.name.startswith("_Z")
    assert info.param_sizes == (4, 8, 8, 4)
    assert [p.kind for p in k.parameters(ARCH)] == ["scalar", "pointer", "pointer", "scalar"]
    assert stats()["compiles"] == 1


# -- get_function ----------------------------------------------------------------------------

def test_get_function_by_extern_c_name(many):
    assert many.name == "many"
    assert many.info(ARCH).name == "many"
    assert many.info(ARCH).param_sizes == (8, 8, 4, 4, 8)
    assert [p.ctype for p in many.parameters(ARCH)] == [
        "const float* a", "double* b", "int n", "float f", "Pair p"]


def test_get_function_by_name_expression(mod):
    f = mod.get_function("axpy<float>").info(ARCH)
    d = mod.get_function("axpy<double>").info(ARCH)
    lowered = mod.entry(ARCH).meta["name_expressions"]
    assert f.name == lowered["axpy<float>"] and d.name == lowered["axpy<double>"]
    assert f.param_sizes == (4, 8, 8, 4)
    assert d.param_sizes == (8, 8, 8, 4)
    assert [p.dtype for p in mod.get_function("axpy<double>").parameters(ARCH)] == [
        "float64", "float64", "float64", "int32"]


def test_get_function_by_unique_plain_cpp_name(mod):
    k = mod.get_function("cpp_only")
    assert k.info(ARCH).name == "_Z8cpp_onlyPi"
    assert [p.kind for p in k.parameters(ARCH)] == ["pointer"]


def test_ambiguous_plain_cpp_name_asks_for_name_expressions(mod):
    with pytest.raises(ValueError, match="name_expressions") as info:
        mod.get_function("axpy").info(ARCH)
    assert "axpy<float>" in str(info.value)


def test_unknown_kernel_lists_available(mod):
    with pytest.raises(ValueError) as info:
        mod.get_function("nope").prepare_args([], arch=ARCH)
    msg = str(info.value)
    assert "'nope'" in msg
    for name in ("many", "small", "axpy<float>", "axpy<double>", "_Z8cpp_onlyPi"):
        assert name in msg


def test_name_expression_not_instantiated(mod):
    with pytest.raises(ValueError, match="name_expressions"):
        mod.get_function("axpy<int>").info(ARCH)


def test_get_function_is_cached_and_checks_type(mod):
    assert mod.get_function("many") is mod.get_function("many")
    with pytest.raises(TypeError):
        mod.get_function(b"many")


# -- argument checking -----------------------------------------------------------------------

def test_good_arguments_convert(many):
    out, producers = prep(many, [FakeDeviceArray(0x1000, stream=7), FakeDeviceArray(0x2000),
                                 3, 1.5, np.zeros((), PAIR)])
    assert out[:2] == [0x1000, 0x2000]
    assert type(out[2]) is np.int32 and out[2] == 3
    assert type(out[3]) is np.float32 and out[3] == 1.5
    assert type(out[4]) is np.uint64 and out[4] == 0
    assert producers == [7, None]


def test_wrong_argument_count(many):
    with pytest.raises(KernelArgumentError) as info:
        prep(many, [FakeDeviceArray(), FakeDeviceArray()])
    err = info.value
    assert isinstance(err, TypeError) and isinstance(err, gpunb.GPUNBError)
    msg = str(err)
    assert "many(const float* a, double* b, int n, float f, Pair p)" in msg
    assert "takes 5 arguments" in msg and "2 were given" in msg


def test_python_int_for_pointer(many):
    args = good_many_args()
    args[1] = 0x2000
    with pytest.raises(KernelArgumentError) as info:
        prep(many, args)
    msg = str(info.value)
    assert "argument 1 of kernel many" in msg
    assert "double* b" in msg
    assert "pointer" in msg and "__cuda_array_interface__" in msg


def test_host_numpy_array_for_pointer(many):
    args = good_many_args()
    args[0] = np.zeros(4, np.float32)
    with pytest.raises(KernelArgumentError) as info:
        prep(many, args)
    msg = str(info.value)
    assert "argument 0" in msg and "const float* a" in msg
    assert "host memory" in msg


def test_cuda_array_interface_converts_to_address(many):
    args = good_many_args()
    args[0] = FakeDeviceArray(0xABC000, stream=2)
    out, producers = prep(many, args)
    assert out[0] == 0xABC000 and type(out[0]) is int
    assert producers[0] == 2


def test_none_for_pointer_is_null(many):
    args = good_many_args()
    args[0] = args[1] = None
    out, producers = prep(many, args)
    assert out[:2] == [0, 0]
    assert producers == []


def test_float_for_int_parameter(many):
    args = good_many_args()
    args[2] = 3.0
    with pytest.raises(KernelArgumentError) as info:
        prep(many, args)
    assert "argument 2" in str(info.value) and "int n" in str(info.value)


def test_int_for_float_parameter_becomes_float32(many):
    args = good_many_args()
    args[3] = 2
    out, _ = prep(many, args)
    assert type(out[3]) is np.float32 and out[3] == 2.0


@pytest.mark.parametrize("value", [2**31, -2**31 - 1, 10**30])
def test_python_int_too_big_for_int32(many, value):
    args = good_many_args()
    args[2] = value
    with pytest.raises(KernelArgumentError, match="does not fit in int32"):
        prep(many, args)


def test_int32_limits_accepted(many):
    for v in (2**31 - 1, -2**31):
        args = good_many_args()
        args[2] = v
        assert prep(many, args)[0][2] == v


def test_numpy_int64_too_big_for_int32(many):
    # np.prod(shape) and friends give NumPy int64s; one that does not fit must not wrap to 0.
    args = good_many_args()
    args[2] = np.int64(2**40)
    with pytest.raises(KernelArgumentError, match="int32"):
        prep(many, args)


def test_numpy_scalars_convert_within_kind(many):
    args = good_many_args()
    args[2], args[3] = np.int16(-5), np.float64(2.5)
    out, _ = prep(many, args)
    assert type(out[2]) is np.int32 and out[2] == -5
    assert type(out[3]) is np.float32 and out[3] == 2.5


def test_numpy_float_for_int_parameter_rejected(many):
    args = good_many_args()
    args[2] = np.float32(3)
    with pytest.raises(KernelArgumentError, match="argument 2"):
        prep(many, args)


def test_struct_by_value(many):
    rec = np.array((1.5, -2.0), dtype=PAIR)[()]
    args = good_many_args()
    args[4] = rec
    out, _ = prep(many, args)
    assert out[4].tobytes() == rec.tobytes()
    args[4] = b"\x01\x02\x03\x04\x05\x06\x07\x08"
    out, _ = prep(many, args)
    assert out[4].tobytes() == b"\x01\x02\x03\x04\x05\x06\x07\x08"


@pytest.mark.parametrize("value", [b"1234", b"123456789", np.zeros((), [("x", "<f8"), ("y", "<f8")]),
                                   np.float32(1.0), "eightbyt", 1.5])
def test_struct_by_value_wrong_size_or_type(many, value):
    args = good_many_args()
    args[4] = value
    with pytest.raises(KernelArgumentError) as info:
        prep(many, args)
    msg = str(info.value)
    assert "argument 4" in msg and "Pair p" in msg and "8 bytes" in msg


@pytest.mark.parametrize("value", [np.zeros(3, np.int32), FakeDeviceArray()])
def test_array_for_scalar(many, value):
    args = good_many_args()
    args[2] = value
    with pytest.raises(KernelArgumentError) as info:
        prep(many, args)
    assert "argument 2" in str(info.value) and "scalar" in str(info.value)


def test_zero_dim_array_for_scalar_is_a_scalar(many):
    args = good_many_args()
    args[2] = np.array(7, np.int32)
    assert prep(many, args)[0][2] == 7


def test_more_scalar_types(mod):
    k = mod.get_function("small")
    out, _ = prep(k, [255, -3, 2**32 - 1, -2**63, 1, True])
    assert [type(v) for v in out] == [np.uint8, np.int16, np.uint32, np.int64, np.float64, np.bool_]
    for i, bad in ((0, 256), (0, -1), (2, -1), (1, 2**15)):
        args = [255, -3, 2**32 - 1, -2**63, 1, True]
        args[i] = bad
        with pytest.raises(KernelArgumentError, match=f"argument {i}"):
            prep(k, args)
    with pytest.raises(KernelArgumentError, match="argument 5"):
        prep(k, [1, 1, 1, 1, 1.0, 2])      # 2 is not a bool


def test_template_argument_types(mod):
    k = mod.get_function("axpy<double>")
    out, _ = prep(k, [2, FakeDeviceArray(), FakeDeviceArray(), 10])
    assert type(out[0]) is np.float64


def test_launch_bounds_kernel_still_checks_pointers(cache_dir):
    src = ('extern "C" __global__ void __launch_bounds__(256) scale(float* x, int n) '
           '{ x[threadIdx.x] *= n; }\n')
    k = gpunb.RawModule(code=src).get_function("scale")
    with pytest.raises(KernelArgumentError, match="pointer"):
        k.prepare_args([0x1000, 4], arch=ARCH)


# -- launching without a GPU, bad launch parameters ------------------------------------------



def test_call_without_gpu_raises(many, no_gpu):
    with pytest.raises(GPUUnavailableError) as info:
        many((1,), (32,), tuple(good_many_args()))
    assert info.value.reason == no_gpu


@pytest.mark.parametrize("grid, block", [
    (0, 32), ((1,), 0), ((1, 1, 1, 1), (32,)), ((1,), (1, 1, 1, 1)), (-1, 32), ((2, -1), 32),
    ((), 32), ((1,), (32.0,)),
])
def test_bad_grid_or_block(many, grid, block):
    with pytest.raises(ValueError, match="grid|block"):
        many(grid, block, tuple(good_many_args()))


def test_non_int_grid_rejected(many):
    with pytest.raises((TypeError, ValueError), match="grid|iterable"):
        many(1.5, 32, tuple(good_many_args()))


def test_bad_args_container_and_shared_mem(many):
    with pytest.raises(TypeError, match="args"):
        many((1,), (32,), 5)
    with pytest.raises(ValueError, match="shared_mem"):
        many((1,), (32,), tuple(good_many_args()), shared_mem=-1)


def test_prepared_launch_replays_dims_and_threads(mod, monkeypatch):
    """The prepared launch (raw.launch._prepare_fast) without a GPU: the grid and block of the
    last call reused only for the very same objects, a changed grid launched as given; a
    float grid, an out-of-range scalar, a wrong scalar type, a host array, a stream given or
    another device current go to the checked path with the call's arguments (launching
    nothing here); another thread packs into its own buffer."""
    import struct
    import threading

    from gpunb.core.kernels import loader
    from gpunb.core.kernels.raw import launch as raw
    from gpunb.core.ndarray import MemoryPointer, ndarray
    from gpunb.core.runtime import driver
    from tests import data

    ctx = type("Ctx", (), {"default_handle": 7})()
    monkeypatch.setattr(driver, "active", ctx)
    monkeypatch.setattr(driver._current, "ctx", ctx)
    monkeypatch.setattr(driver._current, "stream", None)
    monkeypatch.setattr(loader, "function", lambda kernel: 99)
    launched = data.record_launches(monkeypatch)
    k = mod.get_function("axpy<float>")
    params = k.parameters(ARCH)
    x, y = (ndarray._view(MemoryPointer(p), (8,), (4,), np.dtype("f4"), None)
            for p in (0x40000, 0x50000))
    checked = []
    fast = raw._prepare_fast(None, params, (np.float32(2), x, y, 8),
                             lambda: lambda *a, **kw: checked.append((a, kw)) or "checked")
    g4, g8, b = (4,), (8, 2), (256,)
    raw._checked_dims.update({g4: ((4,), g4, (4, 1, 1)), g8: ((8, 2), g8, (8, 2, 1)),
                              b: ((256,), b, (256, 1, 1))})
    assert fast(g4, b, (np.float32(2), x, y, 8)) is None
    assert fast(g8, b, (2.5, x, y, 8), shared_mem=0) is None
    assert fast(g4, b, [np.float32(1), y, x, 7]) is None
    assert [(gx, struct.unpack_from("@fPPi", p)) for _, gx, p in launched] == [
        (4, (2.0, 0x40000, 0x50000, 8)), (8, (2.5, 0x40000, 0x50000, 8)),
        (4, (1.0, 0x50000, 0x40000, 7))]
    assert not checked
    misses = [((4.0,), (np.float32(2), x, y, 8), {}), (g4, (np.float32(2), x, y, 2**31), {}),
              (g4, (np.float64(2), x, y, 8), {}), (g4, (np.float32(2), np.ones(8), y, 8), {}),
              (g4, (np.float32(2), x, y, 8), {"stream": 5}), (g4, (np.float32(2), x, y, 8), {"shared_mem": -1})]
    for grid, args, kw in misses:
        assert fast(grid, b, args, **kw) == "checked"
    other = type("Ctx", (), {"default_handle": 8})()
    monkeypatch.setattr(driver, "active", other)
    assert fast(g4, b, (np.float32(2), x, y, 8)) == "checked"
    monkeypatch.setattr(driver, "active", ctx)
    assert len(launched) == 3
    assert [(a[0], a[2], kw) for a, kw in checked] == [
        (grid, args, {"shared_mem": kw.get("shared_mem", 0), "stream": kw.get("stream")})
        for grid, args, kw in misses + [(g4, (np.float32(2), x, y, 8), {})]]
    seen = []
    monkeypatch.setattr(raw.fastcall, "_cu_launch", lambda *a: (seen.append((a[1], a[9])), (0,))[1])

    def in_thread():
        driver._current.ctx, driver._current.stream = ctx, None
        assert fast(g8, b, (np.float32(3), x, y, 5)) is None
    fast(g4, b, (np.float32(3), x, y, 5))
    worker = threading.Thread(target=in_thread)
    worker.start()
    worker.join()
    assert [gx for gx, _ in seen] == [4, 8] and seen[0][1] != seen[1][1]


def test_kernel_call_goes_to_its_prepared_launch(mod, monkeypatch):
    """``kernel(...)`` runs the instance's ``_call`` (the class's ``__call__`` is a property):
    the checked path until a launch prepares its signature, then the prepared launch, which
    the kernel keeps per device; ``inspect.signature`` reads the launch's signature from a
    kernel and the constructor's from the class."""
    import inspect

    from gpunb.core.kernels.raw import module as raw

    k = mod.get_function("axpy<float>")
    assert k._call == k._launch
    calls = []
    monkeypatch.setattr(k, "_call", lambda *a, **kw: calls.append((a, kw)))
    k((1,), (32,), (1, 2), shared_mem=4)
    assert calls == [(((1,), (32,), (1, 2)), {"shared_mem": 4})]
    assert list(inspect.signature(k).parameters) == ["grid", "block", "args", "shared_mem", "stream"]
    assert "code" in inspect.signature(gpunb.RawKernel).parameters
    assert isinstance(raw.RawKernel.__dict__["__call__"], property)


# -- construction errors and precompiled cubins ----------------------------------------------

def test_only_nvrtc_backend():
    """CuPy's backend='nvcc' compiles with NVRTC, saying so; any other backend is an error."""
    with pytest.warns(UserWarning, match="NVRTC only"):
        m = gpunb.RawModule(code=SRC, backend="nvcc")
    assert m.compile(arch=ARCH) is not None
    with pytest.warns(UserWarning, match="NVRTC only"):
        gpunb.RawKernel(SRC, "many", backend="nvcc")
    with pytest.raises(ValueError, match="nvrtc"):
        gpunb.RawModule(code=SRC, backend="hip")


def test_compile_with_cache_is_a_raw_module():
    """CuPy's older cupy.cuda.compile_with_cache: a RawModule through gpunb's cache."""
    m = gpunb.cuda.compile_with_cache(SRC, options=("-DX=1",), arch=ARCH)
    assert isinstance(m, gpunb.RawModule)
    m2 = gpunb.cuda.compile_with_cache(SRC, extra_source="// only CuPy's cache key")
    assert m2.code == SRC                  # CuPy hashes extra_source, never compiles it
    with pytest.raises(ValueError, match="cache_dir"):
        gpunb.cuda.compile_with_cache(SRC, cache_dir="/tmp/elsewhere")


def test_unsupported_and_bad_constructor_arguments():
    with pytest.raises(ValueError, match="translate_cucomplex"):
        gpunb.RawModule(code=SRC, translate_cucomplex=True)
    with pytest.warns(UserWarning, match="without Jitify"):     # accepted: NVRTC directly
        gpunb.RawModule(code=SRC, jitify=True)
    with pytest.raises(TypeError, match="exactly one"):
        gpunb.RawModule()
    with pytest.raises(TypeError, match="exactly one"):
        gpunb.RawModule(code=SRC, path="x.cubin")
    with pytest.raises(TypeError, match="name_expressions"):
        gpunb.RawModule(code=SRC, name_expressions="axpy<float>")
    with pytest.raises(TypeError):
        gpunb.RawModule(code=SRC, options="-DX=1")
    with pytest.raises(TypeError):
        gpunb.RawModule(code=b"bytes")
    with pytest.raises(TypeError):
        gpunb.RawKernel(SRC, 3)


def test_cooperative_groups_needs_no_rdc():
    # grid.sync() is header-only since CUDA 11: no relocatable code, the headers' include paths
    m = gpunb.RawModule(code=SRC, enable_cooperative_groups=True)
    assert "-rdc=true" not in m.options and m.enable_cooperative_groups
    assert all(o.startswith("-I") for o in m.options)


def test_raw_module_from_cubin_file(tmp_path, cache_dir):
    path = tmp_path / "many.cubin"
    path.write_bytes(gpunb.compile(SRC, (), ARCH))
    m = gpunb.RawModule(path=path)
    assert "many" in m.kernel_names(ARCH)
    k = m.get_function("many")
    assert k.info(ARCH).param_sizes == (8, 8, 4, 4, 8)
    assert k.parameters(ARCH) is None              # no source: sizes only
    out, producers = k.prepare_args([FakeDeviceArray(0x1000, stream=3), FakeDeviceArray(0x2000),
                                     3, 1.5, np.zeros((), PAIR)], arch=ARCH)
    assert out[:2] == [0x1000, 0x2000] and producers == [3, None]
    # without the source, 4-byte Python numbers are guessed by size
    assert type(out[2]) is np.int32 and type(out[3]) is np.float32
    with pytest.raises(KernelArgumentError, match="5 parameters"):
        k.prepare_args([1, 2], arch=ARCH)
    s = stats()
    assert s["compiles"] == 0 and s["misses"] == 0
    assert m.cubin(ARCH) == path.read_bytes()
    assert "path=" in repr(m)


def test_raw_module_from_garbage_file(tmp_path):
    from gpunb.core.build.cubin import CubinFormatError

    path = tmp_path / "junk.cubin"
    path.write_bytes(b"definitely not a cubin")
    with pytest.raises(CubinFormatError):
        gpunb.RawModule(path=path).compile(ARCH)
