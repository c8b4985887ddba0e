"""The CUDA driver through cuda.core: device discovery, module loading, streams and launches.

The first call that needs a GPU checks for one and, without one, raises
:class:`~gpunb.GPUUnavailableError` naming what is missing. Errors from cuda.core and
cuda.bindings are translated here into gpunb's exceptions.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ..errors import GPUNBError, GPUUnavailableError

_lock = threading.Lock()
_state: dict = {}
_modules: dict = {}
_kernels: dict = {}      # (device id, cache key, symbol) -> Kernel: the launch path's one lookup
_configs: dict = {}      # (grid, block, shared bytes) -> LaunchConfig


@dataclass(frozen=True)
class DeviceInfo:
    ordinal: int
    name: str
    compute_capability: tuple[int, int]
    multiprocessor_count: int
    total_memory: int
    driver_version: tuple[int, int]

    @property
    def arch(self) -> str:
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"


def _driver_module():
    from cuda.bindings import driver

    return driver


def driver_version() -> tuple[int, int] | None:
    """The CUDA version the installed driver supports, or None without a driver."""
    try:
        _init()
    except GPUUnavailableError:
        return _state.get("driver_version")
    return _state["driver_version"]


def _init() -> None:
    """cuInit once; raise GPUUnavailableError, naming the cause, if that is impossible."""
    if not _state.get("ready"):
        with _lock:
            if not _state.get("ready") and "error" not in _state:
                reason = _probe()
                if reason is None:
                    _state["ready"] = True
                else:
                    _state["error"] = reason
        if "error" in _state:
            raise GPUUnavailableError(_state["error"])


def _probe() -> str | None:
    try:
        driver = _driver_module()
        (err,) = driver.cuInit(0)
    except RuntimeError:  # cuda-pathfinder could not load libcuda
        return "no NVIDIA driver library (libcuda.so.1) was found on this machine"
    name = getattr(err, "name", str(err))
    if name == "CUDA_ERROR_STUB_LIBRARY":
        return ("only the CUDA driver's stub library was found (libcuda.so from a toolkit), "
                "not a real NVIDIA driver")
    if name == "CUDA_ERROR_NO_DEVICE":
        return "the NVIDIA driver is installed but reports no CUDA device"
    if name in ("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"):
        return f"the NVIDIA driver is too old or mismatched for this CUDA version ({name})"
    if name != "CUDA_SUCCESS":
        return f"the CUDA driver failed to initialise ({name})"
    err, v = driver.cuDriverGetVersion()
    _state["driver_version"] = (v // 1000, (v % 1000) // 10)
    err, count = driver.cuDeviceGetCount()
    if int(err) != 0 or count == 0:
        return "the NVIDIA driver is installed but reports no CUDA device"
    from . import nvrtc

    ident = nvrtc.identity()  # "nvrtc-13.5.37": read from metadata, NVRTC stays unloaded
    try:
        nv_major = int(ident.split("-")[1].split(".")[0])
    except (IndexError, ValueError):
        nv_major = 0
    if _state["driver_version"][0] < nv_major:
        dmaj, dmin = _state["driver_version"]
        return (f"the NVIDIA driver supports CUDA {dmaj}.{dmin}, too old for the cubins of this "
                f"NVRTC ({ident}); update the driver, or install an NVRTC wheel for CUDA {dmaj}")
    return None


def device(ordinal: int | None = None):
    """The cuda.core Device, made current. Raises GPUUnavailableError without a GPU."""
    _init()
    from cuda.core import Device

    dev = Device(ordinal) if ordinal is not None else Device()
    dev.set_current()
    _state["device_id"] = dev.device_id
    return dev


def device_info(ordinal: int | None = None) -> DeviceInfo:
    key = ("info", ordinal)
    if key not in _state:
        dev = device(ordinal)
        cc = dev.compute_capability
        err, total = _driver_module().cuDeviceTotalMem(dev.device_id)
        _state[key] = DeviceInfo(dev.device_id, dev.name, (cc.major, cc.minor),
                                 dev.properties.multiprocessor_count, int(total),
                                 _state["driver_version"])
    return _state[key]


def current_arch() -> str:
    """The current device's architecture, e.g. ``'sm_90'``."""
    return device_info().arch


def load_kernel(key: str, cubin: bytes, symbol: str):
    """The cuda.core Kernel ``symbol`` of a cubin, loading the module once per process."""
    kernel = _kernels.get((_state.get("device_id"), key, symbol))
    if kernel is not None:
        return kernel
    dev = device()
    obj = _modules.get((dev.device_id, key))
    try:
        if obj is None:
            from cuda.core import ObjectCode

            obj = ObjectCode.from_cubin(cubin, name=key[:16])
        kernel = obj.get_kernel(symbol)
    except Exception as e:
        raise _translate(e, f"loading kernel {symbol!r}") from e
    _modules[(dev.device_id, key)] = obj
    _kernels[(dev.device_id, key, symbol)] = kernel
    return kernel


def _function_of(kernel) -> int:
    """The CUfunction handle of a cuda.core Kernel in the current context (cuLaunchKernel's)."""
    key = ("function", _state.get("device_id"), int(kernel.handle))
    func = _state.get(key)
    if func is None:
        d = _driver_module()
        err, func = d.cuKernelGetFunction(kernel.handle)
        if int(err) != 0:
            raise GPUNBError(f"CUDA error getting a kernel's function: {err.name}")
        _state[key] = func = int(func)
    return func


class _Current(threading.local):
    stream = None   # the cuda.core Stream that gpunb.Stream.use() made current in this thread


_current = _Current()


def current_stream() -> tuple:
    """(cuda.core Stream, its handle as an int) of the current stream: the hot path's form
    of ``as_stream(None)`` (the default stream's pair is computed once per device)."""
    current = _current.stream
    if current is not None:
        return current, int(current.handle)
    key = ("default_pair", _state.get("device_id"))
    pair = _state.get(key)
    if pair is None:
        s = as_stream(None)
        pair = _state[("default_pair", _state.get("device_id"))] = (s, int(s.handle))
    return pair


def as_stream(stream):
    """A cuda.core Stream: for None the current stream (set by ``with gpunb.Stream():``), else
    the device's default stream; cuda.core streams as they are; gpunb streams, objects with
    ``__cuda_stream__`` (CuPy, PyTorch, ...) and CuPy-style ``.ptr`` handles wrapped."""
    if stream is None:
        # The per-launch path: one thread-local read, then one dict lookup.
        current = _current.stream
        if current is not None:
            return current
        default = _state.get(("default_stream", _state.get("device_id")))
        if default is None:
            dev = device()
            default = _state[("default_stream", dev.device_id)] = dev.default_stream
        return default
    from cuda.core import Stream

    if isinstance(stream, Stream):
        return stream
    core = getattr(stream, "_core_stream", None)   # a gpunb.Stream
    if core is not None:
        return core()
    if hasattr(stream, "__cuda_stream__"):
        return device().create_stream(stream)
    ptr = getattr(stream, "ptr", stream)
    if isinstance(ptr, int) and not isinstance(ptr, bool):
        return Stream.from_handle(ptr)
    raise TypeError(f"stream must be None, a cuda.core Stream, an object with __cuda_stream__ "
                    f"or a CuPy stream, not {type(stream).__name__}")


_DEFAULT_HANDLES = (None, 0, 1, 2)  # CAI v3: 1 legacy default, 2 per-thread default


def wait_for_producers(stream, producer_streams) -> None:
    """Order ``stream`` after the streams that produced the array arguments (the
    ``__cuda_array_interface__`` v3 'stream' field), as the protocol asks of consumers."""
    mine = int(stream.handle)
    for ptr in set(producer_streams):
        if ptr == mine or (ptr in _DEFAULT_HANDLES and mine in _DEFAULT_HANDLES):
            continue
        from cuda.core import Stream

        try:
            stream.wait(Stream.from_handle(1 if ptr in _DEFAULT_HANDLES else ptr))
        except Exception as e:
            raise _translate(e, "stream ordering") from e


def launch(kernel, grid, block, shared_mem: int, stream, args, producers=()) -> None:
    """Launch a cuda.core Kernel with prepared arguments (ints for pointers, NumPy scalars)
    on ``stream`` (anything :func:`as_stream` takes), after the ``producers`` streams."""
    from cuda.core import launch as _launch

    on_default = stream is None and _current.stream is None
    stream = as_stream(stream)
    # Arrays made on a default stream need no wait before a launch on the default stream.
    if producers and not (on_default and all(p in _DEFAULT_HANDLES for p in producers)):
        wait_for_producers(stream, producers)
    config = _configs.get((grid, block, shared_mem))
    if config is None:
        from cuda.core import LaunchConfig

        config = _configs[(grid, block, shared_mem)] = LaunchConfig(
            grid=grid, block=block, shmem_size=shared_mem)
    try:
        _launch(stream, config, kernel, *args)
    except (TypeError, ValueError):
        raise
    except Exception as e:
        raise _translate(e, "kernel launch") from e


def synchronize() -> None:
    """Wait for all work on the current device."""
    dev = device()
    try:
        dev.sync()
    except Exception as e:
        raise _translate(e, "device synchronize") from e


def kernel_attributes(kernel) -> dict:
    a = kernel.attributes

    def read(name):  # properties in cuda-core 1.2, methods before
        v = getattr(a, name)
        return int(v() if callable(v) else v)

    return {"registers": read("num_regs"), "shared_bytes": read("shared_size_bytes"),
            "local_bytes": read("local_size_bytes"),
            "max_threads_per_block": read("max_threads_per_block")}


def _translate(e: Exception, what: str) -> Exception:
    if isinstance(e, GPUNBError):
        return e
    return GPUNBError(f"CUDA error during {what}: {e}")


def check(result, what: str):
    """Unpack a cuda.bindings ``(CUresult, *values)`` result, raising GPUNBError on failure."""
    err = result[0] if isinstance(result, tuple) else result
    if int(err) != 0:
        raise GPUNBError(f"CUDA error during {what}: {getattr(err, 'name', err)}")
    return result[1:] if isinstance(result, tuple) else ()


def launch_packed(kernel, grid, block, shared_mem: int, stream, params: list) -> None:
    """Launch with parameters given as ctypes objects (structs by value included), which
    cuda.core's launch does not take. ``params`` must stay alive until this returns."""
    from . import fastcall

    fastcall.launch(_function_of(kernel), grid, block, shared_mem, int(as_stream(stream).handle), params)


def time_ms(fn, *, repeat: int = 20, warmup: int = 3, stream=None, sync_each: bool = False) -> float:
    """Median milliseconds of ``fn()`` over ``repeat`` runs, timed with CUDA events around
    each run.

    By default the runs are queued back to back and waited for once (as Triton's
    ``do_bench``): while the GPU is slower than the host, each time is the GPU's alone, the
    host's dispatch of the next run overlapping this one. ``sync_each=True`` waits after every
    run, so each time also holds the host's dispatch: the latency of one isolated call."""
    import statistics

    from cuda.core import EventOptions

    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat}")
    s = as_stream(stream)
    opts = EventOptions(timing_enabled=True)
    for _ in range(warmup):
        fn()
    pairs = []
    for _ in range(repeat):
        a = s.record(options=opts)
        fn()
        b = s.record(options=opts)
        if sync_each:
            b.sync()
        pairs.append((a, b))
    pairs[-1][1].sync()
    return statistics.median(b - a for a, b in pairs)
