"""``LinAlgError`` (NumPy's own class) and NumPy's input checks and dtype rules for
``numpy.linalg``, with its messages; :func:`check` raises NumPy's message for a failed
cuSOLVER info code (one small readback)."""

from __future__ import annotations

import numpy as np

from ..core import args
from ..core.ndarray import ndarray
from . import _lapack

# ``except numpy.linalg.LinAlgError`` catches gpunb's errors: the same class.
LinAlgError = np.linalg.LinAlgError

SINGULAR = "Singular matrix"
NOT_POSDEF = "Matrix is not positive definite"
SVD = "SVD did not converge"
EIG = "Eigenvalues did not converge"
LSTSQ = "SVD did not converge in Linear Least Squares"

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)


def gpu(a, func: str) -> ndarray:
    """``a`` as a gpunb array (a host array or a non-array raises, as everywhere in gpunb)."""
    return args.array(a, func)


def stacked_2d(*arrays) -> None:
    """numpy.linalg's ``_assert_stacked_2d``."""
    for a in arrays:
        if a.ndim < 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least "
                              "two-dimensional")


def stacked_square(*arrays) -> None:
    """numpy.linalg's ``_assert_stacked_square`` (which includes the 2-D check)."""
    stacked_2d(*arrays)
    for a in arrays:
        if a.shape[-1] != a.shape[-2]:
            raise LinAlgError("Last 2 dimensions of the array must be square")


def common_type(*arrays) -> np.dtype:
    """numpy.linalg's ``_commonType``: the result dtype (float32, float64, complex64 or
    complex128; integers and bool count as float64; float16 raises NumPy's TypeError). gpunb
    computes in that precision (NumPy computes float32 in float64 and rounds)."""
    double = cplx = False
    for a in arrays:
        dt = a.dtype
        if dt.kind in "fc":
            if dt.kind == "c":
                cplx = True
            if dt in (_F64, _C128):
                double = True
            elif dt not in (_F32, _C64):
                raise TypeError(f"array type {dt.name} is unsupported in linalg")
        else:
            double = True
    if cplx:
        return _C128 if double else _C64
    return _F64 if double else _F32


def real_of(dt: np.dtype) -> np.dtype:
    return _lapack.REAL[np.dtype(dt)]


def check(codes, message: str) -> None:
    """Raise ``LinAlgError(message)`` (NumPy's text) when any info code is positive
    (``codes``: a gpunb array, or its copy begun by ``_lapack.early``)."""
    if _lapack.failed(codes) is not None:
        raise LinAlgError(message)


def numpy_shape_error(func, *shapes_and_dtypes) -> None:
    """Raise the error NumPy raises for these operand shapes (a gufunc's core-dimension or
    broadcast message), by calling NumPy on zero-strided stand-ins: only called after gpunb's
    own check found the shapes incompatible, so NumPy raises before computing anything."""
    stand_ins = [np.broadcast_to(np.zeros((), dt), shape) for shape, dt in shapes_and_dtypes]
    func(*stand_ins)
    raise ValueError("operands could not be broadcast together with shapes "
                     + " ".join(str(s) for s, _ in shapes_and_dtypes))
