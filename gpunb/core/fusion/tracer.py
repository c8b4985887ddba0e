"""Kernel fusion, the tracer: the values ``@gpunb.fuse`` traces a Python function with.

Calling a fused function (:mod:`.function`) runs the Python function once per key (the
function, and per argument its kind, dtype and ndim, or its scalar type) on :class:`Proxy`
objects. Their operators, gpunb's ufuncs, NumPy's ufuncs, ``astype`` and the functions the
registry marks fusable (:mod:`gpunb._registry`: ``where``, ``clip``, the reductions, views)
build kernel IR (:mod:`gpunb.core.kernels.ir`) with NumPy's type resolution, exactly as an
unfused call would: the loop of each op is NumPy's (:func:`ops.loop`, Python scalars weak as
in NEP 50), arguments are cast to it, and constants become ``ir.Const`` of the promoted
dtype, rendered as exact CUDA literals (``inf``/``nan`` by bit pattern). Scalars passed as
*arguments* become kernel parameters, so a new value never recompiles.

The traced IR is launched (by :mod:`.function`) with the same machinery as ufuncs
(:func:`gpunb.core.kernels.elementwise.run.launch`: layout classes, the kernel cache) or,
for a trailing reduction (``.sum()``, ``.max()``, ``.mean()``...), by
:func:`gpunb.core.kernels.reduction.run.run` with the traced expression as the reduction's
value.

Views of *input* arrays (``x[:, None]``, ``x[None]``, ``x[..., None]``, ``x.reshape(...)``,
``numpy.expand_dims(x, ax)``) become operands of their own: the view is taken of the real
argument before launch. Anything the tracer cannot express raises TypeError or
NotImplementedError naming the operation; nothing falls back silently.
"""

from __future__ import annotations

import numbers

import numpy as np

from ... import _registry
from .. import dtypes, layout
from ..kernels import ir
from ..kernels.elementwise import ops
from ..kernels.reduction.ir import SPECS, result_dtype

WEAK = (int, float, complex)
DEFAULT = {int: np.dtype(np.int64), float: np.dtype(np.float64), complex: np.dtype(np.complex128)}


def is_weak(t) -> bool:
    """Whether ``t`` is the type int, float or complex (identity: np.dtype('int64') == int)."""
    return t is int or t is float or t is complex


class FusionError(NotImplementedError):
    """An operation ``@fuse`` cannot trace."""


def cannot(what: str, hint: str = "") -> FusionError:
    return FusionError(f"@fuse cannot trace {what}{': ' + hint if hint else ''}")


# -- tracing ---------------------------------------------------------------------------------

class Trace:
    """The state of one tracing run: the operands read so far."""

    def __init__(self, arg_kinds):
        self.arg_kinds = arg_kinds     # per argument: ('array', dtype, ndim) | ('scalar', ...)
        self.operands: list = []       # (arg index, view steps) ; steps None for scalars
        self.operand_dtypes: list = []
        self.index: dict = {}
        self.int_checks: set = set()   # (arg index, dtype): a weak int argument meets an int loop

    def operand(self, arg: int, steps, dtype) -> int:
        k = (arg, repr(steps))
        i = self.index.get(k)
        if i is None:
            i = self.index[k] = len(self.operands)
            self.operands.append((arg, steps))
            self.operand_dtypes.append(np.dtype(dtype))
        return i


class Proxy:
    """A traced value inside a fused function: an IR node with a dtype and ndim.

    ``weak`` is int/float/complex for a Python scalar argument (and expressions of those
    only), which takes part in type resolution as a weak scalar, as the Python value would.
    ``source`` is (argument index, view steps) for input arrays and views of them.
    ``reduction`` is set on the result of a trailing reduction.
    """

    __array_priority__ = 1000

    def __init__(self, trace, node, ndim, weak=None, source=None, reduction=None):
        self._trace = trace
        self._node = node
        self.ndim = ndim
        self._weak = weak
        self._source = source
        self._reduction = reduction

    # -- what a proxy knows
    @property
    def dtype(self) -> np.dtype:
        return self._node.dtype

    @property
    def shape(self):
        raise cannot("x.shape", "a fused function is traced once per dtype and ndim, not per "
                     "shape, so the shape is not known while tracing (use x.ndim)")

    @property
    def size(self):
        raise cannot("x.size", "the shape is not known while tracing")

    def __repr__(self) -> str:
        return f"<gpunb.fuse traced value dtype={self.dtype} ndim={self.ndim}>"

    # -- what cannot be traced
    def __bool__(self):
        raise TypeError("@fuse cannot trace Python control flow on a traced array value "
                        "(if/while/and/or/not, bool()): the value is not known while tracing; "
                        "use gpunb.where(condition, x, y)")

    def __len__(self):
        raise TypeError("@fuse cannot trace len() of a traced value: the shape is not known "
                        "while tracing")

    def __iter__(self):
        raise TypeError("@fuse cannot trace iteration over a traced value")

    def __int__(self):
        raise TypeError("@fuse cannot trace int() of a traced value: it is not known while tracing")

    def __float__(self):
        raise TypeError("@fuse cannot trace float() of a traced value: it is not known while tracing")

    def __complex__(self):
        raise TypeError("@fuse cannot trace complex() of a traced value: it is not known while tracing")

    def __index__(self):
        raise TypeError("@fuse cannot trace the use of a traced value as an index")

    def __array__(self, *args, **kwargs):
        raise TypeError("@fuse cannot trace the conversion of a traced value to a NumPy array "
                        "(numpy.asarray / numpy.array): only ufuncs, where, clip and "
                        "reductions can be fused")

    def __setitem__(self, key, value):
        raise cannot("item assignment (x[...] = v)", "fused functions return new values")

    @property
    def __cuda_array_interface__(self):
        # gpunb functions other than ufuncs/where/clip (gpunb.sum, gpunb.expand_dims...) ask
        # for this to read a GPU array: say why a traced value cannot be one.
        raise cannot("this gpunb function on a traced value", "inside @fuse use ufuncs, "
                     "where, clip, astype, the methods x.sum()/x.max()/x.mean()... for a "
                     "trailing reduction and x[:, None] / x.reshape(...) / "
                     "numpy.expand_dims(x, axis) for broadcasting views")

    # -- views (input arrays only)
    def _view(self, step, ndim, what):
        if self._reduction is not None:
            raise cannot(f"{what} of a reduction's result", "a reduction must be the last step")
        if self._source is None:
            raise cannot(f"{what} of a computed value",
                         "views (newaxis, reshape, expand_dims) are supported on input arrays "
                         "only; apply them to the inputs before computing")
        arg, steps = self._source
        steps = steps + (step,)
        i = self._trace.operand(arg, steps, self.dtype)
        return Proxy(self._trace, ir.Arg(self.dtype, i), ndim, source=(arg, steps))

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        for it in items:
            if it is None or it is Ellipsis or isinstance(it, slice):
                continue
            if isinstance(it, (bool, np.bool_)) or not isinstance(it, (int, np.integer)):
                what = "a traced value" if isinstance(it, Proxy) else type(it).__name__
                raise cannot(f"indexing with {what}",
                             "only newaxis/None, ..., slices and integers (basic views of inputs)")
        if sum(it is Ellipsis for it in items) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        consumed = sum(not (it is None or it is Ellipsis) for it in items)
        if consumed > self.ndim:
            raise IndexError(f"too many indices for array: array is {self.ndim}-dimensional, "
                             f"but {consumed} were indexed")
        ndim = self.ndim - sum(isinstance(it, (int, np.integer)) for it in items) \
            + sum(it is None for it in items)
        key = tuple(int(it) if isinstance(it, np.integer) else it for it in items)
        return self._view(("getitem", key), ndim, f"indexing x[{_key_str(key)}]")

    def reshape(self, *shape, order="C", **kwargs):
        if order != "C":
            raise cannot(f"reshape with order={order!r}")
        if not shape:       # numpy.reshape(x, shape=...) (or its older newshape=...)
            shape = (kwargs.pop("shape", None) or kwargs.pop("newshape", None),)
        if kwargs:
            raise TypeError(f"reshape() got unexpected keyword arguments {sorted(kwargs)}")
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        shape = tuple(int(s) for s in shape)
        if sum(s == -1 for s in shape) > 1:
            raise ValueError("can only specify one unknown dimension")
        return self._view(("reshape", shape), len(shape), f"reshape{shape}")

    def expand_dims(self, axis):
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        return self._view(("expand_dims", axes), self.ndim + len(axes), f"expand_dims(axis={axis})")

    def squeeze(self, axis=None):
        if axis is None:
            raise cannot("squeeze() without axis", "the shape is not known while tracing; name the axes")
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        return self._view(("squeeze", axes), self.ndim - len(axes), f"squeeze(axis={axis})")

    # -- conversions
    def astype(self, dtype, order="K", casting="unsafe", copy=True):
        dt = dtypes.check(dtype)
        _check_live(self, "astype")
        if not np.can_cast(self.dtype, dt, casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to {dt!r} according "
                            f"to the rule {casting!r}")
        return Proxy(self._trace, ir.cast(self._node, dt), self.ndim)

    # -- NumPy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__":
            raise cannot(f"numpy.{ufunc.__name__}.{method}")
        if set(kwargs) - {"dtype", "casting"} or kwargs.get("out") is not None:
            raise cannot(f"numpy.{ufunc.__name__} with {sorted(kwargs)}", "out= is not supported")
        return apply_ufunc(ufunc.__name__, inputs, dtype=kwargs.get("dtype"),
                           casting=kwargs.get("casting", "same_kind"))

    def __array_function__(self, func, types, args, kwargs):
        entry = _registry.numpy_function(func)
        name = _registry.numpy_name(func)
        if entry is None or entry.fuse is None:
            raise cannot(name, "only ufuncs and " + ", ".join(fusable()) + " can be fused")
        if entry.fuse == "method":      # a reduction or a view: the traced value's method
            if not args or not isinstance(args[0], Proxy):
                raise cannot(f"{name} of a non-traced value")
            return getattr(args[0], entry.method or entry.name)(*args[1:], **kwargs)
        return _registry.implementation(entry.name)(*args, **kwargs)    # traces itself


def fusable() -> list[str]:
    """The names, besides the ufuncs, that ``@fuse`` traces (the registry's fusable entries)."""
    return sorted(e.name for e in _registry.ENTRIES.values() if e.fuse in ("method", "inline"))


def _key_str(key) -> str:
    def one(it):
        if it is None:
            return "None"
        if it is Ellipsis:
            return "..."
        if isinstance(it, slice):
            return ":".join("" if v is None else str(v) for v in (it.start, it.stop)) + \
                ("" if it.step is None else f":{it.step}")
        return str(it)
    return ", ".join(one(it) for it in key)


def _operators():
    """The operators of traced values, from the registry's (as ndarray's): each applies its
    ufunc to the traced values; in-place forms cannot be traced."""
    def binary(name, role):
        if role == "reflected":
            return lambda self, other: apply_ufunc(name, (other, self))
        if name == "power":
            def pow_(self, other):
                fast = _registry.FAST_POWER.get(other) if (type(other) in (int, float)
                                                            and self.dtype.kind in "fc") else None
                return apply_ufunc(fast, (self,)) if fast else apply_ufunc("power", (self, other))
            return pow_
        return lambda self, other: apply_ufunc(name, (self, other))

    for dunder, name, role in _registry.operators():
        if role == "unary":
            setattr(Proxy, dunder, lambda self, n=name: apply_ufunc(n, (self,)))
        elif role == "inplace":
            def inplace(self, other, d=dunder):
                raise cannot(f"in-place operator {d} on a traced value",
                             "write x = x + y instead of x += y")
            setattr(Proxy, dunder, inplace)
        else:
            setattr(Proxy, dunder, binary(name, role))
    Proxy.__hash__ = None


def _reductions():
    """A method on traced values for each reduction the registry marks fusable (``x.sum()``,
    ``x.max()``...): a trailing reduction of the traced expression, with the signature of
    ndarray's method."""
    for e in _registry.ENTRIES.values():
        func = e.method or e.name
        if e.fuse != "method" or func not in SPECS:
            continue
        if SPECS[func].dtype_arg:
            def method(self, axis=None, dtype=None, out=None, keepdims=False, func=func):
                return _reduce(self, func, axis, dtype, out, keepdims)
        else:
            def method(self, axis=None, out=None, keepdims=False, *, dtype=None, func=func):
                return _reduce(self, func, axis, dtype, out, keepdims)
        method.__name__ = func
        setattr(Proxy, func, method)


_operators()
_reductions()


def _check_live(p: Proxy, what: str) -> None:
    if p._reduction is not None:
        raise cannot(f"{what} after a reduction ({p._reduction['func']})",
                     "only a single trailing reduction on the returned value can be fused; "
                     "no elementwise operation may follow it")


def _trace_of(args):
    for a in args:
        if isinstance(a, Proxy):
            return a._trace
    return None


def _classify(value, what: str):
    """(type for NumPy's resolution, node or None, python value) of an op argument."""
    if isinstance(value, Proxy):
        _check_live(value, what)
        return (value._weak if value._weak is not None else value.dtype), value
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(bool), None
    if isinstance(value, np.generic):      # before WEAK: np.float64 is a float subclass
        return dtypes.check(value.dtype), None
    if isinstance(value, WEAK):
        return type(value), None
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return dtypes.check(value.dtype), None
    if isinstance(value, numbers.Number):
        raise cannot(f"a constant of type {type(value).__name__} in {what}")
    raise cannot(f"{what} with an argument of type {type(value).__name__}",
                 "inside @fuse, constants must be Python or NumPy scalars and arrays must be "
                 "arguments of the fused function")


def _const(value, dtype) -> ir.Node:
    """A constant converted to ``dtype`` as NumPy converts a scalar operand (OverflowError for
    an out-of-range Python int, as unfused calls raise)."""
    dt = np.dtype(dtype)
    if isinstance(value, np.ndarray):
        value = value[()]
    if isinstance(value, np.generic):
        src = value.dtype
        v = value.item()
        return ir.cast(ir.Const(src, v), dt)
    if isinstance(value, (bool, np.bool_)):
        return ir.cast(ir.Const(np.dtype(bool), bool(value)), dt)
    if isinstance(value, complex) and dt.kind != "c":
        raise TypeError(f"cannot convert complex constant {value!r} to {dt}")
    dt.type(value)       # NumPy's conversion errors (OverflowError) at trace time
    return ir.Const(dt, value)


def _node(value, types_entry, dtype) -> ir.Node:
    if isinstance(value, Proxy):
        return ir.cast(value._node, dtype)
    return _const(value, dtype)


def _loop(op, in_types, dtype=None, casting="same_kind"):
    if all(is_weak(t) for t in in_types):
        # only weak scalars: NumPy would never see them (Python arithmetic); use their defaults
        in_types = tuple(DEFAULT[t] for t in in_types)
    return ops.loop(op, tuple(in_types), dtype, casting)


def _weak_result(in_types, dt: np.dtype):
    """The weak type of an op of weak scalars only (Python arithmetic stays weak)."""
    if not all(is_weak(t) for t in in_types) or dt.kind not in "iufc":
        return None
    return complex if dt.kind == "c" else float if dt.kind == "f" else int


def apply_ufunc(name: str, args, dtype=None, casting="same_kind"):
    """One ufunc applied to traced values and constants: NumPy's loop, casts, ``ir.Apply``."""
    op = ops.get(name)
    if len(args) != op.nin:
        raise TypeError(f"{op.name}() takes {op.nin} positional argument"
                        f"{'s' if op.nin > 1 else ''} but {len(args)} were given")
    trace = _trace_of(args)
    if trace is None:
        raise TypeError(f"{op.name}: no traced value among the arguments")
    if op.name == "power":
        base, exponent = args
        if not isinstance(exponent, Proxy):
            ops.check_integer_power(base, exponent)
    classified = [_classify(a, f"{op.name}") for a in args]
    in_types = tuple(t for t, _ in classified)
    loop = _loop(op, in_types, dtype, casting)     # NumPy's input casting errors with dtype=
    ins, outs = loop[:op.nin], loop[op.nin:]
    for a, want in zip(args, ins):
        # NumPy raises OverflowError for a Python int that its integer loop cannot hold
        # (NEP 50); the kernel would wrap it, so the call checks it (see Fused.__call__)
        if isinstance(a, Proxy) and a._weak is int and isinstance(a._node, ir.Arg) and want.kind in "iu":
            trace.int_checks.add((trace.operands[a._node.index][0], want))
    nodes = tuple(_node(a, t, ins[i]) for i, (a, (t, _)) in enumerate(zip(args, classified)))
    ndim = max((a.ndim for a in args if isinstance(a, Proxy)), default=0)
    loop_names = tuple(d.name for d in loop)
    results = tuple(Proxy(trace, ir.Apply(outs[j], op.name, loop_names, nodes, j), ndim,
                           weak=_weak_result(in_types, outs[j]))
                    for j in range(op.nout))
    return results[0] if op.nout == 1 else results


def _reduce(p: Proxy, func: str, axis, dtype, out, keepdims):
    """A trailing reduction (:data:`SPECS` ``func``) of the traced value ``p``."""
    if out is not None:
        raise cannot(f"{func}(out=...)", "a fused function returns its result")
    if dtype is not None and not SPECS[func].dtype_arg:
        raise TypeError(f"{func}() got an unexpected keyword argument 'dtype'")
    _check_live(p, func)
    axes = layout.normalize_axes(axis, p.ndim)
    spec = SPECS[func]
    rdt = result_dtype(func, p._node.dtype, None if dtype is None else dtypes.check(dtype))
    v = spec.value(p._node, rdt)
    ndim = p.ndim - (0 if keepdims else len(axes))
    info = {"func": func, "axes": axes, "keepdims": bool(keepdims), "reducer": spec.reducer,
            "finish": spec.finish, "out": rdt, "value": v, "ndim_in": p.ndim}
    return Proxy(p._trace, v, ndim, reduction=info)


def has_proxy(args) -> bool:
    """Whether a gpunb entry point was called with a traced value (it then delegates here)."""
    for a in args:
        if isinstance(a, Proxy):
            return True
    return False


def ufunc_call(name: str, args, out=None, dtype=None, casting="same_kind"):
    """``gpunb.<ufunc>(...)`` on traced values."""
    if out is not None:
        raise cannot(f"{name}(out=...)", "fused functions return new values")
    return apply_ufunc(name, args, dtype=dtype, casting=casting)
