"""NumPy's type tables and constants, NumPy's own objects (as the scalar types in
:mod:`.names` are): ``typecodes``, ``ScalarType``, ``sctypeDict``, ``little_endian`` and the
boolean scalars ``True_`` and ``False_``. They describe NumPy's types on the host, the ones gpunb
has no GPU dtype for (``longdouble``, ``datetime64``, ``object_``...) included:
``gpunb.core.dtypes.SUPPORTED`` lists the GPU's."""

from __future__ import annotations

import numpy as np

typecodes = np.typecodes          # {'Character': 'c', 'Integer': 'bhilqnp', ...}
ScalarType = np.ScalarType        # (int, float, complex, bool, bytes, str, memoryview, numpy's...)
sctypeDict = np.sctypeDict        # names to scalar types ("float32": numpy.float32, "half"...)
little_endian = np.little_endian  # the host's byte order (the GPU's is little-endian)
True_ = np.True_                  # NumPy's bool scalars (numpy.bool_(True), numpy.bool_(False))
False_ = np.False_
