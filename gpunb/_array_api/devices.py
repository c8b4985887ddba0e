"""Devices in the array API's sense: ``x.device``, ``device=`` of the creation functions,
``x.to_device()`` and ``x.__array_namespace__()``.

A gpunb array's device is a :class:`gpunb.cuda.Device` (as a CuPy array's is a
``cupy.cuda.Device``): equal for the same GPU, hashable, usable as ``with x.device:``. gpunb
has no CPU device: ``device="cpu"`` raises, naming the ways to the host.
"""

from __future__ import annotations

import contextlib
import sys

# The versions of the standard gpunb follows; the default is the latest (``api_version=None``).
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")
API_VERSION = API_VERSIONS[-1]

_BY_ID: dict = {}


def device_of(ordinal: int):
    """The device object of GPU ``ordinal`` (one object per GPU; made without touching the
    driver: the array that asks already lives there)."""
    d = _BY_ID.get(ordinal)
    if d is None:
        from ..cuda import Device

        d = Device.__new__(Device)
        d._id, d._saved = int(ordinal), []
        _BY_ID[ordinal] = d
    return d


def check(device, what: str):
    """``device=`` of ``what`` as a :class:`gpunb.cuda.Device`, or None for None; a clear error
    for anything else (``'cpu'``, another library's device, a string)."""
    if device is None:
        return None
    from ..cuda import Device

    if isinstance(device, Device):
        return device
    if isinstance(device, str) and device.lower().startswith("cpu") or getattr(
            device, "type", None) == "cpu":
        raise ValueError(f"{what}: device={device!r} is not a gpunb device: gpunb arrays live in "
                         "GPU memory (for host data use NumPy; gpunb.asnumpy(x) or "
                         "numpy.asarray(x) copies a gpunb array to the host)")
    raise ValueError(f"{what}: device must be None or a gpunb device (a gpunb.cuda.Device, such "
                     f"as x.device or gpunb.__array_namespace_info__().default_device()), not "
                     f"{device!r}")


def on(device, what: str):
    """A context that makes ``device=`` of ``what`` the current GPU while it creates its array
    (no switch when it already is)."""
    dev = check(device, what)
    if dev is None:
        return contextlib.nullcontext()
    from ..core.runtime import devices

    return contextlib.nullcontext() if devices.current() == dev.id else dev


def namespace(api_version):
    """``x.__array_namespace__(api_version=...)``: the gpunb module, for a version gpunb
    follows (None: the latest); ValueError naming the supported ones otherwise."""
    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError(f"gpunb does not support version {api_version!r} of the array API "
                         f"standard; it supports {', '.join(API_VERSIONS)}")
    return sys.modules["gpunb"]


def to_device(x, device, stream):
    """``x.to_device(device, stream=...)``: ``x`` itself on its own device; copies between GPUs
    and to the host are refused, naming the way that works."""
    dev = check(device, "to_device")
    if stream is not None:
        from ..core.runtime.stream import Stream

        if not isinstance(stream, (Stream, int)) or isinstance(stream, bool):
            raise TypeError(f"to_device: stream must be None, a gpunb.Stream or a CUDA stream "
                            f"handle (int), not {type(stream).__name__}")
    same_device(x, dev, "to_device")
    return x


def same_device(x, dev, what: str) -> None:
    """ValueError unless ``dev`` (a checked device, or None) is ``x``'s: gpunb copies no array
    between GPUs."""
    if dev is not None and dev.id != x.data.device_id:
        raise ValueError(f"{what}: the array is on CUDA device {x.data.device_id}; copies "
                         f"between GPUs (to device {dev.id}) are not supported")


def matrix_transpose(x):
    """``x.mT``: the last two axes swapped (a view); ValueError for fewer than two dimensions."""
    if x.ndim < 2:
        raise ValueError(f"matrix transpose needs an array of at least 2 dimensions, got {x.ndim}")
    return x.swapaxes(-1, -2)
