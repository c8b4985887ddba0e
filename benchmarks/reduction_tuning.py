"""Reduction layout experiments (GPU): full, axis-0 and axis-1 sums of a 16384^2 float32 with
and without the column entry, alternating, as fractions of the copy ceiling measured in the
same process. Run by hand when tuning; prints one line per setting and round."""

import numpy as np

import gpunb as gp
from gpunb.core.kernels.reduction import codegen as rc
from gpunb.core.runtime import driver, memory

m = 16384
x = gp.asarray(np.random.default_rng(0).standard_normal((m, m), dtype=np.float32))
src, dst = gp.empty(1 << 28, np.float32), gp.empty(1 << 28, np.float32)
ceiling = 2 * 4 * (1 << 28) / driver.time_ms(lambda: memory.copy_device(dst.data.ptr, src.data.ptr, 4 << 28)) / 1e6
del src, dst
print(f"copy ceiling {ceiling:.0f} GB/s")
has_cols = rc.has_cols
for rnd in range(3):
    for cols, unroll in ((True, 4), (True, 8), (False, 4)):
        rc.has_cols = has_cols if cols else (lambda k: False)
        rc.COLS_UNROLL = unroll
        driver.context().loaded.clear()       # reload: new entry points, new layout
        row = []
        for axis in (None, 0, 1):
            ms = driver.time_ms(lambda: gp.sum(x, axis=axis), repeat=15)
            row.append(4 * m * m / ms / 1e6 / ceiling)
        print(f"round {rnd} column entry {cols} (unroll {unroll}): full {row[0]:.3f} axis0 {row[1]:.3f} axis1 {row[2]:.3f}")
