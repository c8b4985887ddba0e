"""Reductions as kernel IR: what each reduction combines, how, and NumPy's result dtype.

A reduction is one line of :data:`SPECS`: its reducer (the associative step the kernel
combines with), the per-element value (an IR node built from the input's node, so the same
spec serves an unfused call, where the input is operand 0, and a fused one, where it is the
traced expression), and the finish ('divide' by the element count for means). Result dtypes
are NumPy's own, asked of NumPy on a two-element probe once per combination.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ... import dtypes, memo
from .. import ir

_BOOL = np.dtype(bool)


@dataclass(frozen=True)
class Spec:
    """One reduction: ``reducer`` (see :data:`ir.REDUCERS`), ``value(node, result dtype)``
    the per-element value, ``finish`` (see :data:`ir.FINISHES`), ``identity`` False when an
    empty reduction has no result (NumPy's error message then), ``dtype_arg`` whether the
    function takes ``dtype=``, ``keep_order`` whether the reduced axes must be walked in C
    order (arg reductions return the first index)."""

    reducer: str
    value: Callable[[ir.Node, np.dtype], ir.Node]
    finish: str = "none"
    empty_error: str | None = None
    dtype_arg: bool = True
    keep_order: bool = False


def _cast(x, rdt):
    return ir.cast(x, rdt)


def _as_is(x, rdt):
    return x


def _truth(x, rdt):
    return ir.cast(x, _BOOL)


def _count(x, rdt):
    return ir.cast(ir.cast(x, _BOOL), rdt)


def _nan_to(fill):
    """The element, with NaN replaced by ``fill`` (for the nan-reductions), cast to the
    result dtype."""
    def value(x, rdt):
        dt = x.dtype
        if dt.kind in "fc":
            isnan = ir.Apply(_BOOL, "isnan", (dt.name, "bool"), (x,))
            x = ir.Apply(dt, "where", ("bool", dt.name, dt.name, dt.name), (isnan, ir.Const(dt, fill), x))
        return ir.cast(x, rdt)
    return value


def _empty(op: str) -> str:
    return f"zero-size array to reduction operation {op} which has no identity"


SPECS: dict[str, Spec] = {
    "sum": Spec("sum", _cast),
    "prod": Spec("prod", _cast),
    "max": Spec("max", _as_is, empty_error=_empty("maximum"), dtype_arg=False),
    "min": Spec("min", _as_is, empty_error=_empty("minimum"), dtype_arg=False),
    "nanmax": Spec("nanmax", _as_is, empty_error=_empty("fmax"), dtype_arg=False),
    "nanmin": Spec("nanmin", _as_is, empty_error=_empty("fmin"), dtype_arg=False),
    "argmax": Spec("argmax", _as_is, empty_error="attempt to get argmax of an empty sequence",
                   dtype_arg=False, keep_order=True),
    "argmin": Spec("argmin", _as_is, empty_error="attempt to get argmin of an empty sequence",
                   dtype_arg=False, keep_order=True),
    "any": Spec("any", _truth, dtype_arg=False),
    "all": Spec("all", _truth, dtype_arg=False),
    "count_nonzero": Spec("sum", _count, dtype_arg=False),
    "nansum": Spec("sum", _nan_to(0)),
    "nanprod": Spec("prod", _nan_to(1)),
    "mean": Spec("sum", _cast, "divide"),
}
# var and std: two passes (the mean, then the squared deviations from it), see moment_kernel
MOMENTS = ("var", "std")

_result_dtypes = memo.table("reduction.result_dtypes")


def result_dtype(func: str, dt: np.dtype, dtype=None) -> np.dtype:
    """NumPy's result dtype of ``numpy.<func>`` on ``dt`` (with ``dtype=``), asked of NumPy
    once per combination."""
    key = (func, dt, dtype)
    r = _result_dtypes.get(key)
    if r is None:
        probe = np.ones(2, dt)
        takes_dtype = func in MOMENTS or SPECS[func].dtype_arg
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = getattr(np, func)
            res = f(probe, dtype=dtype) if takes_dtype else f(probe)
        r = _result_dtypes[key] = dtypes.check(np.asarray(res).dtype)
    return r


def kernel_name(label: str, operands, out: np.dtype, no: int, nr: int) -> str:
    codes = "_".join(f"{o.kind[0]}{o.dtype.name}" for o in operands)
    return f"reduce_{label}_{codes}_to_{out.name}_o{no}r{nr}"


def kernel_for(func: str, dtype, result_dtype_=None, ndim_outer: int = 1,
               ndim_reduce: int = 1) -> ir.ReductionKernel:
    """The kernel IR of reduction ``func`` over an input of ``dtype`` (NumPy's result dtype
    unless given). Pure: used by the call path, ``cache warm`` and the CPU tests."""
    dt = dtypes.check(dtype)
    rdt = result_dtype(func, dt, None) if result_dtype_ is None else dtypes.check(result_dtype_)
    if func in MOMENTS:
        return moment_kernel(func, dt, mean_dtype(dt, None), rdt, ndim_outer, ndim_reduce)
    spec = SPECS[func]
    opnds = (ir.Operand(dt, "array"),)
    return ir.ReductionKernel(kernel_name(func, opnds, rdt, ndim_outer, ndim_reduce), opnds,
                              spec.value(ir.Arg(dt, 0), rdt), spec.reducer, rdt, spec.finish,
                              ndim_outer, ndim_reduce)


def mean_dtype(dt, dtype):
    """The dtype var and std take the mean in (NumPy's ``_var``): ``dtype``, else float64 for
    bool and integers, else the input's."""
    return dtype if dtype is not None else (np.dtype(np.float64) if dt.kind in "biu" else dt)


def moment_kernel(func, dt, mdt, rdt, no, nr) -> ir.ReductionKernel:
    """Sum of squared deviations from the mean (operand 1, one value per output), divided."""
    d = ir.Apply(mdt, "subtract", (mdt.name,) * 3, (ir.cast(ir.Arg(dt, 0), mdt), ir.Arg(mdt, 1)))
    if mdt.kind == "c":
        real = np.dtype(np.float32 if mdt == np.complex64 else np.float64)
        mag = ir.Apply(real, "absolute", (mdt.name, real.name), (d,))
        sq = ir.Apply(real, "multiply", (real.name,) * 3, (mag, mag))
    else:
        sq = ir.Apply(mdt, "multiply", (mdt.name,) * 3, (d, d))
    opnds = (ir.Operand(dt, "array"), ir.Operand(mdt, "outer"))
    return ir.ReductionKernel(kernel_name(func, opnds, rdt, no, nr), opnds, ir.cast(sq, rdt), "sum",
                              rdt, "sqrt_divide" if func == "std" else "divide", no, nr)


@dataclass(frozen=True)
class UserReduction:
    """A user's reduction (``gpunb.ReductionKernel``, CuPy's): each element's value is the C++
    expression ``map_expr`` over the operands (named ``names``), two values combine by
    ``reduce_expr`` (over ``a`` and ``b`` of type ``reduce_type``) starting from
    ``identity``, and ``post_map_expr`` writes the output (named ``out_name``) from the result
    ``a``. ``header`` holds the types and typedefs the user's code names, and its preamble.
    The reduction codegen renders it like a :class:`~gpunb.core.kernels.ir.ReductionKernel`
    (same entry points, geometry and plans); only the state, element, combine and finish
    differ."""

    name: str
    operands: tuple
    names: tuple
    user_types: tuple
    map_expr: str
    reduce_expr: str
    post_map_expr: str
    identity: str
    reduce_type: str
    out: np.dtype
    out_name: str
    out_type: str
    header: str = ""
    ndim_outer: int = 1
    ndim_reduce: int = 1
    options: tuple = ()

    reducer = "user"       # class attributes, not fields: read by the codegen's dispatch
    finish = "none"

    def __post_init__(self):
        if not self.name.isidentifier():
            raise ValueError(f"kernel name {self.name!r} is not a C identifier")
        if any(o.kind == "uniform" for o in self.operands):
            raise ValueError("reduction operands are 'array', 'outer' or 'scalar'")
