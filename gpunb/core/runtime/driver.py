"""The CUDA driver: device discovery, the device context and generated kernels' modules
(through :mod:`.libcuda`, so the first array and the first ufunc import neither cuda.core nor
cuda.bindings' driver module, which is imported on a background thread meanwhile), raw
kernels' modules, streams and events (through cuda.core, imported when first needed).

The first call that needs a GPU checks for one and, without one, raises
:class:`~gpunb.GPUUnavailableError` naming what is missing. Errors from cuda.core and
cuda.bindings are translated here into gpunb's exceptions.

Everything gpunb keeps for a device (its properties, default stream, memory pool, loaded
modules and the kernel tables of every kernel family) is one :class:`DeviceContext`;
:func:`context` returns the one in use, and :func:`reset_contexts` forgets them all (tests).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from .. import memo
from ..errors import GPUNBError, GPUUnavailableError
from . import early, libcuda

_lock = threading.RLock()
PREPARED_LIMIT = 4096     # entries of a device context's prepared table (DeviceContext.remember)
_configs = memo.table("driver.launch_configs")     # (grid, block, shared bytes) -> LaunchConfig
_core_launch = None                                 # cuda.core.launch, once imported


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


@dataclass
class _DriverState:
    """cuInit's outcome, once per process (it cannot be undone, so a reset keeps it)."""

    ready: bool = False
    error: str | None = None
    version: tuple[int, int] | None = None
    nvrtc_checked: bool = False


_driver = _DriverState()


@dataclass(eq=False)
class DeviceContext:
    """One device as gpunb uses it. Made on the first use of the device (which initialises
    it); the hot paths reach everything per device through this one object.

    Attributes
    ----------
    device : cuda.core Device
        Made on first use (``core_device`` until then: None): the first array needs none.
    info : DeviceInfo
    default_stream : cuda.core Stream
        The device's default stream, made on first use (``core_stream``); ``default_handle``
        is its ``CUstream`` value, known without it.
    handle : int
        The device's primary context (``CUcontext``).
    pool : gpunb.MemoryPool or None
        The default memory pool, made on the first allocation.
    modules, kernels, functions : dict
        Loaded modules by cache key, cuda.core Kernels by (cache key, symbol), and the
        ``CUfunction`` handle of each Kernel handle.
    loaded : dict
        The kernel families' table: (family, kernel key) -> loaded kernel
        (:mod:`gpunb.core.kernels.loader`).
    prepared : dict
        Prepared fast-path launches: (owner, signature) -> what the owner stored.
    staging : list
        Free page-locked buffers for reads back that overlap later work
        (:class:`gpunb.core.runtime.memory.Readback`).
    """

    core_device: Any
    info: DeviceInfo
    core_stream: Any
    default_handle: int
    handle: int = 0
    pool: Any = None
    modules: dict = field(default_factory=dict)
    kernels: dict = field(default_factory=dict)
    functions: dict = field(default_factory=dict)
    loaded: dict = field(default_factory=dict)
    prepared: dict = field(default_factory=dict)
    staging: list = field(default_factory=list)

    @property
    def device(self):
        dev = self.core_device
        if dev is None or _current.core is not self:
            # cuda.core keeps its Device objects and their 'initialised' state per thread: each
            # thread that uses cuda.core's side of this device says set_current() once
            Device = cuda_core().Device

            with _lock:
                mine = Device(self.info.ordinal)
                mine.set_current()
                _current.core = _current.ctx = self
                if dev is None:
                    dev = self.core_device = mine
        return dev

    @property
    def default_stream(self):
        stream = self.core_stream
        if stream is None or _current.core is not self:
            dev = self.device
            if stream is None:
                stream = self.core_stream = dev.default_stream
        return stream

    @property
    def ordinal(self) -> int:
        return self.info.ordinal

    @property
    def arch(self) -> str:
        return self.info.arch

    @property
    def sm_count(self) -> int:
        return self.info.multiprocessor_count

    def remember(self, key, value):
        """Store ``value`` (a prepared launch, or any plan of this device) in ``prepared``
        under ``key`` and return it. Past :data:`PREPARED_LIMIT` entries the table starts
        over: the shapes a long session sees are unbounded, the ones in use come back at once."""
        if len(self.prepared) >= PREPARED_LIMIT:
            self.prepared.clear()
        self.prepared[key] = value
        return value

    def __repr__(self) -> str:
        return f"<gpunb DeviceContext {self.ordinal}: {self.info.name} ({self.arch})>"


_contexts: dict[int, DeviceContext] = {}
active: DeviceContext | None = None     # the device gpunb works on; None until one is used


_core = None
_core_lock = threading.Lock()


def cuda_core():
    """The cuda.core module, imported once under a lock: its ``__init__`` copies a submodule's
    ``__spec__`` over its own, so Python does not make a second thread importing it meanwhile
    wait, and that thread would get a half-made module (``cannot import name 'ObjectCode'``:
    seen with four threads loading their first raw kernel at once). gpunb imports cuda.core
    only through here."""
    global _core
    core = _core
    if core is None:
        with _core_lock:
            if _core is None:
                import cuda.core

                _core = cuda.core
            core = _core
    return core


def _driver_module():
    from cuda.bindings import driver

    return driver


def driver_version() -> tuple[int, int] | None:
    """The CUDA version the installed driver supports, or None without a driver."""
    try:
        _init()
    except GPUUnavailableError:
        pass
    return _driver.version


def _init() -> None:
    """cuInit once; raise GPUUnavailableError, naming the cause, if that is impossible."""
    if not _driver.ready:
        with _lock:
            if not _driver.ready and _driver.error is None:
                reason = _probe()
                if reason is None:
                    _driver.ready = True
                else:
                    _driver.error = reason
        if _driver.error is not None:
            raise GPUUnavailableError(_driver.error)


def _probe() -> str | None:
    early.wait()        # cuInit and the context, if begun while the first array's modules loaded
    try:
        libcuda.lib()
    except OSError:
        return "no NVIDIA driver library (libcuda.so.1) was found on this machine"
    name, version, count = libcuda.init()
    if name == "CUDA_ERROR_STUB_LIBRARY":
        return ("only the CUDA driver's stub library was found (libcuda.so from a toolkit), "
                "not a real NVIDIA driver")
    if name == "CUDA_ERROR_NO_DEVICE":
        return "the NVIDIA driver is installed but reports no CUDA device"
    if name in ("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"):
        return f"the NVIDIA driver is too old or mismatched for this CUDA version ({name})"
    if name != "CUDA_SUCCESS":
        return f"the CUDA driver failed to initialise ({name})"
    _driver.version = version
    if count == 0:
        return "the NVIDIA driver is installed but reports no CUDA device"
    return None


def _check_nvrtc() -> None:
    """Before the first module load: a driver older than NVRTC's CUDA cannot load its cubins
    (checked here, not at cuInit: reading NVRTC's version costs the first array ~40 ms)."""
    if _driver.nvrtc_checked:
        return
    from . import nvrtc

    ident = nvrtc.identity()  # "nvrtc-13.5.37": read from metadata, NVRTC stays unloaded
    try:
        nv_major = int(ident.split("-")[1].split(".")[0])
    except (IndexError, ValueError):
        nv_major = 0
    dmaj, dmin = _driver.version or (0, 0)
    if dmaj < nv_major:
        raise GPUUnavailableError(
            f"the NVIDIA driver supports CUDA {dmaj}.{dmin}, too old for the cubins of this "
            f"NVRTC ({ident}); update the driver, or install an NVRTC wheel for CUDA {dmaj}")
    _driver.nvrtc_checked = True


def context(ordinal: int | None = None) -> DeviceContext:
    """The context of device ``ordinal``, default the one in use (on first use: the current
    CUDA context's device, else device 0), made current. Raises GPUUnavailableError without
    a GPU."""
    ctx = active
    if ctx is not None and (ordinal is None or ordinal == ctx.info.ordinal):
        if _current.ctx is not ctx:     # this thread's first use: make the context current here
            libcuda.set_current(ctx.handle)
            _current.ctx = ctx
        return ctx
    return _activate(ordinal)


def _activate(ordinal: int | None) -> DeviceContext:
    global active
    _init()
    with _lock:
        if ordinal is None:
            ordinal = libcuda.current_device()
            if ordinal is None:
                ordinal = 0
        ctx = _contexts.get(ordinal)
        if ctx is None:
            handle, name, cc, sms, total = libcuda.open_device(ordinal)
            info = DeviceInfo(ordinal, name, cc, sms, total, _driver.version)
            ctx = _contexts[ordinal] = DeviceContext(None, info, None, libcuda.default_stream_handle(),
                                                     handle)
            early.preload()
        else:
            libcuda.set_current(ctx.handle)
        _current.ctx = active = ctx
    return ctx


def reset_contexts() -> None:
    """Forget every device context: pools (their cached blocks returned to the driver), loaded
    modules, kernel tables. For tests; arrays made before stay valid."""
    global active
    with _lock:
        for ctx in _contexts.values():
            if ctx.pool is not None:
                ctx.pool.close()
            for key, module in ctx.modules.items():
                if key[0] == "cubin":       # libcuda's modules (cuda.core unloads its own)
                    libcuda.unload_module(module, ctx.handle)
            libcuda.free_staging(ctx.staging, ctx.handle)
        _contexts.clear()
        active = None


def device(ordinal: int | None = None):
    """The cuda.core Device, made current in this thread. Raises GPUUnavailableError without
    a GPU."""
    dev = context(ordinal).device
    dev.set_current()
    return dev


def device_info(ordinal: int | None = None) -> DeviceInfo:
    """The device's name, compute capability (``.arch``), SM count, memory and driver
    version (device ``ordinal``, default the one in use)."""
    return context(ordinal).info


def current_arch() -> str:
    """The current device's architecture, e.g. ``'sm_90'``."""
    return context().info.arch


def load_kernel(key: str, cubin: bytes, symbol: str):
    """The cuda.core Kernel ``symbol`` of a cubin, loading the module once per device."""
    ctx = context()
    kernel = ctx.kernels.get((key, symbol))
    if kernel is not None:
        return kernel
    _check_nvrtc()
    obj = ctx.modules.get(key)
    try:
        if obj is None:
            ObjectCode = cuda_core().ObjectCode

            obj = ObjectCode.from_cubin(cubin, name=key[:16])
        kernel = obj.get_kernel(symbol)
    except Exception as e:
        raise _translate(e, f"loading kernel {symbol!r}") from e
    ctx.modules[key] = obj
    ctx.kernels[(key, symbol)] = kernel
    return kernel


def load_functions(key: str, cubin: bytes, symbols, threads: int) -> tuple[dict, dict]:
    """The ``CUfunction`` handle of each of ``symbols`` in a cubin, loading its module once
    per device (through :mod:`.libcuda`: a generated kernel needs no cuda.core object), and
    each one's resident blocks of ``threads`` threads per SM."""
    ctx = context()
    mkey = ("cubin", key)
    module = ctx.modules.get(mkey)
    if module is None:
        _check_nvrtc()
        module = ctx.modules[mkey] = libcuda.load_module(cubin)
    functions, occupancy = {}, {}
    for s in symbols:
        functions[s] = f = libcuda.module_function(module, s)
        occupancy[s] = libcuda.blocks_per_sm(f, threads)
    return functions, occupancy


def function_of(kernel) -> int:
    """The CUfunction handle of a cuda.core Kernel in the current context (cuLaunchKernel's)."""
    ctx = context()
    handle = int(kernel.handle)
    func = ctx.functions.get(handle)
    if func is None:
        err, func = _driver_module().cuKernelGetFunction(kernel.handle)
        if int(err) != 0:
            raise GPUNBError(f"CUDA error getting a kernel's function: {err.name}")
        ctx.functions[handle] = func = int(func)
    return func


class _MainThread:
    """The main thread's :data:`_current`, in plain attributes: a ``threading.local`` read costs
    about 650-950 instructions (its per-thread lookup), a plain one about 180, and a small
    call's hot path reads two or four. Code that knows it runs on the main thread
    (``get_ident() == MAIN``) reads :data:`main`; :class:`_Current` keeps it equal."""

    __slots__ = ("stream", "ctx", "core")

    def __init__(self):
        self.stream = self.ctx = self.core = None


main = _MainThread()
MAIN = threading.main_thread().ident
get_ident = threading.get_ident


class _Current(threading.local):
    stream = None   # the cuda.core Stream that gpunb.Stream.use() made current in this thread
    ctx = None      # the DeviceContext whose CUDA context this thread has made current
    core = None     # the DeviceContext whose cuda.core Device this thread has set current

    def __setattr__(self, name, value):
        threading.local.__setattr__(self, name, value)
        if get_ident() == MAIN:
            setattr(main, name, value)

    def __delattr__(self, name):
        threading.local.__delattr__(self, name)
        if get_ident() == MAIN:
            setattr(main, name, getattr(self, name))     # the class's default again


_current = _Current()


def current_stream() -> tuple:
    """(cuda.core Stream or None, its handle as an int) of the current stream: the hot
    path's form of ``as_stream(None)``. None stands for the device's default stream, whose
    cuda.core object the hot path does not need (nor make: see :mod:`.libcuda`)."""
    current = _current.stream
    if current is not None:
        return current, int(current.handle)
    return None, context().default_handle      # (context() makes it current in a new thread)


def stream_handle() -> int:
    """``current_stream()[1]``: the current stream's handle, in fewer steps (every launch asks)."""
    cur = main if get_ident() == MAIN else _current
    s = cur.stream
    if s is None:
        ctx = active
        if ctx is not None and cur.ctx is ctx:
            return ctx.default_handle
        return current_stream()[1]
    return int(s.handle)


def as_stream(stream):
    """A cuda.core Stream: for None the current stream (set by ``with gpunb.Stream():``), else
    the device's default stream; cuda.core streams as they are; gpunb streams, objects with
    ``__cuda_stream__`` (CuPy, PyTorch, ...) and CuPy-style ``.ptr`` handles wrapped."""
    if stream is None:
        # The per-launch path: one thread-local read, then one attribute.
        current = _current.stream
        if current is not None:
            return current
        return (active or context()).default_stream
    Stream = cuda_core().Stream

    if isinstance(stream, Stream):
        return stream
    core = getattr(stream, "_core_stream", None)   # a gpunb.Stream
    if core is not None:
        return core()
    if hasattr(stream, "__cuda_stream__"):
        return device().create_stream(stream)
    ptr = getattr(stream, "ptr", stream)
    if isinstance(ptr, int) and not isinstance(ptr, bool):
        if ptr in DEFAULT_HANDLES:
            context()       # the default handles name the calling thread's current context
        return Stream.from_handle(ptr)
    raise TypeError(f"stream must be None, a cuda.core Stream, an object with __cuda_stream__ "
                    f"or a CuPy stream, not {type(stream).__name__}")


DEFAULT_HANDLES = (None, 0, 1, 2)  # CAI v3: 1 legacy default, 2 per-thread default


def wait_for_producers(stream, producer_streams) -> None:
    """Order ``stream`` after the streams that produced the array arguments (the
    ``__cuda_array_interface__`` v3 'stream' field), as the protocol asks of consumers."""
    mine = int(stream.handle)
    for ptr in set(producer_streams):
        if ptr == mine or (ptr in DEFAULT_HANDLES and mine in DEFAULT_HANDLES):
            continue
        Stream = cuda_core().Stream

        try:
            stream.wait(Stream.from_handle(1 if ptr in DEFAULT_HANDLES else ptr))
        except Exception as e:
            raise _translate(e, "stream ordering") from e


def launch(kernel, grid, block, shared_mem: int, stream, args) -> None:
    """Launch a cuda.core Kernel on the cuda.core Stream ``stream`` with arguments as raw
    kernels give them: ints for pointers, NumPy scalars by value. cuda.core packs them in
    compiled code, faster than building ctypes objects per call (measured on the H100: 4.5
    against 7.6 us for four arguments)."""
    global _core_launch
    if _core_launch is None:
        _core_launch = cuda_core().launch
    config = _configs.get((grid, block, shared_mem))
    if config is None:
        LaunchConfig = cuda_core().LaunchConfig

        config = _configs[(grid, block, shared_mem)] = LaunchConfig(
            grid=grid, block=block, shmem_size=shared_mem)
    try:
        _core_launch(stream, config, kernel, *args)
    except (TypeError, ValueError):
        raise
    except Exception as e:
        raise _translate(e, "kernel launch") from e


# Out-of-bounds GPU indices (kernels/indexing/run.py): the host word the indexing kernels set,
# read at the synchronization points; None until an indexing kernel has run.
index_flag = None


def index_error() -> None:
    """Raise the pending IndexError of an indexing kernel (``index_flag[0]`` is set)."""
    from ..kernels.indexing.run import check

    check()


def synchronize() -> None:
    """Wait for all work on the current device."""
    context()       # current in this thread
    libcuda.check(libcuda.lib().cuCtxSynchronize(), "device synchronize")
    if index_flag is not None and index_flag[0]:
        index_error()


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


def time_ms(fn, *, repeat: int = 20, warmup: int = 3, stream=None, sync_each: bool = False) -> float:
    """Median milliseconds of ``fn()`` over ``repeat`` runs, timed with CUDA events around
    each run.

    By default the runs are queued back to back and waited for once (as Triton's
    ``do_bench``): while the GPU is slower than the host, each time is the GPU's alone, the
    host's dispatch of the next run overlapping this one. ``sync_each=True`` waits after every
    run, so each time also holds the host's dispatch: the latency of one isolated call."""
    import statistics

    EventOptions = cuda_core().EventOptions

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
