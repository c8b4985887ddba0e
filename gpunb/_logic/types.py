"""Array type testing: ``iscomplexobj``, ``isrealobj`` (from the dtype, nothing runs) and
``iscomplex``, ``isreal`` (elementwise)."""

from __future__ import annotations

import numpy as np

from ..core import args


def _dtype(x, func: str) -> np.dtype:
    g = args.as_gpu(x, f"the input of {func}")
    return g.dtype if g is not None else np.asarray(x).dtype     # a scalar or host data


def iscomplexobj(x):
    """Whether ``x`` has a complex dtype (numpy.iscomplexobj); a Python bool."""
    return _dtype(x, "iscomplexobj").kind == "c"


def isrealobj(x):
    """Whether ``x`` does not have a complex dtype (numpy.isrealobj); a Python bool."""
    return _dtype(x, "isrealobj").kind != "c"


def iscomplex(x):
    """Elementwise: whether the imaginary part is not zero (numpy.iscomplex)."""
    return args.array(x, "iscomplex").imag != 0


def isreal(x):
    """Elementwise: whether the imaginary part is zero (numpy.isreal)."""
    return args.array(x, "isreal").imag == 0
