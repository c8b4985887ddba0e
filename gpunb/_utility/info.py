"""``get_array_module`` (CPU/GPU-generic code), ``memoize`` / ``clear_memo`` (CuPy's result
caches), ``may_share_memory`` and ``show_config`` (what gpunb runs on)."""

from __future__ import annotations

import functools
import sys

_memos: list = []


def memoize(for_each_device=False):
    """A decorator caching a function's result per (hashable) arguments, and per device with
    ``for_each_device`` (cupy.memoize); :func:`clear_memo` empties every such cache."""
    def decorator(f):
        memo: dict = {}
        _memos.append(memo)

        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items())))
            if for_each_device:
                from ..cuda import get_device_id
                key = (get_device_id(), key)
            try:
                return memo[key]
            except KeyError:
                value = memo[key] = f(*args, **kwargs)
                return value
        return wrapper
    return decorator


def clear_memo():
    """Empty the caches of every :func:`memoize`-d function (cupy.clear_memo)."""
    for memo in _memos:
        memo.clear()


def get_array_module(*args):
    """``gpunb`` if any argument is a GPU array (gpunb's, or any ``__cuda_array_interface__``
    array), else ``numpy`` (cupy.get_array_module): write ``xp = gp.get_array_module(x)`` and
    the same code runs on either."""
    for a in args:
        if hasattr(a, "__cuda_array_interface__"):
            return sys.modules["gpunb"]
    import numpy

    return numpy


def may_share_memory(a, b, /, max_work=None):
    """Whether two arrays might share memory (numpy.may_share_memory): their byte ranges on the
    device overlap (bounds only, as NumPy's). A host array never shares a gpunb array's
    memory, so ``numpy.may_share_memory(numpy_copy, gpu_array)`` is False without a copy."""
    from ..core import layout
    from ..core.ndarray import ndarray

    if max_work is not None:        # NumPy's exact answer within that work (-1: exact)
        from .memory import shares_memory

        return shares_memory(a, b, max_work=max_work)
    if not (isinstance(a, ndarray) and isinstance(b, ndarray)) or (
            a.data.device_id != b.data.device_id):
        return False
    return layout.may_share_memory(layout.byte_extent(a.shape, a.strides, a.itemsize), a.data.ptr,
                                   layout.byte_extent(b.shape, b.strides, b.itemsize), b.data.ptr)


def config() -> dict:
    """The versions and devices gpunb runs with, as a dict (see :func:`show_config`)."""
    import importlib.metadata as md
    import platform

    import numpy

    from ..core.build import cache
    from ..core.runtime import devices, driver, nvrtc

    def version(dist):
        try:
            return md.version(dist)
        except md.PackageNotFoundError:
            return None

    info = {"gpunb": sys.modules["gpunb"].__version__, "Python": platform.python_version(),
            "NumPy": numpy.__version__, "cuda-core": version("cuda-core"),
            "cuda-bindings": version("cuda-bindings"), "NVRTC": nvrtc.identity(),
            "CCCL headers": version("nvidia-cuda-cccl")}
    v = driver.driver_version()
    info["CUDA driver"] = f"{v[0]}.{v[1]}" if v else None
    info["kernel cache"] = str(cache.kernel_cache().directory)
    n = devices.count()
    info["devices"] = n
    for i in range(n):
        d = driver.device_info(i)
        info[f"device {i}"] = f"{d.name}, {d.arch}, {d.multiprocessor_count} SMs, {d.total_memory / 2**30:.1f} GiB"
    if not n:
        try:
            driver._init()
        except Exception as e:
            info["no GPU"] = str(e).splitlines()[0]
    return info


def show_config() -> None:
    """Print the versions of gpunb and its CUDA components, the kernel cache's directory and
    the devices (cupy.show_config)."""
    info = config()
    width = max(map(len, info))
    for key, value in info.items():
        print(f"{key + ':':{width + 1}s} {value}")


def show_runtime() -> None:
    """Print NumPy's runtime report (numpy.show_runtime: versions, the host's SIMD extensions,
    the BLAS thread pools), then gpunb's (:func:`show_config`: gpunb's CUDA components, the
    kernel cache, the devices)."""
    import numpy

    numpy.show_runtime()
    print("gpunb:")
    show_config()
