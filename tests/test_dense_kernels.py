"""The one-block small-matrix kernels (gpunb.core.kernels.dense) under ``solve``, ``inv`` and
``cholesky`` up to order 64, against NumPy and against the cuSOLVER/cuBLAS path they replace.

CPU: every dtype's source compiles with NVRTC, the shared-memory sizes, bad dtypes refused.
GPU: random sizes 1..64 with shuffled rows (so partial pivoting swaps), every float dtype,
stacks and broadcast stacks, strided and integer inputs, zero pivots at any step and in any
matrix of a stack, NaN as NumPy (OpenBLAS) handles it, only one triangle read by cholesky,
and the same answers as the library path (forced with ``fits_* = False``)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core.kernels.dense import codegen as cg
from gpunb.core.kernels.dense import run as dense
from tests import data

rng = np.random.default_rng(6464)
gpu = pytest.mark.gpu
LA = gp.linalg
FLOATS = ("float32", "float64", "complex64", "complex128")
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}


def test_sources_compile_for_each_dtype():
    from gpunb.core.build.compiler import compile_program
    for dt in FLOATS:
        k = cg.kernel_for(dt)
        cubin = compile_program(cg.render(k), (), "sm_90").cubin
        assert all(e.encode() in cubin for e in cg.entry_points(k))
    with pytest.raises(ValueError, match="no dense kernels for int32"):
        cg.kernel_for("int32")


def test_static_shared_memory_is_the_cubins():
    """The static shared memory the opt-in and the fits checks add is what NVRTC's cubin
    declares for each entry point."""
    from gpunb.core.build.compiler import compile_program
    from gpunb.core.build.cubin import read_kernels
    for dt in FLOATS:
        k = cg.kernel_for(dt)
        info = read_kernels(compile_program(cg.render(k), (), "sm_90").cubin)
        for entry, name in (("gesv", k.gesv), ("potrf", k.potrf)):
            assert info[name].shared_bytes == cg.static_shared_bytes(entry, dt), (dt, entry)
            assert info[name + "_small"].shared_bytes == cg.static_shared_bytes(entry, dt, True)


def test_shared_memory_sizes():
    # rows padded to an odd length; [A | B] for gesv, A alone for potrf
    assert cg.row_stride(64) == 65 and cg.row_stride(65) == 65
    assert cg.gesv_shared_bytes(64, 1, 8) == 64 * 65 * 8
    assert cg.gesv_shared_bytes(64, 64, 16) == 64 * 129 * 16      # complex128 inverse: opt-in
    assert cg.potrf_shared_bytes(3, 4) == 3 * 3 * 4


def _shuffled(shape, dt):
    """Well-conditioned matrices with their rows shuffled: every step pivots."""
    a = data.rand(shape, dt, rng=rng)
    n = shape[-1]
    a = a + np.eye(n, dtype=a.dtype) * (2 * n + 1)
    return a[..., rng.permutation(n), :].astype(dt)


def _hpd(shape, dt):
    a = data.rand(shape, dt, rng=rng)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + np.eye(shape[-1]) * shape[-1]).astype(dt)


def _close(got, want, dt):
    got = gp.asnumpy(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.dtype)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=TOL[dt], atol=TOL[dt] * scale)


@gpu
@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 64), k=st.integers(1, 5), dt=st.sampled_from(FLOATS),
       batch=st.sampled_from([(), (3,), (2, 2)]))
def test_solve_inv_cholesky_match_numpy(n, k, dt, batch):
    a = _shuffled(batch + (n, n), dt)
    b = data.rand(batch + (n, k), dt, rng=rng)
    _close(LA.solve(gp.asarray(a), gp.asarray(b)), np.linalg.solve(a, b), dt)
    v = data.rand((n,), dt, rng=rng)
    _close(LA.solve(gp.asarray(a), gp.asarray(v)), np.linalg.solve(a, v), dt)
    _close(LA.inv(gp.asarray(a)), np.linalg.inv(a), dt)
    h = _hpd(batch + (n, n), dt)
    _close(LA.cholesky(gp.asarray(h)), np.linalg.cholesky(h), dt)
    _close(LA.cholesky(gp.asarray(h), upper=True), np.linalg.cholesky(h, upper=True), dt)


@gpu
@pytest.mark.parametrize("n", [27, 38, 39, 44, 45, 54, 55, 56])
@pytest.mark.parametrize("dt", FLOATS)
def test_inverses_around_the_shared_memory_opt_in(n, dt):
    """Orders whose inverse's dynamic shared memory falls just under 48 KiB (55 x 55
    float64: 48840 bytes): the kernel's static shared memory counts too, so it must opt in
    (it failed to launch with CUDA_ERROR_INVALID_VALUE)."""
    a = _shuffled((n, n), dt)
    _close(LA.inv(gp.asarray(a)), np.linalg.inv(a), dt)
    b = data.rand((n, n), dt, rng=rng)
    _close(LA.solve(gp.asarray(a), gp.asarray(b)), np.linalg.solve(a, b), dt)


@gpu
@pytest.mark.parametrize("dt", FLOATS)
def test_layouts_broadcasts_and_casts(dt):
    """A transposed view, a strided view, one matrix against a stack of right-hand sides, a
    stack against one vector, integer input (computed in float64 as NumPy)."""
    a = _shuffled((4, 17, 17), dt)
    b = data.rand((4, 17, 3), dt, rng=rng)
    at = gp.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2))).swapaxes(-1, -2)
    _close(LA.solve(at, gp.asarray(b)), np.linalg.solve(a, b), dt)
    wide = np.zeros((4, 17, 34), dt)
    wide[..., ::2] = a
    _close(LA.inv(gp.asarray(wide)[..., ::2]), np.linalg.inv(a), dt)
    _close(LA.solve(gp.asarray(a[0]), gp.asarray(b)), np.linalg.solve(a[0], b), dt)
    bb = data.rand((5, 1, 17, 2), dt, rng=rng)
    _close(LA.solve(gp.asarray(a), gp.asarray(bb)), np.linalg.solve(a, bb), dt)
    ai = rng.integers(-5, 6, (9, 9)) + 40 * np.eye(9, dtype=np.int64)
    _close(LA.solve(gp.asarray(ai), gp.asarray(np.arange(9))), np.linalg.solve(ai, np.arange(9)),
           "float64")
    h = _hpd((3, 20, 20), dt)
    _close(LA.cholesky(gp.asarray(np.asfortranarray(h))), np.linalg.cholesky(h), dt)


@gpu
@pytest.mark.parametrize("dt", FLOATS)
def test_cholesky_reads_one_triangle(dt):
    h = _hpd((2, 12, 12), dt)
    junk = data.rand(h.shape, dt, rng=rng) * 100
    lower = np.tril(h) + np.triu(junk, 1)
    upper = np.triu(h) + np.tril(junk, -1)
    _close(LA.cholesky(gp.asarray(lower)), np.linalg.cholesky(lower), dt)
    _close(LA.cholesky(gp.asarray(upper), upper=True), np.linalg.cholesky(upper, upper=True), dt)


@gpu
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("step", [0, 7, 29])
def test_zero_pivot_in_one_matrix_of_a_stack(dt, step):
    """A singular matrix anywhere in a stack raises NumPy's LinAlgError, whichever step
    meets the zero pivot; a matrix that is not positive definite likewise."""
    stack = _shuffled((5, 30, 30), dt)
    stack[3][:, step] = 0
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        LA.solve(gp.asarray(stack), gp.asarray(np.ones((5, 30, 1), dt)))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        LA.inv(gp.asarray(stack))
    h = _hpd((4, 30, 30), dt)
    h[2][step, step] = -1
    with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite"):
        LA.cholesky(gp.asarray(h))


@gpu
def test_nan_as_numpy():
    """A NaN pivot is not a zero pivot (NaN results, no error); a zero column is, even with a
    NaN beside it; a NaN diagonal in cholesky gives NaN factors (OpenBLAS, NumPy's wheels)."""
    for m in ([[1.0, np.nan], [0.0, 0.0]], [[0.0, 0.0], [np.nan, 1.0]], [[np.nan, 0.0], [0.0, 0.0]]):
        h = np.array(m)
        try:
            want = np.linalg.inv(h)
        except np.linalg.LinAlgError:
            with pytest.raises(np.linalg.LinAlgError):
                LA.inv(gp.asarray(h))
        else:
            np.testing.assert_array_equal(np.isnan(gp.asnumpy(LA.inv(gp.asarray(h)))),
                                          np.isnan(want))
    h = np.eye(3)
    h[1, 1] = np.nan
    got, want = gp.asnumpy(LA.cholesky(gp.asarray(h))), np.linalg.cholesky(h)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


@gpu
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("shape", [(64, 64), (200, 8, 8), (3, 33, 33)])
def test_same_as_the_library_path(dt, shape, monkeypatch):
    """Both routes agree: the one-block kernels, and cuSOLVER / cuBLAS's batched routines with
    the kernels switched off."""
    a = _shuffled(shape, dt)
    b = data.rand(shape[:-1] + (2,), dt, rng=rng)
    h = _hpd(shape, dt)
    ga, gb, gh = gp.asarray(a), gp.asarray(b), gp.asarray(h)
    mine = [gp.asnumpy(f()) for f in (lambda: LA.solve(ga, gb), lambda: LA.inv(ga),
                                      lambda: LA.cholesky(gh))]
    monkeypatch.setattr(dense, "fits_gesv", lambda *_: False)
    monkeypatch.setattr(dense, "fits_potrf", lambda *_: False)
    theirs = [gp.asnumpy(f()) for f in (lambda: LA.solve(ga, gb), lambda: LA.inv(ga),
                                        lambda: LA.cholesky(gh))]
    for x, y in zip(mine, theirs):
        _close(x, y, dt)
    _close(mine[0], np.linalg.solve(a, b), dt)
