"""The kernel IR: expression trees over kernel operands, shared by ufuncs and fusion.

A node has a dtype. ``Arg`` reads operand ``index`` (an array element or a scalar parameter),
``Const`` is a literal, ``Apply`` applies one elementwise op's loop (:mod:`.elementwise.ops`:
NumPy's ufuncs, and ``where``) to its argument nodes (already of the loop's input dtypes),
``Cast`` converts with NumPy's rules. Each family's codegen turns a tree into CUDA C++;
nothing here knows about CUDA.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Node:
    dtype: np.dtype


@dataclass(frozen=True)
class Arg(Node):
    index: int


@dataclass(frozen=True)
class Const(Node):
    value: object

    def __post_init__(self):
        # 1 == 1.0 == True in Python: keep the type in equality and hashing, or two kernels
        # differing only in a constant's type would share a cache entry.
        object.__setattr__(self, "value", (type(self.value).__name__, self.value))


@dataclass(frozen=True)
class Apply(Node):
    op: str
    loop: tuple[str, ...]      # dtype names of the loop's inputs then outputs
    args: tuple[Node, ...]
    output: int = 0            # which output of a multi-output op


@dataclass(frozen=True)
class Cast(Node):
    arg: Node


def cast(node: Node, dtype) -> Node:
    dt = np.dtype(dtype)
    return node if node.dtype == dt else Cast(dt, node)


def args_of(node: Node, acc: set) -> set:
    """Add the operand indices that ``node`` reads to ``acc`` (and return it)."""
    if isinstance(node, Arg):
        acc.add(node.index)
    elif isinstance(node, Apply):
        for a in node.args:
            args_of(a, acc)
    elif isinstance(node, Cast):
        args_of(node.arg, acc)
    return acc


def renumber(node: Node, remap: dict) -> Node:
    """``node`` with each ``Arg(i)`` reading operand ``remap[i]`` instead."""
    if isinstance(node, Arg):
        return Arg(node.dtype, remap[node.index])
    if isinstance(node, Apply):
        return Apply(node.dtype, node.op, node.loop, tuple(renumber(a, remap) for a in node.args),
                     node.output)
    if isinstance(node, Cast):
        return Cast(node.dtype, renumber(node.arg, remap))
    return node


@dataclass(frozen=True)
class Operand:
    """A kernel operand: ``kind`` is 'array' (one element per index), 'uniform' (a pointer to
    one element broadcast everywhere), 'scalar' (a value passed by value) or, in reductions,
    'outer' (one element per output, constant along the reduced axes)."""

    dtype: np.dtype
    kind: str = "array"

    def __post_init__(self):
        object.__setattr__(self, "dtype", np.dtype(self.dtype))
        if self.kind not in ("array", "uniform", "scalar", "outer"):
            raise ValueError(f"operand kind must be 'array', 'uniform', 'scalar' or 'outer', not {self.kind!r}")


@dataclass(frozen=True)
class ElementwiseKernel:
    """An elementwise kernel: operands in, one expression per output.

    ``layout`` is 'contiguous' (every array operand and output is C-contiguous with the
    output's shape) or 'strided' (any strides; ``ndim`` dimensions after collapsing).
    """

    name: str
    operands: tuple[Operand, ...]
    outputs: tuple[tuple[np.dtype, Node], ...]
    layout: str = "contiguous"
    ndim: int = 1

    def __post_init__(self):
        if self.layout not in ("contiguous", "strided"):
            raise ValueError(f"layout must be 'contiguous' or 'strided', not {self.layout!r}")
        if not self.name.isidentifier():
            raise ValueError(f"kernel name {self.name!r} is not a C identifier")


REDUCERS = ("sum", "prod", "max", "min", "nanmax", "nanmin", "argmax", "argmin", "any", "all")
FINISHES = ("none", "divide", "sqrt_divide")


@dataclass(frozen=True)
class ReductionKernel:
    """A reduction: ``value`` (an expression over the operands, one per input element) combined
    by ``reducer`` over the reduced axes, then ``finish`` ('divide': by a divisor given at
    launch, as mean and var do; 'sqrt_divide': std) and a cast to ``out``.

    The input index space is split into outputs (``ndim_outer`` dims after collapsing, in the
    output's C order) and the reduction (``ndim_reduce`` dims). Arg reducers return the C-order
    index within the reduction.
    """

    name: str
    operands: tuple[Operand, ...]
    value: Node
    reducer: str
    out: np.dtype
    finish: str = "none"
    ndim_outer: int = 1
    ndim_reduce: int = 1

    def __post_init__(self):
        if self.reducer not in REDUCERS:
            raise ValueError(f"reducer must be one of {REDUCERS}, not {self.reducer!r}")
        if self.finish not in FINISHES:
            raise ValueError(f"finish must be one of {FINISHES}, not {self.finish!r}")
        if not self.name.isidentifier():
            raise ValueError(f"kernel name {self.name!r} is not a C identifier")
        if any(o.kind == "uniform" for o in self.operands):
            raise ValueError("reduction operands are 'array', 'outer' or 'scalar'")
