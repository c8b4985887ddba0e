"""``gpunb.vectorize`` (numpy.vectorize, cupy.vectorize): a Python function of scalars run
over broadcast arrays as ONE fused elementwise kernel.

NumPy's vectorize calls the function once per element on the host; CuPy's compiles its
Python source. gpunb traces it, as ``@gpunb.fuse`` does (:mod:`.function`): the function is
called once per (argument dtypes, ndims) with traced values standing for one element each,
and what it computes becomes the kernel. So arithmetic, comparisons, gpunb's and NumPy's
ufuncs, ``gpunb.where``, local variables and Python loops over *constants* (``excluded``
arguments) all work, and so do the functions of Python's ``math`` module that the function
reads from its module's globals (``import math`` or ``from math import sin``): they become
the ufuncs of the same name, computed in float64 and weak in type promotion as the Python
floats they return (domain errors give NaN, as NumPy's ufuncs, not Python's ValueError).

Python control flow on an element's value (``if x > 0:``, ``a if c else b``, ``and``/``or``,
``min``/``max``) cannot be traced: it raises, naming the problem and the replacement
(``gpunb.where``...); nothing ever falls back to calling the function per element on the
host.

The output dtypes are NumPy's: without ``otypes``, those of the function's results for
NumPy scalars of the inputs' dtypes (NumPy calls it on the first elements; Python scalar
arguments count as arrays, strongly typed, as ``numpy.asarray`` makes them); ``otypes``
casts the results inside the kernel.
"""

from __future__ import annotations

import functools
import math
import types

import numpy as np

from .. import dtypes, layout
from ..args import as_gpu
from ..kernels import ir
from ..ndarray import ndarray
from .function import Fused
from .tracer import FusionError, Proxy, apply_ufunc

MAX_KERNELS = 64        # fused functions kept per vectorize object (per excluded values)
_EMPTY = "cannot call `vectorize` on size 0 inputs unless `otypes` is set"   # NumPy's words


class vectorize:
    """``pyfunc`` over broadcast GPU arrays, as one fused kernel (numpy.vectorize's and
    cupy.vectorize's interface).

    ``otypes``: the output dtypes (a string of type codes or a list of dtypes, one per output),
    cast to inside the kernel; by default NumPy's. ``doc``: the docstring (``pyfunc``'s by
    default). ``excluded``: positions (ints) and keyword names (strings) of arguments passed to
    ``pyfunc`` unchanged, as Python constants of the kernel (a new value traces the function
    again). ``cache`` is accepted and ignored: gpunb caches the traces and the compiled kernels
    (in memory and on disk) anyway. ``signature`` (generalized ufuncs) is not supported, as in
    CuPy. Used without ``pyfunc`` (``@vectorize(otypes='d')``), it is a decorator.

    Inputs are GPU arrays and scalars; host arrays raise TypeError (move them with
    ``gpunb.asarray``). ``v.inspect(*args, arch='sm_90')`` shows the kernel without a GPU
    (NumPy arrays stand in for GPU arrays), as ``gpunb.fuse``'s ``inspect``.
    """

    def __init__(self, pyfunc=np._NoValue, otypes=None, doc=None, excluded=None, cache=False,
                 signature=None):
        if pyfunc is not np._NoValue and not callable(pyfunc):
            raise TypeError("When used as a decorator, only accepts keyword arguments.")
        if signature is not None:
            raise NotImplementedError("gpunb.vectorize does not support signature= (generalized "
                                      "ufuncs with core dimensions), as cupy.vectorize does not: "
                                      "each call of pyfunc sees one element of each input")
        self.pyfunc = pyfunc
        self.cache = cache          # accepted, as NumPy's; gpunb caches traces and kernels anyway
        self.signature = signature
        if pyfunc is not np._NoValue and hasattr(pyfunc, "__name__"):
            self.__name__ = pyfunc.__name__
        self._doc = doc
        self.__doc__ = doc if doc is not None else getattr(pyfunc, "__doc__", None)
        if isinstance(otypes, str):
            for char in otypes:
                if char not in np.typecodes["All"]:
                    raise ValueError(f"Invalid otype specified: {char}")
            out = [np.dtype(c) for c in otypes]
        elif otypes is not None and np.iterable(otypes):
            out = [np.dtype(x) for x in otypes]
            otypes = [d.char if d.char in "SU" else d for d in out]    # NumPy's stored form
        elif otypes is not None:
            raise ValueError("Invalid otype specification")
        self.otypes = otypes
        self._out_dtypes = None if otypes is None else tuple(dtypes.check(d) for d in out)
        self.excluded = set() if excluded is None else set(excluded)
        self._kernels: dict = {}

    def __repr__(self) -> str:
        return f"<gpunb.vectorize of {getattr(self.pyfunc, '__qualname__', self.pyfunc)!r}>"

    # -- calling
    def __call__(self, *args, **kwargs):
        if self.pyfunc is np._NoValue:      # the decorator's second stage
            (pyfunc,) = args
            self.pyfunc, self.__name__ = pyfunc, pyfunc.__name__
            self.__doc__ = self._doc if self._doc is not None else pyfunc.__doc__
            return self
        fused, vargs = self._prepare(args, kwargs)
        if fused is None:       # nothing to vectorize over: NumPy calls the function once
            return self.pyfunc(*args, **kwargs)
        return fused(*vargs)

    def inspect(self, *args, arch=None, **kwargs):
        """The fused kernel these arguments would launch (``gpunb.fuse``'s ``inspect``):
        NumPy arrays (or anything with ``shape`` and ``dtype``) stand in for GPU arrays."""
        fused, vargs = self._prepare(args, kwargs, stand_ins=True)
        if fused is None:
            raise ValueError("no argument to vectorize over: the function is called once, "
                             "no kernel is built")
        return fused.inspect(*vargs, arch=arch)

    def _prepare(self, args, kwargs, stand_ins=False):
        """(the Fused function for these excluded values, its arguments broadcast to one
        shape), or (None, None) when every argument is excluded."""
        excluded = self.excluded
        inds = [i for i in range(len(args)) if i not in excluded]
        names = [n for n in kwargs if n not in excluded]
        vargs = [args[i] for i in inds] + [kwargs[n] for n in names]
        if not vargs:
            return None, None
        fixed_args = {i: a for i, a in enumerate(args) if i in excluded}
        fixed_kw = {n: v for n, v in kwargs.items() if n in excluded}
        fixed_key, kw_key = _constants_key(fixed_args), _constants_key(fixed_kw)
        cacheable = fixed_key is not None and kw_key is not None
        key = (len(args), tuple(names), fixed_key, kw_key)
        fused = self._kernels.get(key) if cacheable else None
        if fused is None:
            fused = Fused(self._traced(len(args), inds, names, fixed_args, fixed_kw))
            if cacheable:
                if len(self._kernels) >= MAX_KERNELS:
                    self._kernels.clear()
                self._kernels[key] = fused
        name = self._name()
        vals = [_operand(v, i, name, stand_ins) for i, v in enumerate(vargs)]
        arrays = [v for v in vals if not isinstance(v, np.generic)]
        if self._out_dtypes is None and any(math.prod(a.shape) == 0 for a in arrays):
            raise ValueError(_EMPTY)
        shape = layout.broadcast_shapes(*[a.shape for a in arrays]) if arrays else ()
        # every array at the common shape (views): each output then has NumPy's shape, also
        # one that reads only some of the inputs
        vals = [v if isinstance(v, np.generic) or tuple(v.shape) == shape else
                (np.broadcast_to(v, shape) if isinstance(v, np.ndarray) else v._broadcast_to(shape))
                for v in vals]
        return fused, vals

    def _name(self) -> str:
        return getattr(self.pyfunc, "__name__", None) or type(self.pyfunc).__name__

    # -- the function fuse traces
    def _traced(self, nargs, inds, names, fixed_args, fixed_kw):
        """The function of the vectorized arguments (traced values) that calls ``pyfunc``
        with them in their places and the excluded values in theirs, and returns its results
        checked, made one shape and cast to ``otypes``."""
        pyfunc, out_dtypes, name = self.pyfunc, self._out_dtypes, self._name()

        def traced(*proxies):
            # one element each: no shape, no views, no reductions, as the scalars NumPy passes
            elems = [Proxy(p._trace, p._node, 0, weak=p._weak) for p in proxies]
            call_args = [fixed_args.get(i) for i in range(nargs)]
            for i, e in zip(inds, elems):
                call_args[i] = e
            kw = dict(fixed_kw)
            kw.update(zip(names, elems[len(inds):]))
            try:
                result = _with_gpu_math(pyfunc)(*call_args, **kw)
            except (TypeError, FusionError) as e:
                if not str(e).startswith("@fuse cannot trace"):
                    raise
                raise type(e)(_explain(name, str(e))) from e
            return _outputs(name, result, proxies, out_dtypes)

        traced.__name__ = traced.__qualname__ = name if name.isidentifier() else "vectorized"
        return traced


# -- arguments --------------------------------------------------------------------------------

def _operand(v, i: int, name: str, stand_in: bool):
    """An argument as the fused function takes it: a GPU array, or a NumPy scalar (typed as
    ``numpy.asarray`` types a Python scalar: NumPy's vectorize sees arrays)."""
    if isinstance(v, ndarray):
        return v
    if isinstance(v, (bool, int, float, complex, np.generic)) or \
            (isinstance(v, np.ndarray) and v.ndim == 0):
        s = np.asarray(v)
        dtypes.check(s.dtype)
        return s[()]
    if stand_in and hasattr(v, "shape") and hasattr(v, "dtype"):
        return v
    g = as_gpu(v, f"input {i} of vectorize({name})")
    if g is None:
        raise TypeError(f"input {i} of vectorize({name}) must be a GPU array or a scalar, not "
                        f"{type(v).__name__} (move data to the GPU with gpunb.asarray())")
    return g


def _frozen(v):
    """``v`` as a hashable key with its types (1, 1.0 and True trace differently); lists and
    tuples item by item (NumPy's example passes a list of coefficients)."""
    if type(v) in (list, tuple):
        return (type(v), tuple(_frozen(x) for x in v))
    return (type(v), v)


def _constants_key(values: dict):
    """A hashable key of excluded values, or None for an unhashable one (then the function
    is traced again for each call)."""
    key = tuple((k, _frozen(v)) for k, v in sorted(values.items(), key=lambda kv: str(kv[0])))
    try:
        hash(key)
    except TypeError:
        return None
    return key


# -- results ----------------------------------------------------------------------------------

def _outputs(name, result, proxies, out_dtypes):
    """The traced results: one or a tuple, each a traced value that reads an array argument
    when there is one (so it has the broadcast shape), cast to ``otypes``."""
    is_tuple = isinstance(result, tuple)
    results = result if is_tuple else (result,)
    if is_tuple and len(results) < 2:
        raise ValueError(f"gpunb.vectorize: {name} returned a tuple of {len(results)} values: "
                         "return a value, or a tuple of two or more (NumPy's vectorize raises "
                         "for these too)")
    if out_dtypes is not None and len(out_dtypes) != len(results):
        raise ValueError(f"gpunb.vectorize: {name} returned {len(results)} output"
                         f"{'s' if len(results) != 1 else ''} but otypes names {len(out_dtypes)}")
    trace = proxies[0]._trace
    array = next((p for p in proxies if p._source is not None), None)
    anchor = Proxy(trace, (array if array is not None else proxies[0])._node, 0)
    outs = []
    for k, r in enumerate(results):
        if isinstance(r, Proxy):
            if r._reduction is not None:
                raise FusionError(f"gpunb.vectorize: {name} reduces a value ({r._reduction['func']}): "
                                  "each call of the function sees one element of each input")
        else:       # a constant: NumPy's dtype for it (numpy.asarray's), as a strong scalar
            c = np.asarray(r)
            if c.ndim != 0 or c.dtype.kind not in "biufc":
                raise TypeError(f"gpunb.vectorize: {name} returned {type(r).__name__} (output {k}): "
                                "a vectorized function returns numbers")
            r = c[()]
        if not isinstance(r, Proxy) or (array is not None and not _reads_an_array(r, trace)):
            # where(a == a, r, r) is r, read beside an element of the (broadcast) input
            r = apply_ufunc("where", (apply_ufunc("equal", (anchor, anchor)), r, r))
        if out_dtypes is not None:
            dt = out_dtypes[k]
            if r.dtype.kind == "c" and dt.kind in "iuf":
                raise TypeError(f"gpunb.vectorize: output {k} of {name} is complex and otypes "
                                f"names {dt}: NumPy's vectorize raises TypeError converting "
                                "complex values to real ones")
            r = r.astype(dt)
        outs.append(r)
    return tuple(outs) if is_tuple else outs[0]


def _reads_an_array(p: Proxy, trace) -> bool:
    return any(trace.operands[i][1] is not None for i in ir.args_of(p._node, set()))


def _explain(name: str, message: str) -> str:
    rest = message[len("@fuse "):]
    text = (f"gpunb.vectorize({name}) compiles the function into one GPU kernel by tracing it "
            f"with symbolic element values (as gpunb.fuse does) and {rest}")
    if "control flow" in message:
        text += (". Write `if c: a else: b` and `a if c else b` as gpunb.where(c, a, b), "
                 "and/or/not as gpunb.logical_and/logical_or/logical_not, min/max of values as "
                 "gpunb.minimum/maximum")
    elif "int()" in message or "float()" in message or "complex()" in message:
        text += (". Python's math functions work when the function reads them from its module "
                 "(`import math` or `from math import sin` at module level); elsewhere use "
                 "gpunb's ufuncs (gpunb.sin...) and x.astype(dtype) for conversions")
    return text + " (it never calls the function per element on the host)"


# -- Python's math module as ufuncs -----------------------------------------------------------

# math function -> (ufunc, result type): computed in float64 (NumPy's vectorize computes on
# Python floats), the result a weak Python float (or int, bool) for type promotion
_MATH = {name: (name, float) for name in (
    "sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1", "log10", "log2",
    "log1p", "sqrt", "fabs", "copysign", "hypot", "fmod", "degrees", "radians", "cbrt", "exp2")}
_MATH.update({"asin": ("arcsin", float), "acos": ("arccos", float), "atan": ("arctan", float),
              "atan2": ("arctan2", float), "asinh": ("arcsinh", float),
              "acosh": ("arccosh", float), "atanh": ("arctanh", float), "pow": ("power", float),
              "floor": ("floor", int), "ceil": ("ceil", int), "trunc": ("trunc", int),
              "isnan": ("isnan", bool), "isinf": ("isinf", bool),
              "isfinite": ("isfinite", bool), "log": ("log", float)})


def _math_function(name: str):
    ufunc, kind = _MATH[name]
    real = getattr(math, name)

    @functools.wraps(real)
    def shim(*args):
        if not any(isinstance(a, Proxy) for a in args):
            return real(*args)
        xs = []
        for a in args:
            if isinstance(a, Proxy):
                if a.dtype.kind == "c":
                    raise TypeError(f"math.{name}() of a complex value: Python's math takes real "
                                    f"numbers only (use gpunb.{ufunc} for complex values)")
                xs.append(a.astype(np.float64))
            else:
                xs.append(float(a))
        if name == "log" and len(xs) == 2:       # math.log(x, base): Python's log(x) / log(base)
            logs = [apply_ufunc("log", (x,)) if isinstance(x, Proxy) else math.log(x) for x in xs]
            r = apply_ufunc("true_divide", tuple(logs))
        else:
            r = apply_ufunc(ufunc, tuple(xs))
        if kind is bool:
            return r
        if kind is int:
            return Proxy(r._trace, ir.cast(r._node, np.int64), 0, weak=int)
        return Proxy(r._trace, r._node, 0, weak=float)

    return shim


_MATH_SHIMS = {name: _math_function(name) for name in _MATH if hasattr(math, name)}
_MATH_MODULE = types.SimpleNamespace(**{n: getattr(math, n) for n in dir(math) if not n.startswith("_")})
_MATH_MODULE.__dict__.update(_MATH_SHIMS)


def _code_names(code, acc: set) -> set:
    acc.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, acc)
    return acc


def _with_gpu_math(func):
    """``func`` with the ``math`` module and the math functions it reads from its globals
    replaced by their traced forms (itself when it reads none, or is no Python function)."""
    if isinstance(func, types.MethodType):
        inner = _with_gpu_math(func.__func__)
        return func if inner is func.__func__ else types.MethodType(inner, func.__self__)
    code = getattr(func, "__code__", None)
    if not isinstance(func, types.FunctionType) or code is None:
        return func
    g = func.__globals__
    subst = {}
    for n in _code_names(code, set()):
        v = g.get(n)
        if v is math:
            subst[n] = _MATH_MODULE
        elif callable(v) and getattr(v, "__name__", None) in _MATH_SHIMS and \
                getattr(math, v.__name__, None) is v:
            subst[n] = _MATH_SHIMS[v.__name__]
    if not subst:
        return func
    new = types.FunctionType(code, {**g, **subst}, func.__name__, func.__defaults__, func.__closure__)
    new.__kwdefaults__ = func.__kwdefaults__
    return new
