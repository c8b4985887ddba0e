"""``get_array_module`` (CPU/GPU-generic code) and ``show_config`` (what gpunb runs on)."""

from __future__ import annotations

import sys


def get_array_module(*args):
    """``gpunb`` if any argument is a GPU array (gpunb's, or any ``__cuda_array_interface__``
    array), else ``numpy`` (cupy.get_array_module): write ``xp = gp.get_array_module(x)`` and
    the same code runs on either."""
    for a in args:
        if hasattr(a, "__cuda_array_interface__"):
            return sys.modules["gpunb"]
    import numpy

    return numpy


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
