"""``gpunb.ReductionKernel``: CuPy's user-defined reduction, run by gpunb's reduction engine
(:mod:`..reduction`: the same geometry, thread layouts, 16-byte loads, column entry and
split-and-combine plans as ``gpunb.sum``), with the user's map, reduce and post-map code as
a :class:`~gpunb.core.kernels.reduction.ir.UserReduction`.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ... import args as _args
from ... import layout
from ...ndarray import ndarray
from ...runtime import driver
from ..execute import execute
from ..reduction import ir as rir
from ..reduction import run as rrun
from . import codegen as ucg
from . import ir as uir
from .run import _scalar_ok


class ReductionKernel:
    """User-defined reduction kernel, CuPy's ``cupy.ReductionKernel``.

    Parameters
    ----------
    in_params, out_params : str
        Parameters as :class:`ElementwiseKernel` takes them (no ``raw``); one output.
    map_expr : str
        C++ expression of each element's value, over the input names.
    reduce_expr : str
        C++ expression combining two values ``a`` and ``b``.
    post_map_expr : str
        C++ statement writing the output (by its name) from the result ``a``.
    identity : str
        C++ expression of the reduction's identity value.
    name : str
        The kernel's name (a C identifier).
    reduce_type : str, optional
        C++ type of the values reduced (``a``, ``b``); default the output's type.
    reduce_dims : bool
        Accepted for CuPy's signature (dimensions are always collapsed where possible).
    preamble : str
        Code before the kernel.
    options : tuple of str
        NVRTC options.

    Call as ``kernel(*inputs[, output], axis=None, keepdims=False, out=None, stream=None)``.
    """

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                 name="reduce_kernel", reduce_type=None, reduce_dims=True, preamble="",
                 options=()):
        self.in_params, self.out_params = uir.parse_declaration(name, in_params, out_params, {
            "map_expr": map_expr, "reduce_expr": reduce_expr, "post_map_expr": post_map_expr,
            "identity": identity, "preamble": preamble})
        self.nin, self.nout = len(self.in_params), len(self.out_params)
        self.nargs = self.nin + self.nout
        self.params = self.in_params + self.out_params
        if any(p.raw for p in self.params):
            raise NotImplementedError("raw parameters in a ReductionKernel are not supported by gpunb")
        if self.nout != 1:
            raise NotImplementedError(f"a ReductionKernel with {self.nout} outputs: gpunb supports one")
        if reduce_type is None:
            reduce_type = self.out_params[0].ctype
        if not isinstance(reduce_type, str):
            raise TypeError(f"reduce_type must be a str (a C++ type), not {type(reduce_type).__name__}")
        from ...build.compiler import check_options
        self.options = check_options(options)
        self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
        self.identity, self.reduce_type, self.preamble = identity, reduce_type, preamble
        self.name, self.__name__, self.reduce_dims = name, name, bool(reduce_dims)
        self._ident = (name, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                       reduce_type, preamble, self.options)
        self._types_memo: dict = {}

    def __repr__(self) -> str:
        return f"<gpunb.ReductionKernel {self.name!r}>"

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None, reduce_dims=True):
        ctx = driver.active
        if (ctx is not None and out is None and stream is None and len(args) == self.nin
                and type(axis) in _FAST_AXES):
            key = [self, axis, keepdims]
            for a in args:
                if type(a) is not ndarray:
                    break
                key.append((a._dtype, a._shape, a._strides, a._data.ptr & 15))
            else:
                fast = ctx.prepared.get(tuple(key))
                if fast is not None:
                    return _replay(fast, args)
        if len(args) != self.nin and len(args) != self.nargs:
            raise TypeError(f"Wrong number of arguments for {self.name}")
        outs = list(args[self.nin:])
        if out is not None:
            if outs:
                raise ValueError("cannot specify 'out' as both a positional and keyword argument")
            outs = [out]
        values = []
        for j, a in enumerate(args[:self.nin]):
            g = a if type(a) is ndarray else _args.as_gpu(a, f"argument {j} of {self.name}")
            if g is None:
                _scalar_ok(a, f"argument {j} of {self.name}")
            values.append(a if g is None else g)
        for o in outs:
            if type(o) is not ndarray:
                raise TypeError("Output arguments type must be gpunb.ndarray")
        arrays = [v for v in values if type(v) is ndarray]
        if not arrays:
            raise ValueError("Loop size is undecided.")
        shape = layout.broadcast_shapes(*[v._shape for v in arrays])
        key = (tuple(v._dtype if type(v) is ndarray else None for v in values),
               tuple(o._dtype for o in outs))
        r = self._types_memo.get(key)
        if r is None:
            r = self._types_memo[key] = uir.decide_types(self.in_params, self.out_params, *key)
        in_types, out_types, typedefs = r
        axes = _args.axes(axis, len(shape))
        oshape = rrun.out_shape(shape, axes, keepdims)
        odt = out_types[0]
        if outs:
            if outs[0]._shape != oshape:
                raise ValueError("Out shape is mismatched")
            target = outs[0] if outs[0]._c_contiguous else ndarray._empty(oshape, odt)
        else:
            target = ndarray._empty(oshape, odt)
        operands = []
        for v, dt in zip(values, in_types):
            if type(v) is ndarray:
                operands.append(("array", v if v._shape == shape else v._broadcast_to(shape)))
            else:
                operands.append(("scalar", dt.type(v[()] if isinstance(v, np.ndarray) else v)))
        kinds = tuple((kind, dt) for (kind, _), dt in zip(operands, in_types))
        names = tuple(p.name for p in self.in_params)

        def make(no, nr):
            # the preamble before _type_reduce, as CuPy's: it may define the reduce type
            header = "\n".join([ucg.header(typedefs, ""), self.preamble,
                                f"typedef {self.reduce_type} _type_reduce;", ""])
            return rir.UserReduction(
                self.name, tuple(rir.ir.Operand(dt, kind) for kind, dt in kinds), names,
                tuple(uir.user_type(dt) for _, dt in kinds), self.map_expr, self.reduce_expr,
                self.post_map_expr, self.identity, self.reduce_type, odt, self.out_params[0].name,
                uir.user_type(odt), header, no, nr, self.options)

        previous = driver._current.stream
        if stream is not None:
            driver._current.stream = driver.as_stream(stream)
        try:
            # an empty reduction runs too: each output is post_map(identity), as CuPy's
            launches, temp_bytes = rrun.run(("user_reduction", self._ident, kinds, typedefs, odt),
                                            make, operands, shape, axes, target, 1.0, False)
            if (stream is None and not outs and len(args) == self.nin and type(axis) in _FAST_AXES
                    and all(type(a) is ndarray and a._shape == shape for a in args)):
                driver.context().remember(
                    (self, axis, keepdims, *((a._dtype, a._shape, a._strides, a._data.ptr & 15)
                                             for a in args)),
                    (oshape, odt, launches, temp_bytes))
            if outs and target is not outs[0]:
                outs[0][...] = target
        finally:
            driver._current.stream = previous
        return outs[0] if outs else target



# the prepared path: a call seen before (same array layouts, axis, keepdims; no scalars, out=
# or stream) replays its launches with no argument handling
_FAST_AXES = (type(None), int, tuple)


def _replay(fast, args):
    oshape, odt, launches, temp_bytes = fast
    target = ndarray._empty(oshape, odt)
    if launches:
        execute([*launches], [ctypes.c_void_p(a._data.ptr) for a in args]
                + [ctypes.c_void_p(target._data.ptr)], temp_bytes)
    return target
