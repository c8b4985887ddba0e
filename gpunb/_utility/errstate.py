"""NumPy's floating-point error state under gpunb's names: ``errstate``, ``seterr``,
``geterr``, ``seterrcall``, ``geterrcall`` (NumPy's own objects, as in CuPy).

GPU kernels raise no floating-point exceptions: a division by zero gives ``inf`` or ``nan``
on the device and no warning, whatever the error state says (CUDA has no floating-point
status flags to read back, and CuPy behaves the same). What the state does govern are the
steps gpunb runs on the host with NumPy (ranges, grids, dtype probes, host copies): those
follow it exactly as NumPy code does, so code written for ``numpy``/``cupy`` that sets or
restores it runs unchanged.
"""

from __future__ import annotations

import numpy as np

errstate = np.errstate
seterr = np.seterr
geterr = np.geterr
seterrcall = np.seterrcall
geterrcall = np.geterrcall
