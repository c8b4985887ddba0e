"""The ufunc objects: one :class:`gpunb.ufunc` per line of the op table
(:mod:`gpunb.core.kernels.elementwise.ops`), and NumPy's aliases (``divide``, ``abs``...)."""

from __future__ import annotations

from ..core.kernels.elementwise.ops import ALIASES, OPS
from ..core.ufunc import ufunc

UFUNCS: dict[str, ufunc] = {name: ufunc(name) for name in OPS}
UFUNCS.update({alias: UFUNCS[name] for alias, name in ALIASES.items()})
globals().update(UFUNCS)
