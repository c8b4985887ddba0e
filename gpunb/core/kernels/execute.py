"""The one executor: every kernel launch goes through here.

A plan is a sequence of :class:`Step` s: a kernel launch with everything decided but the
pointers and scalar values. The generated families' planners (elementwise, reduction, the
transposing copy) return steps, :func:`execute` launches them with the call's parameters
(ctypes objects), and callers that see the same layouts again (``gpunb.fuse``, the ufunc fast
path) keep the steps and replay them as :class:`~gpunb.core.runtime.fastcall.Prepared`
launches. A raw kernel's arguments, checked and converted per call (ints, NumPy scalars),
are launched by :func:`launch_args`.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass

import numpy as np

from ..ndarray import ndarray
from .empty_source import empty_namespace, fixed_empty_lines
from ..runtime import driver, fastcall, scratch

_CTYPES = {"bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16,
           "int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint8": ctypes.c_uint8,
           "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
           "float16": ctypes.c_float, "float32": ctypes.c_float, "float64": ctypes.c_double}


def scalar_param(value, dtype: np.dtype):
    """A by-value kernel parameter in the dtype's compute type (float16 computes in float)."""
    obj = scalar_object(dtype)
    set_scalar(obj, value, dtype)
    return obj


_SCALARS: dict = {}     # dtype -> (ctypes factory, 0 plain | 1 complex | 2 half): no dtype.name per call


def _scalar_spec(dtype: np.dtype):
    spec = _SCALARS.get(dtype)
    if spec is None:
        name = dtype.name
        if dtype.kind == "c":
            spec = ((ctypes.c_float if name == "complex64" else ctypes.c_double) * 2, 1)
        else:
            spec = (_CTYPES[name], 2 if name == "float16" else 0)
        spec = _SCALARS[dtype] = spec
    return spec


def scalar_object(dtype: np.dtype):
    """An empty ctypes object for a by-value scalar of ``dtype`` (see :func:`set_scalar`)."""
    return _scalar_spec(dtype)[0]()


def set_scalar(obj, value, dtype: np.dtype) -> None:
    """Store ``value`` in ``obj`` (from :func:`scalar_object`) as the kernel reads a scalar of
    ``dtype``: complex as (real, imag), float16 rounded to half and widened to float."""
    mode = _scalar_spec(dtype)[1]
    if mode == 1:
        v = complex(value)
        obj[0], obj[1] = v.real, v.imag
    elif mode == 2:
        obj.value = float(np.float16(value))
    else:
        obj.value = value.item() if isinstance(value, np.generic) else value


def set_operands(objects, args, conv, values) -> None:
    """Set a prepared launch's operand objects for a call: each array's data pointer, each
    scalar's value as ``set_scalar`` stores it (``conv[i]``: the scalar's dtype, None for an
    array; ``values``: the converted scalars, None when the call has none)."""
    if values is None:
        for obj, a in zip(objects, args):
            obj.value = a._data.ptr
    else:
        for obj, a, v, c in zip(objects, args, values, conv):
            if c is None:
                obj.value = a._data.ptr
            else:
                set_scalar(obj, v, c)


def operand_params(kernel, inputs) -> list:
    """The leading kernel parameters of a generated kernel: a pointer per array, uniform or
    outer operand, the value in the operand's compute type per scalar."""
    return [ctypes.c_void_p(v._data.ptr) if o.kind != "scalar" else scalar_param(v, o.dtype)
            for o, v in zip(kernel.operands, inputs)]


@dataclass(frozen=True)
class Step:
    """One kernel launch with everything decided but the pointers and scalar values.

    ``params`` holds, in order, either ctypes objects (sizes, geometry structs: passed as
    they are) or ints ``k``: the ``k``-th of the call's parameters given to :func:`execute`
    (operands, then outputs, then the temporary buffer). ``block`` is a tuple of 1 to 3
    extents."""

    function: int            # CUfunction handle
    grid: tuple
    block: tuple
    params: tuple
    shared_mem: int = 0


def execute(steps, params: list, temp_bytes: int = 0, stream=None) -> None:
    """Launch ``steps`` in order on ``stream`` (default: the current one; an int is a
    ``CUstream`` handle, as :func:`driver.as_stream` reads it) with the call's ``params``
    (ctypes objects). ``temp_bytes`` > 0: a split reduction's scratch of that size
    (:func:`gpunb.core.runtime.scratch.get`, zeroed tickets first) is appended to ``params``."""
    if stream is None:
        handle = driver.stream_handle()
    elif stream.__class__ is int:
        handle = stream
    else:
        handle = int(driver.as_stream(stream).handle)
    temp = None
    if temp_bytes:
        temp = scratch.get(temp_bytes, handle)
        params = [*params, ctypes.c_void_p(temp.ptr)]
    for st in steps:
        fastcall.launch(st.function, st.grid, st.block, st.shared_mem, handle,
                        [params[p] if p.__class__ is int else p for p in st.params])
    del temp


def prepare(steps, pointers: int, temp_bytes: int = 0):
    """``steps`` as :class:`~gpunb.core.runtime.fastcall.Prepared` launches over ctypes slots:
    the call's ``pointers`` pointers (the params :func:`execute` would take), then with
    ``temp_bytes`` > 0 a temporary buffer's. :func:`launch_prepared` sets the slots and
    launches, building nothing. None when a step takes a parameter that is not a slot."""
    slots = [ctypes.c_void_p() for _ in range(pointers + (1 if temp_bytes else 0))]
    if any(p.__class__ is int and not 0 <= p < len(slots) for st in steps for p in st.params):
        return None
    launches = tuple((fastcall.Prepared(st.function, st.grid, st.block,
                                        [slots[p] if p.__class__ is int else p for p in st.params]),
                      st.shared_mem) for st in steps)
    return launches, slots, threading.Lock(), temp_bytes


def launch_prepared(entry, pointers) -> None:
    """Launch :func:`prepare`'s ``entry`` on the current stream with the call's ``pointers``
    (ints) in its slots, and the stream's scratch when it takes one (as :func:`execute`)."""
    launches, slots, lock, temp_bytes = entry
    handle = driver.stream_handle()
    temp = scratch.get(temp_bytes, handle) if temp_bytes else None
    with lock:
        for slot, ptr in zip(slots, pointers):
            slot.value = ptr
        if temp is not None:
            slots[-1].value = temp.ptr
        for prepared, shared_mem in launches:
            prepared.launch_extents(handle, prepared.grid, prepared.block, shared_mem)


def compile_launches(params: str, fallback, body, launches, ret: str, ns: dict):
    """``fast(params)``: Python source made once for a prepared call, its launches written
    out. The main thread runs ``body`` (lines: checks, allocations, setting the slots the
    ``launches`` read: (:class:`~gpunb.core.runtime.fastcall.Prepared`, dynamic shared
    memory) pairs of its own), launches without a lock and returns ``ret``; other threads run
    ``fallback`` (lines ending in a return: the locked path on a second set of slots). ``ns``:
    the names the lines read."""
    ns = {**fastcall.stream_namespace(driver.active, driver._current, driver.stream_handle), **ns}
    lines = [*fastcall.STREAM_SOURCE.splitlines(), "if not main:",
             *("    " + ln for ln in fallback), *body]
    ns["LAUNCHES"] = launches      # keeps the parameter arrays (PARAMS, addresses) alive
    for i, (prepared, shared_mem) in enumerate(launches):
        ns[f"FN{i}"], ns[f"PARAMS{i}"] = prepared._fn, prepared._params
        grid, block = ", ".join(map(str, prepared.grid)), ", ".join(map(str, prepared.block))
        lines += [f"err, = fc._cu_launch(FN{i}, {grid}, {block}, {shared_mem}, cu_stream, "
                  f"PARAMS{i}, 0)",
                  "if err:",
                  "    raise failed(err)"]
    source = f"def fast({params}):\n" + "".join(f"    {ln}\n" for ln in lines) + f"    return {ret}\n"
    exec(source, ns)
    return ns["fast"]


COMPILE_AFTER = 2      # replays of a plan before its source is made (exec costs ~0.2 ms)


def compiled_after_replays(locked, build, install):
    """A prepared call that runs ``locked`` (the plan's locked path) and, at its
    :data:`COMPILE_AFTER`-th call, gives ``install`` the source-made call ``build()`` to use
    from then on: a loop over ever new shapes makes no source."""
    calls = [0]

    def call(*args):
        calls[0] += 1
        if calls[0] == COMPILE_AFTER:
            install(build())
        return locked(*args)
    return call


def make_replay(steps, inputs: int, shape: tuple, dtype: np.dtype, temp_bytes: int = 0,
                keep=None):
    """``fast(x0, .., x{inputs-1})``: ``steps`` (their params: the inputs' pointers, the
    result's, then with ``temp_bytes`` > 0 a temporary buffer's) replayed for gpunb arrays
    ``x0..``, into a new array of ``shape`` and ``dtype``, which it returns (a reduction's
    repeat call). The first replays launch :func:`prepare` d steps under their lock; then
    ``keep(compiled)`` is given the plan's own source (:func:`compile_launches`) to store in
    place of this function (:func:`compiled_after_replays`). None when :func:`prepare`
    refuses the steps."""
    shared = prepare(steps, inputs + 1, temp_bytes)
    if shared is None:
        return None

    def locked(*xs):
        result = ndarray._empty(shape, dtype)
        launch_prepared(shared, (*[x._data.ptr for x in xs], result._data.ptr))
        return result

    fast = locked if keep is None else compiled_after_replays(
        locked, lambda: _compiled(steps, inputs, shape, dtype, temp_bytes, shared), keep)
    fast.launches, fast.temp_bytes = len(shared[0]), temp_bytes    # (for tests and inspection)
    return fast


def _compiled(steps, inputs, shape, dtype, temp_bytes, shared):
    """:func:`make_replay`'s plan as source: the main thread fills slots of its own, other
    threads take ``shared`` (the locked set)."""
    own = prepare(steps, inputs + 1, temp_bytes)
    xs = ", ".join(f"x{i}" for i in range(inputs))
    ptrs = [f"x{i}._data.ptr" for i in range(inputs)] + ["result._data.ptr"]
    body = fixed_empty_lines("result", shape, dtype, "DT")
    if temp_bytes:
        body.append(f"temp = scratch({temp_bytes})")
        ptrs.append("temp.ptr")
    body += [f"SLOTS[{i}].value = {p}" for i, p in enumerate(ptrs)]
    fallback = ["result = empty(SHAPE, DT)",
                f"launch_prepared(SHARED, ({', '.join(ptrs[:inputs + 1])},))", "return result"]
    fast = compile_launches(xs, fallback, body, own[0], "result", {
        "empty": ndarray._empty, "SHARED": shared, "launch_prepared": launch_prepared,
        "SHAPE": shape, "DT": dtype, "scratch": scratch.get, "SLOTS": own[1],
        **empty_namespace()})
    fast.launches, fast.temp_bytes = len(own[0]), temp_bytes
    return fast


def replay(key, make, pointers) -> None:
    """Launch the steps ``make()`` plans for ``key`` with the call's ``pointers`` (ints, the
    params :func:`execute` would take as ctypes objects) on the current stream. The steps
    are :func:`prepare` d once and kept in the device context under ``key``, which must
    therefore hold everything the plan depends on: a repeated call sets the pointers and
    launches, planning and building nothing."""
    ctx = driver.active or driver.context()
    entry = ctx.prepared.get(key)
    if entry is None:
        steps = make()
        entry = prepare(steps, len(pointers))
        if entry is None:           # a step takes a parameter that is not a slot: unprepared
            execute(steps, [ctypes.c_void_p(p) for p in pointers])
            return
        ctx.remember(key, entry)
    launch_prepared(entry, pointers)


def launch_args(kernel, grid, block, shared_mem: int, stream, args) -> None:
    """Launch the loaded kernel ``kernel`` (a cuda.core Kernel) on ``stream`` (a cuda.core
    Stream) with ``args`` as :func:`gpunb.core.kernels.raw.args.prepare_args` converts them:
    ints for pointers, NumPy scalars by value."""
    driver.launch(kernel, grid, block, shared_mem, stream, args)
