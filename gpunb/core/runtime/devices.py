"""Device queries in CuPy's shape (``cupy.cuda.runtime``): count, properties, attributes,
memory, the current device, the profiler. ``gpunb.cuda`` is built on these; like the rest of
``runtime``, this module is where cuda.bindings is called and its errors translated.

Without a GPU, :func:`count` is 0 and :func:`available` False; everything else raises
:class:`~gpunb.GPUUnavailableError` naming the cause.
"""

from __future__ import annotations

from ..errors import GPUUnavailableError
from . import driver


def available() -> bool:
    """Whether a usable GPU is present (initialises the driver, makes no context)."""
    try:
        driver._init()
    except GPUUnavailableError:
        return False
    return True


def count() -> int:
    """Number of CUDA devices (0 without a usable driver)."""
    if not available():
        return 0
    err, n = driver._driver_module().cuDeviceGetCount()
    return int(n) if int(err) == 0 else 0


def check_ordinal(ordinal) -> int:
    """``ordinal`` as a device number in ``range(count())``; ValueError otherwise."""
    try:
        i = int(ordinal)
    except (TypeError, ValueError):
        raise TypeError(f"a device is named by its number, not {type(ordinal).__name__}") from None
    driver._init()
    n = count()
    if not 0 <= i < n:
        raise ValueError(f"device {i} does not exist: this machine has {n} CUDA "
                         f"device{'s' if n != 1 else ''} (0 to {n - 1})")
    return i


def current() -> int:
    """The number of the device gpunb works on (made current on first use: device 0)."""
    return driver.context().ordinal


def use(ordinal: int) -> None:
    """Make device ``ordinal`` the one gpunb works on in this process."""
    driver.context(check_ordinal(ordinal)).device.set_current()


def synchronize(ordinal: int) -> None:
    """Wait for all work on device ``ordinal``."""
    dev = driver.context(check_ordinal(ordinal)).device
    try:
        dev.sync()
    except Exception as e:
        raise driver._translate(e, "device synchronize") from e


def attributes(ordinal: int) -> dict:
    """Every ``CUdevice_attribute`` of the device, named as CuPy's ``Device.attributes``
    names them: the runtime's ``cudaDevAttr`` names (``MultiProcessorCount``,
    ``MaxThreadsPerBlock``...), same numbers as the driver's."""
    drv = driver._driver_module()
    dev = check_ordinal(ordinal)
    out = {}
    for attr, name in _attribute_names().items():
        err, value = drv.cuDeviceGetAttribute(attr, dev)
        if int(err) == 0:
            out[name] = int(value)
    return out


_names: dict = {}


def _attribute_names() -> dict:
    if not _names:
        from cuda.bindings import runtime

        runtime_names = {int(a): a.name.removeprefix("cudaDevAttr") for a in runtime.cudaDeviceAttr}
        for attr in driver._driver_module().CUdevice_attribute:
            name = attr.name.removeprefix("CU_DEVICE_ATTRIBUTE_")
            if name == "MAX":       # the enum's end marker, not an attribute
                continue
            # the driver-only ones (no runtime name) in the same CamelCase
            _names[attr] = runtime_names.get(int(attr)) or "".join(
                p.capitalize() for p in name.lower().split("_"))
    return _names


def properties(ordinal: int) -> dict:
    """``cudaGetDeviceProperties``' common fields, keyed as CuPy's
    ``runtime.getDeviceProperties`` keys them (``name`` as bytes, ``totalGlobalMem``...)."""
    ctx = driver.context(check_ordinal(ordinal))
    info, a = ctx.info, attributes(ordinal)
    return {
        "name": info.name.encode(), "totalGlobalMem": info.total_memory,
        "major": info.compute_capability[0], "minor": info.compute_capability[1],
        "multiProcessorCount": info.multiprocessor_count,
        "sharedMemPerBlock": a.get("MaxSharedMemoryPerBlock", 0),
        "regsPerBlock": a.get("MaxRegistersPerBlock", 0), "warpSize": a.get("WarpSize", 32),
        "maxThreadsPerBlock": a.get("MaxThreadsPerBlock", 0),
        "maxThreadsDim": (a.get("MaxBlockDimX", 0), a.get("MaxBlockDimY", 0), a.get("MaxBlockDimZ", 0)),
        "maxGridSize": (a.get("MaxGridDimX", 0), a.get("MaxGridDimY", 0), a.get("MaxGridDimZ", 0)),
        "clockRate": a.get("ClockRate", 0), "memoryClockRate": a.get("MemoryClockRate", 0),
        "memoryBusWidth": a.get("GlobalMemoryBusWidth", 0), "l2CacheSize": a.get("L2CacheSize", 0),
        "maxThreadsPerMultiProcessor": a.get("MaxThreadsPerMultiProcessor", 0),
        "pciBusID": a.get("PciBusId", 0), "pciDeviceID": a.get("PciDeviceId", 0),
        "pciDomainID": a.get("PciDomainId", 0), "ECCEnabled": a.get("EccEnabled", 0),
    }


def pci_bus_id(ordinal: int) -> str:
    """The device's PCI bus id, ``'0000:1B:00.0'``."""
    drv = driver._driver_module()
    err, text = drv.cuDeviceGetPCIBusId(16, check_ordinal(ordinal))
    driver.check((err,), "PCI bus id query")
    return text.split(b"\0", 1)[0].decode() if isinstance(text, bytes) else str(text)


def profiler(start: bool) -> None:
    """Start or stop the CUDA profiler's collection (``cuProfilerStart``/``Stop``), for
    Nsight Systems' ``--capture-range=cudaProfilerApi``."""
    driver.context()
    drv = driver._driver_module()
    driver.check(drv.cuProfilerStart() if start else drv.cuProfilerStop(), "profiler control")
