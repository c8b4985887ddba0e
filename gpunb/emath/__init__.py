"""``gpunb.emath``: NumPy's ``numpy.emath`` (``numpy.lib.scimath``), mathematical functions
whose result is complex where a real input lies outside the real function's domain
(``sqrt``, ``log``, ``log2``, ``log10``, ``logn``, ``power``, ``arccos``, ``arcsin``,
``arctanh``; gpunb/_math/emath.py). Each public name is one registry line
(:mod:`gpunb._registry`, ``_sub("emath", ...)``), imported on first access."""

from .. import _registry

__all__ = _registry.members("emath")
__getattr__ = _registry.submodule_getattr("emath")


def __dir__():
    return sorted(set(globals()) | set(__all__))
