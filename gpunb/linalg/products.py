"""Matrix and vector products (NumPy's ``matmul``, ``dot``, ``vdot``, ``inner``, ``outer``,
``tensordot``, ``kron``, ``trace``, ``vecdot``, ``matrix_transpose``, ``cross`` and
``numpy.linalg``'s ``matrix_power``, ``multi_dot`` and array-API forms) on cuBLAS.

Every contraction goes through :func:`matmul`'s engine (:mod:`._gemm`): transposes and
reshapes are views where the layout allows, and the product is one (batched) GEMM.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from ..core import args, layout
from ..core.kernels.elementwise.run import assign, overlaps
from ..core.ndarray import ndarray
from ..core.runtime import driver
from . import _gemm as engine

_WEAK = (bool, int, float, complex, np.generic)


def _ufunc(name):
    from .._math.ufuncs import UFUNCS
    return UFUNCS[name]


def _operand(x, i: int, func: str = "matmul") -> ndarray:
    """A matmul operand: a GPU array; a scalar is NumPy's 0-d error."""
    if type(x) is ndarray:
        return x
    g = args.as_gpu(x, f"input {i} of {func}")
    if g is not None:
        return g
    if isinstance(x, _WEAK) or (isinstance(x, np.ndarray) and x.ndim == 0):
        raise ValueError(f"{func}: Input operand {i} does not have enough dimensions (has 0, "
                         f"gufunc core with signature {engine.SIG} requires 1)")
    return args.array(x, func)


def _cast_error(func, what, i, src, dst, casting):
    return TypeError(f"Cannot cast ufunc '{func}' {what}{'' if i is None else f' {i}'} from "
                     f"{src!r} to {dst!r} with casting rule '{casting}'")


def _batch(func, a, b, ashape, bshape, core_a, core_b, requested):
    """The broadcast batch shape of two gufunc operands, NumPy's message when they clash."""
    ba, bb = ashape[:-2], bshape[:-2]
    try:
        return layout.broadcast_shapes(ba, bb)
    except ValueError:
        def remap(shape, core):
            nb = len(shape) - core
            return engine.shape_str(shape) + "->(" + ",".join(
                [str(n) for n in shape[:nb]] + ["newaxis"] * core) + ")"
        raise ValueError("operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {remap(a.shape, core_a)} {remap(b.shape, core_b)}"
                         f"  and requested shape {engine.shape_str(requested)}") from None


def _prepare(a, b, dtype, casting, func="matmul"):
    """Checks of ``matmul(a, b)``: ``(a2, b2, batch, result dtype, final shape)`` with ``a2``,
    ``b2`` the operands promoted to 2-D views and cast (copied) to the result dtype."""
    if a.ndim == 0 or b.ndim == 0:
        i = 0 if a.ndim == 0 else 1
        raise ValueError(f"{func}: Input operand {i} does not have enough dimensions (has 0, "
                         f"gufunc core with signature {engine.SIG} requires 1)")
    if dtype is None:
        dt = np.result_type(a._dtype, b._dtype)
    else:
        dt = args.dtype(dtype)
        for i, x in enumerate((a, b)):
            if not np.can_cast(x._dtype, dt, casting):
                raise _cast_error(func, "input", i, x._dtype, dt, casting)
    av = a if a.ndim > 1 else a._derive((1, a._shape[0]), (0, a._strides[0]))
    bv = b if b.ndim > 1 else b._derive((b._shape[0], 1), (b._strides[0], 0))
    K, Kb = av._shape[-1], bv._shape[-2]
    if K != Kb:
        raise ValueError(f"{func}: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature {engine.SIG} (size {Kb} is different from {K})")
    M, N = av._shape[-2], bv._shape[-1]
    core = (() if a.ndim == 1 else (M,)) + (() if b.ndim == 1 else (N,))
    batch = _batch(func, a, b, av._shape, bv._shape, min(a.ndim, 2), min(b.ndim, 2), core)
    if av._dtype != dt:
        av = av.astype(dt)
    if bv._dtype != dt:
        bv = bv.astype(dt)
    return av, bv, batch, dt, batch + core


def matmul(x1, x2, /, out=None, *, casting="same_kind", order="K", dtype=None, subok=True):
    """Matrix product of two arrays, as :func:`numpy.matmul`.

    Batches broadcast and run as one strided-batched GEMM on cuBLAS; transposed and
    Fortran-ordered operands are read in place (no copy). float16 accumulates in float32.
    float32 and complex64 products use TF32 tensor cores only when the environment variable
    ``GPUNB_TF32=1`` is set (read once): by default results have float32 precision, as
    NumPy's. bool and integer products run on gpunb's own tiled kernel and wrap on overflow
    as NumPy's do.
    """
    a, b = _operand(x1, 0), _operand(x2, 1)
    if out is None and dtype is None:
        # the hot path: one remembered plan per layout, one allocation, one cuBLAS call
        ctx = driver.active
        if ctx is not None:
            key = ("matmul-call", a._shape, a._strides, a._dtype, b._shape, b._strides, b._dtype)
            hit = ctx.prepared.get(key)
            if hit is not None:
                p, shape = hit
                c = ndarray._empty(shape, p.dtype)
                engine.run(p, a, b, c)
                return c
    return _matmul(a, b, out, dtype, casting)


def _matmul(a, b, out=None, dtype=None, casting="same_kind", func="matmul"):
    av, bv, batch, dt, shape = _prepare(a, b, dtype, casting, func)
    target = None
    if out is not None:
        out = args.out_array(out, func)
        _check_out(func, out, shape, dt, casting)
        if out._dtype == dt and out._c_contiguous and not overlaps(out, a) and not overlaps(out, b):
            target = out
    result = engine.product(av, bv, dt, batch, target)
    if target is None and out is None:
        result = result._derive(shape, layout.c_strides(shape, dt.itemsize))
        p = engine.plan(av, bv, dt, batch)
        if av is a and bv is b and p.kind != "copy":
            ctx = driver.active or driver.context()
            ctx.remember(("matmul-call", a._shape, a._strides, a._dtype, b._shape, b._strides,
                          b._dtype), (p, shape))
        return result
    if target is None:
        assign(out, result._derive(shape, layout.c_strides(shape, dt.itemsize)))
    return out


def _check_out(func, out, shape, dt, casting):
    if out._shape != shape:
        if out.ndim != len(shape) or out._shape[:-2] != shape[:-2]:
            raise ValueError(f"{func}: out has shape {out._shape}, the result has {shape}")
        for d in range(max(0, len(shape) - 2), len(shape)):
            if out._shape[d] != shape[d]:
                raise ValueError(
                    f"{func}: Output operand 0 has a mismatch in its core dimension "
                    f"{d - max(0, len(shape) - 2)}, with gufunc signature {engine.SIG} "
                    f"(size {out._shape[d]} is different from {shape[d]})")
    if not np.can_cast(dt, out._dtype, casting):
        raise _cast_error(func, "output", None, dt, out._dtype, casting)


def matmul_operator(self, other):
    """``a @ b``."""
    if not isinstance(other, (ndarray, *_WEAK)) and not hasattr(other, "__cuda_array_interface__"):
        return NotImplemented
    return matmul(self, other)


def rmatmul_operator(self, other):
    """``b @ a`` with ``b`` not a gpunb array."""
    if not isinstance(other, _WEAK) and not hasattr(other, "__cuda_array_interface__"):
        return NotImplemented
    return matmul(other, self)


def imatmul_operator(self, other):
    """``a @= b``: NumPy's rules (the result must have ``a``'s shape; ``b`` at least 2-D)."""
    b = _operand(other, 1)
    if self.ndim == 0 or b.ndim < 2:
        raise ValueError("inplace matrix multiplication requires the first operand to have at "
                         "least one and the second at least two dimensions.")
    av, bv, batch, dt, shape = _prepare(self, b, None, "same_kind")
    if shape != self._shape:
        raise ValueError(f"matmul: the result's shape {shape} differs from the in-place "
                         f"operand's {self._shape}")
    if not np.can_cast(dt, self._dtype, "same_kind"):
        raise _cast_error("matmul", "output", None, dt, self._dtype, "same_kind")
    result = engine.product(av, bv, dt, batch)
    assign(self, result._derive(shape, layout.c_strides(shape, dt.itemsize)))
    return self


# -- dot, vdot, inner, outer, tensordot -----------------------------------------------------------

def _not_aligned(a_shape, b_shape, da, db):
    return ValueError(f"shapes {engine.shape_str(a_shape)} and {engine.shape_str(b_shape)} not "
                      f"aligned: {a_shape[da]} (dim {da}) != {b_shape[db]} (dim {db})")


def _deliver_dot(result, out):
    if out is None:
        return result
    out = args.out_array(out, "dot")
    if out._dtype != result._dtype or out._shape != result._shape or not out._c_contiguous:
        raise ValueError("output array is not acceptable (must have the right datatype, number "
                         "of dimensions, and be a C-Array)")
    assign(out, result)
    return out


def dot(a, b, out=None):
    """Dot product of two arrays, as :func:`numpy.dot` (N-D: a sum product over the last
    axis of ``a`` and the second-to-last of ``b``; on cuBLAS)."""
    a, b = args.array(a, "dot"), args.array(b, "dot")
    if a.ndim == 0 or b.ndim == 0:
        return _deliver_dot(_ufunc("multiply")(a, b), out)
    db = max(0, b.ndim - 2)
    if a._shape[-1] != b._shape[db]:
        raise _not_aligned(a._shape, b._shape, a.ndim - 1, db)
    if b.ndim <= 2:
        return _deliver_dot(_matmul(a, b, func="dot") if a.ndim <= 2 else
                            _tensordot(a, b, (a.ndim - 1,), (db,)), out)
    return _deliver_dot(_tensordot(a, b, (a.ndim - 1,), (db,)), out)


def vdot(a, b, /):
    """The dot product of two flattened vectors, conjugating the first, as :func:`numpy.vdot`."""
    a, b = args.array(a, "vdot"), args.array(b, "vdot")
    if a.size != b.size:
        raise ValueError(f"cannot reshape array of size {b.size} into shape ({a.size},)")
    if a._dtype.kind == "c":
        a = _ufunc("conjugate")(a)
    return _matmul(a.reshape(-1), b.reshape(-1), func="vdot")


def inner(a, b, /):
    """Inner product over the last axes, as :func:`numpy.inner`."""
    a, b = args.array(a, "inner"), args.array(b, "inner")
    if a.ndim == 0 or b.ndim == 0:
        return _ufunc("multiply")(a, b)
    if a._shape[-1] != b._shape[-1]:
        shown = b._shape[:-2] + b._shape[-1:] + b._shape[-2:-1] if b.ndim > 1 else b._shape
        raise _not_aligned(a._shape, shown, a.ndim - 1, max(0, b.ndim - 2))
    return _tensordot(a, b, (a.ndim - 1,), (b.ndim - 1,))


def outer(a, b, out=None):
    """Outer product of two vectors (inputs flattened), as :func:`numpy.outer`."""
    a, b = args.array(a, "outer"), args.array(b, "outer")
    a, b = a.reshape(-1), b.reshape(-1)
    return _ufunc("multiply")(a._derive((a.size, 1), (a._strides[0], 0)),
                              b._derive((1, b.size), (0, b._strides[0])), out=out)


def _tensor_axes(axes, a, b):
    try:
        iter(axes)
    except TypeError:
        n = operator.index(axes)
        return list(range(-n, 0)), list(range(0, n))      # as NumPy: n <= 0 contracts nothing
    axes_a, axes_b = axes
    try:
        axes_a = [operator.index(x) for x in axes_a]
    except TypeError:
        axes_a = [operator.index(axes_a)]
    try:
        axes_b = [operator.index(x) for x in axes_b]
    except TypeError:
        axes_b = [operator.index(axes_b)]
    return axes_a, axes_b


def tensordot(a, b, axes=2):
    """Tensor dot product over the given axes, as :func:`numpy.tensordot` (a transpose and
    reshape of each operand, views where the layout allows, then one GEMM)."""
    a, b = args.array(a, "tensordot"), args.array(b, "tensordot")
    axes_a, axes_b = _tensor_axes(axes, a, b)
    if len(axes_a) != len(axes_b):
        raise ValueError("shape-mismatch for sum")
    nda, ndb = a.ndim, b.ndim
    axes_a = [x + nda if x < 0 else x for x in axes_a]
    axes_b = [x + ndb if x < 0 else x for x in axes_b]
    for x, nd in [(x, nda) for x in axes_a] + [(x, ndb) for x in axes_b]:
        if not 0 <= x < nd:
            raise IndexError("tuple index out of range")
    for xa, xb in zip(axes_a, axes_b):
        if a._shape[xa] != b._shape[xb]:
            raise ValueError("shape-mismatch for sum")
    return _tensordot(a, b, tuple(axes_a), tuple(axes_b))


def _tensordot(a, b, axes_a, axes_b):
    """``tensordot`` with normalized axes: ``a``'s free axes, then ``b``'s."""
    free_a = [d for d in range(a.ndim) if d not in axes_a]
    free_b = [d for d in range(b.ndim) if d not in axes_b]
    ka = 1
    for d in axes_a:
        ka *= a._shape[d]
    ma = 1
    for d in free_a:
        ma *= a._shape[d]
    nb = 1
    for d in free_b:
        nb *= b._shape[d]
    at = a.transpose(free_a + list(axes_a)).reshape(ma, ka)
    bt = b.transpose(list(axes_b) + free_b).reshape(ka, nb)
    shape = tuple(a._shape[d] for d in free_a) + tuple(b._shape[d] for d in free_b)
    r = _matmul(at, bt, func="tensordot")
    return r.reshape(shape)


# -- kron, trace, vecdot, matrix_transpose --------------------------------------------------------

def kron(a, b):
    """Kronecker product, as :func:`numpy.kron` (one broadcast multiply into the result)."""
    a, b = args.array(a, "kron"), args.array(b, "kron")
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a._shape
    sb = (1,) * (nd - b.ndim) + b._shape
    ta = (0,) * (nd - a.ndim) + a._strides
    tb = (0,) * (nd - b.ndim) + b._strides
    # a as (a0, 1, a1, 1, ...), b as (1, b0, 1, b1, ...): their product is the result's layout
    av = a._derive(tuple(x for n in sa for x in (n, 1)), tuple(x for s in ta for x in (s, 0)))
    bv = b._derive(tuple(x for n in sb for x in (1, n)), tuple(x for s in tb for x in (0, s)))
    r = _ufunc("multiply")(av, bv)
    return r.reshape(tuple(x * y for x, y in zip(sa, sb)))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along diagonals, as :func:`numpy.trace`."""
    from .._indexing.basic import diagonal
    from .._math.sumprod import sum as _sum
    d = diagonal(args.array(a, "trace"), offset, axis1, axis2)
    return _sum(d, axis=-1, dtype=dtype, out=out)


_VSIG = "(n),(n)->()"


def vecdot(x1, x2, /, out=None, *, axis=-1, casting="same_kind", order="K", dtype=None,
           subok=True, axes=None):
    """Vector dot product over ``axis`` (the first operand conjugated), as
    :func:`numpy.vecdot`: a batched GEMM of ``(1, n) @ (n, 1)`` products."""
    a, b = args.array(x1, "vecdot"), args.array(x2, "vecdot")
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(f"vecdot: Input operand {i} does not have enough dimensions (has 0, "
                             f"gufunc core with signature {_VSIG} requires 1)")
    if axes is not None:
        axis = axes[0][0] if isinstance(axes[0], (tuple, list)) else axes[0]
    from .._manipulation.transpose import moveaxis
    a = moveaxis(a, args.axis(axis, a.ndim), -1) if a.ndim > 1 else a
    b = moveaxis(b, args.axis(axis, b.ndim), -1) if b.ndim > 1 else b
    if a._shape[-1] != b._shape[-1]:
        raise ValueError(f"vecdot: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature {_VSIG} (size {b._shape[-1]} is different from "
                         f"{a._shape[-1]})")
    if a._dtype.kind == "c":
        a = _ufunc("conjugate")(a)
    av = a._derive(a._shape[:-1] + (1, a._shape[-1]), a._strides[:-1] + (0, a._strides[-1]))
    bv = b._derive(b._shape + (1,), b._strides + (0,))
    r = _matmul(av, bv, None, dtype, casting, func="vecdot")
    r = r.reshape(r._shape[:-2])
    if out is None:
        return r
    out = args.out_array(out, "vecdot")
    assign(out, r)
    return out


def _gufunc_operands(func, sig, x1, x2, need):
    a, b = args.array(x1, func), args.array(x2, func)
    for i, (x, k) in enumerate(zip((a, b), need)):
        if x.ndim < k:
            raise ValueError(f"{func}: Input operand {i} does not have enough dimensions (has "
                             f"{x.ndim}, gufunc core with signature {sig} requires {k})")
    return a, b


def _to_out(func, r, out):
    if out is None:
        return r
    out = args.out_array(out, func)
    if out._shape != r._shape:
        raise ValueError(f"{func}: out has shape {out._shape}, the result {r._shape}")
    assign(out, r)
    return out


def matvec(x1, x2, /, out=None, *, dtype=None, casting="same_kind", **kwargs):
    """Matrix-vector products over broadcast stacks (numpy.matvec, ``(m,n),(n)->(m)``): one
    batched GEMM."""
    a, b = _gufunc_operands("matvec", "(m,n),(n)->(m)", x1, x2, (2, 1))
    r = _matmul(a, b._derive(b._shape + (1,), b._strides + (0,)), None, dtype, casting, "matvec")
    r = r.reshape(r._shape[:-1])
    return _to_out("matvec", r, out)


def vecmat(x1, x2, /, out=None, *, dtype=None, casting="same_kind", **kwargs):
    """Vector-matrix products over broadcast stacks, the vector conjugated (numpy.vecmat,
    ``(n),(n,m)->(m)``): one batched GEMM."""
    a, b = _gufunc_operands("vecmat", "(n),(n,m)->(m)", x1, x2, (1, 2))
    if a._dtype.kind == "c":
        a = _ufunc("conjugate")(a)
    av = a._derive(a._shape[:-1] + (1, a._shape[-1]), a._strides[:-1] + (0, a._strides[-1]))
    r = _matmul(av, b, None, dtype, casting, "vecmat")
    r = r.reshape(r._shape[:-2] + r._shape[-1:])
    return _to_out("vecmat", r, out)


def matrix_transpose(x, /):
    """Transposes the last two axes, as :func:`numpy.matrix_transpose` (a view)."""
    x = args.array(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return x.swapaxes(-1, -2)


# -- cross ----------------------------------------------------------------------------------------

def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-vectors, as :func:`numpy.cross` (elementwise on views)."""
    from .._manipulation.transpose import moveaxis
    a, b = args.array(a, "cross"), args.array(b, "cross")
    if axis is not None:
        axisa = axisb = axisc = axis
    axisa = args.axis(axisa, a.ndim, "axisa")
    axisb = args.axis(axisb, b.ndim, "axisb")
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    msg = "incompatible dimensions for cross product\n(dimension must be 2 or 3)"
    if a._shape[-1] not in (2, 3) or b._shape[-1] not in (2, 3):
        raise ValueError(msg)
    if a._shape[-1] == 2 or b._shape[-1] == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=2)
    shape = layout.broadcast_shapes(a._shape[:-1], b._shape[:-1])
    if a._shape[-1] == 3 or b._shape[-1] == 3:
        shape += (3,)
        axisc = args.axis(axisc, len(shape), "axisc")
    mul, sub = _ufunc("multiply"), _ufunc("subtract")
    dt = np.result_type(a._dtype, b._dtype)
    cp = ndarray(shape, dt)
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if a._shape[-1] == 3 else None
    b2 = b[..., 2] if b._shape[-1] == 3 else None
    if cp.ndim != 0 and cp._shape[-1] == 3:
        cp0, cp1, cp2 = cp[..., 0], cp[..., 1], cp[..., 2]
    else:
        cp0 = cp1 = None
        cp2 = cp
    if a2 is None and b2 is None:           # 2 x 2: the z component only
        assign(cp2, sub(mul(a0, b1), mul(a1, b0)))
        return cp
    if a2 is None:                          # (a0, a1, 0) x b
        assign(cp0, mul(a1, b2))
        assign(cp1, _ufunc("negative")(mul(a0, b2)))
        assign(cp2, sub(mul(a0, b1), mul(a1, b0)))
    elif b2 is None:                        # a x (b0, b1, 0)
        assign(cp0, _ufunc("negative")(mul(a2, b1)))
        assign(cp1, mul(a2, b0))
        assign(cp2, sub(mul(a0, b1), mul(a1, b0)))
    else:
        assign(cp0, sub(mul(a1, b2), mul(a2, b1)))
        assign(cp1, sub(mul(a2, b0), mul(a0, b2)))
        assign(cp2, sub(mul(a0, b1), mul(a1, b0)))
    return moveaxis(cp, -1, axisc)


# -- numpy.linalg's forms -------------------------------------------------------------------------

def linalg_cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors, as :func:`numpy.linalg.cross`."""
    a, b = args.array(x1, "cross"), args.array(x2, "cross")
    if a._shape[axis] != 3 or b._shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"are {a._shape[axis]} and {b._shape[axis]} dimensional instead.")
    return cross(a, b, axis=axis)


def linalg_outer(x1, x2, /):
    """Outer product of two vectors, as :func:`numpy.linalg.outer` (1-D only)."""
    a, b = args.array(x1, "outer"), args.array(x2, "outer")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={a.ndim} and x2.ndim={b.ndim}.")
    return outer(a, b)


def linalg_trace(x, /, *, offset=0, dtype=None):
    """Sum along the diagonals of the last two axes, as :func:`numpy.linalg.trace`."""
    return trace(x, offset, -2, -1, dtype)


def linalg_diagonal(x, /, *, offset=0):
    """Diagonals of the last two axes (a view), as :func:`numpy.linalg.diagonal`."""
    from .._indexing.basic import diagonal
    return diagonal(args.array(x, "diagonal"), offset, -2, -1)


# numpy.linalg.matrix_power and multi_dot live in ._chain (module size); the registry names them here
from ._chain import matrix_power, multi_dot  # noqa: E402,F401
