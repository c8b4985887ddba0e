"""The runtime: the only place that imports ``cuda.core`` or ``cuda.bindings``.

``nvrtc`` wraps the NVRTC compiler library; ``driver`` wraps the CUDA driver (devices, module
loading, launches, streams) through cuda.core. Errors from either are translated here, once,
into gpunb's exceptions. Nothing here runs at import: libraries load on first call.
"""
