"""``gpunb.__array_namespace_info__()``: the array API's inspection API (what the namespace
supports, its default device and dtypes)."""

from __future__ import annotations

import numpy as np

from . import devices as _devices

_DTYPES = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS = dict(_DTYPES, integral=_DTYPES["signed integer"] + _DTYPES["unsigned integer"])
_KINDS["numeric"] = (_KINDS["integral"] + _DTYPES["real floating"] + _DTYPES["complex floating"])


class Info:
    """The namespace's inspection object (``gpunb.__array_namespace_info__()``): the same
    methods as NumPy's ``numpy.__array_namespace_info__()``, for gpunb's GPUs."""

    __module__ = "gpunb"

    def capabilities(self) -> dict:
        """What the namespace supports: boolean-mask indexing, functions whose output shape
        depends on the data (``unique_*``, ``nonzero``), and the most dimensions an array has
        (NumPy's limit: gpunb computes views with NumPy's rules)."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        """The device arrays are created on: the current GPU (device 0 until one is used)."""
        from ..core.runtime import driver

        return _devices.device_of(driver.active.ordinal if driver.active is not None else 0)

    def devices(self) -> tuple:
        """Every GPU of this machine (none without a usable driver), as the 2025.12 standard's
        tuple."""
        from ..core.runtime import devices

        return tuple(_devices.device_of(i) for i in range(devices.count()))

    def default_dtypes(self, *, device=None) -> dict:
        """The dtypes a function uses when none is given and none can be inferred: NumPy's
        (float64, complex128, int64; int64 for indices)."""
        _devices.check(device, "default_dtypes")
        return {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.int64), "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The standard's dtypes gpunb supports, by name: all of them, or those of ``kind``
        (``'bool'``, ``'signed integer'``, ``'unsigned integer'``, ``'integral'``,
        ``'real floating'``, ``'complex floating'``, ``'numeric'``, or a tuple of these)."""
        _devices.check(device, "dtypes")
        if kind is None:
            names = [n for group in _DTYPES.values() for n in group]
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            names = []
            for k in kinds:
                if k not in _KINDS:
                    raise ValueError(f"unknown dtype kind {k!r}; the kinds are "
                                     f"{', '.join(map(repr, _KINDS))}")
                names += [n for n in _KINDS[k] if n not in names]
        return {n: np.dtype(n) for n in names}

    def __repr__(self) -> str:
        return "gpunb.__array_namespace_info__()"


def __array_namespace_info__() -> Info:
    """The array API's inspection object of the gpunb namespace: ``capabilities()``,
    ``default_device()``, ``devices()``, ``default_dtypes()`` and ``dtypes()``."""
    return Info()
