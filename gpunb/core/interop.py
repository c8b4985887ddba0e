"""Interoperability: ``__cuda_array_interface__`` in, DLPack in and out."""

from __future__ import annotations

import ctypes
import operator

import numpy as np

from . import dtypes, layout
from .ndarray import MemoryPointer, ndarray


def from_cuda_array_interface(obj) -> ndarray:
    """A zero-copy gpunb view of any object exposing ``__cuda_array_interface__`` (v2/v3).
    The view keeps ``obj`` alive; its stream (v3) is waited on before gpunb uses the data."""
    cai = obj.__cuda_array_interface__
    dt = dtypes.check(np.dtype(cai["typestr"]))
    shape = tuple(int(s) for s in cai["shape"])
    strides = cai.get("strides")
    strides = tuple(int(s) for s in strides) if strides is not None else layout.c_strides(shape, dt.itemsize)
    if cai.get("mask") is not None:
        raise TypeError("masked __cuda_array_interface__ arrays are not supported")
    stream = cai.get("stream")
    if stream not in (None, 0, 1, 2):
        from .runtime import driver

        driver.wait_for_producers(driver.as_stream(None), [stream])
    ptr = int(cai["data"][0])
    return ndarray._view(MemoryPointer(ptr, obj), shape, strides, dt, obj)


# -- DLPack ----------------------------------------------------------------------------------
# https://dmlc.github.io/dlpack/latest/python_spec.html. The structs are read and patched with
# ctypes. An exported capsule's memory management is NumPy's, which is C: its capsule
# destructor and tensor deleter must run in C, because a consumer (or the interpreter
# unwinding an exception) may drop a capsule while an exception is pending, and CPython cannot
# enter a Python callback (a ctypes one included) in that state: it crashes.

_kDLCPU, _kDLCUDA, _kDLCUDAManaged = 1, 2, 13
_READ_ONLY, _IS_COPIED = 1 << 0, 1 << 1

_DEVICE_NAMES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan",
                 8: "kDLMetal", 9: "kDLVPI", 10: "kDLROCM", 11: "kDLROCMHost", 12: "kDLExtDev",
                 13: "kDLCUDAManaged", 14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon",
                 17: "kDLMAIA", 18: "kDLTrn"}
_KIND_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "opaque handle", 4: "bfloat", 5: "complex",
               6: "bool", 7: "float8_e3m4", 8: "float8_e4m3", 9: "float8_e4m3b11fnuz",
               10: "float8_e4m3fn", 11: "float8_e4m3fnuz", 12: "float8_e5m2",
               13: "float8_e5m2fnuz", 14: "float8_e8m0fnu", 15: "float6_e2m3fn",
               16: "float6_e3m2fn", 17: "float4_e2m1fn"}
# (type code, bits) of every dtype gpunb supports
_FROM_DL = {(_KIND_CODES[d.kind], d.itemsize * 8): d for d in dtypes.SUPPORTED}

_UNVERSIONED, _VERSIONED = b"dltensor", b"dltensor_versioned"
_USED = {_UNVERSIONED: b"used_dltensor", _VERSIONED: b"used_dltensor_versioned"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", _DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


# void (*)(DLManagedTensor*): how an imported tensor's deleter is called.
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

# Private prototypes (PYFUNCTYPE: GIL held, Python errors raised) so that nobody else's
# argtypes on ctypes.pythonapi's shared function objects matter.
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_SetName", ctypes.pythonapi))

_CAPSULE_TYPE = type(_capsule_new(1, None, None))


class _HostTemplate:
    """Describes a gpunb array to NumPy (``__array_interface__``) without touching its memory,
    and keeps the array alive for as long as NumPy's view of it lives."""

    __slots__ = ("__array_interface__", "array")


def _check_stream(stream):
    """``stream`` of ``__dlpack__`` as None or an int, or an error naming the valid values."""
    if stream is None:
        return None
    if isinstance(stream, bool):
        raise TypeError("stream must be None or an int, not bool")
    try:
        stream = operator.index(stream)
    except TypeError:
        raise TypeError(f"stream must be None or an int, not {type(stream).__name__}") from None
    if stream == 0 or stream < -1:
        raise ValueError(
            f"stream={stream} is not a DLPack stream for CUDA: pass None or 1 (the legacy "
            "default stream), 2 (the per-thread default stream), -1 (no synchronization) or "
            "a stream handle")
    return stream


class _NoCopyError(BufferError, ValueError):
    """A copy is needed and ``copy=False`` was given: the array API's BufferError (a ValueError
    as gpunb raised before)."""


def to_dlpack(a, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of ``a`` (what ``ndarray.__dlpack__`` returns).

    Parameters
    ----------
    stream : int, optional
        The consumer's stream: work queued on gpunb's current stream is ordered before it
        (None or 1: the legacy default stream, 2: the per-thread default stream, -1: no
        ordering).
    max_version : tuple of int, optional
        The highest DLPack version the consumer supports: ``(1, 0)`` or later gives a
        ``"dltensor_versioned"`` capsule, None or older a ``"dltensor"`` one.
    dl_device : tuple of int, optional
        ``(2, device_id)`` of this array, or ``(1, 0)`` for a copy in host memory.
    copy : bool, optional
        True exports a copy; False refuses to copy; None copies only when needed (for a
        host ``dl_device``).
    """
    stream = _check_stream(stream)
    versioned = max_version is not None and int(tuple(max_version)[0]) >= 1
    if dl_device is not None:
        dev = tuple(int(x) for x in dl_device)
        if dev == (_kDLCPU, 0):
            if copy is False:
                raise _NoCopyError("exporting a gpunb array to the CPU (kDLCPU) needs a copy, and "
                                   "copy=False was given")
            host = a.get()      # waits for the copy on the current stream
            try:
                return host.__dlpack__(max_version=max_version)
            except TypeError:   # NumPy < 2.1
                return host.__dlpack__()
        if dev != (_kDLCUDA, a.data.device_id):
            name = _DEVICE_NAMES.get(dev[0], f"device type {dev[0]}")
            raise BufferError(f"gpunb cannot export to DLPack device {dev} ({name}, id {dev[1]}): "
                              f"this array is on (kDLCUDA, {a.data.device_id})")
    copied = False
    if copy:
        a, copied = a.copy(), True
    if stream != -1:
        from .runtime.stream import order_stream

        order_stream(stream)

    # NumPy builds the capsule from a host view of the same layout and address, which it never
    # dereferences: its struct, deleter and capsule destructor, with the array as owner (the
    # view's base). Only the device is then changed to CUDA.
    dt = a.dtype
    itemsize = dt.itemsize
    strides = []
    for n, s in zip(a.shape, a.strides):
        if s % itemsize:
            if n > 1 and a.size:
                raise BufferError(f"DLPack strides count elements: a byte stride of {s} is not "
                                  f"a multiple of the itemsize {itemsize} (copy the array first)")
            s = itemsize    # an axis never stepped along: any stride is right
        strides.append(s)
    holder = _HostTemplate()
    holder.array = a
    holder.__array_interface__ = {"version": 3, "shape": a.shape, "typestr": dt.str,
                                  "strides": tuple(strides), "data": (a.data.ptr, False)}
    view = np.asarray(holder)
    if versioned:
        try:
            capsule = view.__dlpack__(max_version=(1, 0))
        except TypeError:   # NumPy < 2.1 makes unversioned capsules, which a consumer accepts
            capsule = view.__dlpack__()
    else:
        capsule = view.__dlpack__()
    name = _VERSIONED if _capsule_is_valid(id(capsule), _VERSIONED) else _UNVERSIONED
    pointer = _capsule_get_pointer(id(capsule), name)
    if name == _VERSIONED:
        m = _DLManagedTensorVersioned.from_address(pointer)
        m.flags = _IS_COPIED if copied else 0
    else:
        m = _DLManagedTensor.from_address(pointer)
    t = m.dl_tensor
    t.data = a.data.ptr or None     # NumPy gives an empty array memory of its own
    t.device.device_type, t.device.device_id = _kDLCUDA, a.data.device_id
    return capsule


class _Imported:
    """Owns an imported DLPack tensor: the base of its gpunb views. When the last view dies,
    the tensor's deleter is called, once."""

    __slots__ = ("_address", "_deleter", "__weakref__")

    def __init__(self, address: int, deleter_address):
        self._address = address
        self._deleter = _DELETER(deleter_address) if deleter_address else None

    def __del__(self):
        deleter, self._deleter = self._deleter, None
        if deleter is not None:
            deleter(self._address)

    def __repr__(self) -> str:
        return f"<gpunb DLPack tensor 0x{self._address:x}>"


def _device_error(device_type: int, device_id: int, what: str) -> BufferError:
    name = _DEVICE_NAMES.get(device_type, f"device type {device_type}")
    hint = ("; for a NumPy/CPU array use gpunb.asarray, which copies it to the GPU"
            if device_type in (_kDLCPU, 3) else "")
    return BufferError(f"gpunb.from_dlpack needs CUDA device memory (kDLCUDA or "
                       f"kDLCUDAManaged), but {what} is on {name} (id {device_id}){hint}")


def _dtype_of(dl: _DLDataType) -> np.dtype:
    code, bits, lanes = int(dl.code), int(dl.bits), int(dl.lanes)
    dt = _FROM_DL.get((code, bits)) if lanes == 1 else None
    if dt is None:
        base = _CODE_NAMES.get(code, f"type code {code}")
        name = base if code >= 7 or code == 3 else f"{base}{bits}"
        if lanes != 1:
            name += f" x{lanes} lanes"
        supported = ", ".join(d.name for d in dtypes.SUPPORTED)
        raise BufferError(f"DLPack dtype {name} is not supported by gpunb (it supports {supported})")
    return dt


def _parse_device(device):
    """``device`` of from_dlpack as a DLPack device tuple, or None."""
    if device is None:
        return None
    if isinstance(device, tuple):
        return tuple(int(x) for x in device)
    if isinstance(device, int) and not isinstance(device, bool):
        return (_kDLCUDA, device)
    if type(device).__name__ == "Device" and hasattr(device, "id"):   # gpunb.cuda.Device (x.device)
        return (_kDLCUDA, int(device.id))
    text = str(device)
    if text == "cuda":
        from .runtime import driver

        return (_kDLCUDA, driver.active.info.ordinal if driver.active is not None else 0)
    if text.startswith("cuda:") and text[5:].isdigit():
        return (_kDLCUDA, int(text[5:]))
    raise ValueError(f"device must be a gpunb device (x.device), 'cuda', 'cuda:N', an int N or "
                     f"(2, N), not {device!r}")


def from_dlpack(obj, *, device=None, copy=None) -> ndarray:
    """A gpunb view of another library's GPU array, through DLPack, without a copy.

    Parameters
    ----------
    obj : object with ``__dlpack__``, or a DLPack capsule
        A CUDA array (CuPy, PyTorch, JAX, cuda.core, gpunb...). It is asked to make its data
        ready for gpunb's current stream (the ``stream`` argument of ``__dlpack__``).
    device : str, int or tuple, optional
        The device the result must be on (``'cuda:0'``, ``0``, ``(2, 0)``).
    copy : bool, optional
        True returns a copy; None and False share the memory.

    Returns
    -------
    ndarray
        Shares the memory of ``obj`` (unless ``copy=True``) and keeps it alive.

    Raises
    ------
    BufferError
        If the data is not in CUDA memory (host arrays: use :func:`gpunb.asarray`), its dtype
        has no gpunb counterpart, or the capsule was already consumed.
    """
    dl_device = _parse_device(device)
    if dl_device is not None and dl_device[0] not in (_kDLCUDA, _kDLCUDAManaged):
        raise _device_error(dl_device[0], dl_device[1], "the requested device")
    if type(obj) is _CAPSULE_TYPE:
        capsule = obj
    elif hasattr(obj, "__dlpack__"):
        dev = getattr(obj, "__dlpack_device__", None)
        if dev is not None:
            dev_type, dev_id = dev()
            if int(dev_type) not in (_kDLCUDA, _kDLCUDAManaged):
                raise _device_error(int(dev_type), int(dev_id),
                                    f"this {type(obj).__module__}.{type(obj).__qualname__}")
        from .runtime.stream import current_stream_handle

        stream = current_stream_handle()
        kwargs = {"stream": stream, "max_version": (1, 0)}
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        try:
            capsule = obj.__dlpack__(**kwargs)
        except TypeError:   # a producer from before DLPack 1.0 (no max_version, dl_device)
            capsule = obj.__dlpack__(stream=stream)
    else:
        raise TypeError(f"{type(obj).__name__} does not support DLPack (it has no __dlpack__); "
                        "for host data use gpunb.asarray")
    arr = _import_capsule(capsule, copy)
    if dl_device is not None and arr.data.device_id != dl_device[1]:
        raise BufferError(f"the array is on CUDA device {arr.data.device_id}, not on the "
                          f"requested device {dl_device[1]}")
    return arr.copy() if copy else arr


def _import_capsule(capsule, copy) -> ndarray:
    address = id(capsule)
    for name in (_VERSIONED, _UNVERSIONED):
        if _capsule_is_valid(address, name):
            break
    else:
        if any(_capsule_is_valid(address, used) for used in _USED.values()):
            raise BufferError("this DLPack capsule was already consumed: a capsule can be "
                              "imported once (pass the array itself to from_dlpack)")
        raise TypeError("not a DLPack capsule: expected a PyCapsule named 'dltensor' or "
                        "'dltensor_versioned'")
    pointer = _capsule_get_pointer(address, name)
    if name == _VERSIONED:
        m = _DLManagedTensorVersioned.from_address(pointer)
        if m.version.major != 1:
            raise BufferError(f"DLPack {m.version.major}.{m.version.minor} tensors are not "
                              "supported (gpunb reads DLPack 1.x)")
        if m.flags & _READ_ONLY and not copy:
            raise BufferError("this DLPack tensor is read-only and gpunb arrays are writable; "
                              "pass copy=True for a writable copy")
    else:
        m = _DLManagedTensor.from_address(pointer)
    t = m.dl_tensor
    if t.device.device_type not in (_kDLCUDA, _kDLCUDAManaged):
        raise _device_error(t.device.device_type, t.device.device_id, "this DLPack tensor")
    dt = _dtype_of(t.dtype)
    ndim = int(t.ndim)
    shape = tuple(int(t.shape[i]) for i in range(ndim))
    if ndim and t.strides:
        elements = tuple(int(t.strides[i]) for i in range(ndim))
        if any(abs(e) >= 1 << 48 for e in elements):
            # e.g. a negative byte stride divided as an unsigned number by the producer
            raise BufferError(f"this DLPack tensor has implausible strides {elements} (in "
                              "elements); its producer exported them wrongly, which some "
                              "libraries do for negative strides: pass a copy instead")
        strides = tuple(e * dt.itemsize for e in elements)
    else:       # NULL strides: C-contiguous (DLPack < 1.2)
        strides = layout.c_strides(shape, dt.itemsize)
    ptr = (t.data or 0) + int(t.byte_offset)
    device_id = int(t.device.device_id)
    deleter = m.deleter
    # Take ownership: from here on, the capsule's destructor leaves the tensor alone.
    _capsule_set_name(address, _USED[name])
    owner = _Imported(pointer, deleter)
    return ndarray._view(MemoryPointer(ptr, owner, device_id), shape, strides, dt, owner)
