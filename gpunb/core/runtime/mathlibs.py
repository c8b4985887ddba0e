"""NVIDIA's math libraries (cuBLAS, cuSOLVER, cuFFT) through nvmath-python's bindings.

The one door to them: nvmath is imported on first use (``import nvmath`` costs ~0.4 s), a
missing install raises :class:`MathLibraryMissing` naming the pip command, a handle is made
once per (device, library) and bound to the caller's stream on each use, and the libraries'
status errors are translated here once into :class:`MathLibraryError`. The bindings take raw
pointers and cost ~0.1 us per call, so the API modules call them directly with
``int(array.data.ptr)``.

Usage (an API module)::

    from gpunb.core.runtime import mathlibs
    cublas = mathlibs.module("cublas")          # nvmath.bindings.cublas
    with mathlibs.errors("matmul"):
        h = mathlibs.handle("cublas")           # bound to gpunb's current stream
        cublas.sgemm(h, ...)
"""

from __future__ import annotations

import contextlib
import importlib

from ..errors import GPUNBError
from . import driver

PIP = 'pip install "gpunb[math]"'
# the libraries used through a handle: library -> (its create, its set-stream binding)
_HANDLES = {"cublas": ("create", "set_stream"), "cusolverDn": ("create", "set_stream")}


class MathLibraryMissing(GPUNBError, ImportError):
    """nvmath-python or one of NVIDIA's math libraries is not installed."""


class MathLibraryError(GPUNBError, RuntimeError):
    """A cuBLAS, cuSOLVER or cuFFT call failed (its status named)."""


_modules: dict[str, object] = {}


def module(library: str):
    """``nvmath.bindings.<library>`` ('cublas', 'cusolverDn', 'cufft', ...), imported on first
    use; :class:`MathLibraryMissing` naming the pip command when nvmath-python is absent."""
    mod = _modules.get(library)
    if mod is None:
        try:
            driver.cuda_core()      # nvmath imports cuda.core: through gpunb's lock first
            mod = importlib.import_module(f"nvmath.bindings.{library}")
        except ImportError as e:
            raise MathLibraryMissing(
                f"gpunb needs nvmath-python and NVIDIA's math libraries for this call "
                f"({library}); install them with: {PIP}") from e
        _modules[library] = mod
    return mod


def _library_error_types() -> tuple:
    types = []
    for name, cls in (("cublas", "cuBLASError"), ("cusolver", "cuSOLVERError"),
                      ("cufft", "cuFFTError")):
        mod = _modules.get(name) or _try(name)
        if mod is not None and hasattr(mod, cls):
            types.append(getattr(mod, cls))
    return tuple(types)


def _try(name):
    try:
        return module(name)
    except MathLibraryMissing:
        return None


@contextlib.contextmanager
def errors(what: str):
    """Translate the libraries' failures inside the block: a status error becomes
    :class:`MathLibraryError` naming ``what`` and the status; a library that cannot be loaded
    (nvmath present, the ``nvidia-*`` wheel not) becomes :class:`MathLibraryMissing`."""
    try:
        yield
    except GPUNBError:
        raise
    except Exception as e:
        if isinstance(e, _library_error_types()):
            raise MathLibraryError(f"{what}: {e}") from e
        text = str(e)
        if "not found" in text.lower() or "could not load" in text.lower() or isinstance(e, OSError):
            raise MathLibraryMissing(f"{what}: an NVIDIA math library could not be loaded ({text}); "
                                     f"install them with: {PIP}") from e
        raise


# (device ordinal, library) -> [handle, the stream it is bound to]; made once, kept for the process
_handles: dict[tuple[int, str], list] = {}


def handle(library: str) -> int:
    """The device's handle of ``library`` ('cublas' or 'cusolverDn'), made on first use and
    bound to gpunb's current stream (rebinding only when the stream changed)."""
    ctx = driver.active or driver.context()
    _, stream = driver.current_stream()
    entry = _handles.get((ctx.ordinal, library))
    if entry is None:
        mod = module(library)
        with errors(f"{library} handle"):
            h = getattr(mod, _HANDLES[library][0])()
        entry = _handles[(ctx.ordinal, library)] = [h, None]
    if entry[1] != stream:
        with errors(f"{library} set stream"):
            getattr(module(library), _HANDLES[library][1])(entry[0], stream)
        entry[1] = stream
    return entry[0]
