"""Linear solvers on cuSOLVER/cuBLAS: ``solve``, ``inv``, ``lstsq``, ``pinv``,
``tensorsolve``, ``tensorinv`` (numpy.linalg's), and the LU factorization that ``det`` and
``slogdet`` share.

Matrices up to order 64 (one or a stack): gpunb's one-block LU solve,
:mod:`gpunb.core.kernels.dense` (one launch; cuSOLVER's chain of small kernels made a 64 x 64
``solve`` wait ~0.4 ms for its info code). Larger, one matrix: cuSOLVER's 64-bit
``Xgetrf``/``Xgetrs``; a stack: cuBLAS's ``getrfBatched``/``getrsBatched``. The LU is taken of the
C-ordered copy as it lies (cuSOLVER reads it as ``A^T``): ``solve`` then runs ``getrs``
transposed (one right-hand side: two cuBLAS ``trsv`` and gpunb's shared-memory row
interchanges, :mod:`gpunb.core.kernels.pivot`, 0.32 against getrs's 0.72 ms at n = 2048), and ``inv`` solves ``A^T Y = I``, whose column-major ``Y = A^-T`` is ``A^-1`` in C
order, so neither transposes anything.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.kernels.dense import run as dense
from ..core.kernels.elementwise.run import assign
from ..core.kernels.pivot import codegen as pivot
from ..core.kernels.pivot.run import unpivot
from ..core.ndarray import ndarray
from ..core.runtime import mathlibs, memory
from . import _lapack as L
from .errors import (SINGULAR, LinAlgError, check, common_type, gpu, numpy_shape_error,
                     stacked_2d, stacked_square)

_LOWER, _UPPER, _NON_UNIT, _UNIT = 0, 1, 0, 1     # cublasFillMode_t, cublasDiagType_t
BATCHED_MAX = 64      # stacks of matrices up to this order go to cuBLAS's batched LU
_sizes: dict = {}     # (routine, dtype, n) -> cuSOLVER's workspace sizes


def _batched(count: int, n: int) -> bool:
    return count > 1 and n <= BATCHED_MAX


def lu(buf: ndarray, n: int, count: int):
    """LU-factor in place each of the ``count`` ``n x n`` matrices of the C-contiguous
    ``buf`` (read column-major). Returns (pivots ``batch + (n,)`` (1-based), info codes, the
    device pointer array of the batched path or None)."""
    dt = buf.dtype
    mb = n * n * dt.itemsize
    codes = L.info(count)
    with mathlibs.errors("getrf"):
        if _batched(count, n):
            ipiv = ndarray._empty(buf.shape[:-1], np.dtype(np.int32))
            aptrs = L.pointers(buf, count, mb)
            h = mathlibs.handle("cublas")
            getattr(L.blas(), L.PREFIX[dt] + "getrf_batched")(
                h, n, L.ptr(aptrs), n, L.ptr(ipiv), L.ptr(codes), count)
            return ipiv, codes, aptrs
        ipiv = ndarray._empty(buf.shape[:-1], np.dtype(np.int64))
        h, p = L.handle_and_params()
        cs, t = L.solver(), L.CUDA_TYPE[dt]
        key = ("getrf", dt, n, L.ALGS[L.GETRF])
        size = _sizes.get(key)
        if size is None:
            size = _sizes[key] = cs.xgetrf_buffer_size(h, p, n, n, t, L.ptr(buf), n, t)
        work, hwork = L.workspace(size[0]), L.host_workspace(size[1])
        a0, p0, i0, w, hw = L.ptr(buf), L.ptr(ipiv), L.ptr(codes), L.ptr(work), hwork.ctypes.data
        for i in range(count):
            cs.xgetrf(h, p, n, n, t, a0 + i * mb, n, p0 + i * n * 8, t, w, size[0], hw, size[1],
                      i0 + 4 * i)
    return ipiv, codes, None


def _getrs(buf, ipiv, aptrs, rhs, n, k, count, trans):
    """Solve with the LU in ``buf`` for the ``n x k`` column-major right-hand sides in ``rhs``
    (overwritten), ``op(LU-matrix) X = B``."""
    dt = buf.dtype
    mb, rb = n * n * dt.itemsize, n * k * dt.itemsize
    if aptrs is None and k == 1 and trans == L.OP_T and pivot.fits(n, dt.itemsize):
        return _trsv_t(buf, ipiv, rhs, n, count)
    with mathlibs.errors("getrs"):
        if aptrs is not None:
            bptrs = L.pointers(rhs, count, rb)
            host_info = np.zeros(1, np.int32)
            getattr(L.blas(), L.PREFIX[dt] + "getrs_batched")(
                mathlibs.handle("cublas"), trans, n, k, L.ptr(aptrs), n, L.ptr(ipiv),
                L.ptr(bptrs), n, host_info.ctypes.data, count)
            return
        h, p = L.handle_and_params()
        cs, t = L.solver(), L.CUDA_TYPE[dt]
        codes = L.info(1)
        a0, p0, b0, c = L.ptr(buf), L.ptr(ipiv), L.ptr(rhs), L.ptr(codes)
        for i in range(count):
            cs.xgetrs(h, p, trans, n, k, t, a0 + i * mb, n, p0 + i * n * 8, t, b0 + i * rb, n, c)


def _trsv_t(buf, ipiv, rhs, n, count):
    """The transposed one-vector solve as two cuBLAS ``trsv`` and gpunb's own row interchanges
    (``getrs``'s global-memory ones were 0.44 of its 0.72 ms at n = 2048): the LU of ``A^T``
    is ``P L U``, so ``A = U^T L^T P^T`` and ``x = P (L^T \\ (U^T \\ b))``."""
    dt = buf.dtype
    trsv = getattr(L.blas(), L.PREFIX[dt] + "trsv")
    h = mathlibs.handle("cublas")
    mb, vb = n * n * dt.itemsize, n * dt.itemsize
    a0, p0, b0 = L.ptr(buf), L.ptr(ipiv), L.ptr(rhs)
    for i in range(count):
        with mathlibs.errors("trsv"):
            trsv(h, _UPPER, L.OP_T, _NON_UNIT, n, a0 + i * mb, n, b0 + i * vb, 1)
            trsv(h, _LOWER, L.OP_T, _UNIT, n, a0 + i * mb, n, b0 + i * vb, 1)
        unpivot(b0 + i * vb, p0 + i * n * 8, n, dt.itemsize)


def solve(a, b):
    """Solve ``a @ x = b`` for ``x`` (numpy.linalg.solve, NumPy 2: ``b`` is a vector only
    when 1-D; otherwise a stack of ``(M, K)`` matrices broadcast against ``a``)."""
    a, b = gpu(a, "solve"), gpu(b, "solve")
    stacked_square(a)
    dt = common_type(a, b)
    n = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        if b.shape[0] != n:
            numpy_shape_error(np.linalg.solve, (a.shape, a.dtype), (b.shape, b.dtype))
        batch, bm = a.shape[:-2], b.reshape(n, 1)
    else:
        try:
            batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
        except ValueError:
            batch = None
        if batch is None or b.shape[-2] != n:
            numpy_shape_error(np.linalg.solve, (a.shape, a.dtype), (b.shape, b.dtype))
        bm = b
    k = bm.shape[-1]
    count = math.prod(batch)
    if count == 0 or n == 0 or k == 0:
        out = ndarray._empty(batch + ((n,) if vector else (n, k)), dt)
        return out
    L.solver()      # the math libraries first, at every size: a missing one fails alike
    if dense.fits_gesv(n, k, dt):
        out = ndarray._empty(batch + ((n,) if vector else (n, k)), dt)
        _dense_gesv(a, bm, out, dt, n, k, batch, count)
        return out
    lu_buf = L.work(a, dt, True, batch)           # column-major A^T
    # the LU first: the GPU starts factoring while the host prepares the rest
    ipiv, codes, aptrs = lu(lu_buf, n, count)
    codes = L.early(codes)      # read once the solve is queued too
    rhs = L.work(bm, dt, False, batch)            # column-major B: (batch, k, n) in C order
    _getrs(lu_buf, ipiv, aptrs, rhs, n, k, count, L.OP_T)   # (A^T)^T X = B
    check(codes, SINGULAR)
    return rhs.reshape(batch + (n,)) if vector else rhs.swapaxes(-1, -2)


def _dense_gesv(a, b, out, dt, n, k, batch, count) -> None:
    """``out = solve(a, b)`` (``b=None``: the inverse) in one launch and NumPy's
    LinAlgError for a singular matrix."""
    am, sa = L.matrices(a, dt, batch)
    bm, sb = (None, 0) if b is None else L.matrices(b, dt, batch)
    if dense.gesv(L.ptr(am), sa, None if bm is None else L.ptr(bm), sb, L.ptr(out), n, k,
                  count, dt):
        raise LinAlgError(SINGULAR)


def _identity(batch, n, dt) -> ndarray:
    eye = ndarray._empty(tuple(batch) + (n, n), dt)
    memory.fill_bytes(L.ptr(eye), 0, eye.nbytes)
    if eye.size:
        diag = eye._derive(tuple(batch) + (n,), eye.strides[:-2] + ((n + 1) * dt.itemsize,))
        assign(diag, 1)
    return eye


def inv(a):
    """The inverse of each square matrix of ``a`` (numpy.linalg.inv); LinAlgError
    "Singular matrix" as NumPy."""
    a = gpu(a, "inv")
    stacked_square(a)
    dt = common_type(a)
    n, batch = a.shape[-1], a.shape[:-2]
    count = math.prod(batch)
    if count == 0 or n == 0:
        return ndarray._empty(a.shape, dt)
    L.solver()
    if dense.fits_gesv(n, n, dt):
        out = ndarray._empty(a.shape, dt)
        _dense_gesv(a, None, out, dt, n, n, batch, count)
        return out
    lu_buf = L.work(a, dt, True)                   # column-major A^T
    ipiv, codes, aptrs = lu(lu_buf, n, count)
    codes = L.early(codes)      # read once the solve is queued too
    out = _identity(batch, n, dt)
    _getrs(lu_buf, ipiv, aptrs, out, n, n, count, L.OP_N)   # A^T Y = I: Y^T = A^-1 (C order)
    check(codes, SINGULAR)
    return out


def tensorsolve(a, b, axes=None):
    """Solve the tensor equation ``tensordot(a, x, x.ndim) = b`` (numpy.linalg.tensorsolve)."""
    a, b = gpu(a, "tensorsolve"), gpu(b, "tensorsolve")
    an = a.ndim
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        a = a.transpose(allaxes)
    oldshape = a.shape[-(an - b.ndim):]
    prod = math.prod(oldshape)
    if a.size != prod ** 2:
        # (NumPy's text, with the indentation of its source's line continuation)
        raise LinAlgError("Input arrays must satisfy the requirement" + " " * 13
                          + "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return solve(a.reshape(prod, prod), b.reshape(-1)).reshape(oldshape)


def tensorinv(a, ind=2):
    """The inverse of an N-dimensional array with respect to ``tensordot``
    (numpy.linalg.tensorinv)."""
    a = gpu(a, "tensorinv")
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    oldshape = a.shape
    invshape = oldshape[ind:] + oldshape[:ind]
    prod = math.prod(oldshape[ind:])
    return inv(a.reshape(prod, -1)).reshape(*invshape)


class _NoValue:
    pass


def pinv(a, rcond=None, hermitian=False, *, rtol=_NoValue):
    """The Moore-Penrose pseudo-inverse from the SVD (numpy.linalg.pinv)."""
    from .._math.ufuncs import UFUNCS
    from ..core.kernels.reduction.run import reduce
    from .decompositions import svd
    from .products import matmul

    a = gpu(a, "pinv")
    stacked_2d(a)
    dt = common_type(a)
    if rcond is None:
        if rtol is _NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a.shape[-2:]) * np.finfo(dt).eps
        else:
            rcond = rtol
    elif rtol is not _NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    m, n = a.shape[-2:]
    if a.size == 0:
        return ndarray._empty(a.shape[:-2] + (n, m), dt)
    u, s, vt = svd(UFUNCS["conjugate"](a.astype(dt, copy=False)), full_matrices=False,
                   hermitian=hermitian)
    if isinstance(rcond, ndarray):
        rc = rcond[..., None] if rcond.ndim else rcond
    else:
        rc = np.asarray(rcond, dtype=s.dtype)
        if rc.ndim:           # a host array of cutoffs (a few numbers): uploaded
            from .._creation.from_data import upload

            rc = upload(np.ascontiguousarray(rc[..., None]))
        else:
            rc = s.dtype.type(rc)
    cutoff = UFUNCS["multiply"](rc, reduce("max", s, -1, None, None, True))
    s_inv = _fused_pinv_scale(s, cutoff)
    return matmul(vt.swapaxes(-1, -2),
                  UFUNCS["multiply"](s_inv[..., None], u.swapaxes(-1, -2)))


def _fused_pinv_scale(s, cutoff):
    from .._math.ufuncs import UFUNCS

    large = UFUNCS["greater"](s, cutoff)
    inv_s = UFUNCS["divide"](s.dtype.type(1), s)
    return UFUNCS["where"](large, inv_s, s.dtype.type(0))


def lstsq(a, b, rcond=None):
    """Least-squares solution of ``a @ x = b`` (numpy.linalg.lstsq): ``(x, residuals, rank,
    s)`` as NumPy, from the SVD (cuSOLVER ``gesvd``); ``rank`` is read back (a Python int)."""
    from .._math.ufuncs import UFUNCS
    from ..core.kernels.reduction.run import reduce
    from .decompositions import svd
    from .products import matmul

    a, b = gpu(a, "lstsq"), gpu(b, "lstsq")
    is_1d = b.ndim == 1
    if is_1d:
        b = b.reshape(b.shape[0], 1)
    for x in (a, b):
        if x.ndim != 2:
            raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be two-dimensional")
    m, n = a.shape
    m2, k = b.shape
    if m != m2:
        raise LinAlgError("Incompatible dimensions")
    dt = common_type(a, b)
    rdt = L.REAL[dt]
    if rcond is None:
        rcond = np.finfo(dt).eps * max(n, m)
    kk = min(m, n)
    if kk == 0 or k == 0:
        x = ndarray._empty((n, k), dt)
        memory.fill_bytes(L.ptr(x), 0, x.nbytes)
        s, rank = ndarray._empty((0,), rdt), 0
        if kk:
            s = svd(a.astype(dt, copy=False), compute_uv=False)
            rank = _rank(s, rcond)
        if k and rank == n and m > n:          # n == 0: the residual is all of b
            resid = reduce("sum", _abs2(b.astype(dt)), 0)
        else:
            resid = ndarray._empty((0,), rdt)
        return (x.reshape(n) if is_1d else x), resid, rank, s
    u, s, vt = svd(a.astype(dt, copy=False), full_matrices=False)
    cutoff = UFUNCS["multiply"](s.dtype.type(rcond), reduce("max", s, None, None, None, True))
    s_inv = _fused_pinv_scale(s, cutoff)
    bb = b.astype(dt, copy=False)
    uhb = matmul(_h(u), bb)                                            # (kk, k)
    x = matmul(_h(vt), UFUNCS["multiply"](s_inv[:, None], uhb))
    rank = _rank(s, rcond)
    if rank == n and m > n:
        r = UFUNCS["subtract"](bb, matmul(a.astype(dt, copy=False), x))
        resid = reduce("sum", _abs2(r), 0)
    else:
        resid = ndarray._empty((0,), rdt)
    if is_1d:
        x = x.reshape(n)
    return x, resid, rank, s


def _rank(s, rcond) -> int:
    from .._math.ufuncs import UFUNCS
    from ..core.kernels.reduction.run import reduce

    smax = reduce("max", s, None, None, None, True)
    big = UFUNCS["greater"](s, UFUNCS["multiply"](s.dtype.type(rcond), smax))
    return int(reduce("sum", big, None, np.dtype(np.int64)).item())


def _h(x):
    """The conjugate transpose of each matrix (a view when real)."""
    from .._math.ufuncs import UFUNCS

    return (UFUNCS["conjugate"](x) if x.dtype.kind == "c" else x).swapaxes(-1, -2)


def _abs2(x):
    from .._math.ufuncs import UFUNCS

    if x.dtype.kind == "c":
        return UFUNCS["add"](UFUNCS["multiply"](x.real, x.real), UFUNCS["multiply"](x.imag, x.imag))
    return UFUNCS["multiply"](x, x)
