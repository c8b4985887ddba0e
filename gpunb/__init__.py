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

inf = float("inf")
nan = float("nan")
pi = 3.141592653589793
e = 2.718281828459045
newaxis = None

# Public names resolved on first access (PEP 562), so that importing gpunb stays cheap.
_ARRAY = ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
          "array", "asarray", "ascontiguousarray", "asnumpy", "arange", "linspace", "eye",
          "identity")
_REDUCTIONS = ("sum", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "mean", "var", "std",
               "any", "all", "nansum", "nanmax", "nanmin", "count_nonzero")
_SHAPES = ("reshape", "ravel", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims",
           "broadcast_to", "copy", "shape", "ndim", "size")
_UFUNC_NAMES = (
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod",
    "power", "negative", "positive", "absolute", "abs", "sign", "sqrt", "cbrt", "square",
    "reciprocal", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh", "hypot", "floor", "ceil", "trunc", "rint", "maximum", "minimum", "fmax", "fmin",
    "isnan", "isinf", "isfinite", "signbit", "copysign", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
    "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "bitwise_not",
    "left_shift", "right_shift")
_LAZY = {
    **{n: "gpunb.core.creation" for n in _ARRAY},
    **{n: "gpunb.core.reduction" for n in _REDUCTIONS},
    **{n: "gpunb.core.manipulation" for n in _SHAPES},
    "ndarray": "gpunb.core.ndarray",
    "ufunc": "gpunb.core.ufuncs",
    "where": "gpunb.core.ufuncs",
    "clip": "gpunb.core.ufuncs",
    "fuse": "gpunb.core.fused",
    "FusionError": "gpunb.core.fusion",
    "get_default_memory_pool": "gpunb.core.runtime.memory",
    "MemoryPool": "gpunb.core.runtime.memory",
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
    "Stream": "gpunb.core.runtime.stream",
    "ExternalStream": "gpunb.core.runtime.stream",
    "Event": "gpunb.core.runtime.stream",
    "get_current_stream": "gpunb.core.runtime.stream",
    "get_elapsed_time": "gpunb.core.runtime.stream",
    "from_dlpack": "gpunb.core.interop",
    "device_info": "gpunb.core.runtime.driver",
}

__all__ = ["__version__", "CacheWarning", "CompileError", "GPUNBError", "GPUUnavailableError",
           "KernelArgumentError", "inf", "nan", "pi", "e", "newaxis", *_LAZY, *_UFUNC_NAMES]


_MODULES = {"events"}   # names that are modules, not attributes of one


def __getattr__(name: str):
    if name in _UFUNC_NAMES:
        from .core.ufuncs import UFUNCS

        globals()[name] = UFUNCS[name]
        return UFUNCS[name]
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gpunb' has no attribute {name!r}")
    import importlib

    mod = importlib.import_module(module)
    value = mod if name in _MODULES else getattr(mod, name)
    globals()[name] = value
    return value


def load_ipython_extension(ip) -> None:
    """``%load_ext gpunb``: register ``%%cuda``, ``%gpucache`` and the notebook displays of
    compile events (see :mod:`gpunb.magics`; imported only now, so ``import gpunb`` stays cheap)."""
    from .magics import load_ipython_extension as load

    load(ip)


def unload_ipython_extension(ip) -> None:
    """``%unload_ext gpunb``: remove what :func:`load_ipython_extension` registered."""
    from .magics import unload_ipython_extension as unload

    unload(ip)


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_UFUNC_NAMES))

