"""``@gpunb.fuse``: the fused function, its trace cache, launching and ``inspect``.

:mod:`.tracer` traces the Python function into kernel IR; this module keys the traces (per
argument kind, dtype and ndim: new shapes never retrace), builds the elementwise or reduction
kernel of a trace for the launch's layout class and runs it through the same machinery as
unfused calls (the elementwise and reduction families' ``run`` and ``plan``), so kernels are
cached in memory and on disk like any other, and ``inspect`` plans exactly as a launch does.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import math
import threading

import numpy as np

from .. import args as _args
from .. import dtypes, layout
from ..kernels import ir
from ..kernels.elementwise import codegen as ecg
from ..kernels.elementwise.plan import classify
from ..kernels.elementwise.run import PIECES, launch
from ..kernels.execute import compile_launches, compiled_after_replays, scalar_object, set_scalar
from ..kernels.reduction import codegen as rcg
from ..kernels.reduction import run as reduce_run
from ..kernels.reduction.plan import geometry
from ..ndarray import ndarray
from ..runtime import driver, fastcall, scratch
from .tracer import DEFAULT, WEAK, Proxy, Trace, cannot, is_weak

# -- the traced function ---------------------------------------------------------------------

def _arg_key(value, i: int):
    """The cache key part of argument ``i``."""
    if isinstance(value, (bool, np.bool_)):
        return ("scalar", np.dtype(bool))
    if isinstance(value, np.generic):      # before WEAK: np.float64 is a float subclass
        return ("scalar", dtypes.check(value.dtype))
    if isinstance(value, WEAK):     # 'weak', not 'scalar': np.dtype('float64') == float
        return ("weak", type(value))
    if isinstance(value, np.ndarray) and value.ndim == 0 and not _is_gpu(value):
        return ("scalar", dtypes.check(value.dtype))
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return ("array", dtypes.check(value.dtype), len(value.shape))
    raise TypeError(f"argument {i} of a fused function must be an array or a scalar, not "
                    f"{type(value).__name__}")


def _is_gpu(value) -> bool:
    return isinstance(value, ndarray)


_PLAIN_SCALARS = (bool, int, float, complex)
MAX_PLANS = 256            # launch plans kept per fused function (argument layouts seen)


def _signature(args):
    """What decides a call's launches apart from pointers and scalar values: per argument
    its type, and for a gpunb array dtype, shape, byte strides and alignment (the address
    modulo 16, which picks vector entry points). None when an argument is of another kind
    (a CuPy array, a 0-d NumPy array): such calls take the general path every time."""
    ctx = driver.active
    if ctx is None:         # no device used yet: the first call picks it (and plans there)
        return None
    sig = [ctx]
    for a in args:
        t = a.__class__
        if t is ndarray:
            sig.append((a._dtype, a._shape, a._strides, a._data.ptr & 15))
        elif t in _PLAIN_SCALARS or isinstance(a, np.generic):
            sig.append(t)
        else:
            return None
    return tuple(sig)


class _Plan:
    """A fused call with its launches decided, for one :func:`_signature`: where each kernel
    operand comes from, the outputs to allocate and the launches, prepared
    (:class:`fastcall.Prepared`): running it converts scalars, allocates, stores pointers and
    values into the launches' parameter objects and launches. Nothing is traced, broadcast or
    chosen again, and no parameter object is built."""

    __slots__ = ("int_checks", "outputs", "temp_bytes", "tuple_result", "pointers", "scalars",
                 "outs", "temp", "prepared", "lock", "fast")

    def __init__(self, sources, int_checks, outputs, steps, temp_bytes, tuple_result):
        self._objects(sources, outputs, steps, temp_bytes)
        self.int_checks = int_checks
        self.outputs = outputs          # ((shape, dtype), ...)
        self.temp_bytes = temp_bytes
        self.tuple_result = tuple_result
        self.lock = threading.Lock()    # the objects are this plan's: one call at a time fills them
        # the plan's source once it was replayed (exec: ~0.2 ms); the main thread's objects,
        # filled without the lock, are its own
        self.fast = compiled_after_replays(
            self.run, lambda: _compile(self, _Plan._with_objects(sources, outputs, steps, temp_bytes)),
            lambda fast: setattr(self, "fast", fast))

    @staticmethod
    def _with_objects(sources, outputs, steps, temp_bytes) -> "_Plan":
        own = _Plan.__new__(_Plan)
        own._objects(sources, outputs, steps, temp_bytes)
        return own

    def _objects(self, sources, outputs, steps, temp_bytes) -> None:
        # sources: per kernel operand (arg index, byte offset, None) or (arg index, 0, dtype)
        n_ops, n_out = len(sources), len(outputs)
        # one object per call parameter (operands, outputs, temporary), shared by the steps
        objects = [ctypes.c_void_p() if dt is None else scalar_object(dt) for _, _, dt in sources]
        objects += [ctypes.c_void_p() for _ in range(n_out + (1 if temp_bytes else 0))]
        self.prepared = tuple(fastcall.Prepared(st.function, st.grid, st.block,
                                                [objects[p] if p.__class__ is int else p for p in st.params])
                              for st in steps)
        self.pointers = tuple((objects[i], arg, off) for i, (arg, off, dt) in enumerate(sources) if dt is None)
        self.scalars = tuple((objects[i], arg, dt) for i, (arg, _, dt) in enumerate(sources) if dt is not None)
        self.outs = tuple(objects[n_ops:n_ops + n_out])
        self.temp = objects[n_ops + n_out] if temp_bytes else None

    def run(self, args):
        for arg, dt in self.int_checks:
            dt.type(args[arg])          # NumPy's OverflowError for an int the loop cannot hold
        values = [dt.type(args[arg]) for _, arg, dt in self.scalars]
        results = [ndarray._empty(shape, dt) for shape, dt in self.outputs]
        stream = driver.stream_handle()
        temp = scratch.get(self.temp_bytes, stream) if self.temp_bytes else None
        with self.lock:
            for obj, arg, offset in self.pointers:
                obj.value = args[arg]._data.ptr + offset
            for (obj, _, dt), v in zip(self.scalars, values):
                set_scalar(obj, v, dt)
            for obj, r in zip(self.outs, results):
                obj.value = r._data.ptr
            if temp is not None:
                self.temp.value = temp.ptr
            for p in self.prepared:
                p.launch(stream)
        del temp                        # a stream-ordered free, after the launches
        return tuple(results) if self.tuple_result else results[0]


def _compile(plan: _Plan, own: _Plan):
    """``plan.run`` as Python source made once (:func:`compile_launches`): the main thread
    fills ``own``'s objects and launches without a lock; other threads take ``plan.run``."""
    ns = {"PLAN": plan, "empty": ndarray._empty, "scratch": scratch.get,
          "set_scalar": set_scalar}
    body = []
    for k, (arg, dt) in enumerate(plan.int_checks):
        ns[f"IC{k}"] = dt.type
        body.append(f"IC{k}(args[{arg}])")      # NumPy's OverflowError for an int the loop cannot hold
    for j, (obj, arg, dt) in enumerate(own.scalars):
        ns[f"SC{j}"], ns[f"SD{j}"], ns[f"S{j}"] = dt.type, dt, obj
        body.append(f"v{j} = SC{j}(args[{arg}])")
    results = []
    for k, (shape, dt) in enumerate(plan.outputs):
        ns[f"SHAPE{k}"], ns[f"DT{k}"] = shape, dt
        body.append(f"r{k} = empty(SHAPE{k}, DT{k})")
        results.append(f"r{k}")
    if plan.temp_bytes:
        body.append(f"temp = scratch({plan.temp_bytes})")       # a split reduction's (runtime.scratch)
    for i, (obj, arg, offset) in enumerate(own.pointers):
        ns[f"P{i}"] = obj
        body.append(f"P{i}.value = args[{arg}]._data.ptr" + (f" + {offset}" if offset else ""))
    body += [f"set_scalar(S{j}, v{j}, SD{j})" for j in range(len(own.scalars))]
    for k, obj in enumerate(own.outs):
        ns[f"R{k}"] = obj
        body.append(f"R{k}.value = r{k}._data.ptr")
    if own.temp is not None:
        ns["TEMP"] = own.temp
        body.append("TEMP.value = temp.ptr")
    ret = f"({', '.join(results)},)" if plan.tuple_result else results[0]
    return compile_launches("args", ["return PLAN.run(args)"], body,
                            tuple((p, 0) for p in own.prepared), ret, ns)


class _Traced:
    """The result of tracing for one key: operands, outputs or reduction, and the IR."""

    def __init__(self, name, operands, operand_kinds, outputs, reduction, tuple_result):
        self.name = name
        self.operands = operands              # (arg index, view steps | None)
        self.operand_kinds = operand_kinds    # 'array' | 'scalar' per operand
        self.operand_dtypes = None
        self.outputs = outputs                # ((dtype, node), ...)
        self.reduction = reduction            # dict or None
        self.tuple_result = tuple_result


def _apply_steps(a, steps, numpy_like: bool):
    for kind, arg in steps:
        if kind == "getitem":
            a = a[arg]
        elif kind == "reshape":
            a = a.reshape(arg)
        elif kind == "expand_dims":
            if numpy_like:
                a = np.expand_dims(a, arg)
            else:
                a = a._derive(*layout.expand_dims(a.shape, a.strides, arg))
        elif kind == "squeeze":
            a = a.squeeze(arg)
        else:       # pragma: no cover - steps are made above
            raise AssertionError(kind)
    return a


def _stand_in(value):
    """A NumPy array with ``value``'s shape, dtype and (for NumPy arrays) strides, for
    inspection: nothing is read from it."""
    if isinstance(value, np.ndarray):
        return value
    dt = dtypes.check(value.dtype)
    shape = tuple(int(s) for s in value.shape)
    strides = getattr(value, "strides", None)
    if strides is None:
        strides = layout.c_strides(shape, dt.itemsize)
    return np.lib.stride_tricks.as_strided(np.zeros(1, dt), shape, tuple(strides), writeable=False)


class Inspection:
    """What a fused function generates for some inputs: ``name``, ``source`` (CUDA C++),
    ``kind`` ('elementwise' or 'reduction'), ``kernel`` (the IR), ``entry_points``, ``arch``;
    ``compile()`` compiles the source with NVRTC for ``arch`` and returns the cubin."""

    def __init__(self, kernel, source, kind, entry_points, arch, layout_desc):
        self.kernel = kernel
        self.name = kernel.name
        self.source = source
        self.kind = kind
        self.entry_points = entry_points
        self.arch = arch
        self.layout = layout_desc
        self._cubin = None

    def compile(self, arch=None):
        from ..build.compiler import compile as nvrtc_compile

        arch = arch or self.arch
        if arch is None:
            raise ValueError("name the target architecture: inspect(..., arch='sm_90') or compile(arch=...)")
        self._cubin = nvrtc_compile(self.source, (), arch)
        return self._cubin

    @property
    def cubin(self) -> bytes:
        return self._cubin if self._cubin is not None else self.compile()

    def __repr__(self) -> str:
        return f"<gpunb.fuse inspection {self.kind} kernel {self.name!r} ({self.layout})>"

    def _repr_markdown_(self) -> str:
        return f"**{self.name}** ({self.kind}, {self.layout})\n\n```cpp\n{self.source}\n```"


class Fused:
    """A fused function: call it with arrays and scalars; ``inspect`` shows its kernel."""

    def __init__(self, func, kernel_name=None):
        if kernel_name is not None and not str(kernel_name).isidentifier():
            raise ValueError(f"kernel_name {kernel_name!r} is not a C identifier")
        self.func = func
        self.kernel_name = kernel_name
        self.traces = 0                  # how many times the function was traced
        self._traced: dict = {}
        self._plans: dict = {}           # _signature(args) -> _Plan
        functools.update_wrapper(self, func)

    def __repr__(self) -> str:
        return f"<gpunb.fuse of {getattr(self.func, '__qualname__', self.func)!r}>"

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __reduce__(self):
        # pickled as its Python function (Dask ships it to worker processes): the traces and
        # plans hold this process's CUDA objects, rebuilt on first call there
        return Fused, (self.func, self.kernel_name)

    # -- tracing
    def _trace(self, key) -> _Traced:
        t = self._traced.get(key)
        if t is not None:
            return t
        trace = Trace(key)
        proxies = []
        for i, k in enumerate(key):
            if k[0] == "array":
                _, dt, nd = k
                idx = trace.operand(i, (), dt)
                proxies.append(Proxy(trace, ir.Arg(dt, idx), nd, source=(i, ())))
            else:
                t_ = k[1]
                dt = DEFAULT[t_] if is_weak(t_) else t_
                idx = trace.operand(i, None, dt)
                proxies.append(Proxy(trace, ir.Arg(dt, idx), 0, weak=t_ if is_weak(t_) else None))
        result = self.func(*proxies)
        self.traces += 1
        tuple_result = isinstance(result, tuple)
        results = result if tuple_result else (result,)
        if not results:
            raise cannot("a function returning an empty tuple")
        reduction = None
        for r in results:
            if not isinstance(r, Proxy) or r._trace is not trace:
                raise cannot(f"a function returning {type(r).__name__}",
                             "a fused function must return traced values (results of operations "
                             "on its arguments) or a tuple of them")
            if r._reduction is not None:
                if len(results) > 1:
                    raise cannot("a reduction among several outputs",
                                 "a fused reduction must be the function's only output")
                reduction = r._reduction
        if len({r.ndim for r in results}) > 1:
            raise cannot("a tuple of outputs of different ndim",
                         "the outputs of one fused kernel share one broadcast shape")
        # drop operands the outputs never read, renumbering Args
        outputs_nodes = [reduction["value"]] if reduction else [r._node for r in results]
        used = set()
        for n in outputs_nodes:
            ir.args_of(n, used)
        order = sorted(used)
        remap = {old: new for new, old in enumerate(order)}
        nodes = [ir.renumber(n, remap) for n in outputs_nodes]
        operands = tuple(trace.operands[i] for i in order)
        kinds = tuple("scalar" if trace.operands[i][1] is None else "array" for i in order)
        dts = tuple(trace.operand_dtypes[i] for i in order)
        if reduction:
            reduction = dict(reduction, value=nodes[0])
            outputs = ((reduction["out"], nodes[0]),)
        else:
            outputs = tuple((n.dtype, n) for n in nodes)
        digest = hashlib.sha1(repr((dts, kinds, outputs, reduction)).encode()).hexdigest()[:10]
        fname = getattr(self.func, "__name__", "f")
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in fname) or "f"
        name = self.kernel_name or f"fused_{base}_{digest}"
        t = _Traced(name, operands, kinds, outputs, reduction, tuple_result)
        t.int_checks = tuple(sorted(trace.int_checks, key=lambda c: (c[0], c[1].str)))
        t.operand_dtypes = dts
        t.digest = digest
        self._traced[key] = t
        return t

    # -- kernels
    def _elementwise_kernel(self, t: _Traced, kinds, lay, nd) -> ir.ElementwiseKernel:
        opnds = tuple(ir.Operand(d, k) for d, k in zip(t.operand_dtypes, kinds))
        return ir.ElementwiseKernel(t.name, opnds, t.outputs, lay, nd)

    def _reduction_kernel(self, t: _Traced, kinds, no, nr) -> ir.ReductionKernel:
        r = t.reduction
        opnds = tuple(ir.Operand(d, k) for d, k in zip(t.operand_dtypes, kinds))
        return ir.ReductionKernel(t.name, opnds, r["value"], r["reducer"], r["out"], r["finish"], no, nr)

    # -- calling
    def __call__(self, *args):
        sig = _signature(args)
        if sig is not None:
            plan = self._plans.get(sig)
            if plan is not None:
                return plan.fast(args)
        key = tuple(_arg_key(a, i) for i, a in enumerate(args))
        t = self._trace(key)
        for arg, dt in t.int_checks:
            dt.type(args[arg])      # NumPy's OverflowError for an int the loop cannot hold
        values, is_array = [], []
        for (arg, steps), kind, dt in zip(t.operands, t.operand_kinds, t.operand_dtypes):
            a = args[arg]
            if kind == "scalar":
                if isinstance(a, np.ndarray):
                    a = a[()]
                values.append(dt.type(a))
                is_array.append(False)
            else:
                g = _args.as_gpu(a, f"argument {arg} of {self.func.__name__}")
                if g is None:       # a 0-d NumPy array or NumPy scalar keyed as array? no: keyed scalar
                    raise TypeError(f"argument {arg} must be a GPU array")
                values.append(_apply_steps(g, steps, numpy_like=False))
                is_array.append(True)
        arrays = [v for v, isa in zip(values, is_array) if isa]
        shape = layout.broadcast_shapes(*[a.shape for a in arrays]) if arrays else ()
        if t.reduction is None:
            if t.tuple_result and len(t.outputs) > 1:
                _check_output_shapes(t, values, is_array, shape)
            results = [ndarray._empty(shape, dt) for dt, _ in t.outputs]
            _, step = launch(("fuse", t.name, t.digest),
                             lambda kinds, lay, nd: self._elementwise_kernel(t, kinds, lay, nd),
                             values, is_array, results, shape)
            if step is PIECES:      # run as several launches: planned again each time, not kept
                steps, temp_bytes = (), -1
            else:
                steps, temp_bytes = ((step,) if step is not None else ()), 0
        else:
            results, steps, temp_bytes = self._run_reduction(t, values, is_array, shape)
        if sig is not None and temp_bytes >= 0:
            self._remember(sig, t, args, values, is_array, results, steps, temp_bytes)
        return tuple(results) if t.tuple_result else results[0]

    def _remember(self, sig, t, args, values, is_array, results, steps, temp_bytes) -> None:
        """Keep the launches of this call for later calls with the same signature, unless an
        operand is not a view of its argument (a reshape that copied)."""
        sources = []
        for (arg, _), v, isa, dt in zip(t.operands, values, is_array, t.operand_dtypes):
            if not isa:
                sources.append((arg, 0, dt))
                continue
            a = args[arg]
            if v._data.owner is not a._data.owner:
                return
            sources.append((arg, v._data.ptr - a._data.ptr, None))
        if len(self._plans) >= MAX_PLANS:
            self._plans.clear()
        self._plans[sig] = _Plan(tuple(sources), t.int_checks, tuple((r.shape, r.dtype) for r in results),
                                 tuple(steps), temp_bytes, t.tuple_result)

    def _run_reduction(self, t, values, is_array, shape):
        """Launch a fused reduction: ([result], launches, temporary bytes); the bytes are -1
        when the call must not be repeated from a plan (an empty reduction warns)."""
        r = t.reduction
        axes = r["axes"]
        if not any(is_array):
            raise cannot("a reduction of scalars only", "reduce an array argument")
        if len(shape) != r["ndim_in"]:
            raise AssertionError("traced ndim differs from the launch's")
        K = math.prod(shape[d] for d in axes)
        reduce_run.check_empty(r["func"], K)
        result = ndarray._empty(reduce_run.out_shape(shape, axes, r["keepdims"]), r["out"])
        full = [(v._broadcast_to(shape) if v.shape != shape else v) if isa else v
                for v, isa in zip(values, is_array)]
        kinds = _reduction_kinds([v.strides if isa else None for v, isa in zip(full, is_array)], axes)
        steps, temp_bytes = reduce_run.run(("fuse", t.name, t.digest, kinds),
                                           lambda no, nr: self._reduction_kernel(t, kinds, no, nr),
                                           list(zip(kinds, full)), shape, axes, result, float(K), False)
        return [result], steps, (temp_bytes if K else -1)

    # -- inspection
    def inspect(self, *args, arch=None):
        """The kernel these arguments would launch (IR, name, CUDA C++ source), built without
        a GPU: NumPy arrays or anything with ``shape`` and ``dtype`` stand in for GPU arrays.
        The layout class is chosen from the stand-ins' strides as a launch would (size-1
        arrays are 'uniform'; broadcast or non-contiguous inputs give the strided layout)."""
        key = tuple(_arg_key(a, i) for i, a in enumerate(args))
        t = self._trace(key)
        views = []
        for (arg, steps), kind in zip(t.operands, t.operand_kinds):
            views.append(None if kind == "scalar" else _apply_steps(_stand_in(args[arg]), steps, True))
        arrays = [v for v in views if v is not None]
        shape = tuple(np.broadcast_shapes(*[a.shape for a in arrays])) if arrays else ()
        if t.reduction is None:
            outputs = [(layout.c_strides(shape, dt.itemsize), dt.itemsize) for dt, _ in t.outputs]
            kinds, lay, nd = classify(shape, [None if v is None else (v.shape, v.strides, v.itemsize)
                                              for v in views], outputs)
            k = self._elementwise_kernel(t, kinds, lay, nd)
            return Inspection(k, ecg.render(k), "elementwise", ecg.entry_points(k), arch,
                              lay if lay == "contiguous" else f"strided, {nd} dims")
        axes = t.reduction["axes"]
        full = [None if v is None else np.broadcast_to(v, shape).strides for v in views]
        kinds = _reduction_kinds(full, axes)
        g = geometry(shape, axes, kinds, [st for st in full if st is not None], False)
        k = self._reduction_kernel(t, kinds, len(g.oshape), len(g.rshape))
        return Inspection(k, rcg.render(k), "reduction", rcg.entry_points(k), arch,
                          f"{len(g.oshape)} outer dims, {len(g.rshape)} reduced dims")


def _reduction_kinds(strides, axes) -> tuple[str, ...]:
    """Operand kinds of a fused reduction from the operands' strides (broadcast to the input
    shape; None for a scalar): an array constant along every reduced axis (``m[:, None]`` in
    ``(x - m[:, None]).sum(axis=1)``) is 'outer', read once per output, so the one array left
    can take the vectorized entry. At least one operand stays 'array'."""
    kinds = ["scalar" if st is None else "outer" if all(st[d] == 0 for d in axes) else "array"
             for st in strides]
    if "array" not in kinds:
        kinds[kinds.index("outer")] = "array"
    return tuple(kinds)


def _check_output_shapes(t, values, is_array, shape) -> None:
    """Every output of one kernel has the launch's shape: an output that reads only arrays of
    a smaller broadcast shape would differ from NumPy's, so say so."""
    for j, (_, node) in enumerate(t.outputs):
        used = ir.args_of(node, set())
        shapes = [values[i].shape for i in used if is_array[i]]
        own = layout.broadcast_shapes(*shapes) if shapes else ()
        if own != shape:
            raise cannot(f"output {j} of shape {own} beside outputs of shape {shape}",
                         "the outputs of one fused kernel share one broadcast shape")


def fuse(*args, kernel_name=None):
    """Fuse a Python function of arrays and scalars into one GPU kernel (``cupy.fuse``'s
    spelling): ``@fuse``, ``@fuse()`` or ``@fuse(kernel_name='k')``.

    The function is traced once per (argument dtypes, ndims, scalar types) with gpunb's ufuncs,
    operators, ``where``, ``clip``, ``astype``, NumPy's ufuncs, views of input arrays
    (``x[:, None]``, ``x.reshape(...)``, ``numpy.expand_dims``) and at most one trailing
    reduction (``.sum()``, ``.prod()``, ``.max()``, ``.min()``, ``.mean()``, ``.any()``,
    ``.all()``, with ``axis`` and ``keepdims``); returning a tuple gives one kernel with several
    outputs. ``f.inspect(*args, arch='sm_90')`` shows the generated kernel without a GPU.
    """
    if len(args) == 1 and callable(args[0]) and kernel_name is None:
        return Fused(args[0])
    if args:
        raise TypeError("fuse() takes a function, or keyword arguments only (kernel_name=...)")
    if kernel_name is not None and not str(kernel_name).isidentifier():
        raise ValueError(f"kernel_name {kernel_name!r} is not a C identifier")
    return lambda f: Fused(f, kernel_name=kernel_name)
