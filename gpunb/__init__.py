"""gpunb: a Jupyter-first GPU computing toolkit.

CUDA C++ compiled at run time with NVRTC, kept in a persistent disk cache, and made visible in
notebooks. ``import gpunb`` loads no CUDA library: the driver, the device and NVRTC are touched
on first real use, so a machine without a GPU can still compile kernels for a named
architecture and inspect the cache. (The first read of an array-making name such as
``gpunb.asarray`` in an expression begins ``cuInit`` and the context on a thread while that
name's modules load; an import statement never does: see ``core/runtime/early.py``.)

Every public name but the constants and the exceptions below is a line of the registry
(:mod:`gpunb._registry`) and is imported on first access (PEP 562).
"""

from __future__ import annotations

from . import _registry
from ._version import __version__
from .core.errors import (CacheWarning, CompileError, GPUNBError, GPUUnavailableError,
                          KernelArgumentError)

inf = float("inf")
nan = float("nan")
pi = 3.141592653589793
e = 2.718281828459045
newaxis = None
__array_api_version__ = "2025.12"     # the array API standard gpunb follows (gpunb/_array_api)

_EAGER = ["__version__", "CacheWarning", "CompileError", "GPUNBError", "GPUUnavailableError",
          "KernelArgumentError", "inf", "nan", "pi", "e", "newaxis"]
__all__ = _EAGER + _registry.public_names()


def __getattr__(name: str):
    if name not in _registry.ENTRIES:
        raise AttributeError(f"module 'gpunb' has no attribute {name!r}")
    if name in _registry.EARLY:
        from .core.runtime import early

        early.start(_registry.WARM)
    value = _registry.resolve(name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_registry.ENTRIES))


def load_ipython_extension(ip) -> None:
    """``%load_ext gpunb``: register ``%%cuda``, ``%gpucache`` and the notebook displays of
    compile events (see :mod:`gpunb.magics`; imported only now, so ``import gpunb`` stays cheap)."""
    from .magics import load_ipython_extension as load

    load(ip)


def unload_ipython_extension(ip) -> None:
    """``%unload_ext gpunb``: remove what :func:`load_ipython_extension` registered."""
    from .magics import unload_ipython_extension as unload

    unload(ip)
