"""Decompositions on cuSOLVER: ``cholesky``, ``qr``, ``svd``, ``svdvals``, ``eigh``,
``eigvalsh``, ``eig``, ``eigvals`` (numpy.linalg's, with NumPy 2's result namedtuples).

Routines: gpunb's one-block Cholesky up to order 64 (:mod:`gpunb.core.kernels.dense`), then
``Xpotrf`` (``potrfBatched`` for stacks of matrices up to 128), ``Xgeqrf`` + ``orgqr``/
``ungqr``, ``gesvdj`` or ``Xgesvd`` (``gesvdjBatched`` for stacks of matrices up to 32x32),
``Xsyevd`` (``syevjBatched`` for stacks up to 32x32), ``Xgeev``. Where the algebra allows, the
C-ordered copy is handed over as it lies (cuSOLVER reads ``A^T``): ``cholesky`` factors
``A^T`` with the opposite triangle, whose factor is NumPy's in C order.
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple

import numpy as np

from .._math.ufuncs import UFUNCS
from .._sorting.search import where
from ..core.fusion.function import fuse
from ..core.kernels.dense import run as dense
from ..core.kernels.elementwise.run import assign
from ..core.ndarray import ndarray
from ..core.runtime import driver, mathlibs, memory
from . import _lapack as L
from .errors import EIG, NOT_POSDEF, SVD, LinAlgError, check, common_type, gpu, stacked_2d, stacked_square

try:
    from numpy.linalg import EighResult, EigResult, QRResult, SVDResult
except ImportError:     # NumPy < 2
    EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
    EigResult = namedtuple("EigResult", "eigenvalues eigenvectors")
    QRResult = namedtuple("QRResult", "Q R")
    SVDResult = namedtuple("SVDResult", "U S Vh")

# one matrix at a time: 'gesvdj' (one-sided Jacobi), 'gesvdp' (polar decomposition + eigh) or
# 'gesvd' (QR iteration, LAPACK's and CuPy's). Measured on the H100 (benchmarks/
# linalg_timing.py, svd of 1024x1024 float32): gesvdj 55 ms, gesvdp 28 ms, gesvd 113 ms (CuPy
# 110, torch 56). gesvdp is opt-in only: cuSOLVER perturbs a matrix with a singular value near
# zero to make its polar decomposition converge, which shifts the singular values (rank, cond,
# pinv of singular matrices would differ from NumPy's); Jacobi keeps them accurate.
SVD_DRIVER = "gesvdj"
SMALL = 32                    # the batched Jacobi routines take matrices up to this order
_sizes: dict = {}
_infos: dict = {}


def _tril(x, upper):
    from .._creation.matrices import tril, triu

    return triu(x) if upper else tril(x)


def _eye(batch, m, n, dt) -> ndarray:
    out = ndarray._empty(tuple(batch) + (m, n), dt)
    memory.fill_bytes(L.ptr(out), 0, out.nbytes)
    k = min(m, n)
    if out.size and k:
        assign(out._derive(tuple(batch) + (k,), out.strides[:-2] + (out.strides[-2] + out.strides[-1],)), 1)
    return out


def _conj(x):
    return UFUNCS["conjugate"](x) if x.dtype.kind == "c" else x


# -- cholesky ---------------------------------------------------------------------------------

def cholesky(a, /, *, upper=False):
    """The Cholesky factor of each Hermitian positive-definite matrix of ``a``
    (numpy.linalg.cholesky): lower ``L`` with ``a = L @ L^H``, or upper ``U = L^H``;
    LinAlgError "Matrix is not positive definite" as NumPy."""
    a = gpu(a, "cholesky")
    stacked_square(a)
    dt = common_type(a)
    n, batch = a.shape[-1], a.shape[:-2]
    count = math.prod(batch)
    if count == 0 or n == 0:
        return ndarray._empty(a.shape, dt)
    L.solver()      # the math libraries first, at every size: a missing one fails alike
    if dense.fits_potrf(n, dt):
        am, sa = L.matrices(a, dt, batch)
        out = ndarray._empty(a.shape, dt)
        if dense.potrf(L.ptr(am), sa, L.ptr(out), n, upper, count, dt):
            raise LinAlgError(NOT_POSDEF)
        return out
    buf = L.work(a, dt, True)            # cuSOLVER sees M = A^T = conj(A)
    # NumPy's lower factor reads A's lower triangle = M's upper one: M = U^H U gives
    # A = U^T conj(U), so L = U^T: U's column-major memory read in C order
    uplo = L.LOWER if upper else L.UPPER
    codes = L.info(count)
    mb = n * n * dt.itemsize
    with mathlibs.errors("potrf"):
        h, p = L.handle_and_params()
        cs, t = L.solver(), L.CUDA_TYPE[dt]
        if count > 1 and n <= 128:
            ptrs = L.pointers(buf, count, mb)
            getattr(cs, L.PREFIX[dt] + "potrf_batched")(h, uplo, n, L.ptr(ptrs), n, L.ptr(codes),
                                                         count)
        else:
            key = ("potrf", dt, n, uplo)
            size = _sizes.get(key)
            if size is None:
                size = _sizes[key] = cs.xpotrf_buffer_size(h, p, uplo, n, t, L.ptr(buf), n, t)
            work, hwork = L.workspace(size[0]), L.host_workspace(size[1])
            for i in range(count):
                cs.xpotrf(h, p, uplo, n, t, L.ptr(buf) + i * mb, n, t, L.ptr(work), size[0],
                          hwork.ctypes.data, size[1], L.ptr(codes) + 4 * i)
    check(codes, NOT_POSDEF)
    return _tril(buf, upper)


# -- qr -----------------------------------------------------------------------------------------

_QR_MODES = ("reduced", "complete", "r", "raw")


def qr(a, mode="reduced"):
    """The QR factorization of each matrix of ``a`` (numpy.linalg.qr; modes 'reduced',
    'complete', 'r', 'raw'): cuSOLVER ``Xgeqrf``, then ``orgqr``/``ungqr`` for Q."""
    if mode not in _QR_MODES:
        if mode in ("f", "full"):
            warnings.warn("The 'full' option is deprecated in favor of 'reduced'.\nFor backward "
                          "compatibility let mode default.", DeprecationWarning, stacklevel=2)
            mode = "reduced"
        elif mode in ("e", "economic"):
            warnings.warn("The 'economic' option is deprecated.", DeprecationWarning, stacklevel=2)
            mode = "economic"
        else:
            raise ValueError(f"Unrecognized mode '{mode}'")
    a = gpu(a, "qr")
    stacked_2d(a)
    dt = common_type(a)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    k = min(m, n)
    count = math.prod(batch)
    buf = L.work(a, dt, False)            # (batch, n, m): column-major A, ld m
    tau = ndarray._empty(batch + (k,), dt)
    if count and k:
        codes = L.info(1)
        mb = m * n * dt.itemsize
        with mathlibs.errors("geqrf"):
            h, p = L.handle_and_params()
            cs, t = L.solver(), L.CUDA_TYPE[dt]
            key = ("geqrf", dt, m, n)
            size = _sizes.get(key)
            if size is None:
                size = _sizes[key] = cs.xgeqrf_buffer_size(h, p, m, n, t, L.ptr(buf), m, t,
                                                           L.ptr(tau), t)
            work, hwork = L.workspace(size[0]), L.host_workspace(size[1])
            for i in range(count):
                cs.xgeqrf(h, p, m, n, t, L.ptr(buf) + i * mb, m, t, L.ptr(tau) + i * k * dt.itemsize,
                          t, L.ptr(work), size[0], hwork.ctypes.data, size[1], L.ptr(codes))
    if mode == "raw":
        return buf, tau          # NumPy's h: the column-major result read in C order
    if mode == "economic":
        return buf.swapaxes(-1, -2)
    mc = m if (mode == "complete" and m > n) else k
    r = _tril(buf.swapaxes(-1, -2)[..., :mc, :], True)
    if mode == "r":
        return r
    if count == 0 or k == 0:
        return QRResult(_eye(batch, m, mc, dt), r)
    # column-major Q (m x mc), ld m: the reflectors, then identity columns past the k-th
    qbuf = _eye(batch, mc, m, dt)
    assign(qbuf[..., :k, :], buf[..., :k, :])
    name = L.PREFIX[dt] + ("ungqr" if dt.kind == "c" else "orgqr")
    qb = mc * m * dt.itemsize
    with mathlibs.errors(name):
        h = mathlibs.handle("cusolverDn")
        cs = L.solver()
        key = (name, m, mc, k)
        lwork = _sizes.get(key)
        if lwork is None:
            lwork = _sizes[key] = getattr(cs, name + "_buffer_size")(h, m, mc, k, L.ptr(qbuf), m,
                                                                    L.ptr(tau))
        work = L.workspace(lwork * dt.itemsize)
        codes = L.info(1)
        for i in range(count):
            getattr(cs, name)(h, m, mc, k, L.ptr(qbuf) + i * qb, m,
                              L.ptr(tau) + i * k * dt.itemsize, L.ptr(work), lwork, L.ptr(codes))
    return QRResult(qbuf.swapaxes(-1, -2), r)


# -- svd ----------------------------------------------------------------------------------------

def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """The singular value decomposition of each matrix of ``a`` (numpy.linalg.svd):
    ``SVDResult(U, S, Vh)`` with ``a = U @ diag(S) @ Vh``, S descending; S alone without
    ``compute_uv``."""
    a = gpu(a, "svd")
    stacked_2d(a)
    if hermitian:
        return _svd_hermitian(a, compute_uv)
    dt = common_type(a)
    rdt = L.REAL[dt]
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    k = min(m, n)
    count = math.prod(batch)
    if count == 0 or k == 0:
        s = ndarray._empty(batch + (k,), rdt)
        if not compute_uv:
            return s
        u = _eye(batch, m, m if full_matrices else k, dt)
        vh = _eye(batch, n if full_matrices else k, n, dt)
        return SVDResult(u, s, vh)
    if count > 1 and m <= SMALL and n <= SMALL:
        u, s, vh = _gesvdj_batched(a, dt, m, n, batch, compute_uv)
        if compute_uv and not full_matrices:
            u, vh = u[..., :, :k], vh[..., :k, :]
    elif SVD_DRIVER == "gesvdj":
        u, s, vh = _gesvdj(a, dt, m, n, batch, full_matrices, compute_uv)
    elif SVD_DRIVER == "gesvdp":
        u, s, vh = _gesvdp(a, dt, m, n, batch, full_matrices, compute_uv)
    else:
        u, s, vh = _gesvd(a, dt, m, n, batch, full_matrices, compute_uv)
    return SVDResult(u, s, vh) if compute_uv else s


def _gesvd(a, dt, m, n, batch, full, uv):
    """``Xgesvd`` (QR iteration; needs rows >= columns: a wide matrix goes in as its C-order
    ``A^T``, whose factors are NumPy's U and Vh in C order with no transpose)."""
    k, count, rdt = min(m, n), math.prod(batch), L.REAL[dt]
    wide = m < n
    buf = L.work(a, dt, wide)
    r, c = (n, m) if wide else (m, n)          # the column-major matrix cuSOLVER sees
    job = ord("A") if full else ord("S")
    job = job if uv else ord("N")
    ucols = r if full else c
    s = ndarray._empty(batch + (k,), rdt)
    ubuf = ndarray._empty(batch + (ucols, r), dt) if uv else None
    vbuf = ndarray._empty(batch + (c, c), dt) if uv else None
    codes = L.info(count)
    isz = dt.itemsize
    with mathlibs.errors("gesvd"):
        h, p = L.handle_and_params()
        cs, t, tr = L.solver(), L.CUDA_TYPE[dt], L.CUDA_TYPE[rdt]
        up, vp = (L.ptr(ubuf), L.ptr(vbuf)) if uv else (0, 0)
        key = ("gesvd", dt, r, c, job)
        size = _sizes.get(key)
        if size is None:
            size = _sizes[key] = cs.xgesvd_buffer_size(h, p, job, job, r, c, t, L.ptr(buf), r, tr,
                                                       L.ptr(s), t, up, r, t, vp, c, t)
        work, hwork = L.workspace(size[0]), L.host_workspace(size[1])
        for i in range(count):
            cs.xgesvd(h, p, job, job, r, c, t, L.ptr(buf) + i * r * c * isz, r, tr,
                      L.ptr(s) + i * k * rdt.itemsize, t, up + i * ucols * r * isz if uv else 0, r,
                      t, vp + i * c * c * isz if uv else 0, c, t, L.ptr(work), size[0],
                      hwork.ctypes.data, size[1], L.ptr(codes) + 4 * i)
    check(codes, SVD)
    if not uv:
        return None, s, None
    if wide:      # A^T = U' S V'^H: U = conj(V') = V'^H read in C order, Vh = U'^T = U' in C order
        return vbuf, s, ubuf
    return ubuf.swapaxes(-1, -2), s, vbuf.swapaxes(-1, -2)


def _gesvdj_info():
    ctx = driver.active
    info = _infos.get(("gesvdj", ctx.ordinal))
    if info is None:
        with mathlibs.errors("gesvdj info"):
            info = _infos[("gesvdj", ctx.ordinal)] = L.solver().create_gesvdj_info()
    return info


def _gesvdj(a, dt, m, n, batch, full, uv):
    """``gesvdj`` (one-sided Jacobi) of column-major ``A``: U column-major, V column-major,
    so ``Vh = conj(V^T)``: V's memory read in C order (conjugated when complex)."""
    k, count, rdt = min(m, n), math.prod(batch), L.REAL[dt]
    buf = L.work(a, dt, False)
    econ = 0 if full else 1
    ucols, vcols = (m, n) if full else (k, k)
    s = ndarray._empty(batch + (k,), rdt)
    # (full-size U and V even for singular values alone: gesvdj writes into them as work
    # space when m > n, and a short buffer there corrupted results on the H100)
    ubuf = ndarray._empty(batch + (ucols, m), dt)
    vbuf = ndarray._empty(batch + (vcols, n), dt)
    codes = L.info(count)
    isz = dt.itemsize
    jobz = L.VECTOR if uv else L.NOVECTOR
    with mathlibs.errors("gesvdj"):
        h, _ = L.handle_and_params()
        cs, pre = L.solver(), L.PREFIX[dt]
        params = _gesvdj_info()
        key = ("gesvdj", dt, m, n, econ, jobz)
        lwork = _sizes.get(key)
        if lwork is None:
            lwork = _sizes[key] = getattr(cs, pre + "gesvdj_buffer_size")(
                h, jobz, econ, m, n, L.ptr(buf), m, L.ptr(s), L.ptr(ubuf), m, L.ptr(vbuf), n, params)
        work = L.workspace(lwork * isz)
        f = getattr(cs, pre + "gesvdj")
        ustep, vstep = ucols * m * isz, vcols * n * isz
        for i in range(count):
            f(h, jobz, econ, m, n, L.ptr(buf) + i * m * n * isz, m, L.ptr(s) + i * k * rdt.itemsize,
              L.ptr(ubuf) + i * ustep, m, L.ptr(vbuf) + i * vstep, n, L.ptr(work), lwork,
              L.ptr(codes) + 4 * i, params)
    check(codes, SVD)
    if not uv:
        return None, s, None
    return ubuf.swapaxes(-1, -2), s, _conj(vbuf)


def _gesvdp(a, dt, m, n, batch, full, uv):
    """``Xgesvdp`` (polar decomposition, then ``Xsyevd``). A wide matrix goes in as its
    transpose: ``A^T = U1 S Vh1`` gives ``U = Vh1^T``, ``Vh = U1^T`` (views)."""
    if m < n:
        u1, s, vh1 = _gesvdp(a.swapaxes(-1, -2), dt, n, m, batch, full, uv)
        return (vh1.swapaxes(-1, -2), s, u1.swapaxes(-1, -2)) if uv else (None, s, None)
    k, count, rdt = n, math.prod(batch), L.REAL[dt]
    buf = L.work(a, dt, False)                 # column-major A (m x n), ld m
    econ = 0 if full else 1
    ucols = m if full else n
    s = ndarray._empty(batch + (k,), rdt)
    ubuf = ndarray._empty(batch + (ucols, m), dt)
    vbuf = ndarray._empty(batch + (n, n), dt)
    codes = L.info(count)
    isz = dt.itemsize
    jobz = L.VECTOR if uv else L.NOVECTOR
    with mathlibs.errors("gesvdp"):
        h, p = L.handle_and_params()
        cs, t, tr = L.solver(), L.CUDA_TYPE[dt], L.CUDA_TYPE[rdt]
        key = ("gesvdp", dt, m, n, econ, jobz)
        size = _sizes.get(key)
        if size is None:
            size = _sizes[key] = cs.xgesvdp_buffer_size(
                h, p, jobz, econ, m, n, t, L.ptr(buf), m, tr, L.ptr(s), t, L.ptr(ubuf), m, t,
                L.ptr(vbuf), n, t)
        work, hwork = L.workspace(size[0]), L.host_workspace(size[1])
        for i in range(count):
            cs.xgesvdp(h, p, jobz, econ, m, n, t, L.ptr(buf) + i * m * n * isz, m, tr,
                       L.ptr(s) + i * k * rdt.itemsize, t, L.ptr(ubuf) + i * ucols * m * isz, m,
                       t, L.ptr(vbuf) + i * n * n * isz, n, t, L.ptr(work), size[0],
                       hwork.ctypes.data, size[1], L.ptr(codes) + 4 * i)
    check(codes, SVD)
    if not uv:
        return None, s, None
    return ubuf.swapaxes(-1, -2), s, _conj(vbuf)


def _gesvdj_batched(a, dt, m, n, batch, uv):
    """``gesvdjBatched`` for stacks of matrices up to 32x32 (full U and V)."""
    k, count, rdt = min(m, n), math.prod(batch), L.REAL[dt]
    buf = L.work(a, dt, False)
    s = ndarray._empty(batch + (k,), rdt)
    ubuf = ndarray._empty(batch + (m, m), dt)
    vbuf = ndarray._empty(batch + (n, n), dt)
    codes = L.info(count)
    jobz = L.VECTOR if uv else L.NOVECTOR
    with mathlibs.errors("gesvdjBatched"):
        h, _ = L.handle_and_params()
        cs, pre = L.solver(), L.PREFIX[dt]
        params = _gesvdj_info()
        lwork = getattr(cs, pre + "gesvdj_batched_buffer_size")(
            h, jobz, m, n, L.ptr(buf), m, L.ptr(s), L.ptr(ubuf), m, L.ptr(vbuf), n, params, count)
        work = L.workspace(lwork * dt.itemsize)
        getattr(cs, pre + "gesvdj_batched")(h, jobz, m, n, L.ptr(buf), m, L.ptr(s), L.ptr(ubuf), m,
                                            L.ptr(vbuf), n, L.ptr(work), lwork, L.ptr(codes),
                                            params, count)
    check(codes, SVD)
    if not uv:
        return None, s, None
    return ubuf.swapaxes(-1, -2), s, _conj(vbuf)


@fuse
def _descending_rank(v_col, v_row, i_col, j_row):
    # the position of v_i in descending order (ties: the later index first, as NumPy's
    # argsort(...)[::-1]): how many are larger, plus the equal ones after it
    return ((v_row > v_col) | ((v_row == v_col) & (j_row > i_col))).sum(axis=-1)


@fuse
def _inverse(rank_row, r_col, i_row):
    # the index whose rank is r (a permutation's inverse, as one reduction per position)
    return where(rank_row == r_col, i_row, 0).sum(axis=-1)


def _order_by_abs(s):
    """Indices sorting ``s`` (a stack of vectors) descending, as NumPy's ``argsort(s)[...,
    ::-1]``: two fused O(n^2) passes (n is a matrix order), no sort kernel."""
    from .._creation.from_data import upload

    n = s.shape[-1]
    i = upload(np.arange(n, dtype=np.int64))
    rank = _descending_rank(s[..., :, None], s[..., None, :], i[:, None], i)
    return _inverse(rank[..., None, :], i[:, None], i)


def _svd_hermitian(a, uv):
    """NumPy's ``hermitian=True`` route: from ``eigh``, singular values the eigenvalues'
    absolute values sorted descending (the signs moved into Vh)."""
    from .._indexing.gather import take_along_axis

    if not uv:
        s = UFUNCS["abs"](eigvalsh(a))
        return take_along_axis(s, _order_by_abs(s), axis=-1) if s.size else s
    w, u = eigh(a)
    if w.size == 0:
        return SVDResult(u, w, _conj(u.swapaxes(-1, -2)))
    sgn, s = UFUNCS["sign"](w), UFUNCS["abs"](w)
    idx = _order_by_abs(s)
    sgn = take_along_axis(sgn, idx, axis=-1)
    s = take_along_axis(s, idx, axis=-1)
    u = take_along_axis(u, idx[..., None, :], axis=-1)
    vt = _conj(UFUNCS["multiply"](u, sgn[..., None, :].astype(u.dtype)).swapaxes(-1, -2))
    return SVDResult(u, s, vt)


def svdvals(x, /):
    """The singular values of each matrix of ``x``, descending (numpy.linalg.svdvals)."""
    return svd(x, compute_uv=False)


# -- eigh ---------------------------------------------------------------------------------------

def _uplo(UPLO) -> str:
    u = UPLO.upper()             # (NumPy's AttributeError for a non-string)
    if u not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return u


def _eigh(a, UPLO, vectors, func):
    UPLO = _uplo(UPLO)
    a = gpu(a, func)
    stacked_square(a)
    dt = common_type(a)
    rdt = L.REAL[dt]
    n, batch = a.shape[-1], a.shape[:-2]
    count = math.prod(batch)
    w = ndarray._empty(batch + (n,), rdt)
    if count == 0 or n == 0:
        return w, ndarray._empty(a.shape, dt)
    # real: the C copy as it lies (M = A^T = A, the opposite triangle); complex: a transposed
    # copy (M = A) so that the eigenvectors need no conjugation
    real = dt.kind == "f"
    buf = L.work(a, dt, real)
    lower = UPLO == "L"
    uplo = (L.UPPER if lower else L.LOWER) if real else (L.LOWER if lower else L.UPPER)
    jobz = L.VECTOR if vectors else L.NOVECTOR
    codes = L.info(count)
    mb, isz = n * n * dt.itemsize, rdt.itemsize
    with mathlibs.errors("syevd"):
        h, p = L.handle_and_params()
        cs, t, tr = L.solver(), L.CUDA_TYPE[dt], L.CUDA_TYPE[rdt]
        if count > 1 and n <= SMALL:
            params = _syevj_info()
            name = L.PREFIX[dt] + ("heevj_batched" if dt.kind == "c" else "syevj_batched")
            lwork = getattr(cs, name + "_buffer_size")(h, jobz, uplo, n, L.ptr(buf), n, L.ptr(w),
                                                      params, count)
            work = L.workspace(lwork * dt.itemsize)
            getattr(cs, name)(h, jobz, uplo, n, L.ptr(buf), n, L.ptr(w), L.ptr(work), lwork,
                              L.ptr(codes), params, count)
        else:
            key = ("syevd", dt, n, jobz, uplo)
            size = _sizes.get(key)
            if size is None:
                size = _sizes[key] = cs.xsyevd_buffer_size(h, p, jobz, uplo, n, t, L.ptr(buf), n, tr,
                                                           L.ptr(w), t)
            work, hwork = L.workspace(size[0]), L.host_workspace(size[1])
            for i in range(count):
                cs.xsyevd(h, p, jobz, uplo, n, t, L.ptr(buf) + i * mb, n, tr,
                          L.ptr(w) + i * n * isz, t, L.ptr(work), size[0], hwork.ctypes.data,
                          size[1], L.ptr(codes) + 4 * i)
    check(codes, EIG)
    return w, buf.swapaxes(-1, -2)


def _syevj_info():
    ctx = driver.active
    info = _infos.get(("syevj", ctx.ordinal))
    if info is None:
        with mathlibs.errors("syevj info"):
            info = _infos[("syevj", ctx.ordinal)] = L.solver().create_syevj_info()
    return info


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of each Hermitian matrix of ``a``
    (numpy.linalg.eigh), reading the ``UPLO`` triangle."""
    w, v = _eigh(a, UPLO, True, "eigh")
    return EighResult(w, v)


def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending) of each Hermitian matrix of ``a`` (numpy.linalg.eigvalsh)."""
    return _eigh(a, UPLO, False, "eigvalsh")[0]


# -- eig ----------------------------------------------------------------------------------------

from ._eig import eig, eigvals  # noqa: E402  (the general solver, in its own module)

__all__ = ["cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals",
           "SVDResult", "QRResult", "EighResult", "EigResult", "LinAlgError"]
