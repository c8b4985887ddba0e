"""Raw kernels' arguments, checked against the kernel's signature and converted for the
launch: pointers from any GPU array, scalars with NumPy's range and kind rules, opaque
by-value structs of the right size. Errors name the parameter
(:class:`~gpunb.KernelArgumentError`)."""

from __future__ import annotations

import numpy as np

from ...build.cubin import KernelInfo
from ...build.signature import Param
from ...errors import KernelArgumentError
from ...ndarray import ndarray as _ndarray
from ...runtime import driver

_DTYPES = {n: np.dtype(n) for n in ("int8", "int16", "int32", "int64",
                                     "uint8", "uint16", "uint32", "uint64")}
_INT_RANGES = {n: (int(np.iinfo(d).min), int(np.iinfo(d).max)) for n, d in _DTYPES.items()}
_OPAQUE_CARRIERS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.complex128}


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"a NumPy array (shape {value.shape}, {value.dtype})"
    r = repr(value)
    return f"{type(value).__name__} {r if len(r) < 40 else r[:37] + '...'}"


def _device_pointer(value) -> tuple[int, int | None] | None:
    """(address, producer stream) of a GPU buffer argument, or None if ``value`` is not one."""
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0]), cai.get("stream")
    handle = getattr(value, "handle", None)
    if type(value).__name__ == "Buffer" and handle is not None:   # cuda.core Buffer
        return int(handle), None
    return None


def prepare_args(kname: str, info: KernelInfo, params: list[Param] | None, args):
    sizes = info.param_sizes
    if len(args) != len(sizes):
        sig = ", ".join(p.ctype for p in params) if params else f"{len(sizes)} parameters"
        plural = "" if len(sizes) == 1 else "s"
        given = "1 was" if len(args) == 1 else "%d were" % len(args)
        raise KernelArgumentError(
            f"kernel {kname}({sig}) takes {len(sizes)} argument{plural}, but {given} given")
    out, producers = [], []
    for i, (value, size) in enumerate(zip(args, sizes)):
        p = params[i] if params else None
        if p is not None:
            # Fast paths for the common cases; anything unusual takes the checked path below.
            if p.kind == "pointer":
                if type(value) is _ndarray:     # gpunb's own arrays: on gpunb's current stream
                    out.append(value._data.ptr)
                    producers.append(driver.current_stream()[1])
                    continue
                cai = getattr(value, "__cuda_array_interface__", None)
                if cai is not None:
                    out.append(cai["data"][0])
                    producers.append(cai.get("stream"))
                    continue
            elif p.kind == "scalar" and type(value) is int:
                bounds = _INT_RANGES.get(p.dtype)
                if bounds is not None and bounds[0] <= value <= bounds[1]:
                    out.append(_DTYPES[p.dtype].type(value))
                    continue
        where = f"argument {i} of kernel {kname}" + (f" ({p.ctype})" if p else f" ({size}-byte parameter)")
        ptr = _device_pointer(value)
        if p is not None and p.kind == "pointer" or (p is None and ptr is not None):
            if value is None:
                out.append(0)
                continue
            if ptr is None:
                if isinstance(value, np.ndarray):
                    raise KernelArgumentError(
                        f"{where} is a pointer to GPU memory, but got {_describe(value)} in host "
                        "memory; copy it to the GPU first (gpunb never copies behind your back)")
                raise KernelArgumentError(
                    f"{where} is a pointer: pass a GPU array (anything with "
                    f"__cuda_array_interface__), not {_describe(value)}")
            out.append(ptr[0])
            producers.append(ptr[1])
            continue
        if ptr is not None or (isinstance(value, np.ndarray) and value.ndim > 0):
            raise KernelArgumentError(f"{where} is a scalar, but got {_describe(value)}")
        if p is not None and p.kind == "scalar":
            out.append(_scalar(value, np.dtype(p.dtype), where))
        else:
            out.append(_opaque(value, size, where, guess=p is None))
    return out, producers


def _scalar(value, dtype: np.dtype, where: str):
    if isinstance(value, np.ndarray):
        value = value[()]
    if isinstance(value, (bool, int, float, complex)):   # Python scalars are weak (NEP 50)
        ok = _weak_fits(value, dtype)
    elif isinstance(value, np.generic):
        ok = np.can_cast(value.dtype, dtype, "same_kind")
        if ok and dtype.kind in "iu" and value.dtype.kind in "iub":
            lo, hi = _INT_RANGES[dtype.name]   # NumPy wraps integer scalars silently: check the range
            if not lo <= int(value) <= hi:
                raise KernelArgumentError(f"{where}: {_describe(value)} does not fit in {dtype}")
    else:
        raise KernelArgumentError(f"{where} is a {dtype} scalar, but got {_describe(value)}")
    if not ok:
        raise KernelArgumentError(f"{where} is a {dtype} scalar; {_describe(value)} does not "
                                  "convert to it without changing kind")
    try:
        return dtype.type(value)
    except OverflowError as e:
        raise KernelArgumentError(f"{where}: {_describe(value)} does not fit in {dtype} ({e})") from None


def _weak_fits(value, dtype: np.dtype) -> bool:
    kind = dtype.kind
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return kind in "iufcb" and (kind != "b" or value in (0, 1))
    if isinstance(value, float):
        return kind in "fc"
    return kind == "c"


def _opaque(value, size: int, where: str, guess: bool):
    if guess and isinstance(value, (int, float)) and not isinstance(value, bool) and size in (4, 8):
        if isinstance(value, int):
            return _scalar(value, np.dtype(f"int{size * 8}"), where)
        return _scalar(value, np.dtype(f"float{size * 8}"), where)
    try:
        raw = value.tobytes() if hasattr(value, "tobytes") else bytes(memoryview(value))
    except TypeError:
        raw = None
    if raw is None or len(raw) != size:
        got = f"{len(raw)} bytes" if raw is not None else _describe(value)
        raise KernelArgumentError(
            f"{where} is passed by value as {size} bytes; give a NumPy scalar or structured "
            f"scalar, or a bytes-like object, of exactly that size (got {got})")
    carrier = _OPAQUE_CARRIERS.get(size)
    if carrier is None:
        raise KernelArgumentError(
            f"{where}: by-value parameters of {size} bytes are not supported (1, 2, 4, 8 or 16 "
            "bytes are); pass the struct through a pointer")
    return np.frombuffer(raw, dtype=carrier)[0]
