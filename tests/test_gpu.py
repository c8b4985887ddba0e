"""Kernels launched on a GPU, checked against NumPy, with CuPy arrays as arguments.

Run on a GPU machine: ``python -m pytest -m gpu``. Skipped cleanly without a GPU.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb

pytestmark = pytest.mark.gpu

try:
    import cupy as cp  # noqa: F811
except ImportError:  # the arguments path is protocol-based; CuPy-free runs use gpunb arrays
    cp = None

needs_cupy = pytest.mark.skipif(cp is None, reason="CuPy is not installed")

VADD = r"""
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""

TEMPLATED = r"""
template <typename T>
__global__ void axpy(T alpha, const T* __restrict__ x, T* __restrict__ y, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        y[i] = alpha * x[i] + y[i];
}
"""

TRANSPOSE_SCALE = r"""
// out[c, r] = s * in[r, c] for a rows x cols input: a 2-D grid over a non-square matrix.
extern "C" __global__ void transpose_scale(const double* in, double* out, int rows, int cols, double s) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) out[c * rows + r] = s * in[r * cols + c];
}
"""

STRUCT = r"""
struct Affine { float scale; float shift; };
extern "C" __global__ void affine(Affine f, float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = f.scale * x[i] + f.shift;
}
"""


def _assert_fma_close(actual, a, x, b):
    """``a * x + b`` may be one fused multiply-add on the GPU (one rounding, NumPy rounds
    twice): compare with the exact float64 value within two roundings of the terms."""
    a64, x64, b64 = np.float64(a), x.astype(np.float64), np.asarray(b, np.float64)
    exact = a64 * x64 + b64
    bound = 2 * np.finfo(actual.dtype).eps * (np.abs(a64 * x64) + np.abs(b64))
    assert actual.dtype == x.dtype
    assert np.all(np.abs(actual.astype(np.float64) - exact) <= bound)


def _blocks(n, threads=256):
    return (max(1, (n + threads - 1) // threads),)


@needs_cupy
def test_vector_add_with_cupy_arrays_matches_numpy(cache_dir):
    rng = np.random.default_rng(1)
    n = 1_000_003
    a, b = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    da, db = cp.asarray(a), cp.asarray(b)
    dc = cp.full(n, np.nan, dtype=np.float32)           # poisoned: every element must be written
    k = gpunb.RawKernel(VADD, "vadd")
    k(_blocks(n), (256,), (da, db, dc, n))
    np.testing.assert_array_equal(cp.asnumpy(dc), a + b)


@needs_cupy
@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 70_000), alpha=st.floats(-4, 4, allow_nan=False, width=32),
       dtype=st.sampled_from(["float32", "float64", "int32", "int64"]))
def test_templated_axpy_every_dtype(n, alpha, dtype):
    rng = np.random.default_rng(n)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x, y = rng.standard_normal(n).astype(dt), rng.standard_normal(n).astype(dt)
        alpha = dt.type(alpha)
    else:
        x, y = rng.integers(-1000, 1000, n).astype(dt), rng.integers(-1000, 1000, n).astype(dt)
        alpha = dt.type(int(alpha))
    ctype = {"float32": "float", "float64": "double", "int32": "int", "int64": "long long"}[dtype]
    mod = gpunb.RawModule(code=TEMPLATED, name_expressions=[f"axpy<{ctype}>"])
    k = mod.get_function(f"axpy<{ctype}>")
    dx, dy = cp.asarray(x), cp.asarray(y)
    k((264,), (128,), (alpha, dx, dy, n))
    if dt.kind == "f":
        _assert_fma_close(cp.asnumpy(dy), alpha, x, y)
    else:
        np.testing.assert_array_equal(cp.asnumpy(dy), (alpha * x + y).astype(dt))


@needs_cupy
@pytest.mark.parametrize("rows,cols", [(1, 1), (37, 513), (1024, 3), (300, 300)])
def test_2d_kernel_on_non_contiguous_views(rows, cols):
    rng = np.random.default_rng(rows * cols)
    big = rng.standard_normal((rows, 2 * cols))
    x = big[:, ::2]                                  # a strided view: made contiguous on upload
    dx = cp.ascontiguousarray(cp.asarray(big)[:, ::2])
    out = cp.full((cols, rows), np.nan)
    k = gpunb.RawKernel(TRANSPOSE_SCALE, "transpose_scale")
    k(((cols + 15) // 16, (rows + 15) // 16), (16, 16), (dx, out, rows, cols, -2.5))
    np.testing.assert_array_equal(cp.asnumpy(out), -2.5 * x.T)


def test_device_array_and_struct_argument():
    from gpunb.core.runtime.driver import synchronize

    rng = np.random.default_rng(7)
    x = rng.standard_normal(4097).astype(np.float32)
    dx = gpunb.asarray(x)
    k = gpunb.RawKernel(STRUCT, "affine")
    f = np.array((3.0, -1.0), dtype=[("scale", "f4"), ("shift", "f4")])[()]
    k(_blocks(x.size), (256,), (f, dx, x.size))
    synchronize()
    _assert_fma_close(dx.get(), np.float32(3.0), x, np.float32(-1.0))


@needs_cupy
def test_launch_on_a_cupy_stream_orders_after_producer():
    rng = np.random.default_rng(3)
    n = 1 << 22
    a = rng.standard_normal(n, dtype=np.float32)
    k = gpunb.RawKernel(VADD, "vadd")
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        da = cp.asarray(a)
        db = da * 2                                   # produced on s
        dc = cp.empty_like(da)
    k(_blocks(n), (256,), (da, db, dc, n), stream=s)
    s.synchronize()
    np.testing.assert_allclose(cp.asnumpy(dc), 3 * a, rtol=1e-6)


@needs_cupy
def test_bad_arguments_raise_before_launch():
    k = gpunb.RawKernel(VADD, "vadd")
    d = cp.zeros(4, dtype=np.float32)
    with pytest.raises(gpunb.KernelArgumentError, match="takes 4 arguments"):
        k((1,), (4,), (d, d, 4))
    with pytest.raises(TypeError, match="host memory"):
        k((1,), (4,), (np.zeros(4, np.float32), d, d, 4))
    with pytest.raises(TypeError, match="pointer"):
        k((1,), (4,), (d, 5, d, 4))
    np.testing.assert_array_equal(cp.asnumpy(d), np.zeros(4, np.float32))


def test_fresh_process_loads_cached_module_without_nvrtc(cache_dir):
    code = textwrap.dedent(f"""
        import json, numpy as np, gpunb
        src = {VADD!r}
        n = 5000
        a = np.arange(n, dtype=np.float32); b = np.full(n, 0.5, np.float32)
        da, db, dc = gpunb.asarray(a), gpunb.asarray(b), gpunb.empty(n, np.float32)
        gpunb.RawKernel(src, "vadd")(((n + 255) // 256,), (256,), (da, db, dc, n))
        assert np.array_equal(dc.get(), a + b)
        s = gpunb.kernel_cache().stats()
        maps = open("/proc/self/maps").read()
        print(json.dumps([s["compiles"], s["disk_hits"], "libnvrtc" in maps]))
    """)
    env = dict(os.environ, GPUNB_CACHE_DIR=str(cache_dir))
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout.splitlines()[-1]) == [1, 0, True], first.stdout
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout.splitlines()[-1]) == [0, 1, False], second.stdout


def test_kernel_attributes_agree_with_cubin():
    k = gpunb.RawKernel(STRUCT, "affine")
    attrs = k.attributes
    info = k.info()
    assert attrs["registers"] == info.registers
    assert attrs["shared_bytes"] == info.shared_bytes
    assert attrs["max_threads_per_block"] >= 256
