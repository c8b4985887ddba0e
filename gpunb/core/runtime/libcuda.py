"""The driver library through ctypes: what the first touch of a GPU needs, before cuda.core
and cuda.bindings are imported.

The first array of a session waits for ``cuInit`` and the primary context, which no library
can avoid; importing cuda.core (about 200 ms: it imports NVML's bindings) and cuda.bindings
(about 60 ms: it imports cuda.pathfinder to find this library) is avoidable there. So device
discovery, the context, the memory pool, the copies and generated kernels' modules go through
the same ``libcuda.so.1`` by ctypes; :mod:`.driver` imports cuda.bindings' driver module on a
background thread for the launches, and cuda.core when streams, events or raw kernels first
need it. Every call here returns an int status that :func:`check` translates like the rest of
the runtime.
"""

from __future__ import annotations

import ctypes
import os
import re

from ..errors import GPUNBError

_lib = None
_u = ctypes.c_uint
_i = ctypes.c_int
_p = ctypes.c_void_p
_u64 = ctypes.c_uint64
_size = ctypes.c_size_t
_PI = ctypes.POINTER(ctypes.c_int)

# name: (argument types); every function returns CUresult (an int)
_SIGNATURES = {
    "cuInit": [_u],
    "cuDriverGetVersion": [_PI],
    "cuDeviceGetCount": [_PI],
    "cuDeviceGet": [_PI, _i],
    "cuDeviceGetName": [ctypes.c_char_p, _i, _i],
    "cuDeviceGetAttribute": [_PI, _i, _i],
    "cuDeviceTotalMem_v2": [ctypes.POINTER(_size), _i],
    "cuDevicePrimaryCtxRetain": [ctypes.POINTER(_p), _i],
    "cuDevicePrimaryCtxGetState": [_i, ctypes.POINTER(_u), _PI],
    "cuCtxSetCurrent": [_p],
    "cuCtxGetCurrent": [ctypes.POINTER(_p)],
    "cuCtxGetDevice": [_PI],
    "cuCtxSynchronize": [],
    "cuStreamSynchronize": [_p],
    "cuDeviceGetMemPool": [ctypes.POINTER(_p), _i],
    "cuMemPoolSetAttribute": [_p, _i, _p],
    "cuMemPoolGetAttribute": [_p, _i, _p],
    "cuMemPoolTrimTo": [_p, _size],
    "cuMemAllocFromPoolAsync": [ctypes.POINTER(_u64), _size, _p, _p],
    "cuMemFreeAsync": [_u64, _p],
    "cuMemcpyHtoDAsync_v2": [_u64, _p, _size, _p],
    "cuMemcpyDtoHAsync_v2": [_p, _u64, _size, _p],
    "cuMemcpyDtoDAsync_v2": [_u64, _u64, _size, _p],
    "cuMemsetD8Async": [_u64, ctypes.c_ubyte, _size, _p],
    "cuMemsetD32Async": [_u64, _u, _size, _p],
    "cuLaunchKernel": [_p] + [_u] * 7 + [_p] * 3,
    "cuModuleLoadData": [ctypes.POINTER(_p), ctypes.c_char_p],
    "cuModuleUnload": [_p],
    "cuModuleGetFunction": [ctypes.POINTER(_p), _p, ctypes.c_char_p],
    "cuOccupancyMaxActiveBlocksPerMultiprocessor": [_PI, _p, _i, _size],
    "cuGraphLaunch": [_p, _p],
    "cuMemHostAlloc": [ctypes.POINTER(_p), _size, _u],
    "cuEventCreate": [ctypes.POINTER(_p), _u],
    "cuEventRecord": [_p, _p],
    "cuEventSynchronize": [_p],
    "cuMemFreeHost": [_p],
    "cuMemAllocManaged": [ctypes.POINTER(_u64), _size, _u],
    "cuMemFree_v2": [_u64],
    "cuMemAlloc_v2": [ctypes.POINTER(_u64), _size],
    "cuEventDestroy_v2": [_p],
    "cuGetErrorName": [_i, ctypes.POINTER(ctypes.c_char_p)],
    "cuFuncSetAttribute": [_p, _i, _i],
    "cuMemHostGetDevicePointer_v2": [ctypes.POINTER(_u64), _p, _u],
}

# CUdevice_attribute and CUmemPool_attribute values (cuda.h)
COMPUTE_CAPABILITY_MAJOR, COMPUTE_CAPABILITY_MINOR, MULTIPROCESSOR_COUNT = 75, 76, 16
POOL_RELEASE_THRESHOLD, POOL_RESERVED_MEM_CURRENT, POOL_USED_MEM_CURRENT = 4, 5, 7
MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8     # CUfunction_attribute


def lib():
    """``libcuda.so.1`` with the argument types declared; raises OSError where it is absent."""
    global _lib
    if _lib is None:
        handle = ctypes.CDLL("libcuda.so.1")
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(handle, name)
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int
        _lib = handle
    return _lib


def error_name(code: int) -> str:
    name = ctypes.c_char_p()
    if lib().cuGetErrorName(code, ctypes.byref(name)) == 0 and name.value:
        return name.value.decode()
    return f"CUDA error {code}"


def check(err: int, what: str) -> None:
    if err:
        raise GPUNBError(f"CUDA error during {what}: {error_name(err)}")


def init() -> tuple[str, tuple[int, int] | None, int]:
    """``cuInit``: (its error name, the driver's CUDA version, the device count)."""
    d = lib()
    err = d.cuInit(0)
    if err:
        return error_name(err), None, 0
    v, n = ctypes.c_int(), ctypes.c_int()
    check(d.cuDriverGetVersion(ctypes.byref(v)), "the driver version query")
    if d.cuDeviceGetCount(ctypes.byref(n)):
        n.value = 0
    return "CUDA_SUCCESS", (v.value // 1000, (v.value % 1000) // 10), n.value


def current_device() -> int | None:
    """The device of this thread's current CUDA context, None without one."""
    d = lib()
    ctx, dev = _p(), ctypes.c_int()
    if d.cuCtxGetCurrent(ctypes.byref(ctx)) or not ctx.value:
        return None
    return None if d.cuCtxGetDevice(ctypes.byref(dev)) else dev.value


def open_device(ordinal: int) -> tuple[int, str, tuple[int, int], int, int]:
    """Retain ``ordinal``'s primary context and make it current in this thread: (context
    handle, name, compute capability, SM count, total memory)."""
    d = lib()
    dev = ctypes.c_int()
    check(d.cuDeviceGet(ctypes.byref(dev), ordinal), f"opening device {ordinal}")
    ctx = _p()
    check(d.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "creating the device's context")
    check(d.cuCtxSetCurrent(ctx), "making the device's context current")
    name = ctypes.create_string_buffer(256)
    check(d.cuDeviceGetName(name, 256, dev), "the device name query")
    values = []
    for attribute in (COMPUTE_CAPABILITY_MAJOR, COMPUTE_CAPABILITY_MINOR, MULTIPROCESSOR_COUNT):
        v = ctypes.c_int()
        check(d.cuDeviceGetAttribute(ctypes.byref(v), attribute, dev), "a device attribute query")
        values.append(v.value)
    total = _size()
    check(d.cuDeviceTotalMem_v2(ctypes.byref(total), dev), "the device memory query")
    return ctx.value, name.value.decode(), (values[0], values[1]), values[2], total.value


def any_context_active() -> bool:
    """Whether some device's primary context is active (CUDA already in use in the process)."""
    d = lib()
    n, dev, flags, active = ctypes.c_int(), ctypes.c_int(), _u(), ctypes.c_int()
    if d.cuDeviceGetCount(ctypes.byref(n)):
        return True
    for ordinal in range(n.value):
        if (d.cuDeviceGet(ctypes.byref(dev), ordinal)
                or d.cuDevicePrimaryCtxGetState(dev, ctypes.byref(flags), ctypes.byref(active))
                or active.value):
            return True
    return False


def retain_primary(ordinal: int, before=None) -> int:
    """Retain device ``ordinal``'s primary context (making it if needed) without making it
    current: its handle. ``before()`` is called just before the context's creation."""
    d = lib()
    dev, ctx = ctypes.c_int(), _p()
    check(d.cuDeviceGet(ctypes.byref(dev), ordinal), f"opening device {ordinal}")
    if before is not None:
        before()
    check(d.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "creating the device's context")
    return ctx.value


def set_current(ctx: int) -> None:
    check(lib().cuCtxSetCurrent(ctx), "making the device's context current")


def default_stream_handle() -> int:
    """The ``CUstream`` value of the default stream cuda.core would give this process: the
    per-thread default (2) when CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM starts with a
    non-zero int, else the legacy default (1)."""
    m = re.match(r"\s*[+-]?\d+", os.environ.get("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", ""))
    return 2 if m and int(m.group()) else 1


def device_pool(ordinal: int) -> int:
    """The device's current stream-ordered memory pool (the driver's default one unless a
    program set another), keeping what it reserves until trimmed (as CuPy's pool does)."""
    d = lib()
    pool = _p()
    check(d.cuDeviceGetMemPool(ctypes.byref(pool), ordinal), "the memory pool query")
    keep = _u64(2**64 - 1)
    check(d.cuMemPoolSetAttribute(pool, POOL_RELEASE_THRESHOLD, ctypes.byref(keep)),
          "setting the pool's release threshold")
    return pool.value


def pool_attribute(pool: int, attribute: int) -> int:
    v = _u64()
    check(lib().cuMemPoolGetAttribute(pool, attribute, ctypes.byref(v)), "a memory pool query")
    return v.value


def load_module(cubin: bytes) -> int:
    """Load a cubin into the current context: its ``CUmodule``."""
    module = _p()
    check(lib().cuModuleLoadData(ctypes.byref(module), cubin), "loading a kernel module")
    return module.value


def free_staging(buffers: list, ctx: int) -> None:
    """Free page-locked buffers and their events, ``(host pointer, size, event)`` each."""
    if not buffers:
        return
    d = lib()
    if not d.cuCtxSetCurrent(ctx):
        for host, _size, event in buffers:
            d.cuEventDestroy_v2(event)
            d.cuMemFreeHost(host)
    buffers.clear()


def unload_module(module: int, ctx: int) -> None:
    d = lib()
    if not d.cuCtxSetCurrent(ctx):
        d.cuModuleUnload(module)


def module_function(module: int, symbol: str) -> int:
    f = _p()
    check(lib().cuModuleGetFunction(ctypes.byref(f), module, symbol.encode()),
          f"looking up kernel {symbol!r}")
    return f.value


def device_attribute(ordinal: int, attribute: int) -> int:
    dev, v = ctypes.c_int(), ctypes.c_int()
    check(lib().cuDeviceGet(ctypes.byref(dev), ordinal), f"opening device {ordinal}")
    check(lib().cuDeviceGetAttribute(ctypes.byref(v), attribute, dev), "a device attribute query")
    return v.value


def mapped_words(count: int) -> tuple[int, int]:
    """``count`` zeroed 4-byte words of page-locked host memory mapped into every context:
    (host address, device address). A kernel's store there is read by the host after a
    stream synchronize, with no copy."""
    host, dev = _p(), _u64()
    check(lib().cuMemHostAlloc(ctypes.byref(host), 4 * count, 0x1 | 0x2),   # PORTABLE | DEVICEMAP
          "allocating mapped host memory")
    ctypes.memset(host.value, 0, 4 * count)
    check(lib().cuMemHostGetDevicePointer_v2(ctypes.byref(dev), host.value, 0),
          "mapping host memory into the device")
    return host.value, dev.value


def allow_dynamic_shared(function: int, nbytes: int) -> None:
    """Let ``function`` launch with ``nbytes`` of dynamic shared memory (past 48 KiB a
    kernel must opt in)."""
    check(lib().cuFuncSetAttribute(function, FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes),
          f"allowing {nbytes} bytes of dynamic shared memory")


def blocks_per_sm(function: int, threads: int) -> int:
    """Resident blocks of ``threads`` threads per SM (at least 1; 2048 threads' worth if the
    query fails: an occupancy answer must not stop a launch)."""
    n = ctypes.c_int()
    if lib().cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(n), function, threads, 0):
        return max(1, 2048 // threads)
    return max(1, n.value)
