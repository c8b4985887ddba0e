"""Prepared small draws: ``Generator.random`` and the Box-Muller / inverse-CDF draws
(``standard_normal``, ``normal``, ``standard_exponential``) as Python source made for one
(kernel, size), compiled with ``exec`` once and kept by the generator: the repeat calls.

A draw of 1000 values spent most of its host time in Python around a 5 us launch (a 23-field
argument tuple built by a method call, a lookup of the prepared launch, its lock, the state's
advance through three method calls). Here the allocation, the state's reading and advance
(NumPy's, as :mod:`.plan` computes it; a CPU test ties the two) and the launch are one
function's straight-line code, the element count a constant.

The source holds only identifiers and constants made here, never a user's string.
"""

from __future__ import annotations

import struct

import numpy as np

from ..empty_source import empty_namespace, fixed_empty_lines
from ...runtime import driver, fastcall
from ..fastgen import MISS
from . import codegen as cg
from . import continuous
from .plan import MASK64, SIGNED_FIELDS
from .reference import ROUNDS, philox32_keys

_C256 = (1 << 256) - 1
_CODES = ["P", "".join("d" if f in cg.DOUBLES else "q" if f in SIGNED_FIELDS else "Q"
                       for f in cg.ARG_FIELDS)]


def _words(S: str) -> str:
    return f"{S} & M64, ({S} >> 64) & M64, ({S} >> 128) & M64, {S} >> 192"


def _namespace(function: int, codes, dtype: np.dtype) -> dict:
    ns = {"MISS": MISS, "driver": driver, "DT": dtype, "M64": MASK64,
          "C256": _C256, "philox32_keys": philox32_keys, **empty_namespace()}
    ns.update(fastcall.launch_namespace(function, codes, driver.active, driver._current,
                                        driver.stream_handle))
    return ns


def _empty_out(shape: tuple, dtype: np.dtype) -> str:
    """Source making ``out``, the draw's new array (``ndarray._empty``, written out)."""
    return "".join(f"    {ln}\n" for ln in fixed_empty_lines("out", shape, dtype, "DT"))


def make_random(function: int, shape: tuple, dtype: np.dtype, affine: bool = False):
    """``fast(state)``: NumPy's ``random`` of ``shape`` (float64 or float32: 64- or 32-bit
    words) through the ``fill random`` kernel ``function`` of the current device, or :data:`MISS`
    (another device current, or a pending 32-bit half before a float32 draw: the general
    path's). ``affine``: ``fast(state, low, rng)``, ``low + rng * u`` (NumPy's ``uniform``,
    float64)."""
    n = 1
    for s in shape:
        n *= s
    width = 64 if dtype.itemsize == 8 else 32
    # 64-bit values the draw reads from lane o of block S: all n (float64), or n 32-bit
    # words with no half pending, low halves first (float32)
    u64s = n if width == 64 else (n + 1) >> 1
    f = "low, rng, 1.0, 0.0" if affine else "0.0, 0.0, 0.0, 0.0"
    values = f"out._data.ptr, {_words('S')}, k0, k1, o, {n}, nb, -1, 0, 0, 0, 0, {f}, 0, 0, 0, 0"
    launch = fastcall.launch_source("    ", values, f"-(-nb // {cg.THREADS}), 1, 1",
                                    f"{cg.THREADS}, 1, 1", "0")
    half = ("    state.has_uint32 = True\n    state._uinteger = (state.counter, state.buffer_pos - 1)\n"
            if width == 32 and n % 2 else "")
    source = f"""
def fast(state{", low, rng" if affine else ""}):
    if driver.active is not CTX{" or state.has_uint32" if width == 32 else ""}:
        return MISS
    o = state.buffer_pos
    if o >= 4:
        S = (state.counter + 1) & C256
        o = 0
    else:
        S = state.counter
    nb = (o + {u64s + 3}) >> 2
    k0, k1 = state.key
{_empty_out(shape, dtype)}{launch}    last = o + {u64s - 1}
    state.counter = (S + (last >> 2)) & C256
    state.buffer_pos = (last & 3) + 1
    state._drawn = True
{half}    return out
"""
    ns = _namespace(function, _CODES, dtype)
    exec(source, ns)
    return ns["fast"]


def make_dist(function: int, what: str, shape: tuple, dtype: np.dtype, standard: bool = False):
    """``fast(state, loc, scale)``: ``loc + scale * X`` of ``shape``, X standard normal or
    exponential (``what``), through the ``dist`` kernel ``function`` of the current device, as
    ``run.fill_dist`` draws it; :data:`MISS` when another device is current. ``standard``:
    ``fast(state)``, X itself."""
    n = 1
    for s in shape:
        n *= s
    nb = -(-n // cg.DIST_PER_BLOCK[what][dtype.itemsize])
    grid = -(-nb // (cg.THREADS * continuous.per_thread(what, dtype)))
    # o = 1 when the kernel may not store vectors; f2 = 1 when loc and scale apply
    affine = "0.0, 1.0, 0.0" if standard else "loc, scale, 0.0 if loc == 0.0 and scale == 1.0 else 1.0"
    values = (f"ptr, {_words('S')}, k0, k1, 0 if ptr & 15 == 0 else 1, {n}, {nb}, -1, 0, 0, 0, 0, "
              f"{affine}, 0.0, 0, 0, 0, 0")
    launch = fastcall.launch_source("    ", values, f"{grid}, 1, 1", f"{cg.THREADS}, 1, 1", "0")
    # the round keys (the last parameter) are packed into both buffers only when the key
    # changes (a new state): the call packs the first two parameters
    source = f"""
def fast(state{"" if standard else ", loc, scale"}):
    if driver.active is not CTX:
        return MISS
    S = (state.counter + 1) & C256
    key = state.key
    if key is not KEYS[0]:
        k0, k1, keys = philox32_keys(key)
        with lock:
            pack_keys(BUFFER, KEYS_AT, *keys)
            pack_keys(SHARED_BUFFER, KEYS_AT, *keys)
        KEYS[:] = key, (k0, k1)
    k0, k1 = KEYS[1]
{_empty_out(shape, dtype)}    ptr = out._data.ptr
{launch}    state.counter = (state.counter + {(nb + 1) >> 1}) & C256
    state.buffer_pos = 4
    return out
"""
    codes = _CODES + [f"{2 * ROUNDS}I"]
    ns = _namespace(function, codes, dtype)
    ns.update(KEYS=[None, None], pack=struct.Struct("@" + "".join(_CODES)).pack_into,
              pack_keys=struct.Struct("@" + codes[-1]).pack_into,
              KEYS_AT=struct.calcsize("@" + "".join(codes)) - struct.calcsize("@" + codes[-1]))
    exec(source, ns)
    return ns["fast"]
