"""NumPy's host helpers under gpunb's names, for code written against ``gpunb as cp``: integer
formatting (``binary_repr``, ``base_repr``), ``iterable``, and the print options (gpunb
prints through NumPy's formatting, so these are NumPy's own)."""

from __future__ import annotations

import numpy as np

binary_repr = np.binary_repr
base_repr = np.base_repr
iterable = np.iterable
set_printoptions = np.set_printoptions
get_printoptions = np.get_printoptions
printoptions = np.printoptions
