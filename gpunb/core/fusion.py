"""Kernel fusion, the tracer: the values ``@gpunb.fuse`` traces a Python function with.

Calling a fused function (:mod:`gpunb.core.fused`) runs the Python function once per key (the function, and per
argument its kind, dtype and ndim, or its scalar type) on :class:`_Proxy` objects. Their
operators, gpunb's ufuncs, ``where``, ``clip``, ``astype``, NumPy's ufuncs and a few NumPy
functions build kernel IR (:mod:`gpunb.core.ir`) with NumPy's type resolution, exactly as an
unfused call would: the loop of each op is NumPy's (``ops.get(name).resolve``, Python scalars
weak as in NEP 50), arguments are cast to it, and constants become ``ir.Const`` of the
promoted dtype, rendered as exact CUDA literals (``inf``/``nan`` by bit pattern). Scalars
passed as *arguments* become kernel parameters, so a new value never recompiles.

The traced IR is launched (by :mod:`gpunb.core.fused`) with the same machinery as ufuncs (:func:`ufuncs._run_elementwise`:
layout classes, the kernel cache) or, for a trailing reduction (``.sum()``, ``.max()``,
``.mean()``...), by :func:`reduction._run` with the traced expression as the reduction's value.

Views of *input* arrays (``x[:, None]``, ``x[None]``, ``x[..., None]``, ``x.reshape(...)``,
``numpy.expand_dims(x, ax)``) become operands of their own: the view is taken of the real
argument before launch. Anything the tracer cannot express raises TypeError or
NotImplementedError naming the operation; nothing falls back silently.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import dtypes, ir, ops

_WEAK = (int, float, complex)
_DEFAULT = {int: np.dtype(np.int64), float: np.dtype(np.float64), complex: np.dtype(np.complex128)}


def _is_weak(t) -> bool:
    """Whether ``t`` is the type int, float or complex (identity: np.dtype('int64') == int)."""
    return t is int or t is float or t is complex
_REDUCTIONS = ("sum", "prod", "max", "min", "mean", "any", "all")


class FusionError(NotImplementedError):
    """An operation ``@fuse`` cannot trace."""


def _cannot(what: str, hint: str = "") -> FusionError:
    return FusionError(f"@fuse cannot trace {what}{': ' + hint if hint else ''}")


# -- tracing ---------------------------------------------------------------------------------

class _Trace:
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


class _Proxy:
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
        raise _cannot("x.shape", "a fused function is traced once per dtype and ndim, not per "
                      "shape, so the shape is not known while tracing (use x.ndim)")

    @property
    def size(self):
        raise _cannot("x.size", "the shape is not known while tracing")

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
        raise _cannot("item assignment (x[...] = v)", "fused functions return new values")

    @property
    def __cuda_array_interface__(self):
        # gpunb functions other than ufuncs/where/clip (gpunb.sum, gpunb.expand_dims...) ask
        # for this to read a GPU array: say why a traced value cannot be one.
        raise _cannot("this gpunb function on a traced value", "inside @fuse use ufuncs, "
                      "where, clip, astype, the methods x.sum()/x.max()/x.mean()... for a "
                      "trailing reduction and x[:, None] / x.reshape(...) / "
                      "numpy.expand_dims(x, axis) for broadcasting views")

    # -- views (input arrays only)
    def _view(self, step, ndim, what):
        if self._reduction is not None:
            raise _cannot(f"{what} of a reduction's result", "a reduction must be the last step")
        if self._source is None:
            raise _cannot(f"{what} of a computed value",
                          "views (newaxis, reshape, expand_dims) are supported on input arrays "
                          "only; apply them to the inputs before computing")
        arg, steps = self._source
        steps = steps + (step,)
        i = self._trace.operand(arg, steps, self.dtype)
        return _Proxy(self._trace, ir.Arg(self.dtype, i), ndim, source=(arg, steps))

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        for it in items:
            if it is None or it is Ellipsis or isinstance(it, slice):
                continue
            if isinstance(it, (bool, np.bool_)) or not isinstance(it, (int, np.integer)):
                raise _cannot(f"indexing with {type(it).__name__}",
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

    def reshape(self, *shape, order="C"):
        if order != "C":
            raise _cannot(f"reshape with order={order!r}")
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        shape = tuple(int(s) for s in shape)
        if sum(s == -1 for s in shape) > 1:
            raise ValueError("can only specify one unknown dimension")
        return self._view(("reshape", shape), len(shape), f"reshape{shape}")

    def _expand_dims(self, axis):
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        return self._view(("expand_dims", axes), self.ndim + len(axes), f"expand_dims(axis={axis})")

    def squeeze(self, axis=None):
        if axis is None:
            raise _cannot("squeeze() without axis", "the shape is not known while tracing; name the axes")
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        return self._view(("squeeze", axes), self.ndim - len(axes), f"squeeze(axis={axis})")

    # -- conversions
    def astype(self, dtype, order="K", casting="unsafe", copy=True):
        dt = dtypes.check(dtype)
        _check_live(self, "astype")
        if not np.can_cast(self.dtype, dt, casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to {dt!r} according "
                            f"to the rule {casting!r}")
        return _Proxy(self._trace, ir.cast(self._node, dt), self.ndim)

    # -- NumPy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__":
            raise _cannot(f"numpy.{ufunc.__name__}.{method}")
        if set(kwargs) - {"dtype", "casting"} or kwargs.get("out") is not None:
            raise _cannot(f"numpy.{ufunc.__name__} with {sorted(kwargs)}", "out= is not supported")
        return apply_ufunc(ufunc.__name__, inputs, dtype=kwargs.get("dtype"),
                           casting=kwargs.get("casting", "same_kind"))

    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        handler = _NUMPY_FUNCTIONS.get(name)
        if handler is None:
            raise _cannot(f"numpy.{name}", "only ufuncs, where, clip, expand_dims, reshape and "
                          "the reductions sum/prod/max/min/mean/any/all can be fused")
        return handler(*args, **kwargs)

    # -- trailing reductions
    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reduce(self, "sum", axis, dtype, out, keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reduce(self, "prod", axis, dtype, out, keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        return _reduce(self, "max", axis, None, out, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return _reduce(self, "min", axis, None, out, keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reduce(self, "mean", axis, dtype, out, keepdims)

    def any(self, axis=None, out=None, keepdims=False):
        return _reduce(self, "any", axis, None, out, keepdims)

    def all(self, axis=None, out=None, keepdims=False):
        return _reduce(self, "all", axis, None, out, keepdims)


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
    binary = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
              "floordiv": "floor_divide", "mod": "remainder",
              "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
              "lshift": "left_shift", "rshift": "right_shift"}
    for dunder, name in binary.items():
        setattr(_Proxy, f"__{dunder}__", lambda self, other, n=name: apply_ufunc(n, (self, other)))
        setattr(_Proxy, f"__r{dunder}__", lambda self, other, n=name: apply_ufunc(n, (other, self)))
    for dunder, name in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                         "gt": "greater", "ge": "greater_equal"}.items():
        setattr(_Proxy, f"__{dunder}__", lambda self, other, n=name: apply_ufunc(n, (self, other)))
    for dunder, name in {"neg": "negative", "pos": "positive", "abs": "absolute",
                         "invert": "invert"}.items():
        setattr(_Proxy, f"__{dunder}__", lambda self, n=name: apply_ufunc(n, (self,)))

    # NumPy's array power takes these exponents through cheaper, exact ufuncs (as ndarray does)
    fast = {2: "square", 0.5: "sqrt", -1: "reciprocal", 1: "positive"}

    def pow_(self, other):
        name = fast.get(other) if type(other) in (int, float) and self.dtype.kind in "fc" else None
        if name is not None:
            return apply_ufunc(name, (self,))
        return apply_ufunc("power", (self, other))

    _Proxy.__pow__ = pow_
    _Proxy.__rpow__ = lambda self, other: apply_ufunc("power", (other, self))
    _Proxy.__hash__ = None
    for dunder in ("iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand",
                   "ior", "ixor", "ilshift", "irshift"):
        def inplace(self, other, d=dunder):
            raise _cannot(f"in-place operator __{d}__ on a traced value",
                          "write x = x + y instead of x += y")
        setattr(_Proxy, f"__{dunder}__", inplace)


_operators()


def _check_live(p: _Proxy, what: str) -> None:
    if p._reduction is not None:
        raise _cannot(f"{what} after a reduction ({p._reduction['func']})",
                      "only a single trailing reduction on the returned value can be fused; "
                      "no elementwise operation may follow it")


def _trace_of(args):
    for a in args:
        if isinstance(a, _Proxy):
            return a._trace
    return None


def _classify(value, what: str):
    """(type for NumPy's resolution, node or None, python value) of an op argument."""
    if isinstance(value, _Proxy):
        _check_live(value, what)
        return (value._weak if value._weak is not None else value.dtype), value
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(bool), None
    if isinstance(value, np.generic):      # before _WEAK: np.float64 is a float subclass
        return dtypes.check(value.dtype), None
    if isinstance(value, _WEAK):
        return type(value), None
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return dtypes.check(value.dtype), None
    if isinstance(value, numbers.Number):
        raise _cannot(f"a constant of type {type(value).__name__} in {what}")
    raise _cannot(f"{what} with an argument of type {type(value).__name__}",
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
    if isinstance(value, _Proxy):
        return ir.cast(value._node, dtype)
    return _const(value, dtype)


def _loop(name: str, in_types, dtype=None):
    op = ops.get(name)
    if all(_is_weak(t) for t in in_types):
        # only weak scalars: NumPy would never see them (Python arithmetic); use their defaults
        in_types = tuple(_DEFAULT[t] for t in in_types)
    if dtype is not None:
        dt = dtypes.check(dtype)
        loop = op.ufunc.resolve_dtypes(tuple(in_types) + (None,) * op.nout,
                                       signature=(None,) * op.nin + (dt,) * op.nout)
        for d in loop:
            dtypes.check(d)
        return tuple(loop)
    return tuple(op.resolve(in_types))


def _weak_result(in_types, dt: np.dtype):
    """The weak type of an op of weak scalars only (Python arithmetic stays weak)."""
    if not all(_is_weak(t) for t in in_types) or dt.kind not in "iufc":
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
        from .ufuncs import _check_integer_power

        base, exponent = args
        if not isinstance(exponent, _Proxy):
            _check_integer_power(base, exponent)
    classified = [_classify(a, f"{op.name}") for a in args]
    in_types = tuple(t for t, _ in classified)
    loop = _loop(op.name, in_types, dtype)
    ins, outs = loop[:op.nin], loop[op.nin:]
    if dtype is not None:
        for i, t in enumerate(in_types):
            src = _DEFAULT[t] if _is_weak(t) else t
            if not isinstance(t, type) and not np.can_cast(src, ins[i], casting):
                raise TypeError(f"Cannot cast ufunc '{op.name}' input {i} from {src!r} to "
                                f"{ins[i]!r} with casting rule {casting!r}")
    for a, want in zip(args, ins):
        # NumPy raises OverflowError for a Python int that its integer loop cannot hold
        # (NEP 50); the kernel would wrap it, so the call checks it (see Fused.__call__)
        if isinstance(a, _Proxy) and a._weak is int and isinstance(a._node, ir.Arg) and want.kind in "iu":
            trace.int_checks.add((trace.operands[a._node.index][0], want))
    nodes = tuple(_node(a, t, ins[i]) for i, (a, (t, _)) in enumerate(zip(args, classified)))
    ndim = max((a.ndim for a in args if isinstance(a, _Proxy)), default=0)
    loop_names = tuple(d.name for d in loop)
    results = tuple(_Proxy(trace, ir.Apply(outs[j], op.name, loop_names, nodes, j), ndim,
                           weak=_weak_result(in_types, outs[j]))
                    for j in range(op.nout))
    return results[0] if op.nout == 1 else results


def where(condition, x=None, y=None):
    """``where`` on traced values: NumPy's ``result_type(x, y)`` (Python scalars weak)."""
    if x is None and y is None:
        raise _cannot("where(condition) (nonzero)", "give x and y")
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    args = (condition, x, y)
    trace = _trace_of(args)
    classified = [_classify(a, "where") for a in args]
    probes = []
    for (t, _), a in zip(classified[1:], args[1:]):
        probes.append(t(0) if isinstance(t, type) else t)
    rt = dtypes.check(np.result_type(*probes))
    cond = _node(condition, classified[0][0], np.dtype(bool))
    node = ir.Where(rt, cond, _node(x, classified[1][0], rt), _node(y, classified[2][0], rt))
    ndim = max(a.ndim for a in args if isinstance(a, _Proxy))
    weak = None
    if all(isinstance(t, type) for t, _ in classified[1:]) and isinstance(classified[0][0], type):
        weak = _weak_result(tuple(t for t, _ in classified), rt)
    return _Proxy(trace, node, ndim, weak=weak)


def clip(a, a_min=None, a_max=None, out=None, **kwargs):
    if out is not None:
        raise _cannot("clip with out=", "fused functions return new values")
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    if a_min is None:
        return apply_ufunc("minimum", (a, a_max), **kwargs)
    if a_max is None:
        return apply_ufunc("maximum", (a, a_min), **kwargs)
    return apply_ufunc("clip", (a, a_min, a_max), **kwargs)


def _reduce(p: _Proxy, func: str, axis, dtype, out, keepdims):
    if out is not None:
        raise _cannot(f"{func}(out=...)", "a fused function returns its result")
    _check_live(p, func)
    from numpy.lib.array_utils import normalize_axis_tuple

    from .reduction import _SPECS, _result_dtype

    axes = tuple(range(p.ndim)) if axis is None else normalize_axis_tuple(axis, p.ndim)
    value = p._node
    rdt = _result_dtype(func, value.dtype, None if dtype is None else dtypes.check(dtype))
    reducer, _, finish = _SPECS[func]
    if func in ("sum", "prod", "mean"):
        v = ir.cast(value, rdt)
    elif func in ("any", "all"):
        v = ir.cast(value, np.dtype(bool))
    else:
        v = value
    ndim = p.ndim - (0 if keepdims else len(axes))
    info = {"func": func, "axes": axes, "keepdims": bool(keepdims), "reducer": reducer,
            "finish": finish, "out": rdt, "value": v, "ndim_in": p.ndim}
    return _Proxy(p._trace, v, ndim, reduction=info)


def _np_reduction(func):
    def handler(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if kwargs:
            raise _cannot(f"numpy.{func} with {sorted(kwargs)}")
        if not isinstance(a, _Proxy):
            raise _cannot(f"numpy.{func} of a non-traced value")
        if func in ("max", "min", "any", "all"):
            if dtype is not None:
                raise TypeError(f"{func}() got an unexpected keyword argument 'dtype'")
            return getattr(a, func)(axis=axis, out=out, keepdims=keepdims)
        return getattr(a, func)(axis=axis, dtype=dtype, out=out, keepdims=keepdims)
    return handler


def _np_expand_dims(a, axis):
    if not isinstance(a, _Proxy):
        raise _cannot("expand_dims of a non-traced value")
    return a._expand_dims(axis)


def _np_reshape(a, shape=None, order="C", **kwargs):
    shape = kwargs.get("newshape", shape)
    return a.reshape(shape, order=order)


def _np_squeeze(a, axis=None):
    return a.squeeze(axis)


_NUMPY_FUNCTIONS = {
    "where": where, "clip": clip, "expand_dims": _np_expand_dims, "reshape": _np_reshape,
    "squeeze": _np_squeeze,
    "sum": _np_reduction("sum"), "prod": _np_reduction("prod"), "max": _np_reduction("max"),
    "amax": _np_reduction("max"), "min": _np_reduction("min"), "amin": _np_reduction("min"),
    "mean": _np_reduction("mean"), "any": _np_reduction("any"), "all": _np_reduction("all"),
}


def has_proxy(args) -> bool:
    """Whether a gpunb entry point was called with a traced value (it then delegates here)."""
    for a in args:
        if isinstance(a, _Proxy):
            return True
    return False


def ufunc_call(name: str, args, out=None, dtype=None, casting="same_kind"):
    """``gpunb.<ufunc>(...)`` on traced values."""
    if out is not None:
        raise _cannot(f"{name}(out=...)", "fused functions return new values")
    return apply_ufunc(name, args, dtype=dtype, casting=casting)
