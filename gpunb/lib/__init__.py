"""``gpunb.lib``: the parts of ``numpy.lib`` notebook code reaches for (CuPy's ``cupy.lib``):
``stride_tricks``."""

from . import stride_tricks

__all__ = ["stride_tricks"]
