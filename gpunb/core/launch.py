"""Running elementwise kernels: compile once through the cache, pick the entry point, size the
grid to the device, pack the parameters, launch.

The first use of a kernel renders its source, compiles it (or loads it from the disk cache)
and loads its module; later uses are one dictionary lookup. Choosing the entry point and the
geometry is separate from launching (:func:`plan`, then :func:`execute`): the result, a
:class:`Step`, depends only on shapes, strides, dtypes and alignment, so callers that see the
same layouts again (``gpunb.fuse``) keep it and skip straight to the launch.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass

import numpy as np

from . import layout
from .build import compile_cached
from .codegen import elementwise as cg
from .runtime import driver, fastcall, memory

BLOCK = 256
# Elementwise grids: one thread per element (or vector) step, as CuPy and PyTorch launch, up
# to the hardware's limit; the kernels' grid-stride loops cover anything larger. A grid capped
# at the device's resident blocks (x GRID_WAVES, when set) loops inside each thread instead,
# and measured slower on the H100 for every fused benchmark (1 wave: where() over a newaxis
# broadcast at 0.90 of the copy ceiling, 64 waves 0.97, uncapped 0.98; benchmarks/NOTES.md).
GRID_WAVES: int | None = None
MAX_GRID = 2**31 - 1
_INT32_LIMIT = 2**31 - 1

_CTYPES = {"bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16,
           "int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint8": ctypes.c_uint8,
           "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
           "float16": ctypes.c_float, "float32": ctypes.c_float, "float64": ctypes.c_double}


def scalar_param(value, dtype: np.dtype):
    """A by-value kernel parameter in the dtype's compute type (float16 computes in float)."""
    obj = scalar_object(dtype)
    set_scalar(obj, value, dtype)
    return obj


def scalar_object(dtype: np.dtype):
    """An empty ctypes object for a by-value scalar of ``dtype`` (see :func:`set_scalar`)."""
    if dtype.kind == "c":
        return ((ctypes.c_float if dtype.name == "complex64" else ctypes.c_double) * 2)()
    return _CTYPES[dtype.name]()


def set_scalar(obj, value, dtype: np.dtype) -> None:
    """Store ``value`` in ``obj`` (from :func:`scalar_object`) as the kernel reads a scalar of
    ``dtype``: complex as (real, imag), float16 rounded to half and widened to float."""
    if dtype.kind == "c":
        v = complex(value)
        obj[0], obj[1] = v.real, v.imag
    elif dtype.name == "float16":
        obj.value = float(np.float16(value))
    else:
        obj.value = value.item() if isinstance(value, np.generic) else value


@dataclass
class Launchable:
    kernel: object           # ir.ElementwiseKernel or ir.ReductionKernel
    entries: dict            # entry point name -> cuda.core Kernel
    sm_count: int
    vec: int
    occupancy: dict          # entry point name -> resident blocks of BLOCK threads per SM


_cache: dict = {}
_lock = threading.Lock()


def get(kernel_key, make, codegen=cg) -> Launchable:
    """The loaded kernel for ``kernel_key``; ``make()`` builds its IR on first use and
    ``codegen`` (a module with ``render``, ``entry_points`` and ``vector_width``) renders it."""
    lk = _cache.get((driver._state.get("device_id"), kernel_key))
    if lk is not None:
        return lk
    with _lock:
        kernel = make()
        info = driver.device_info()
        entry = compile_cached(codegen.render(kernel), (), info.arch, display_name=kernel.name)
        entries = {e: driver.load_kernel(entry.key, entry.cubin, e) for e in codegen.entry_points(kernel)}
        occupancy = {name: _blocks_per_sm(k) for name, k in entries.items()}
        lk = Launchable(kernel, entries, info.multiprocessor_count,
                        codegen.vector_width(kernel), occupancy)
        _cache[(driver._state.get("device_id"), kernel_key)] = lk
    return lk


def _blocks_per_sm(kernel) -> int:
    """Resident blocks of BLOCK threads per SM (registers differ between entry points)."""
    try:
        return max(1, int(kernel.occupancy.max_active_blocks_per_multiprocessor(BLOCK, 0)))
    except Exception:  # an occupancy query failing must not stop the launch: assume 2048 threads
        return 2048 // BLOCK


def grid_cap(lk: Launchable, entry: str) -> int:
    """The most blocks an elementwise launch of ``entry`` uses (see :data:`GRID_WAVES`)."""
    return MAX_GRID if GRID_WAVES is None else lk.sm_count * lk.occupancy[entry] * GRID_WAVES


def _grid(lk: Launchable, work: int, entry: str) -> tuple[int]:
    return (max(1, min((work + BLOCK - 1) // BLOCK, grid_cap(lk, entry))),)


@dataclass(frozen=True)
class Step:
    """One kernel launch with everything decided but the pointers and scalar values.

    ``params`` holds, in order, either ctypes objects (sizes, geometry structs: passed as
    they are) or ints ``k``: the ``k``-th of the call's parameters given to :func:`execute`
    (operands, then outputs, then the temporary buffer)."""

    function: int            # CUfunction handle
    grid: tuple
    block: int
    params: tuple


def execute(steps, params: list, temp_bytes: int = 0, stream=None) -> None:
    """Launch ``steps`` in order on ``stream`` (default: the current one) with the call's
    ``params`` (ctypes objects). ``temp_bytes`` > 0 allocates a temporary buffer whose pointer
    is appended to ``params``; it is freed, stream-ordered, after the launches."""
    handle = driver.current_stream()[1] if stream is None else int(driver.as_stream(stream).handle)
    temp = None
    if temp_bytes:
        temp = memory.get_default_memory_pool().malloc(temp_bytes, stream)
        params = [*params, ctypes.c_void_p(temp.handle)]
    for st in steps:
        fastcall.launch(st.function, st.grid, (st.block,), 0, handle,
                        [params[p] if p.__class__ is int else p for p in st.params])
    del temp


def plan(lk: Launchable, inputs, outputs, shape) -> Step | None:
    """The launch over ``shape`` (None when it is empty). ``inputs`` are the operands' values
    as :func:`run` takes them (only arrays' strides and pointers' alignment are read);
    ``outputs`` the output ndarrays."""
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return None
    k = lk.kernel
    head = tuple(range(len(k.operands) + len(outputs)))
    if k.layout == "contiguous":
        E = lk.vec
        arrays = [v for o, v in zip(k.operands, inputs) if o.kind == "array"] + list(outputs)
        if n <= _INT32_LIMIT and all(a.data.ptr % (E * a.itemsize) == 0 for a in arrays):
            name = f"{k.name}_vec"
            return Step(driver._function_of(lk.entries[name]), _grid(lk, -(-n // E), name), BLOCK,
                        head + (ctypes.c_uint32(n),))
        name = f"{k.name}_flat"
        return Step(driver._function_of(lk.entries[name]), _grid(lk, n, name), BLOCK,
                    head + (ctypes.c_int64(n),))
    arrays = [v for o, v in zip(k.operands, inputs) if o.kind == "array"] + list(outputs)
    cshape, cstrides = layout.collapse(shape, [a.strides for a in arrays])
    if len(cshape) != k.ndim:
        raise AssertionError(f"kernel built for {k.ndim} dims, launch has {len(cshape)}")
    E = lk.vec
    bcast = _row_vectors(cshape, cstrides, arrays, len(outputs), E)
    if bcast is not None:
        # E elements per step along the innermost dim: a geometry in vector units
        vshape = cshape[:-1] + (cshape[-1] // E,)
        vstrides = [st[:-1] + (st[-1] * E,) for st in cstrides]
        entry, geometry = _strided_geometry(n // E, vshape, vstrides)
        if entry == "strided32":
            name = f"{k.name}_rows"
            return Step(driver._function_of(lk.entries[name]), _grid(lk, n // E, name), BLOCK,
                        head + (*geometry, ctypes.c_uint32(bcast)))
    entry, geometry = _strided_geometry(n, cshape, cstrides)
    name = f"{k.name}_{entry}"
    return Step(driver._function_of(lk.entries[name]), _grid(lk, n, name), BLOCK, head + tuple(geometry))


def operand_params(kernel, inputs) -> list:
    """The leading kernel parameters: a pointer per array or uniform operand, the value in
    the operand's compute type per scalar."""
    return [ctypes.c_void_p(v.data.ptr) if o.kind != "scalar" else scalar_param(v, o.dtype)
            for o, v in zip(kernel.operands, inputs)]


def run(lk: Launchable, inputs, outputs, shape, stream=None) -> Step | None:
    """Launch over ``shape``. ``inputs`` are (kind, value) per operand: arrays (ndarrays
    already broadcast to ``shape``), uniforms (ndarrays of one element) or scalars (values of
    the operand's dtype); ``outputs`` are ndarrays of ``shape``. Returns the :class:`Step`
    launched (None for an empty shape)."""
    step = plan(lk, inputs, outputs, shape)
    if step is not None:
        execute((step,), operand_params(lk.kernel, inputs) + [ctypes.c_void_p(o.data.ptr) for o in outputs],
                stream=stream)
    return step


def _row_vectors(cshape, cstrides, arrays, n_out: int, E: int):
    """The ``bcast`` mask of the rows entry (bit k: operand k is broadcast along the innermost
    dim), or None when that entry cannot run: it needs the innermost dim a multiple of ``E``,
    each input contiguous (aligned to ``E`` elements) or broadcast along it, and each output
    contiguous and aligned."""
    if E == 1 or len(cshape) < 2 or cshape[-1] % E:
        return None
    bcast = 0
    for k, (a, st) in enumerate(zip(arrays, cstrides)):
        if st[-1] == 0 and k < len(arrays) - n_out:
            bcast |= 1 << k
            continue
        vb = E * a.itemsize
        if st[-1] != a.itemsize or a.data.ptr % vb or any(s % vb for s in st[:-1]):
            return None
    return bcast


def _strided_geometry(n, cshape, cstrides) -> tuple[str, list]:
    """The strided entry point to launch and its last two parameters (``n``, the geometry
    struct by value): ``strided32`` when every index and byte offset fits in 31 bits."""
    strides = [s for st in cstrides for s in st]
    reach = max((sum(abs(s) * (m - 1) for s, m in zip(st, cshape)) for st in cstrides), default=0)
    if n <= _INT32_LIMIT and reach <= _INT32_LIMIT - 16:
        fast = [cg.fast_divisor(m) for m in cshape]
        flat = [*cshape, *(f[0] for f in fast), *(f[1] for f in fast)]
        flat += [s & 0xFFFFFFFF for s in strides]        # the struct's int strides, as bits
        return "strided32", [ctypes.c_uint32(n), (ctypes.c_uint32 * len(flat))(*flat)]
    flat = list(cshape) + strides
    return "strided", [ctypes.c_int64(n), (ctypes.c_int64 * len(flat))(*flat)]
