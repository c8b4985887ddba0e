"""``gpunb.ufunc``: an elementwise operation with NumPy's names, type promotion and
broadcasting, computed on the GPU.

A call classifies its operands (GPU arrays, Python scalars, NumPy scalars; :mod:`.args`),
asks NumPy for the loop (NEP 50 promotion; :func:`.kernels.elementwise.ops.loop`), broadcasts,
and launches one generated kernel for (op, dtypes, layout class)
(:mod:`.kernels.elementwise.run`). A call that the general path has seen before with
C-contiguous operands of one shape takes a prepared launch instead (:func:`_fast_call`).
The instances (``gpunb.add``, ``gpunb.sin``...) are made by :mod:`gpunb._math.ufuncs`, one
per line of the op table.
"""

from __future__ import annotations

import threading
from ctypes import c_void_p as _c_void_p

import numpy as np

from . import args as _args
from . import layout
from .fusion import tracer
from .kernels import execute, fastgen
from .kernels.elementwise import ir as eir
from .kernels.elementwise import ops
from .kernels.elementwise import plan as eplan
from .kernels.elementwise.run import PIECES, launch
from .ndarray import ndarray
from .runtime import driver, fastcall

_WEAK_FAST = (int, float)
# the smallest call that prepares the contiguous fast path: a 1-element (or 0-d) call plans a
# kernel reading its operands as 'uniform' (one value for every element), which must not serve
# longer arrays, so it prepares the layout path. An entry prepared from a longer call reads
# arrays element by element and serves 1-element and 0-d calls too (the layout path costs
# about twice its host time).
_FAST_MIN_SIZE = 2


class ufunc:
    """An elementwise function with NumPy's semantics, run on the GPU.

    Call as ``f(*inputs, out=None, dtype=None, casting='same_kind')``.
    """

    def __init__(self, name: str):
        self._op = ops.get(name)
        self.__name__ = self.name = self._op.name
        self.nin, self.nout = self._op.nin, self._op.nout
        self.nargs = self.nin + self.nout
        self.__doc__ = f"gpunb's {self._op.name}: numpy.{self._op.name} on the GPU."
        self._last = None       # the prepared call used last (see _fast_call)

    def __repr__(self) -> str:
        return f"<gpunb.ufunc '{self.name}'>"

    def __call__(self, *args, out=None, dtype=None, casting="same_kind"):
        if self.name == "power" and len(args) == 2:
            ops.check_integer_power(*args)
        if dtype is None and self.nout == 1:
            r = _fast_call(self, args) if out is None and casting == "same_kind" else None
            if r is None:
                r = _layout_call(self, args, out, casting)
            if r is not None:
                return r
        if tracer.has_proxy(args):     # inside @gpunb.fuse: trace, do not run
            return tracer.ufunc_call(self.name, args, out, dtype, casting)
        if len(args) != self.nin:
            raise TypeError(f"{self.name}() takes {self.nin} positional argument"
                            f"{'s' if self.nin > 1 else ''} but {len(args)} were given")
        return _call(self, args, _args.out(out, self.nout, self.name), dtype, casting)

    def at(self, a, indices, b=None) -> None:
        """Performs unbuffered in place operation on ``a`` for elements specified by
        ``indices``, as :meth:`numpy.ufunc.at`: every repeated index applies its value.

        Runs ``add``, ``subtract``, ``multiply``, ``maximum`` and ``minimum`` with atomics (a
        compare-and-swap loop where CUDA has no atomic for the type); the order in which a
        repeated index gets its values is unspecified, so float sums may differ from NumPy's
        in the last bits. ``indices`` follows ``a[indices]`` (host index data is checked on
        the host and uploaded; GPU indices out of bounds raise at the next synchronization).
        ``b`` is a GPU array or a scalar (taken as ``numpy.asarray(b)``, as NumPy does).
        """
        if self.nin == 1:
            raise TypeError(f"gpunb's {self.name}.at is not supported: ufunc.at runs add, subtract, "
                            "multiply, maximum and minimum")
        if b is None:
            raise ValueError("second operand needed for ufunc")
        if self.name not in _AT:
            raise TypeError(f"gpunb's {self.name}.at is not supported: ufunc.at runs add, subtract, "
                            "multiply, maximum and minimum")
        a = _args.array(a, f"{self.name}.at")
        g = _args.as_gpu(b, f"the values of {self.name}.at")
        if g is None:
            from .kernels.indexing.resolve import upload

            _args.scalar_type(b, f"the values of {self.name}.at")
            g = upload(np.asarray(b))
        loop = ops.loop(self._op, (a.dtype, g.dtype), None, "unsafe")
        from .kernels.indexing.resolve import accumulate

        accumulate(a, indices, g, self.name, loop[-1])


_AT = ("add", "subtract", "multiply", "maximum", "minimum")


def _fast_call(f: ufunc, args):
    """The common case without the general machinery: C-contiguous GPU arrays of one shape
    (and Python int/float scalars), 1 to 2**31 - 1 elements (16-byte aligned ones take the
    vector entry point, others the flat one), as the call prepared for its signature
    (:mod:`.kernels.fastgen`): the one this ufunc used last first. None for anything else,
    which then takes the general path (that also prepares this one)."""
    fast = f._last
    if fast is not None:
        r = fast(args)
        if r is not fastgen.MISS:
            return r
    ctx = driver.active
    if ctx is None:
        return None
    key = [f]
    misaligned = 0
    for a in args:
        t = type(a)
        if t is ndarray:
            misaligned |= a._data.ptr & 15
            key.append(a._dtype)
        elif t in _WEAK_FAST:
            key.append(t)
        else:
            return None
    key.append(misaligned != 0)     # x[1:] - x[:-1]: the one-element-per-step entry point
    fast = ctx.prepared.get(tuple(key))
    if fast is None:
        return None
    f._last = fast
    r = fast(args)
    return None if r is fastgen.MISS else r


def _prepare_fast(f: ufunc, arrays, scalars, lk, loop, results) -> None:
    """Record a contiguous launch that :func:`_fast_call` can repeat for these operand types,
    in the device context (so a reset forgets it with the kernels it launches)."""
    key = [f]
    conv, sample = [], []
    for i in range(f.nin):
        if i in arrays:
            key.append(arrays[i]._dtype)
            conv.append(None)
            sample.append(arrays[i])
        else:
            value, t = scalars[i]
            if type(value) not in _WEAK_FAST:
                return
            key.append(type(value))
            conv.append(loop[i])
            sample.append(value)
    if any(o.kind == "uniform" for o in lk.kernel.operands):
        return
    # the entry point plan() chose for this alignment: _vec when every array is aligned to a
    # vector, else _flat (one element per step, any alignment)
    # (16-byte alignment implies a vector's: E * itemsize is at most 16, a power of two)
    misaligned = any(a._data.ptr & 15 for a in arrays.values())
    key.append(misaligned)
    name = f"{lk.kernel.name}_{'flat' if misaligned else 'vec'}"
    fast = fastgen.make(sample, conv, lk.functions[name], vec=1 if misaligned else lk.vec,
                        block=eplan.BLOCK, out_dtypes=(results[0].dtype,), aligned=not misaligned,
                        count="q" if misaligned else "I", cap=eplan.grid_cap(lk, name),
                        min_size=1)
    if fast is not None:
        f._last = driver.context().remember(tuple(key), fast)


def _layout_call(f: ufunc, args, out, casting):
    """The second prepared path: a call the general path has seen before with operands of the
    same dtypes, shapes, strides and pointer alignment (views, broadcasts, ``out=``: the
    ``u[1:-1, 1:-1] += ...`` of a stencil loop) replays its planned launch with new pointers
    and scalar values. None when there is none."""
    ctx = driver.active
    if ctx is None:
        return None
    if out is not None:
        if type(out) is tuple:
            if len(out) != 1:
                return None
            out = out[0]
        if type(out) is not ndarray:
            return None
    key = _layout_key(f, args, out, casting)
    if key is None:
        return None
    prepared = ctx.prepared.get(key)
    if prepared is None:
        return None
    launch_, slots, rdt, shape, conv, lock = prepared
    values = [None if c is None else c.type(a) for a, c in zip(args, conv)]   # NumPy's conversion
    result = out if out is not None else ndarray._empty(shape, rdt)
    stream = driver.stream_handle()
    with lock:
        execute.set_operands(slots, args, conv, values)
        slots[-1].value = result._data.ptr
        launch_.launch(stream)
    return result


_LAYOUT = "layout"      # the marker of _layout_call's keys


def _layout_key(f: ufunc, args, out, casting):
    """The key of a layout-path entry: the casting rule (what it allowed was checked when the
    entry was made), each array operand's (dtype, shape, strides, pointer alignment), each
    Python scalar's type, and ``out``'s layout; None for other operands."""
    key = [f, _LAYOUT, casting]
    for a in args:
        t = type(a)
        if t is ndarray:
            key.append((a._dtype, a._shape, a._strides, a._data.ptr & 15))
        elif t in _WEAK_FAST:
            key.append(t)
        else:
            return None
    if out is not None:
        key.append((out._dtype, out._shape, out._strides, out._data.ptr & 15))
    return tuple(key)


def _prepare_layout(f: ufunc, args, out, lk, step, loop, result, casting) -> None:
    """Record the planned launch for :func:`_layout_call` (keyed as it looks it up)."""
    key = _layout_key(f, args, result if out is not None else None, casting)
    if key is None or step.shared_mem:
        return
    conv = [None if type(a) is ndarray else loop[i] for i, a in enumerate(args)]
    # one ctypes object per operand and one for the result, set in place on each call
    slots = [_c_void_p() if c is None else execute.scalar_object(c) for c in conv] + [_c_void_p()]
    params = [slots[p] if p.__class__ is int else p for p in step.params]
    if len(slots) != len(args) + 1 or any(p.__class__ is int for p in params):
        return
    driver.context().remember(tuple(key), (
        fastcall.Prepared(step.function, step.grid, step.block, params), slots, result.dtype,
        result.shape, tuple(conv), threading.Lock()))


def _call(f: ufunc, args, outs, dtype, casting):
    op = f._op
    arrays, scalars = _args.operands(args, op.name)
    in_types = tuple(arrays[i].dtype if i in arrays else scalars[i][1] for i in range(op.nin))
    loop = ops.loop(op, in_types, dtype, casting)
    ins, louts = loop[:op.nin], loop[op.nin:]
    shapes = {a.shape for a in arrays.values()}
    shape = (next(iter(shapes)) if len(shapes) == 1 else
             layout.broadcast_shapes(*[a.shape for a in arrays.values()]) if arrays else ())
    if outs is not None:
        given = [o for o in outs if o is not None]
        if given:
            oshape = given[0].shape
            try:
                full = layout.broadcast_shapes(shape, oshape)
            except ValueError:
                full = None
            if full != oshape:
                raise ValueError(f"non-broadcastable output operand with shape {oshape} doesn't "
                                 f"match the broadcast shape {full or shape}")
            shape = oshape
        for j, o in enumerate(outs):
            if o is not None and not np.can_cast(louts[j], o.dtype, casting):
                raise TypeError(f"Cannot cast ufunc '{op.name}' output from {louts[j]!r} to "
                                f"{o.dtype!r} with casting rule {casting!r}")
    results = tuple(o if (outs is not None and o is not None) else ndarray._empty(shape, louts[j])
                    for j, o in enumerate(outs if outs is not None else (None,) * op.nout))
    operands = []
    for i in range(op.nin):
        if i in arrays:
            operands.append(arrays[i])
        else:
            value, _ = scalars[i]
            operands.append(ins[i].type(value))   # NumPy's conversion: OverflowError included
    lk, step = launch(("ufunc", op.name, loop, in_types),
                   lambda kinds, lay, nd: eir.ufunc_kernel(
                       op.name, [arrays[i].dtype if i in arrays else ins[i] for i in range(op.nin)],
                       kinds, [r.dtype for r in results], lay, nd, loop=loop),
                   operands, [i in arrays for i in range(op.nin)], results, shape)
    if op.nout == 1 and dtype is None and step is not None and step is not PIECES and arrays:
        # smaller results (the 0-d ones reductions return: sqrt(x.sum())) replay through the
        # layout path: the fast path would miss them on every call
        if (outs is None and casting == "same_kind" and lk.kernel.layout == "contiguous"
                and all(arrays[i].shape == shape for i in arrays)
                and results[0].size >= _FAST_MIN_SIZE):
            _prepare_fast(f, arrays, scalars, lk, loop, results)
        else:
            _prepare_layout(f, args, outs[0] if outs is not None else None, lk, step, loop,
                            results[0], casting)
    return results[0] if op.nout == 1 else results
