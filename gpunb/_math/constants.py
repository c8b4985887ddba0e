"""NumPy's constants that are not eager names of the package (``inf``, ``nan``, ``pi``, ``e``
and ``newaxis`` are defined in ``gpunb/__init__.py``): ``euler_gamma``, NumPy's own float."""

from __future__ import annotations

import numpy as np

euler_gamma = np.euler_gamma     # the Euler-Mascheroni constant, 0.5772156649015329
