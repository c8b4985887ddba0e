"""What gpunb reads from cubins (gpunb.core.cubin) and from kernel source (signature)."""

from __future__ import annotations

import ctypes
import functools
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpunb.core.build.compiler import compile_program
from gpunb.core.build.cubin import CubinFormatError, KernelInfo, read_kernels
from gpunb.core.build.signature import Param, demangled_base, kernel_declarations, signature

ARCH = "sm_90"

LAYOUT_SRC = r"""
struct Pair { float x, y; };
extern "C" __global__ void many(const float* a, double* b, int n, double d, char c, Pair p) {
    b[0] = a[0] + n + d + c + p.x + p.y;
}
extern "C" __global__ void noargs() {}
"""

SHARED_SRC = r"""
extern "C" __global__ void with_shared(float* out) {
    __shared__ float s[256];
    s[threadIdx.x] = out[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[255 - threadIdx.x];
}
extern "C" __global__ void no_shared(float* out) { out[threadIdx.x] = 1.0f; }
extern "C" __global__ void with_local(float* x, const int* idx) {
    float a[256];
    for (int j = 0; j < 256; ++j) a[idx[j]] = x[j];
    x[0] = a[idx[300]];
}
"""

TEMPLATE_SRC = r"""
template <typename T>
__global__ void k(T* out, T value, int n) { if (threadIdx.x < n) out[threadIdx.x] = value; }
"""


@functools.lru_cache(maxsize=None)
def _layout_cubin() -> bytes:
    return compile_program(LAYOUT_SRC, (), ARCH).cubin


@pytest.fixture
def layout_cubin() -> bytes:
    return _layout_cubin()


# -- cubin -----------------------------------------------------------------------------------

def test_param_sizes_and_offsets_follow_c_layout(layout_cubin):
    kernels = read_kernels(layout_cubin)
    assert set(kernels) == {"many", "noargs"}
    info = kernels["many"]
    assert isinstance(info, KernelInfo) and info.name == "many"

    # CUDA lays out kernel parameters as a C struct of them (x86-64 ABI sizes and alignments).
    class Pair(ctypes.Structure):
        _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]

    class Params(ctypes.Structure):
        _fields_ = [("a", ctypes.c_void_p), ("b", ctypes.c_void_p), ("n", ctypes.c_int),
                    ("d", ctypes.c_double), ("c", ctypes.c_char), ("p", Pair)]

    names = [f[0] for f in Params._fields_]
    assert info.param_sizes == tuple(getattr(Params, n).size for n in names) == (8, 8, 4, 8, 1, 8)
    assert info.param_offsets == tuple(getattr(Params, n).offset for n in names) \
        == (0, 8, 16, 24, 32, 36)
    assert info.param_bytes == 44


def test_kernel_without_params(layout_cubin):
    info = read_kernels(layout_cubin)["noargs"]
    assert info.param_sizes == () and info.param_offsets == ()
    assert info.param_bytes == 0


def test_registers_and_frames_read(layout_cubin):
    for info in read_kernels(layout_cubin).values():
        assert isinstance(info.registers, int) and info.registers > 0
        assert info.local_bytes == 0
        assert info.shared_bytes == 0


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_static_shared_memory_bytes(arch):
    # The driver reports CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES == 1024 for this kernel on both
    # (checked on an H200 for the sm_90 cubin). On sm_90+ the .nv.shared.<kernel> section also
    # spans the 1 KiB reserved per-block area, which is not the kernel's static shared memory.
    kernels = read_kernels(compile_program(SHARED_SRC, (), arch).cubin)
    assert kernels["with_shared"].shared_bytes == 256 * 4
    assert kernels["no_shared"].shared_bytes == 0


def test_local_memory_frame_is_read():
    kernels = read_kernels(compile_program(SHARED_SRC, (), ARCH).cubin)
    assert kernels["with_local"].local_bytes >= 1024   # float a[256] lives on the stack
    assert kernels["no_shared"].local_bytes == 0
    assert kernels["with_local"].registers > 0


def test_template_kernels_appear_under_lowered_names():
    prog = compile_program(TEMPLATE_SRC, (), ARCH, name_expressions=["k<float>", "k<double>"])
    kernels = read_kernels(prog.cubin)
    f, d = prog.lowered_names["k<float>"], prog.lowered_names["k<double>"]
    assert f != d
    assert f.startswith("_Z") and d.startswith("_Z")
    assert set(kernels) == {f, d}
    assert kernels[f].param_sizes == (8, 4, 4)
    assert kernels[d].param_sizes == (8, 8, 4)
    assert kernels[d].param_offsets == (0, 8, 16)
    assert demangled_base(f) == demangled_base(d) == "k"


def test_template_without_instantiation_has_no_kernels():
    prog = compile_program(TEMPLATE_SRC, (), ARCH)
    assert read_kernels(prog.cubin) == {}


@pytest.mark.parametrize("data", [
    b"", b"garbage", b"\x7fELF", b"\x7fELF\x01" + b"\0" * 60, b"\x7fELF\x02" + b"\0" * 20,
    b"not an ELF file at all" * 10,
])
def test_garbage_raises_cubin_format_error(data):
    with pytest.raises(CubinFormatError):
        read_kernels(data)
    assert issubclass(CubinFormatError, ValueError)


def test_truncated_cubin_raises_cubin_format_error(layout_cubin):
    with pytest.raises(CubinFormatError):
        read_kernels(layout_cubin[:200])


def test_section_table_past_the_end_raises_cubin_format_error(layout_cubin):
    bad = bytearray(layout_cubin)
    struct.pack_into("<Q", bad, 0x28, len(bad) + 4096)     # e_shoff
    with pytest.raises(CubinFormatError, match="malformed"):
        read_kernels(bytes(bad))


@pytest.mark.parametrize("shoff", [2**63, 2**64 - 1])
def test_huge_section_table_offset_raises_cubin_format_error(layout_cubin, shoff):
    # A torn or corrupted cubin file (RawModule(path=...)) must give CubinFormatError, not an
    # OverflowError from struct.
    bad = bytearray(layout_cubin)
    struct.pack_into("<Q", bad, 0x28, shoff)
    with pytest.raises(CubinFormatError):
        read_kernels(bytes(bad))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(data=st.data())
def test_corrupted_cubins_raise_only_cubin_format_error(data):
    blob = bytearray(_layout_cubin())
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(blob)))
    try:
        out = read_kernels(bytes(blob[:cut] if data.draw(st.booleans()) else blob))
    except CubinFormatError:
        return
    assert isinstance(out, dict)
    assert all(isinstance(v, KernelInfo) for v in out.values())


# -- signature -------------------------------------------------------------------------------

SIG_SRC = r"""
#include <cuda/std/cstdint>
// __global__ void commented_out(int x) {}
/* __global__ void block_commented(int y) {}
   extern "C" __global__ void many(double only_in_a_comment) {} */
struct Foo { int a; };
extern "C" __global__ void many(unsigned long long n, size_t m, cuda::std::int32_t k,
                                const float* __restrict__ x, double y[], int z = 3, Foo f = Foo()) {}
template <typename T, int N = 4>
__global__ void templ(T* out, const T v, int n, T arr[]) {}
extern "C" __global__ void scalars(char c, unsigned char uc, short s, unsigned u, long long ll,
                                   float f, double d, bool b, std::uint16_t u16, int64_t i64) {}
extern "C" __global__ void noparams(void) {}
__global__ void over(int* a) {}
__global__ void over(int* a, float b) {}
"""


def test_extern_c_signature_types():
    params = signature(SIG_SRC, "many")
    assert params is not None
    assert [p.kind for p in params] == ["scalar", "scalar", "scalar", "pointer", "pointer",
                                        "scalar", "opaque"]
    assert [p.dtype for p in params] == ["uint64", "uint64", "int32", "float32", "float64",
                                         "int32", None]
    assert params[0] == Param("scalar", "unsigned long long n", "uint64")
    assert params[3].ctype == "const float* __restrict__ x"


def test_default_arguments_are_ignored():
    params = signature(SIG_SRC, "many")
    assert params[5] == Param("scalar", "int z = 3", "int32")
    assert params[6].kind == "opaque" and params[6].ctype == "Foo f = Foo()"


def test_unknown_struct_is_opaque():
    (p,) = signature('struct Foo { int a; };\nextern "C" __global__ void k(Foo f) {}', "k")
    assert p == Param("opaque", "Foo f", None)


def test_template_substitution():
    d = signature(SIG_SRC, "templ<double>")
    assert [(p.kind, p.dtype) for p in d] == [("pointer", "float64"), ("scalar", "float64"),
                                             ("scalar", "int32"), ("pointer", "float64")]
    f = signature(SIG_SRC, "templ<float, 8>")
    assert [p.dtype for p in f] == ["float32", "float32", "int32", "float32"]
    ptr = signature(SIG_SRC, "templ<int*>")
    assert ptr[1].kind == "pointer"          # const T v with T = int* is a pointer
    # without template arguments T stays unknown: pointers stay pointers, T by value is opaque
    raw = signature(SIG_SRC, "templ")
    assert [p.kind for p in raw] == ["pointer", "opaque", "scalar", "pointer"]
    assert raw[0].dtype is None


def test_scalar_types():
    params = signature(SIG_SRC, "scalars")
    assert [p.dtype for p in params] == ["int8", "uint8", "int16", "uint32", "int64", "float32",
                                         "float64", "bool", "uint16", "int64"]
    assert all(p.kind == "scalar" for p in params)


def test_pointer_detection():
    src = ('extern "C" __global__ void p(float a[], const int b[16], double** c, '
           'unsigned long long* __restrict__ d, void* e, Foo* f, float& g) {}')
    params = signature(src, "p")
    assert all(p.kind == "pointer" for p in params)
    assert [p.dtype for p in params] == ["float32", "int32", "float64", "uint64", None, None,
                                         "float32"]


def test_comments_are_ignored():
    assert signature(SIG_SRC, "commented_out") is None
    assert signature(SIG_SRC, "block_commented") is None
    assert "commented_out" not in kernel_declarations(SIG_SRC)
    assert len(signature(SIG_SRC, "many")) == 7   # not the commented-out one-parameter 'many'


def test_void_parameter_list_and_unknown_kernel():
    assert signature(SIG_SRC, "noparams") == []
    assert signature(SIG_SRC, "nope") is None


def test_overloads_chosen_by_parameter_count():
    assert [p.kind for p in signature(SIG_SRC, "over", 1)] == ["pointer"]
    assert [p.dtype for p in signature(SIG_SRC, "over", 2)] == ["int32", "float32"]
    assert signature(SIG_SRC, "over", 3) is None


def test_namespaced_name_uses_last_component():
    assert [p.dtype for p in signature(SIG_SRC, "ns::scalars")][:2] == ["int8", "uint8"]


def test_launch_bounds_do_not_hide_the_kernel():
    # __launch_bounds__ sits between the return type and the name; it is not the kernel.
    src = 'extern "C" __global__ void __launch_bounds__(256, 2) scale(float* x, int n) {}\n'
    assert list(kernel_declarations(src)) == ["scale"]
    params = signature(src, "scale")
    assert params is not None
    assert [(p.kind, p.dtype) for p in params] == [("pointer", "float32"), ("scalar", "int32")]


@pytest.mark.parametrize("symbol, base", [
    ("_Z1kIfEvPT_S0_", "k"), ("_Z8cpp_onlyPi", "cpp_only"), ("_ZN2ns3fooEPf", "foo"),
    ("plain_c_name", "plain_c_name"),
])
def test_demangled_base(symbol, base):
    assert demangled_base(symbol) == base


def test_signature_matches_cubin_param_count():
    # NVRTC alone has no <cuda/std/cstdint>: spell the types it would bring
    prelude = ("typedef long long int64_t; typedef unsigned long size_t;\n"
               "namespace std { typedef unsigned short uint16_t; }\n"
               "namespace cuda { namespace std { typedef int int32_t; } }\n")
    src = SIG_SRC.replace("#include <cuda/std/cstdint>", prelude)
    kernels = read_kernels(compile_program(src, (), ARCH).cubin)
    for name in ("many", "scalars", "noparams"):
        assert len(signature(src, name)) == len(kernels[name].param_sizes)
