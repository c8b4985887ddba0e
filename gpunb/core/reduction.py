"""Reductions with NumPy's names and rules: sum, prod, max/min, argmax/argmin, mean, var, std,
any, all, nansum, nanmax, nanmin, count_nonzero.

The result dtype is NumPy's (asked of NumPy on a two-element probe, once per combination), so
int32 sums give int64, means of ints float64, var of complex the real type. The array is
viewed as (outputs x reduced elements): the reduced axes are collapsed (and, when order does
not matter, sorted by stride), the kept ones collapsed in the output's order, and one
generated kernel (:mod:`gpunb.core.codegen.reduction`) reduces with a thread layout chosen
from the strides: lanes along the reduction when it is the contiguous axis, consecutive
outputs per thread when the outputs are, and a split of the reduction with a combine pass
when there are too few outputs to fill the device.
"""

from __future__ import annotations

import builtins   # this module defines sum, min, max, any, all: NumPy's names
import ctypes
import math
import operator
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import dtypes, fusion, ir, launch
from .codegen import reduction as rc
from .ndarray import ndarray

_NUMPY = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "argmax": np.argmax,
          "argmin": np.argmin, "mean": np.mean, "var": np.var, "std": np.std, "any": np.any,
          "all": np.all, "nansum": np.nansum, "nanmax": np.nanmax, "nanmin": np.nanmin,
          "count_nonzero": np.count_nonzero}
_WITH_DTYPE = ("sum", "prod", "mean", "var", "std", "nansum")
_NO_IDENTITY = {"max": "zero-size array to reduction operation maximum which has no identity",
                "min": "zero-size array to reduction operation minimum which has no identity",
                "nanmax": "zero-size array to reduction operation fmax which has no identity",
                "nanmin": "zero-size array to reduction operation fmin which has no identity",
                "argmax": "attempt to get argmax of an empty sequence",
                "argmin": "attempt to get argmin of an empty sequence"}
SUBSCRIPTION = 1       # waves of blocks when the reduction is split (2 and 4 measured no better)
_STATE_BYTES = 32      # the largest partial state: complex128 value + int64 index, aligned

_dtype_cache: dict = {}


def _result_dtype(func: str, dt: np.dtype, dtype) -> np.dtype:
    """NumPy's result dtype of ``func`` on ``dt`` (with ``dtype=``), asked of NumPy once."""
    key = (func, dt, dtype)
    r = _dtype_cache.get(key)
    if r is None:
        probe = np.ones(2, dt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = _NUMPY[func](probe, dtype=dtype) if func in _WITH_DTYPE else _NUMPY[func](probe)
        r = _dtype_cache[key] = dtypes.check(np.asarray(res).dtype)
    return r


def _input(a, func: str) -> ndarray:
    if isinstance(a, ndarray):
        return a
    from .ufuncs import _as_gpu

    x = _as_gpu(a, f"the input of {func}")
    if x is None:
        raise TypeError(f"{func} needs a GPU array, not {type(a).__name__}; use gpunb.asarray() "
                        "to move data to the GPU")
    return x


def _merge(dims, strides_list):
    """Drop size-1 dims and merge neighbours that are contiguous for every operand (keeps C
    order of the flat index). Returns (shape, [strides per operand]), at least one dim."""
    shape, out = [], [[] for _ in strides_list]
    for d, n in enumerate(dims):
        if n == 1:
            continue
        if shape and builtins.all(st[-1] == s[d] * n for st, s in zip(out, strides_list)):
            shape[-1] *= n
            for st, s in zip(out, strides_list):
                st[-1] = s[d]
            continue
        shape.append(n)
        for st, s in zip(out, strides_list):
            st.append(s[d])
    if not shape:
        return [1], [[0] for _ in strides_list]
    return shape, out


def _pow2ceil(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _geometry_param(oshape, rshape, ostr, rstr):
    flat = list(oshape) + list(rshape) + [s for st in ostr for s in st] + [s for st in rstr for s in st]
    return (ctypes.c_int64 * len(flat))(*flat)


@dataclass(frozen=True)
class Plan:
    """How a reduction is spread over threads: ``lanes`` threads per output (consecutive
    threads when ``lane_fast``), ``vec`` elements per load, the reduction shared by
    ``splits`` blocks (``blockIdx.y``, interleaved runs of ``lanes * vec`` elements), ``grid``
    blocks."""

    lane_fast: bool
    lanes: int
    vec: int
    splits: int
    grid: tuple


def lanes_along_reduction(M: int, reduce_stride: int, outer_stride: int) -> bool:
    """Whether consecutive threads should walk the reduction (it is the more contiguous
    axis, or there is one output) rather than take consecutive outputs."""
    return M == 1 or outer_stride == 0 or reduce_stride <= outer_stride


def plan(M: int, K: int, reduce_stride: int, outer_stride: int, vec: int, resident_blocks: int,
         block: int = rc.BLOCK) -> Plan:
    """The thread layout for ``M`` outputs of ``K`` elements each. ``reduce_stride`` and
    ``outer_stride`` are the input's innermost byte strides along the reduction and along the
    outputs; ``vec`` the elements per 16-byte load when the ``_vec`` entry applies (else 1);
    ``resident_blocks`` how many blocks the device runs at once."""
    lane_fast = lanes_along_reduction(M, reduce_stride, outer_stride)
    E = vec if lane_fast else 1
    if lane_fast:      # the lanes of one output read consecutive elements
        G = builtins.min(block, _pow2ceil(-(-K // E)))
    else:              # consecutive threads take consecutive outputs; the block's rest splits K
        G = builtins.min(block // builtins.min(32, _pow2ceil(M)), _pow2ceil(K))
    out_blocks = -(-M // (block // G))
    S = 1
    if 0 < out_blocks < resident_blocks and K:
        # several waves of splits (as CUB's grid subscription): blocks that finish early take
        # the next ones, instead of the slowest SM setting the time of a single wave
        S = builtins.max(1, builtins.min(SUBSCRIPTION * resident_blocks // out_blocks,
                                         K // (G * E * 16), 65535))
    return Plan(lane_fast, G, E, S, (builtins.min(out_blocks, 2**31 - 1), S))


def combine_plan(M: int, S: int, block: int = rc.BLOCK) -> Plan:
    """The layout of the pass that combines ``S`` partial states for each of ``M`` outputs
    (stored as [S, M])."""
    return plan(M, S, M * _STATE_BYTES, _STATE_BYTES, 1, 0, block)


def _run(key, make, operands, x_shape, axes, result: ndarray, divisor: float, keep_order: bool):
    """Launch a reduction of ``operands`` (('array'|'outer', ndarray broadcast to ``x_shape``)
    or ('scalar', value)) over ``axes`` into the contiguous ``result``. Returns the launches
    and the temporary bytes (see :func:`steps`)."""
    lk, launches, temp_bytes = steps(key, make, operands, x_shape, axes, divisor, keep_order)
    if launches:
        params = launch.operand_params(lk.kernel, [v for _, v in operands])
        launch.execute(launches, params + [ctypes.c_void_p(result.data.ptr)], temp_bytes)
    return launches, temp_bytes


def steps(key, make, operands, x_shape, axes, divisor: float, keep_order: bool):
    """The kernel and the :class:`launch.Step` s of a reduction (None and none when there is
    no output element), and the bytes of partial states they need. The steps' parameters refer to the
    operands (0..n-1), the result (n) and the partial-state buffer (n + 1)."""
    nd = len(x_shape)
    kept = [d for d in range(nd) if d not in axes]
    red = list(axes)
    arrays = [v for kind, v in operands if kind != "scalar"]
    strides = [v.strides for v in arrays]
    first = next(i for i, (kind, _) in enumerate(operands) if kind == "array")
    if not keep_order:    # the order of a commutative reduction is free: largest stride outermost
        red.sort(key=lambda d: -abs(strides[first][d]))
    oshape, ostr = _merge([x_shape[d] for d in kept], [[s[d] for d in kept] for s in strides])
    rshape, rstr = _merge([x_shape[d] for d in red], [[s[d] for d in red] for s in strides])
    M, K = math.prod(oshape), math.prod(x_shape[d] for d in red)
    if M == 0:
        return None, (), 0
    lk = launch.get(key + (len(oshape), len(rshape)),
                    lambda: make(len(oshape), len(rshape)), rc)
    k = lk.kernel
    x = operands[first][1]
    slot = [i for i, (kind, _) in enumerate(operands) if kind != "scalar"].index(first)
    vec_ok = (rc.has_vec(k) and len(rshape) == 1 and rstr[slot][0] == x.itemsize
              and x.data.ptr % rc.VEC_BYTES == 0 and builtins.all(s % rc.VEC_BYTES == 0 for s in ostr[slot]))
    lane_fast = lanes_along_reduction(M, abs(rstr[slot][-1]), abs(ostr[slot][-1]))
    E = lk.vec
    # column reductions: E adjacent outputs per thread, one 16-byte load per row
    cols_ok = (not lane_fast and E > 1 and rc.has_cols(k) and len(rshape) == 1
               and ostr[0][-1] == x.itemsize and oshape[-1] % E == 0 and rstr[0][0] % rc.VEC_BYTES == 0
               and x.data.ptr % rc.VEC_BYTES == 0
               and builtins.all(s % rc.VEC_BYTES == 0 for s in ostr[0][:-1]))
    if cols_ok:
        entry = f"{k.name}_cols"
        p = plan(M // E, K, abs(rstr[0][0]), x.itemsize, 1, lk.sm_count * lk.occupancy[entry])
    else:
        entry = f"{k.name}_vec" if vec_ok and lane_fast else f"{k.name}_main"
        p = plan(M, K, abs(rstr[slot][-1]), abs(ostr[slot][-1]), E if vec_ok else 1,
                 lk.sm_count * lk.occupancy[entry])
    S = p.splits
    n_ops = len(operands)
    result, partial = n_ops, n_ops + 1
    from .runtime import driver

    main = launch.Step(
        driver._function_of(lk.entries[entry]), p.grid, rc.BLOCK,
        (*range(n_ops), partial if S > 1 else ctypes.c_void_p(0), result, ctypes.c_int64(M),
         ctypes.c_int64(K), ctypes.c_int(p.lanes), ctypes.c_int(int(p.lane_fast)),
         ctypes.c_int(int(S == 1)), ctypes.c_double(divisor), _geometry_param(oshape, rshape, ostr, rstr)))
    if S == 1:
        return lk, (main,), 0
    c = combine_plan(M, S)
    combine = launch.Step(
        driver._function_of(lk.entries[f"{k.name}_combine"]), c.grid, rc.BLOCK,
        (partial, result, ctypes.c_int64(M), ctypes.c_int64(S), ctypes.c_int(c.lanes),
         ctypes.c_int(int(c.lane_fast)), ctypes.c_double(divisor)))
    return lk, (main, combine), S * M * _STATE_BYTES


def _kernel_name(label: str, operands, out: np.dtype, no: int, nr: int) -> str:
    codes = "_".join(f"{o.kind[0]}{o.dtype.name}" for o in operands)
    return f"reduce_{label}_{codes}_to_{out.name}_o{no}r{nr}"


def _axes(axis, ndim: int, func: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if func in ("argmax", "argmin"):
        return (normalize_axis_tuple(operator.index(axis), ndim)[0],)
    return normalize_axis_tuple(axis, ndim)


def _out_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _deliver(result: ndarray, out):
    if out is None:
        return result
    if result is not out:
        out[...] = result
    return out


def _target(out, shape, rdt, func):
    """The array the kernel writes: ``out`` itself when it fits, else a new one."""
    if out is not None:
        if not isinstance(out, ndarray):
            raise TypeError(f"{func}: out must be a gpunb.ndarray, not {type(out).__name__}")
        if out.shape != shape:
            raise ValueError(f"output parameter for reduction operation {func} has the wrong shape: "
                             f"expected {shape}, got {out.shape}")
        if out.dtype == rdt and out._c_contiguous:
            return out
    return ndarray._empty(shape, rdt)


def _x(dt):
    return ir.Arg(dt, 0)


def _truth(dt):
    return ir.cast(_x(dt), np.dtype(bool))


def _nan_to_zero(dt):
    x = _x(dt)
    if dt.kind not in "fc":
        return x
    isnan = ir.Apply(np.dtype(bool), "isnan", (dt.name, "bool"), (x,))
    return ir.Where(dt, isnan, ir.Const(dt, 0), x)


def _as_is(dt, rdt):
    return _x(dt)


def _cast(dt, rdt):
    return ir.cast(_x(dt), rdt)


# func -> (reducer, per-element value(input dtype, result dtype), finish)
_SPECS = {
    "sum": ("sum", _cast, "none"),
    "prod": ("prod", _cast, "none"),
    "max": ("max", _as_is, "none"),
    "min": ("min", _as_is, "none"),
    "nanmax": ("nanmax", _as_is, "none"),
    "nanmin": ("nanmin", _as_is, "none"),
    "argmax": ("argmax", _as_is, "none"),
    "argmin": ("argmin", _as_is, "none"),
    "any": ("any", lambda dt, r: _truth(dt), "none"),
    "all": ("all", lambda dt, r: _truth(dt), "none"),
    "count_nonzero": ("sum", lambda dt, r: ir.cast(_truth(dt), r), "none"),
    "nansum": ("sum", lambda dt, r: ir.cast(_nan_to_zero(dt), r), "none"),
    "mean": ("sum", _cast, "divide"),
}


def kernel_for(func: str, dtype, result_dtype=None, ndim_outer: int = 1,
               ndim_reduce: int = 1) -> ir.ReductionKernel:
    """The kernel IR of reduction ``func`` over an input of ``dtype`` (NumPy's result dtype
    unless given). Pure: used by the call path, ``cache warm`` and the CPU tests."""
    dt = dtypes.check(dtype)
    rdt = _result_dtype(func, dt, None) if result_dtype is None else dtypes.check(result_dtype)
    if func in ("var", "std"):
        return _moment_kernel(func, dt, _mean_dtype(dt, None), rdt, ndim_outer, ndim_reduce)
    reducer, value, finish = _SPECS[func]
    opnds = (ir.Operand(dt, "array"),)
    return ir.ReductionKernel(_kernel_name(func, opnds, rdt, ndim_outer, ndim_reduce), opnds,
                              value(dt, rdt), reducer, rdt, finish, ndim_outer, ndim_reduce)


_FUSABLE = ("sum", "prod", "max", "min", "mean", "any", "all")


def _simple(func, a, axis, dtype, out, keepdims):
    """A one-pass reduction (everything but var and std)."""
    if func in _FUSABLE and fusion.has_proxy((a,)):    # inside @gpunb.fuse: a fused reduction
        kw = {"axis": axis, "out": out, "keepdims": keepdims}
        return getattr(a, func)(**kw, **({} if dtype is None else {"dtype": dtype}))
    x = _input(a, func)
    dtypes.check(x.dtype)
    axes = _axes(axis, x.ndim, func)
    rdt = _result_dtype(func, x.dtype, None if dtype is None else dtypes.check(dtype))
    K = math.prod(x.shape[d] for d in axes)
    if K == 0 and func in _NO_IDENTITY:
        raise ValueError(_NO_IDENTITY[func])
    if K == 0 and func == "mean":
        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=3)
    result = _target(out, _out_shape(x.shape, axes, keepdims), rdt, func)
    _run(("reduce", func, x.dtype, rdt), lambda no, nr: kernel_for(func, x.dtype, rdt, no, nr),
         [("array", x)], x.shape, axes, result, float(K), func in ("argmax", "argmin"))
    return _deliver(result, out)


def sum(a, axis=None, dtype=None, out=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Sum of array elements over the given axes (numpy.sum): int/bool sums accumulate in int64
    (uint64 for unsigned), float16 in float32."""
    return _simple("sum", a, axis, dtype, out, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product of array elements over the given axes (numpy.prod)."""
    return _simple("prod", a, axis, dtype, out, keepdims)


def amax(a, axis=None, out=None, keepdims=False):
    """Maximum over the given axes (numpy.max); NaN propagates."""
    return _simple("max", a, axis, None, out, keepdims)


def amin(a, axis=None, out=None, keepdims=False):
    """Minimum over the given axes (numpy.min); NaN propagates."""
    return _simple("min", a, axis, None, out, keepdims)


def nanmax(a, axis=None, out=None, keepdims=False):
    """Maximum ignoring NaN (numpy.nanmax); an all-NaN slice gives NaN (NumPy also warns)."""
    return _simple("nanmax", a, axis, None, out, keepdims)


def nanmin(a, axis=None, out=None, keepdims=False):
    """Minimum ignoring NaN (numpy.nanmin); an all-NaN slice gives NaN (NumPy also warns)."""
    return _simple("nanmin", a, axis, None, out, keepdims)


def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the maximum (numpy.argmax): the first one; the first NaN if any."""
    return _simple("argmax", a, axis, None, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the minimum (numpy.argmin): the first one; the first NaN if any."""
    return _simple("argmin", a, axis, None, out, keepdims)


def any(a, axis=None, out=None, keepdims=False):  # noqa: A001
    """Whether any element over the given axes is true (numpy.any)."""
    return _simple("any", a, axis, None, out, keepdims)


def all(a, axis=None, out=None, keepdims=False):  # noqa: A001
    """Whether all elements over the given axes are true (numpy.all)."""
    return _simple("all", a, axis, None, out, keepdims)


def count_nonzero(a, axis=None, *, keepdims=False):
    """Number of non-zero elements (numpy.count_nonzero). Returns a GPU array (0-d for
    ``axis=None``, where NumPy returns a Python int) so nothing waits for the device."""
    return _simple("count_nonzero", a, axis, None, None, keepdims)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """Sum treating NaN as zero (numpy.nansum)."""
    return _simple("nansum", a, axis, dtype, out, keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Arithmetic mean (numpy.mean): ints in float64, float16 accumulated in float32; the
    mean of an empty slice is NaN with NumPy's RuntimeWarning."""
    return _simple("mean", a, axis, dtype, out, keepdims)


def _mean_dtype(dt, dtype):
    """The dtype var and std take the mean in (NumPy's ``_var``): ``dtype``, else float64 for
    bool and integers, else the input's."""
    return dtype if dtype is not None else (np.dtype(np.float64) if dt.kind in "biu" else dt)


def _moment_kernel(func, dt, mdt, rdt, no, nr) -> ir.ReductionKernel:
    """Sum of squared deviations from the mean (operand 1, one value per output), divided."""
    d = ir.Apply(mdt, "subtract", (mdt.name,) * 3, (ir.cast(_x(dt), mdt), ir.Arg(mdt, 1)))
    if mdt.kind == "c":
        real = np.dtype(np.float32 if mdt == np.complex64 else np.float64)
        mag = ir.Apply(real, "absolute", (mdt.name, real.name), (d,))
        sq = ir.Apply(real, "multiply", (real.name,) * 3, (mag, mag))
    else:
        sq = ir.Apply(mdt, "multiply", (mdt.name,) * 3, (d, d))
    opnds = (ir.Operand(dt, "array"), ir.Operand(mdt, "outer"))
    return ir.ReductionKernel(_kernel_name(func, opnds, rdt, no, nr), opnds, ir.cast(sq, rdt), "sum",
                              rdt, "sqrt_divide" if func == "std" else "divide", no, nr)


def _moment(func, a, axis, dtype, out, ddof, keepdims):
    x = _input(a, func)
    dtypes.check(x.dtype)
    axes = _axes(axis, x.ndim, func)
    dt = None if dtype is None else dtypes.check(dtype)
    rdt = _result_dtype(func, x.dtype, dt)
    mdt = _mean_dtype(x.dtype, dt)
    K = math.prod(x.shape[d] for d in axes)
    if K - ddof <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # NumPy warns once, as above
        m = _simple("mean", x, axes, mdt, None, True)
    result = _target(out, _out_shape(x.shape, axes, keepdims), rdt, func)
    _run(("moment", func, x.dtype, mdt, rdt),
         lambda no, nr: _moment_kernel(func, x.dtype, mdt, rdt, no, nr),
         [("array", x), ("outer", m._broadcast_to(x.shape))], x.shape, axes, result,
         float(builtins.max(K - ddof, 0)), False)
    return _deliver(result, out)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance (numpy.var): mean of squared deviations from the mean, divided by N - ddof;
    complex input gives a real result."""
    return _moment("var", a, axis, dtype, out, ddof, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation (numpy.std): the square root of :func:`var`."""
    return _moment("std", a, axis, dtype, out, ddof, keepdims)


max = amax  # noqa: A001 - NumPy 2's names
min = amin  # noqa: A001

FUNCTIONS = ("sum", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "mean", "var", "std",
             "any", "all", "nansum", "nanmax", "nanmin", "count_nonzero")
