"""The ``cupy.cuda.runtime`` calls CuPy examples use, answered by gpunb's runtime (CUDA
driver API underneath; names and return forms as CuPy's)."""

from __future__ import annotations

from ..core.runtime import devices as _devices
from ..core.runtime import driver as _driver
from ..core.runtime import memory as _memory


def getDeviceCount() -> int:
    """Number of CUDA devices (0 without a usable driver)."""
    return _devices.count()


def getDevice() -> int:
    """The current device's number."""
    return _devices.current()


def setDevice(device: int) -> None:
    """Make ``device`` current."""
    _devices.use(device)


def deviceSynchronize() -> None:
    """Wait for all work on the current device."""
    _driver.synchronize()


def getDeviceProperties(device: int) -> dict:
    """The device's properties, keyed as CuPy's (``name`` is bytes)."""
    return _devices.properties(device)


def deviceGetAttribute(attrib: str, device: int) -> int:
    """One device attribute by CuPy's attribute name (``'MultiProcessorCount'``)."""
    attrs = _devices.attributes(device)
    if attrib not in attrs:
        raise ValueError(f"unknown device attribute {attrib!r}; known: {', '.join(sorted(attrs)[:8])}...")
    return attrs[attrib]


def memGetInfo() -> tuple[int, int]:
    """(free, total) bytes on the current device."""
    return _memory.mem_info()


def driverGetVersion() -> int:
    """The CUDA version the driver supports, as CUDA encodes it (13000 for 13.0)."""
    v = _driver.driver_version()
    if v is None:
        from ..core.errors import GPUUnavailableError

        raise GPUUnavailableError("no usable NVIDIA driver")
    return v[0] * 1000 + v[1] * 10


def runtimeGetVersion() -> int:
    """The CUDA version of gpunb's compiler (NVRTC), encoded as CUDA does (13050 for 13.5):
    gpunb has no CUDA runtime library; NVRTC's version plays that part."""
    from ..core.runtime import nvrtc

    ident = nvrtc.identity()            # "nvrtc-13.5.37"
    major, minor = (int(p) for p in ident.split("-")[1].split(".")[:2])
    return major * 1000 + minor * 10


is_hip = False
