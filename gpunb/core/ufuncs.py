"""gpunb's ufuncs: NumPy's names, type promotion and broadcasting, computed on the GPU.

A call classifies its operands (GPU arrays, Python scalars, NumPy scalars), asks NumPy for
the loop (NEP 50 promotion), broadcasts, picks the layout class (contiguous, or strided after
collapsing dimensions), and launches one generated kernel for (op, dtypes, layout class).
"""

from __future__ import annotations

import threading
from ctypes import c_uint32 as _c_uint32
from ctypes import c_void_p as _c_void_p

import numpy as np

from . import dtypes, elementwise, launch, layout, ops, transpose
from . import fusion as _fusion
from .ndarray import ndarray
from .runtime import driver, fastcall

_WEAK = (int, float, complex)


def _as_gpu(value, what: str):
    """An ndarray for a GPU array argument; None for scalars; TypeError for host arrays."""
    if isinstance(value, ndarray):
        return value
    if isinstance(value, np.ndarray) and value.ndim > 0:
        raise TypeError(f"{what} is a NumPy array in host memory; move it to the GPU with "
                        "gpunb.asarray() first (gpunb never copies behind your back)")
    if hasattr(value, "__cuda_array_interface__"):
        from .interop import from_cuda_array_interface

        return from_cuda_array_interface(value)
    return None


def _scalar_dtype(value, what: str):
    """What NumPy's type resolution sees for a scalar: int/float/complex for weak Python
    scalars, a dtype for bool and NumPy scalars."""
    if isinstance(value, bool):
        return np.dtype(bool)
    if isinstance(value, (np.generic, np.ndarray)):   # before int/float: np.float64 is a float
        return dtypes.check(value.dtype)
    if isinstance(value, _WEAK):
        return type(value)
    raise TypeError(f"{what} must be a GPU array or a scalar, not {type(value).__name__}")


def _operands(args, name):
    arrays, scalars = {}, {}
    for i, a in enumerate(args):
        g = _as_gpu(a, f"input {i} of {name}")
        if g is not None:
            dtypes.check(g.dtype)
            arrays[i] = g
        else:
            scalars[i] = (a, _scalar_dtype(a, f"input {i} of {name}"))
    return arrays, scalars


class ufunc:
    """An elementwise function with NumPy's semantics, run on the GPU.

    Call as ``f(*inputs, out=None, dtype=None, casting='same_kind')``.
    """

    def __init__(self, name: str):
        self._fast: dict = {}    # (device, operand types) -> prepared contiguous launch
        self._op = ops.get(name)
        self.__name__ = self.name = self._op.name
        self.nin, self.nout = self._op.nin, self._op.nout
        self.__doc__ = f"gpunb's {self._op.name}: numpy.{self._op.name} on the GPU."

    def __repr__(self) -> str:
        return f"<gpunb.ufunc '{self.name}'>"

    def __call__(self, *args, out=None, dtype=None, casting="same_kind"):
        if self.name == "power" and len(args) == 2:
            _check_integer_power(*args)
        if out is None and dtype is None and self.nout == 1:
            r = _fast_call(self, args)
            if r is not None:
                return r
        if _fusion.has_proxy(args):     # inside @gpunb.fuse: trace, do not run
            return _fusion.ufunc_call(self.name, args, out, dtype, casting)
        if len(args) != self.nin:
            raise TypeError(f"{self.name}() takes {self.nin} positional argument"
                            f"{'s' if self.nin > 1 else ''} but {len(args)} were given")
        outs = _normalize_out(out, self.nout, self.name)
        return _call(self._op, args, outs, dtype, casting)


_WEAK_FAST = (int, float)


def _check_integer_power(base, exponent) -> None:
    """NumPy's error for an integer base to a negative integer scalar power. (An exponent
    array is not inspected: that would wait for the GPU; its negative entries give 0, or
    +-1 for a base of +-1.)"""
    if isinstance(exponent, (int, np.integer)) and not isinstance(exponent, bool) and exponent < 0:
        kind = base.dtype.kind if hasattr(base, "dtype") else ("i" if isinstance(base, int) else "f")
        if kind in "iu":
            raise ValueError("Integers to negative integer powers are not allowed.")


def _fast_call(f: ufunc, args):
    """The common case without the general machinery: C-contiguous GPU arrays of one shape
    (and Python int/float scalars), 16-byte aligned, fewer than 2**31 elements. Returns None
    for anything else, which then takes the general path (that also prepares this one)."""
    shape = None
    key = [driver._state.get("device_id")]
    for a in args:
        t = type(a)
        if t is ndarray:
            if not a._c_contiguous or a._data.ptr & 15 or (shape is not None and a._shape != shape):
                return None
            shape = a._shape
            key.append(a._dtype)
        elif t in _WEAK_FAST:
            key.append(t)
        else:
            return None
    if shape is None:
        return None
    n = 1
    for d in shape:
        n *= d
    if n <= 1 or n > launch._INT32_LIMIT:    # one element is a 'uniform' operand: other kernels
        return None
    prepared = f._fast.get(tuple(key))
    if prepared is None:
        return None
    launch_, objects, vec, cap, rdt, conv, lock = prepared
    result = ndarray._empty(shape, rdt)
    values = [None if c is None else c.type(a) for a, c in zip(args, conv)]   # NumPy's conversion
    blocks = (-(-n // vec) + launch.BLOCK - 1) // launch.BLOCK
    stream = driver.current_stream()[1]
    with lock:
        for obj, a, v, c in zip(objects, args, values, conv):
            if c is None:
                obj.value = a._data.ptr
            else:
                launch.set_scalar(obj, v, c)
        objects[-2].value = result._data.ptr
        objects[-1].value = n
        launch_.launch(stream, blocks if blocks < cap else cap)
    return result


def _prepare_fast(f: ufunc, arrays, scalars, lk, loop, results) -> None:
    """Record a contiguous launch that ``_fast_call`` can repeat for these operand types."""
    key = [driver._state.get("device_id")]
    conv = []
    for i in range(f.nin):
        if i in arrays:
            key.append(arrays[i]._dtype)
            conv.append(None)
        else:
            value, t = scalars[i]
            if type(value) not in _WEAK_FAST:
                return
            key.append(type(value))
            conv.append(loop[i])
    if any(o.kind == "uniform" for o in lk.kernel.operands):
        return
    name = f"{lk.kernel.name}_vec"
    objects = [_c_void_p() if c is None else launch.scalar_object(c) for c in conv]
    objects += [_c_void_p(), _c_uint32()]          # the result, the element count
    f._fast[tuple(key)] = (fastcall.Prepared(driver._function_of(lk.entries[name]), (1,), launch.BLOCK, objects),
                           objects, lk.vec, launch.grid_cap(lk, name), results[0].dtype, tuple(conv),
                           threading.Lock())


def _normalize_out(out, nout, name):
    if out is None:
        return None
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != nout:
        raise ValueError(f"{name}: out must have {nout} element{'s' if nout > 1 else ''}")
    for o in outs:
        if o is not None and not isinstance(o, ndarray):
            raise TypeError(f"{name}: out must be a gpunb.ndarray, not {type(o).__name__}")
    return outs


_loops: dict = {}   # (op, input types, dtype=) -> loop: NumPy's resolution, asked once


def _resolve(op: ops.Op, in_types: tuple, dtype):
    key = (op.name, in_types, dtype)
    loop = _loops.get(key)
    if loop is None:
        if dtype is not None:
            sig = (None,) * op.nin + (dtypes.check(dtype),) * op.nout
            loop = op.ufunc.resolve_dtypes(in_types + (None,) * op.nout, signature=sig)
        else:
            loop = op.resolve(in_types)
        for d in loop:
            dtypes.check(d)
        _loops[key] = loop = tuple(loop)
    return loop


def _call(op: ops.Op, args, outs, dtype, casting):
    arrays, scalars = _operands(args, op.name)
    in_types = tuple(arrays[i].dtype if i in arrays else scalars[i][1] for i in range(op.nin))
    loop = _resolve(op, in_types, dtype)
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
    lk, _ = _run_elementwise(("ufunc", op.name, loop, in_types),
                          lambda kinds, lay, nd: elementwise.ufunc_kernel(
                              op.name, [arrays[i].dtype if i in arrays else ins[i] for i in range(op.nin)],
                              kinds, [r.dtype for r in results], lay, nd, loop=loop),
                          operands, [i in arrays for i in range(op.nin)], results, shape)
    if (op.nout == 1 and outs is None and dtype is None and lk.kernel.layout == "contiguous"
            and arrays and all(arrays[i].shape == shape for i in arrays)):
        _prepare_fast(UFUNCS[op.name], arrays, scalars, lk, loop, results)
    return results[0] if op.nout == 1 else results


def _run_elementwise(key, make, operands, is_array, results, shape):
    """Classify operands, choose the layout class, get the kernel and launch it. Returns the
    kernel and the :class:`launch.Step` launched (None for an empty shape)."""
    kinds, values, strides_list = [], [], []
    for v, arr in zip(operands, is_array):
        if not arr:
            kinds.append("scalar")
            values.append(v)
            continue
        if v.size == 1:
            kinds.append("uniform")
            values.append(v)
            continue
        b = v if v.shape == shape else v._broadcast_to(shape)
        kinds.append("array")
        values.append(b)
        strides_list.append((b.shape, b.strides, b.itemsize))
    strides_list += [(r.shape, r.strides, r.itemsize) for r in results]
    lay, nd = layout.layout_class(shape, strides_list)
    full_key = key + (tuple(kinds), tuple(r.dtype for r in results), lay, nd)
    lk = launch.get(full_key, lambda: make(kinds, lay, nd))
    return lk, launch.run(lk, values, results, shape)


def copy_into(dst: ndarray, value) -> None:
    """``dst[...] = value`` with broadcasting and NumPy's unsafe assignment casting."""
    src = _as_gpu(value, "the assigned value")
    if src is None:
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        _scalar_dtype(value, "the assigned value")
        v = dst.dtype.type(value) if not isinstance(value, complex) or dst.dtype.kind == "c" else dst.dtype.type(value.real)
        _run_elementwise(("fill", dst.dtype.name),
                         lambda kinds, lay, nd: elementwise.copy_kernel(dst.dtype, dst.dtype, "scalar", lay, nd),
                         [v], [False], [dst], dst.shape)
        return
    if src.shape != dst.shape:
        try:
            src = src._broadcast_to(dst.shape)
        except ValueError:
            raise ValueError(f"could not broadcast input array from shape {src.shape} into shape "
                             f"{dst.shape}") from None
    if _overlaps(src, dst):
        src = src.copy()
    if transpose.try_copy(src, dst):      # a tiled kernel when the copy transposes
        return
    _run_elementwise(("copy", src.dtype.name, dst.dtype.name),
                     lambda kinds, lay, nd: elementwise.copy_kernel(src.dtype, dst.dtype, kinds[0], lay, nd),
                     [src], [True], [dst], dst.shape)


def _overlaps(a: ndarray, b: ndarray) -> bool:
    if a.data.owner is not b.data.owner or a.size == 0 or b.size == 0:
        return False
    if a.data.ptr == b.data.ptr and a.strides == b.strides and a.shape == b.shape:
        return False   # the same view: elementwise copy is safe in place
    return layout.may_share_memory(layout.byte_extent(a.shape, a.strides, a.itemsize), a.data.ptr,
                                   layout.byte_extent(b.shape, b.strides, b.itemsize), b.data.ptr)


UFUNCS: dict[str, ufunc] = {name: ufunc(name) for name in ops.OPS}
for _alias, _name in ops.ALIASES.items():
    if _name in UFUNCS:
        UFUNCS[_alias] = UFUNCS[_name]


def dispatch_numpy_ufunc(np_ufunc, method, inputs, kwargs):
    """``numpy.sin(x)`` on a gpunb array runs gpunb.sin; what gpunb lacks raises TypeError
    (returning NotImplemented makes NumPy raise it), never a copy to the host."""
    if method != "__call__":
        return NotImplemented
    f = UFUNCS.get(np_ufunc.__name__)
    if f is None or set(kwargs) - {"out", "dtype", "casting"}:
        return NotImplemented
    return f(*inputs, **kwargs)


def where(condition, x=None, y=None):
    """``x`` where ``condition`` holds, else ``y``, broadcast together; the result dtype is
    NumPy's ``result_type(x, y)`` (Python scalars weak)."""
    if _fusion.has_proxy((condition, x, y)):     # inside @gpunb.fuse: trace, do not run
        return _fusion.where(condition, x, y)
    if x is None and y is None:
        raise NotImplementedError("where(condition) (nonzero) is not supported yet; give x and y")
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    from . import ir

    args = (condition, x, y)
    arrays, scalars = _operands(args, "where")
    types = [arrays[i].dtype if i in arrays else scalars[i][1] for i in range(3)]
    rt = np.result_type(*[t if isinstance(t, np.dtype) else t(0) for t in types[1:]])
    rt = dtypes.check(rt)
    op_types = [np.dtype(bool), rt, rt]
    shape = layout.broadcast_shapes(*[a.shape for a in arrays.values()]) if arrays else ()
    result = ndarray(shape, rt)
    operands = []
    for i in range(3):
        if i in arrays:
            operands.append(arrays[i])
        else:
            operands.append(op_types[i].type(scalars[i][0]))
    in_dtypes = [arrays[i].dtype if i in arrays else op_types[i] for i in range(3)]

    def make(kinds, lay, nd):
        opnds = tuple(ir.Operand(d, k) for d, k in zip(in_dtypes, kinds))
        node = ir.Where(rt, ir.cast(ir.Arg(in_dtypes[0], 0), np.dtype(bool)),
                        ir.cast(ir.Arg(in_dtypes[1], 1), rt), ir.cast(ir.Arg(in_dtypes[2], 2), rt))
        name = elementwise.kernel_name("where", opnds, (rt,), lay, nd)
        return ir.ElementwiseKernel(name, opnds, ((rt, node),), lay, nd)

    _run_elementwise(("where", tuple(d.name for d in in_dtypes)), make, operands,
                     [i in arrays for i in range(3)], [result], shape)
    return result


def clip(a, a_min=None, a_max=None, out=None, **kwargs):
    """NumPy's clip: ``minimum(maximum(a, a_min), a_max)`` with NaN propagating."""
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    if a_min is None:
        return UFUNCS["minimum"](a, a_max, out=out, **kwargs)
    if a_max is None:
        return UFUNCS["maximum"](a, a_min, out=out, **kwargs)
    return UFUNCS["clip"](a, a_min, a_max, out=out, **kwargs)


from .ndarray import _install_operators  # noqa: E402 - operators need the ufuncs above

_install_operators()
