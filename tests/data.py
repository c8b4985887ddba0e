"""Test data shared by the test modules: random arrays of every supported dtype, with NumPy's
special values where a test wants them. Each module keeps its own seeded generator, so its
draws do not depend on which other tests ran."""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np

import gpunb as gp
from gpunb.core.ndarray import MemoryPointer, ndarray

SPECIAL = (np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0)


def rand(shape, dtype, *, rng, scale=1.0, bound=100, special=None):
    """Random values of ``dtype`` in ``shape``.

    bool: 0 or 1; signed integers: uniform in [-bound, bound] (unsigned from 0), clipped to
    the dtype; floats: normal times ``scale``; complex: normal real and imaginary parts.
    ``special``: None for none, 'mixed' for NaN, +-inf, +-0 and 1 shuffled in (floats),
    'scattered' for NaN and +-inf at random places (floats) and one complex NaN.
    """
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        x = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        lo = max(info.min, -bound) if dt.kind == "i" else 0
        x = rng.integers(lo, min(info.max, bound), n, endpoint=True).astype(dt)
    elif dt.kind == "f":
        x = (rng.standard_normal(n) * scale).astype(dt)
        if special == "mixed" and n >= len(SPECIAL):
            x[:len(SPECIAL)] = SPECIAL
            rng.shuffle(x)
        elif special == "scattered" and n >= 8:
            x[rng.choice(n, 3, replace=False)] = [np.nan, np.inf, -np.inf]
    else:
        x = ((rng.standard_normal(n) + 1j * rng.standard_normal(n)) * scale).astype(dt)
        if special == "scattered" and n >= 8:
            x[rng.integers(n)] = complex(np.nan, 1)
    return x.reshape(shape)


def fake(shape=(3, 4), dtype="float32", order="C"):
    """A gpunb array over a made-up device address: every argument check runs before a kernel
    would touch it, so CPU tests check NumPy's errors with it."""
    dt = np.dtype(dtype)
    return ndarray._view(MemoryPointer(0x10000), shape, np.empty(shape, dt, order=order).strides,
                         dt, None)


def same(got, want):
    """The GPU result ``got`` equals NumPy's ``want``: dtype, shape and every element."""
    got = gp.asnumpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


def record_launches(monkeypatch, fmt_of=None):
    """Replace the driver's launch with a recorder, for prepared-launch tests without a GPU:
    returns the list each launch appends ``(stream, grid x, parameter bytes)`` to, the bytes
    read from the first parameter's address (the prepared calls' parameters are one packed
    buffer) over ``fmt_of(stream, grid x)``'s struct size (default 64 bytes)."""
    import ctypes
    import struct

    from gpunb.core.runtime import fastcall

    launched = []

    def launch(fn, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        first = ctypes.c_void_p.from_address(params).value
        n = struct.calcsize(fmt_of(stream, gx)) if fmt_of else 64
        launched.append((stream, gx, ctypes.string_at(first, n)))
        return (0,)

    monkeypatch.setattr(fastcall, "_cu_launch", launch)
    monkeypatch.setattr(fastcall, "_CUfunction", lambda handle: handle)
    monkeypatch.setattr(fastcall, "_CUstream", lambda handle: handle)
    monkeypatch.setattr(fastcall, "_streams", {})
    return launched


HOST_PRELUDE = ["#include <math.h>", "#include <string.h>", "#define __device__",
                "#define __forceinline__ inline",
                "inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }",
                "inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }",
                "#define __align__(n) alignas(n)",
                "inline float __fmul_rn(float a, float b) { return a * b; }",
                "inline double __dmul_rn(double a, double b) { return a * b; }"]


def host_library(tmp_path_factory, name: str, source: str, flags=("-O2",)):
    """``source`` (C++17 over gpunb's prelude, ``HOST_PRELUDE`` first) built by the host C++
    compiler into a shared library, loaded by ctypes; the test skips without a compiler."""
    import pytest

    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no host C++ compiler to check the prelude's functions on the CPU")
    d = tmp_path_factory.mktemp(name)
    (d / f"{name}.cpp").write_text(source)
    r = subprocess.run([cxx, "-std=c++17", *flags, "-shared", "-fPIC", f"{name}.cpp", "-o", f"{name}.so"],
                       cwd=d, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    return ctypes.CDLL(str(d / f"{name}.so"))
