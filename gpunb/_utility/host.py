"""NumPy's host helpers under gpunb's names, for code written against ``gpunb as cp``: integer
formatting (``binary_repr``, ``base_repr``), ``iterable``, the print options (gpunb prints
through NumPy's formatting, so these are NumPy's own), ``euler_gamma``, and the floating-point
error state (``errstate``, ``seterr``, ``geterr``, ``seterrcall``, ``geterrcall``), the ufunc
buffer size, ``info``, and the ``exceptions`` and ``dtypes`` modules.

GPU kernels raise no floating-point exceptions: a division by zero gives ``inf`` or ``nan``
on the device and no warning, whatever the error state says (CUDA has no floating-point
status flags to read back, and CuPy behaves the same). What the state does govern are the
steps gpunb runs on the host with NumPy (ranges, grids, dtype probes, host copies): those
follow it exactly as NumPy code does, so code that sets or restores it runs unchanged."""

from __future__ import annotations

import numpy as np

binary_repr = np.binary_repr
base_repr = np.base_repr
iterable = np.iterable
set_printoptions = np.set_printoptions
get_printoptions = np.get_printoptions
printoptions = np.printoptions
euler_gamma = np.euler_gamma     # the Euler-Mascheroni constant, 0.5772156649015329
errstate = np.errstate
seterr = np.seterr
geterr = np.geterr
seterrcall = np.seterrcall
geterrcall = np.geterrcall
getbufsize = np.getbufsize        # NumPy's ufunc buffer size (host-side NumPy steps use it)
setbufsize = np.setbufsize
info = np.info                    # prints a function's docstring (gpunb's own for gpunb names)
exceptions = np.exceptions        # AxisError, ComplexWarning...: what gpunb raises is NumPy's
dtypes = np.dtypes                # the dtype classes (numpy.dtypes.Float32DType)
