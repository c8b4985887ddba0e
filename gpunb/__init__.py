"""gpunb: a Jupyter-first GPU computing toolkit.

CUDA C++ compiled at run time with NVRTC, kept in a persistent disk cache, and made visible in
notebooks. ``import gpunb`` loads no CUDA library: the driver, the device and NVRTC are touched
on first real use, so a machine without a GPU can still compile kernels for a named
architecture and inspect the cache.
"""

from __future__ import annotations

from ._version import __version__
from .core.errors import (CacheWarning, CompileError, GPUNBError, GPUUnavailableError,
                          KernelArgumentError)

# Public names resolved on first access (PEP 562), so that importing gpunb stays cheap.
_LAZY = {
    "RawModule": "gpunb.core.raw",
    "RawKernel": "gpunb.core.raw",
    "KernelCache": "gpunb.core.cache",
    "kernel_cache": "gpunb.core.cache",
    "compile": "gpunb.core.compiler",
    "compile_cached": "gpunb.core.build",
    "Config": "gpunb.core.config",
    "events": "gpunb.core.events",
    "warm": "gpunb.core.warm",
    "synchronize": "gpunb.core.runtime.driver",
    "device_info": "gpunb.core.runtime.driver",
}

__all__ = ["__version__", "CacheWarning", "CompileError", "GPUNBError", "GPUUnavailableError",
           "KernelArgumentError", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gpunb' has no attribute {name!r}")
    import importlib

    mod = importlib.import_module(module)
    value = mod if module.endswith("." + name) else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

