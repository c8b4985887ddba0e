"""NumPy's deprecated aliases, kept so that old notebooks run: ``row_stack`` (NumPy 2
deprecates it in favour of ``vstack``; it warns as NumPy's does and then is ``vstack``)."""

from __future__ import annotations

import warnings

from .joining import vstack


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """The arrays stacked vertically (numpy.row_stack): ``vstack``, after NumPy's
    ``DeprecationWarning`` (NumPy 2.0 deprecated the alias).

    .. deprecated:: NumPy 2.0
        Use :func:`gpunb.vstack` directly.
    """
    # NumPy's text and category, so that filters written for NumPy's warning match it
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.",
                  DeprecationWarning, stacklevel=2)
    return vstack(tup, dtype=dtype, casting=casting)
