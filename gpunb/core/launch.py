"""Running elementwise kernels: compile once through the cache, pick the entry point, size the
grid to the device, pack the parameters, launch.

The first use of a kernel renders its source, compiles it (or loads it from the disk cache)
and loads its module; later uses are one dictionary lookup.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass

import numpy as np

from . import layout
from .build import compile_cached
from .codegen import elementwise as cg
from .runtime import driver

BLOCK = 256
GRID_WAVES = 1      # resident blocks per SM times this: grid-stride loops do the rest
_INT32_LIMIT = 2**31 - 1

_CTYPES = {"bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16,
           "int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint8": ctypes.c_uint8,
           "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
           "float16": ctypes.c_float, "float32": ctypes.c_float, "float64": ctypes.c_double}


def scalar_param(value, dtype: np.dtype):
    """A by-value kernel parameter in the dtype's compute type (float16 computes in float)."""
    name = dtype.name
    if dtype.kind == "c":
        part = ctypes.c_float if name == "complex64" else ctypes.c_double
        v = complex(value)
        return (part * 2)(v.real, v.imag)
    if name == "float16":
        return ctypes.c_float(float(np.float16(value)))
    return _CTYPES[name](value.item() if isinstance(value, np.generic) else value)


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


def _grid(lk: Launchable, work: int, entry: str) -> tuple[int]:
    return (max(1, min((work + BLOCK - 1) // BLOCK, lk.sm_count * lk.occupancy[entry] * GRID_WAVES)),)


def run(lk: Launchable, inputs, outputs, shape, stream=None) -> None:
    """Launch over ``shape``. ``inputs`` are (kind, value) per operand: arrays (ndarrays
    already broadcast to ``shape``), uniforms (ndarrays of one element) or scalars (values of
    the operand's dtype); ``outputs`` are ndarrays of ``shape``."""
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return
    k = lk.kernel
    params = []
    for o, value in zip(k.operands, inputs):
        params.append(ctypes.c_void_p(value.data.ptr) if o.kind != "scalar" else scalar_param(value, o.dtype))
    params += [ctypes.c_void_p(out.data.ptr) for out in outputs]
    if k.layout == "contiguous":
        E = lk.vec
        arrays = [v for o, v in zip(k.operands, inputs) if o.kind == "array"] + list(outputs)
        aligned = n <= _INT32_LIMIT and all(a.data.ptr % (E * a.itemsize) == 0 for a in arrays)
        if aligned:
            params.append(ctypes.c_uint32(n))
            name = f"{k.name}_vec"
            driver.launch_packed(lk.entries[name], _grid(lk, -(-n // E), name), (BLOCK,), 0, stream, params)
        else:
            params.append(ctypes.c_int64(n))
            name = f"{k.name}_flat"
            driver.launch_packed(lk.entries[name], _grid(lk, n, name), (BLOCK,), 0, stream, params)
        return
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
            params.extend(geometry)
            params.append(ctypes.c_uint32(bcast))
            name = f"{k.name}_rows"
            driver.launch_packed(lk.entries[name], _grid(lk, n // E, name), (BLOCK,), 0, stream, params)
            return
    entry, geometry = _strided_geometry(n, cshape, cstrides)
    params.extend(geometry)
    name = f"{k.name}_{entry}"
    driver.launch_packed(lk.entries[name], _grid(lk, n, name), (BLOCK,), 0, stream, params)


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
