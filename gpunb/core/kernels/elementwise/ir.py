"""Elementwise calls as kernel IR: pick NumPy's loop, cast operands to it, apply the op, cast
the result to the output dtype. The one place where an unfused elementwise call (a ufunc,
``where``, a copy) becomes a kernel; fusion builds the same nodes from traced Python."""

from __future__ import annotations

import numpy as np

from .. import ir
from .ops import get as get_op

_WEAK = (int, float, complex)
_KIND_CODE = {"array": "a", "uniform": "u", "scalar": "s"}


def kernel_name(name: str, operands, outputs, layout: str, ndim: int) -> str:
    parts = [name] + [f"{_KIND_CODE[o.kind]}{o.dtype.name}" for o in operands]
    parts += ["to"] + [np.dtype(d).name for d in outputs]
    parts += [layout if layout == "contiguous" else f"strided{ndim}"]
    return "_".join(parts)


def ufunc_kernel(name: str, dtypes, kinds, out_dtypes=None, layout: str = "contiguous",
                 ndim: int = 1, loop=None) -> ir.ElementwiseKernel:
    """The kernel of one ufunc call.

    Parameters
    ----------
    name : str
        The ufunc's NumPy name (``'add'``, ``'sqrt'``...).
    dtypes : sequence
        Each input's dtype, or ``int``/``float``/``complex`` for a weak Python scalar (which
        becomes a scalar parameter of the loop's dtype).
    kinds : sequence of str
        Each input's operand kind: 'array', 'uniform' or 'scalar'.
    out_dtypes : sequence of dtype, optional
        Output dtypes (from ``out=`` or ``dtype=``); default the loop's.
    loop : sequence of dtype, optional
        The loop, when the caller has resolved it already.
    """
    op = get_op(name)
    if len(dtypes) != op.nin or len(kinds) != op.nin:
        raise TypeError(f"{name} takes {op.nin} input{'s' if op.nin > 1 else ''}, got {len(dtypes)}")
    loop = op.resolve(dtypes, out_dtypes) if loop is None else tuple(np.dtype(d) for d in loop)
    ins, outs = loop[:op.nin], loop[op.nin:]
    # (identity, not ==: np.dtype('int64') == int is True)
    operands = tuple(ir.Operand(ins[i] if any(d is w for w in _WEAK) else np.dtype(d), k)
                     for i, (d, k) in enumerate(zip(dtypes, kinds)))
    args = tuple(ir.cast(ir.Arg(o.dtype, i), ins[i]) for i, o in enumerate(operands))
    final = tuple(np.dtype(d) for d in (out_dtypes if out_dtypes is not None else outs))
    outputs = tuple((final[j], ir.cast(ir.Apply(outs[j], op.name, tuple(d.name for d in loop), args, j), final[j]))
                    for j in range(op.nout))
    return ir.ElementwiseKernel(kernel_name(op.name, operands, final, layout, ndim),
                                operands, outputs, layout, ndim)


def copy_kernel(src, dst, kind: str = "array", layout: str = "contiguous", ndim: int = 1) -> ir.ElementwiseKernel:
    """Copy with a cast (NumPy's unsafe casting, as assignment does): ``dst[i] = src[i]``."""
    src, dst = np.dtype(src), np.dtype(dst)
    operand = ir.Operand(src, kind)
    name = kernel_name("copy", (operand,), (dst,), layout, ndim)
    return ir.ElementwiseKernel(name, (operand,), ((dst, ir.cast(ir.Arg(src, 0), dst)),), layout, ndim)
