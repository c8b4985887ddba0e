"""gpunb.linalg's decompositions, solvers and norms (cuSOLVER) against numpy.linalg.

CPU: NumPy's input checks and messages on made-up arrays (every check runs before a kernel),
NumPy's own LinAlgError class, the missing-library error, and NVRTC compiling the fused
kernels (det, slogdet, norms). GPU: values against NumPy for every dtype, stacks, transposed
and strided inputs, empty matrices, singular and non-positive-definite inputs, qr modes,
svd options, eigh's UPLO, norms over every ord/axis/keepdims."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core.runtime import mathlibs
from gpunb.linalg import norms
from tests import data
from tests.data import fake

rng = np.random.default_rng(1515)
gpu = pytest.mark.gpu
LA = gp.linalg
FLOATS = ("float32", "float64", "complex64", "complex128")


def _numpy_error(call_np):
    try:
        call_np()
    except Exception as e:       # noqa: BLE001 - the error NumPy raises is the expectation
        return type(e), str(e)
    raise AssertionError("NumPy raised nothing")


def _same_error(call_gp, call_np):
    exc, msg = _numpy_error(call_np)
    with pytest.raises(exc) as info:
        call_gp()
    assert str(info.value) == msg


# -- CPU: errors as NumPy's -------------------------------------------------------------------

def test_linalgerror_is_numpys():
    assert LA.LinAlgError is np.linalg.LinAlgError


SQUARE = ("inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "eig", "eigvals")
STACKED = ("qr", "svd", "svdvals", "pinv")


@pytest.mark.parametrize("name", SQUARE + STACKED)
@pytest.mark.parametrize("shape", [(3,), (), (2, 3), (4, 2, 3)])
def test_shape_checks(name, shape):
    if name in STACKED and len(shape) >= 2:
        return
    e = np.empty(shape)
    _same_error(lambda: getattr(LA, name)(fake(shape, "float64")),
                lambda: getattr(np.linalg, name)(e))


@pytest.mark.parametrize("name", SQUARE + STACKED + ("solve",))
def test_float16_rejected(name):
    args_gp = (fake((3, 3), "float16"),) + ((fake((3,), "float16"),) if name == "solve" else ())
    args_np = tuple(np.ones(a.shape, np.float16) for a in args_gp)
    _same_error(lambda: getattr(LA, name)(*args_gp), lambda: getattr(np.linalg, name)(*args_np))


@pytest.mark.parametrize("a, b", [((3, 3), (4,)), ((3, 3), (4, 2)), ((2, 3, 3), (3, 3, 1)),
                                  ((3, 3), (2, 4, 3)), ((3, 4), (3,))])
def test_solve_shape_errors(a, b):
    _same_error(lambda: LA.solve(fake(a, "float64"), fake(b, "float64")),
                lambda: np.linalg.solve(np.ones(a), np.ones(b)))


@pytest.mark.parametrize("call, call_np", [
    (lambda: LA.qr(fake((3, 3)), mode="bad"), lambda: np.linalg.qr(np.eye(3), mode="bad")),
    (lambda: LA.eigh(fake((3, 3)), UPLO="X"), lambda: np.linalg.eigh(np.eye(3), UPLO="X")),
    (lambda: LA.eigvalsh(fake((3, 3)), UPLO=3), lambda: np.linalg.eigvalsh(np.eye(3), UPLO=3)),
    (lambda: LA.norm(fake((3,)), "fro"), lambda: np.linalg.norm(np.ones(3), "fro")),
    (lambda: LA.norm(fake((3, 3)), 3), lambda: np.linalg.norm(np.eye(3), 3)),
    (lambda: LA.norm(fake((3, 3)), "nuc", axis=1), lambda: np.linalg.norm(np.eye(3), "nuc", axis=1)),
    (lambda: LA.norm(fake((3, 3)), axis=(0, 0)), lambda: np.linalg.norm(np.eye(3), axis=(0, 0))),
    (lambda: LA.norm(fake((3, 3, 3)), axis=(0, 1, 2)),
     lambda: np.linalg.norm(np.ones((3, 3, 3)), axis=(0, 1, 2))),
    (lambda: LA.norm(fake((3, 3)), axis="x"), lambda: np.linalg.norm(np.eye(3), axis="x")),
    (lambda: LA.norm(fake((3, 3)), axis=2), lambda: np.linalg.norm(np.eye(3), axis=2)),
    (lambda: LA.cond(fake((0, 0))), lambda: np.linalg.cond(np.ones((0, 0)))),
    (lambda: LA.cond(fake((2, 3)), 1), lambda: np.linalg.cond(np.ones((2, 3)), 1)),
    (lambda: LA.matrix_rank(fake((3, 3)), tol=1, rtol=1),
     lambda: np.linalg.matrix_rank(np.eye(3), tol=1, rtol=1)),
    (lambda: LA.pinv(fake((3, 3)), rcond=1, rtol=1), lambda: np.linalg.pinv(np.eye(3), rcond=1, rtol=1)),
    (lambda: LA.lstsq(fake((3, 2)), fake((4,))), lambda: np.linalg.lstsq(np.ones((3, 2)), np.ones(4))),
    (lambda: LA.lstsq(fake((2, 3, 2)), fake((3,))),
     lambda: np.linalg.lstsq(np.ones((2, 3, 2)), np.ones(3))),
    (lambda: LA.tensorinv(fake((2, 2)), ind=0), lambda: np.linalg.tensorinv(np.eye(2), ind=0)),
    (lambda: LA.tensorsolve(fake((2, 3, 4)), fake((2, 3))),
     lambda: np.linalg.tensorsolve(np.ones((2, 3, 4)), np.ones((2, 3)))),
])
def test_argument_errors(call, call_np):
    _same_error(call, call_np)


def test_numpy_dispatch():
    """numpy.linalg's functions on a gpunb array run gpunb's (their checks, their errors)."""
    for name in ("inv", "det", "svd", "qr", "eigh", "cholesky"):
        _same_error(lambda: getattr(np.linalg, name)(fake((3,), "float64")),
                    lambda: getattr(np.linalg, name)(np.ones(3)))
    _same_error(lambda: np.linalg.solve(fake((3, 3)), fake((4,))),
                lambda: np.linalg.solve(np.eye(3), np.ones(4)))


def test_host_array_refused():
    with pytest.raises(TypeError, match="NumPy array in host memory"):
        LA.inv(np.eye(3))


def test_missing_library(monkeypatch):
    import importlib

    def no_nvmath(name, *a, **k):
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(mathlibs, "_modules", {})
    monkeypatch.setattr(importlib, "import_module", no_nvmath)
    for call in (lambda: LA.inv(fake((3, 3))), lambda: LA.svd(fake((3, 2))),
                 lambda: LA.solve(fake((3, 3)), fake((3,))), lambda: LA.det(fake((2, 3, 3)))):
        with pytest.raises(mathlibs.MathLibraryMissing, match=r'pip install "gpunb\[math\]"'):
            call()


def test_fused_kernels_compile():
    from tests.conftest import libcuda_loadable

    if libcuda_loadable():      # a launch on made-up memory would fault a real GPU's context
        pytest.skip("traces launches on made-up memory: for machines without a GPU driver")
    ip, idx = fake((5, 4), "int32"), fake((4,), "int32")
    for dt in FLOATS:
        d = fake((5, 4), dt)
        t = norms._DOUBLE[np.dtype(dt)]      # products in double precision, as NumPy's
        for f, args in [(norms._det, (ip, idx, d, t(-1), t(1))),
                        (norms._lu_sign, (ip, idx, d, t(-1), t(1), t(0))),
                        (norms._log_abs_sum, (d,))]:
            assert f.inspect(*args, arch="sm_90").compile()
    x = fake((6, 7), "float32")
    norms._fused.clear()
    for f in (lambda: norms._sum_of_squares(x, (1,), False),
              lambda: norms._abs_reduce(x, "max", (0,), True),
              lambda: norms._power_sum(x, np.float32(3.0), (1,), False)):
        with pytest.raises(Exception):       # made-up memory: tracing works, launching cannot
            f()
    fn = next(iter(norms._fused.values()))
    assert fn.inspect(x, arch="sm_90").compile()
    from gpunb.linalg import decompositions as dec

    v, i = fake((3, 5), "float64"), fake((5,), "int64")
    assert dec._descending_rank.inspect(v[..., :, None], v[..., None, :], i[:, None], i,
                                        arch="sm_90").compile()
    r = fake((3, 5), "int64")
    assert dec._inverse.inspect(r[..., None, :], i[:, None], i, arch="sm_90").compile()


# -- GPU -------------------------------------------------------------------------------------

def rand(shape, dt):
    return data.rand(shape, dt, rng=rng)


def well(shape, dt):
    """Random well-conditioned square matrices (diagonally dominated)."""
    a = rand(shape, dt)
    n = shape[-1]
    return (a + np.eye(n, dtype=a.dtype) * (2 * n + 1)).astype(dt)


def hpd(shape, dt):
    """Random Hermitian positive-definite matrices."""
    a = rand(shape, dt)
    h = a @ np.conj(np.swapaxes(a, -1, -2)) + np.eye(shape[-1]) * shape[-1]
    return h.astype(dt)


def test_unpivot_kernel_compiles_for_each_item_size():
    from gpunb.core.build.compiler import compile_program
    from gpunb.core.kernels.pivot import codegen as pcg
    for size in (4, 8, 16):
        k = pcg.UnpivotKernel(size)
        cubin = compile_program(pcg.render(k), (), "sm_90").cubin
        assert all(e.encode() in cubin for e in pcg.entry_points(k))
    with pytest.raises(ValueError, match="3-byte"):
        pcg.UnpivotKernel(3)
    assert pcg.fits(4096, 8) and not pcg.fits(4097, 8) and not pcg.fits(10, 2)
    assert pcg.fits(2048, 8, True) and not pcg.fits(2049, 8, True)
    assert pcg.shared_bytes(4096, 8) == pcg.shared_bytes(2048, 8, True) == pcg.SHARED_LIMIT


def _swapped_backward(z, piv):
    x = z.copy()
    for i in range(len(piv) - 1, -1, -1):
        j = piv[i] - 1
        x[i], x[j] = x[j].copy(), x[i].copy()
    return x


@gpu
@pytest.mark.parametrize("dt", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("parallel", [False, True])
def test_unpivot_kernels_swap_as_lapack(dt, parallel):
    """Both kernels against the swaps applied one by one: random pivots, none, chains (each
    step moving the previous one's value on), repeated targets, one target for every step."""
    from gpunb.core.kernels.pivot.run import unpivot

    for n in (1, 2, 7, 300, 1000):
        patterns = [[int(rng.integers(i, n)) for i in range(n)], list(range(n)),
                    [min(i + 1, n - 1) for i in range(n)], [n - 1] * n,
                    [i if rng.random() < 0.5 else int(rng.integers(i, min(n, i + 3))) for i in range(n)]]
        for p in patterns:
            piv = np.array(p, np.int64) + 1
            z = rand((n,), dt)
            x, gpiv = gp.asarray(z), gp.asarray(piv)
            unpivot(x.data.ptr, gpiv.data.ptr, n, x.itemsize, parallel)
            np.testing.assert_array_equal(x.get(), _swapped_backward(z, piv))


def tol(dt):
    return dict(rtol=2e-3, atol=2e-3) if np.dtype(dt) in (np.float32, np.complex64) else \
        dict(rtol=1e-9, atol=1e-9)


def close(got, want, dt=None):
    got = gp.asnumpy(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, **tol(dt or want.dtype))


def layouts(h):
    """The host matrix stack as GPU arrays: C order, Fortran order, a strided view and a
    transposed view (each holding the same values)."""
    yield gp.asarray(h)
    yield gp.asarray(np.asfortranarray(h))
    big = np.zeros(h.shape[:-1] + (2 * h.shape[-1],), h.dtype)
    big[..., ::2] = h
    yield gp.asarray(big)[..., ::2]
    yield gp.asarray(np.ascontiguousarray(np.swapaxes(h, -1, -2))).swapaxes(-1, -2)


@gpu
@pytest.mark.parametrize("dt", FLOATS + ("int32", "bool"))
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (1, 1), (70, 70), (2, 70, 70)])
def test_solve_inv_det(dt, shape):
    # bool: unit upper-triangular (never singular)
    h = well(shape, dt) if dt != "bool" else (np.triu(rand(shape, dt)) | np.eye(shape[-1], dtype=bool))
    for a in layouts(h):
        close(LA.inv(a), np.linalg.inv(h))
        close(LA.det(a), np.linalg.det(h))
        s, ld = LA.slogdet(a)
        ws, wld = np.linalg.slogdet(h)
        close(s, ws)
        close(ld, wld)
    a = gp.asarray(h)
    b1 = rand(shape[-1:], "float64")
    close(LA.solve(a, gp.asarray(b1)), np.linalg.solve(h, b1))
    b2 = rand(shape[:-1] + (3,), dt)
    close(LA.solve(a, gp.asarray(b2)), np.linalg.solve(h, b2))
    b3 = rand((2,) + shape[:-2] + (shape[-1], 2), "float32")      # broadcast batch
    close(LA.solve(a, gp.asarray(b3)), np.linalg.solve(h, b3), dt if dt in FLOATS else "float64")


@gpu
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (300, 300), (3, 100, 100), (4096, 4096),
                                   (4097, 4097)])
def test_solve_one_vector_with_row_interchanges(dt, shape):
    """One right-hand side: two triangular solves and the pivots' swaps in shared memory (up
    to 4096 float64 items), cuSOLVER's getrs beyond. The matrices' rows are shuffled, so
    partial pivoting swaps (a diagonally dominant matrix would pivot nothing)."""
    if shape[-1] > 300 and dt != "float64":
        pytest.skip("the large sizes straddle the float64 shared-memory limit")
    n = shape[-1]
    h = well(shape, dt)[..., rng.permutation(n), :]
    b = rand((n,), dt)
    close(LA.solve(gp.asarray(h), gp.asarray(b)), np.linalg.solve(h, b))
    close(LA.solve(gp.asarray(h), gp.asarray(b[:, None])), np.linalg.solve(h, b[:, None]))


@gpu
def test_batched_small_solve_inv():
    h = well((1000, 8, 8), "float64")
    b = rand((1000, 8, 2), "float64")
    close(LA.inv(gp.asarray(h)), np.linalg.inv(h))
    close(LA.solve(gp.asarray(h), gp.asarray(b)), np.linalg.solve(h, b))
    close(LA.det(gp.asarray(h)), np.linalg.det(h))


@gpu
@pytest.mark.parametrize("dt", FLOATS)
def test_singular(dt):
    h = rand((4, 4), dt)
    h[:, 2] = h[:, 1]
    h[2] = 0
    a = gp.asarray(h)
    for f in ("inv",):
        _same_error(lambda: getattr(LA, f)(a), lambda: getattr(np.linalg, f)(h))
    _same_error(lambda: LA.solve(a, gp.asarray(h[0])), lambda: np.linalg.solve(h, h[0]))
    stack = np.stack([well((4, 4), dt), h])
    _same_error(lambda: LA.inv(gp.asarray(stack)), lambda: np.linalg.inv(stack))
    assert abs(gp.asnumpy(LA.det(a))) == 0
    s, ld = LA.slogdet(a)
    assert gp.asnumpy(s) == 0 and gp.asnumpy(ld) == -np.inf


@gpu
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("shape", [(6, 6), (3, 5, 5), (40, 40), (0, 0), (0, 3, 3), (2, 0, 0)])
def test_cholesky(dt, shape):
    h = hpd(shape, dt)
    for a in layouts(h) if h.size else [gp.asarray(h)]:
        close(LA.cholesky(a), np.linalg.cholesky(h))
        close(LA.cholesky(a, upper=True), np.linalg.cholesky(h, upper=True))
    if h.size:
        bad = h.copy()
        bad[..., 0, 0] = -1
        _same_error(lambda: LA.cholesky(gp.asarray(bad)), lambda: np.linalg.cholesky(bad))


@gpu
@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 4, 4)])
def test_empty_square(shape):
    h = np.ones(shape)
    close(LA.inv(gp.asarray(h)), np.linalg.inv(h))
    close(LA.det(gp.asarray(h)), np.linalg.det(h))
    s, ld = LA.slogdet(gp.asarray(h))
    close(s, np.linalg.slogdet(h)[0])
    close(ld, np.linalg.slogdet(h)[1])
    close(LA.solve(gp.asarray(h), gp.asarray(np.ones(shape[:-1] + (2,)))),
          np.linalg.solve(h, np.ones(shape[:-1] + (2,))))
    close(LA.eigvalsh(gp.asarray(h)), np.linalg.eigvalsh(h))


def _check_qr(h, mode):
    a = gp.asarray(h)
    got, want = LA.qr(a, mode=mode), np.linalg.qr(h, mode=mode)
    if mode == "r":
        assert gp.asnumpy(got).shape == want.shape
        np.testing.assert_allclose(np.abs(gp.asnumpy(got)), np.abs(want), **tol(h.dtype))
        return
    if mode == "raw":
        hh, tau = (gp.asnumpy(x) for x in got)
        assert hh.shape == want[0].shape and tau.shape == want[1].shape
        assert hh.dtype == want[0].dtype and tau.dtype == want[1].dtype
        return
    q, r = (gp.asnumpy(x) for x in got)
    assert q.shape == want.Q.shape and r.shape == want.R.shape and q.dtype == want.Q.dtype
    np.testing.assert_allclose(q @ r, h, **tol(h.dtype))
    np.testing.assert_array_equal(np.triu(r), r)
    k = q.shape[-1]
    np.testing.assert_allclose(np.conj(np.swapaxes(q, -1, -2)) @ q,
                               np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), **tol(h.dtype))


@gpu
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (3, 6, 4), (2, 3, 7), (0, 3), (3, 0)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r", "raw"])
def test_qr(dt, shape, mode):
    _check_qr(rand(shape, dt), mode)


def _check_svd(h, full, a=None):
    a = gp.asarray(h) if a is None else a
    u, s, vh = (gp.asnumpy(x) for x in LA.svd(a, full_matrices=full))
    wu, ws, wvh = np.linalg.svd(h, full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (wu.shape, ws.shape, wvh.shape)
    assert (u.dtype, s.dtype, vh.dtype) == (wu.dtype, ws.dtype, wvh.dtype)
    np.testing.assert_allclose(s, ws, **tol(h.dtype))
    k = s.shape[-1]
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], h, **tol(h.dtype))
    for m in (u, np.swapaxes(vh, -1, -2)):
        c = m.shape[-1]
        np.testing.assert_allclose(np.conj(np.swapaxes(m, -1, -2)) @ m,
                                   np.broadcast_to(np.eye(c), m.shape[:-2] + (c, c)), **tol(h.dtype))
    close(LA.svd(a, compute_uv=False), ws)
    close(LA.svdvals(a), ws)


@gpu
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (3, 6, 4), (2, 4, 7), (40, 33),
                                   (0, 3), (3, 0), (0, 2, 2)])
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("driver", ["gesvdj", "gesvd", "gesvdp"])
def test_svd(dt, shape, full, driver, monkeypatch):
    from gpunb.linalg import decompositions

    monkeypatch.setattr(decompositions, "SVD_DRIVER", driver)
    _check_svd(rand(shape, dt), full)


@gpu
def test_svd_layouts_and_hermitian():
    h = rand((5, 7), "float64")
    for a in layouts(h):
        _check_svd(h, False, a)
    s = hpd((4, 4), "complex128") - 6 * np.eye(4)
    got = LA.svd(gp.asarray(s), hermitian=True)
    want = np.linalg.svd(s, hermitian=True)
    np.testing.assert_allclose(gp.asnumpy(got.S), want.S, rtol=1e-9)
    u, vh = gp.asnumpy(got.U), gp.asnumpy(got.Vh)
    np.testing.assert_allclose((u * gp.asnumpy(got.S)) @ vh, s, atol=1e-9)
    close(LA.svd(gp.asarray(s), compute_uv=False, hermitian=True), want.S)


@gpu
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("shape", [(5, 5), (3, 6, 6), (40, 40), (50, 3, 3)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(dt, shape, uplo):
    h = hpd(shape, dt)
    junk = h + np.triu(rand(shape, dt), 1) if uplo == "L" else h + np.tril(rand(shape, dt), -1)
    for a in layouts(junk):
        w, v = (gp.asnumpy(x) for x in LA.eigh(a, UPLO=uplo))
        ww, wv = np.linalg.eigh(junk, UPLO=uplo)
        assert w.dtype == ww.dtype and v.dtype == wv.dtype and v.shape == wv.shape
        np.testing.assert_allclose(w, ww, **tol(dt))
        np.testing.assert_allclose(h @ v, v * w[..., None, :], rtol=1e-2 if "64" in dt[-2:] and dt != "float64" else 1e-6,
                                   atol=(np.abs(ww).max() * (1e-4 if dt in ("float32", "complex64") else 1e-10)))
        close(LA.eigvalsh(a, UPLO=uplo), np.linalg.eigvalsh(junk, UPLO=uplo))


@gpu
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (30, 30)])
def test_eig(dt, shape):
    h = rand(shape, dt)
    sym = (h + np.swapaxes(h, -1, -2)).astype(dt)       # real input, real eigenvalues
    for x in (h, sym):
        w, v = (gp.asnumpy(y) for y in LA.eig(gp.asarray(x)))
        ww, _ = np.linalg.eig(x)
        assert w.dtype == ww.dtype and v.dtype == ww.dtype
        np.testing.assert_allclose(np.sort_complex(w.reshape(-1, w.shape[-1])),
                                   np.sort_complex(ww.reshape(-1, w.shape[-1])), **tol(dt))
        scale = np.abs(ww).max()
        np.testing.assert_allclose(x @ v, v * w[..., None, :], atol=scale * (1e-3 if dt in ("float32", "complex64") else 1e-9))
        wv = gp.asnumpy(LA.eigvals(gp.asarray(x)))
        assert wv.dtype == ww.dtype
    bad = h.copy()
    bad[..., 0, 0] = np.nan
    _same_error(lambda: LA.eig(gp.asarray(bad)), lambda: np.linalg.eig(bad))


@gpu
@pytest.mark.parametrize("dt", FLOATS + ("int64",))
def test_vector_norms(dt):
    h = rand((4, 5, 6), dt)
    a = gp.asarray(h)
    for ord in (None, 2, 1, 0, np.inf, -np.inf, 3, -1, 0.5):
        for axis in (0, 1, -1):
            for keepdims in (False, True):
                close(LA.norm(a, ord, axis, keepdims), np.linalg.norm(h, ord, axis, keepdims),
                      dt if dt in FLOATS else "float64")
    close(LA.norm(a), np.linalg.norm(h), dt if dt in FLOATS else "float64")
    close(LA.norm(a, keepdims=True), np.linalg.norm(h, keepdims=True), dt if dt in FLOATS else "float64")
    close(LA.norm(a[0, 0], 2), np.linalg.norm(h[0, 0], 2), dt if dt in FLOATS else "float64")
    for axis in (None, 1, (0, 2)):
        close(LA.vector_norm(a, axis=axis, keepdims=True, ord=3),
              np.linalg.vector_norm(h, axis=axis, keepdims=True, ord=3), dt if dt in FLOATS else "float64")


@gpu
@pytest.mark.parametrize("dt", FLOATS)
def test_matrix_norms(dt):
    h = rand((3, 5, 4), dt)
    a = gp.asarray(h)
    for ord in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        for axis in ((1, 2), (2, 0), (-1, -2)):
            for keepdims in (False, True):
                close(LA.norm(a, ord, axis, keepdims), np.linalg.norm(h, ord, axis, keepdims), dt)
        close(LA.matrix_norm(a, ord=ord or "fro"), np.linalg.matrix_norm(h, ord=ord or "fro"), dt)
    close(LA.norm(a[0], "fro"), np.linalg.norm(h[0], "fro"), dt)


@gpu
@pytest.mark.parametrize("dt", FLOATS)
def test_cond_rank_pinv_lstsq(dt):
    h = well((3, 5, 5), dt)
    a = gp.asarray(h)
    for p in (None, 2, -2, 1, -1, "fro", "nuc", np.inf, -np.inf):
        close(LA.cond(a, p), np.linalg.cond(h, p), dt)
    sing = h.copy()
    sing[1, 2] = sing[1, 3]
    got = gp.asnumpy(LA.cond(gp.asarray(sing), 1))
    assert np.isinf(got[1]) or got[1] > 1e6
    low = rand((4, 6, 2), dt) @ rand((4, 2, 5), dt)
    assert (gp.asnumpy(LA.matrix_rank(gp.asarray(low))) == np.linalg.matrix_rank(low)).all()
    assert LA.matrix_rank(gp.asarray(h[0, 0])) == np.linalg.matrix_rank(h[0, 0])
    r = rand((6, 4), dt)
    close(LA.pinv(gp.asarray(r)), np.linalg.pinv(r), dt)
    # (rank 2: the tiny singular values are noise, cut off well above float32's)
    close(LA.pinv(gp.asarray(low), rcond=1e-4), np.linalg.pinv(low, rcond=1e-4), dt)
    for b in (rand((6,), dt), rand((6, 3), dt)):
        x, res, rank, s = LA.lstsq(gp.asarray(r), gp.asarray(b))
        wx, wres, wrank, ws = np.linalg.lstsq(r, b)
        close(x, wx, dt)
        close(res, wres, dt)
        close(s, ws, dt)
        assert rank == wrank
    x, res, rank, s = LA.lstsq(gp.asarray(r.T.copy()), gp.asarray(rand((4,), dt)))
    assert gp.asnumpy(res).shape == (0,) and rank == 4


@gpu
def test_tensor_solvers():
    h = well((6, 6), "float64").reshape(2, 3, 6)
    b = rand((2, 3), "float64")
    close(LA.tensorsolve(gp.asarray(h), gp.asarray(b)), np.linalg.tensorsolve(h, b))
    t = well((12, 12), "float64").reshape(4, 3, 6, 2)
    close(LA.tensorinv(gp.asarray(t)), np.linalg.tensorinv(t))


@gpu
@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 12), batch=st.sampled_from([(), (1,), (3,), (2, 2)]),
       dt=st.sampled_from(FLOATS), k=st.integers(0, 3))
def test_solve_hypothesis(n, batch, dt, k):
    h = well(batch + (n, n), dt)
    b = rand(batch + (n, k), dt)
    close(LA.solve(gp.asarray(h), gp.asarray(b)), np.linalg.solve(h, b))
    close(LA.det(gp.asarray(h)), np.linalg.det(h))
