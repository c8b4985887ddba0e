"""``gpunb.lib.stride_tricks`` (numpy.lib.stride_tricks): ``as_strided``,
``sliding_window_view``. Each public name is one registry line (:mod:`gpunb._registry`),
imported on first access."""

from .. import _registry

__all__ = _registry.members("lib.stride_tricks")
__getattr__ = _registry.submodule_getattr("lib.stride_tricks")


def __dir__():
    return sorted(set(globals()) | set(__all__))
