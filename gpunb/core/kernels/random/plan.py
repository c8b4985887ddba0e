"""Random draws, planned: NumPy's Philox state on the host, and how a draw maps onto it.

:class:`StreamState` is ``numpy.random.Philox``'s state (256-bit counter, key, buffered
block position, pending 32-bit half). A draw reads positions of the stream from the
current one on; :meth:`StreamState.start` gives the kernels' block ``S`` and lane ``o``, and
the ``advance`` methods move the state exactly as NumPy's C loops do for the same call
(pure: the CPU tests replay NumPy's calls against it). :func:`integer_plan` is NumPy's choice
of word width and Lemire parameters for ``Generator.integers``.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from . import codegen as cg
from .reference import MASK64, counter_int, counter_words, philox4x64  # noqa: F401 (re-exported)

_C256 = (1 << 256) - 1


class StreamState:
    """NumPy's Philox state: ``counter`` (256-bit int), ``key`` (two words), ``buffer_pos``
    (0..4), ``has_uint32`` and ``uinteger`` (a pending high half).

    The buffer is not stored: it is always ``philox4x64(counter, key)`` once a block was
    drawn (NumPy's initial all-zero buffer is never read, ``buffer_pos`` being 4). A pending
    half is kept as the position it came from until a kernel or ``get_state`` needs its value.
    """

    __slots__ = ("counter", "key", "buffer_pos", "has_uint32", "_uinteger", "_drawn")

    def __init__(self, counter: int, key, buffer_pos: int = 4, has_uint32: bool = False,
                 uinteger: int = 0):
        self.counter, self.key = counter & _C256, (int(key[0]) & MASK64, int(key[1]) & MASK64)
        self.buffer_pos, self.has_uint32 = int(buffer_pos), bool(has_uint32)
        self._uinteger = int(uinteger)          # an int, or (counter, lane) of its 64-bit value
        self._drawn = buffer_pos < 4

    def copy(self) -> "StreamState":
        s = StreamState.__new__(StreamState)
        s.counter, s.key, s.buffer_pos = self.counter, self.key, self.buffer_pos
        s.has_uint32, s._uinteger, s._drawn = self.has_uint32, self._uinteger, self._drawn
        return s

    @property
    def uinteger(self) -> int:
        u = self._uinteger
        if u.__class__ is tuple:
            u = self._uinteger = philox4x64(counter_words(u[0]), self.key)[u[1]] >> 32
        return u

    def buffer(self) -> tuple[int, ...]:
        return philox4x64(counter_words(self.counter), self.key) if self._drawn else (0, 0, 0, 0)

    def lead(self) -> tuple[int, int]:
        """The ``lead`` and ``lc`` arguments of 32-bit kernels: (-1, 0) without a pending
        half, (value, 0), or (-2 - lane, counter) for a half kept by position."""
        if not self.has_uint32:
            return -1, 0
        u = self._uinteger
        return (-2 - u[1], u[0]) if u.__class__ is tuple else (u, 0)

    def start(self) -> tuple[int, int]:
        """``(S, o)``: the next 64-bit value is lane ``o`` of block ``S``."""
        if self.buffer_pos >= 4:
            return (self.counter + 1) & _C256, 0
        return self.counter, self.buffer_pos

    def advance64(self, m: int) -> None:
        """NumPy's state after ``m`` calls of ``next_uint64``."""
        if m <= 0:
            return
        S, o = self.start()
        last = o + m - 1
        self.counter = (S + last // 4) & _C256
        self.buffer_pos = last % 4 + 1
        self._drawn = True

    def advance32(self, m: int) -> None:
        """NumPy's state after ``m`` calls of ``next_uint32`` (low half first, the high half
        kept for the next call)."""
        if m <= 0:
            return
        if self.has_uint32:
            self.has_uint32 = False
            m -= 1
        self.advance64((m + 1) // 2)
        if m % 2:
            self.has_uint32 = True
            self._uinteger = (self.counter, self.buffer_pos - 1)

    def advance_blocks(self, nblocks: int) -> None:
        """After a ``dist`` draw: it used ``nblocks`` fresh blocks (from ``counter + 1``)."""
        if nblocks <= 0:
            return
        self.counter = (self.counter + nblocks) & _C256
        self.buffer_pos = 4

    def values(self, S: int, o: int, n: int, nblocks: int, lead=(-1, 0), limit: int = 0,
               off: int = 0, rng: int = 0, threshold: int = 0, f=(0.0, 0.0, 0.0, 0.0)) -> tuple:
        """The kernels' argument struct's fields (:data:`.codegen.ARG_FIELDS`), in order."""
        k0, k1 = self.key
        lc = lead[1]
        return (S & MASK64, (S >> 64) & MASK64, (S >> 128) & MASK64, S >> 192, k0, k1, o, n,
                nblocks, lead[0], limit, off & MASK64, rng & MASK64, threshold, *f,
                lc & MASK64, (lc >> 64) & MASK64, (lc >> 128) & MASK64, lc >> 192)

    def args(self, *a, **k) -> "Args":
        """The kernels' argument struct as a ctypes object (:meth:`values`' fields)."""
        return Args(*self.values(*a, **k))


SIGNED_FIELDS = ("o", "n", "nblocks", "lead", "limit")


class Args(ctypes.Structure):
    """The by-value ``rng_args`` struct of the kernels."""

    _fields_ = [(f, ctypes.c_double if f in cg.DOUBLES else
                 ctypes.c_int64 if f in SIGNED_FIELDS else ctypes.c_uint64)
                for f in cg.ARG_FIELDS]


# ---- integers ------------------------------------------------------------------------------------

_WIDTH = {1: 1, 8: 8, 16: 16, 32: 32}


def integer_plan(rng: int, dtype: np.dtype) -> tuple[int, bool, int]:
    """NumPy's word for ``integers`` with ``high - low == rng`` (closed): ``(width, full,
    threshold)``; width 0 when nothing is drawn (``rng == 0``).

    bool uses 1-bit parts and 8/16-bit types 8/16-bit parts of 32-bit words, 32-bit types
    32-bit words, 64-bit types 32-bit words when the range fits (NumPy's
    ``random_bounded_uint64_fill``) and 64-bit ones otherwise. ``full``: the range is the
    whole word (Lemire's method does not apply); else a word ``x`` maps to
    ``(x * (rng + 1)) >> width`` and is rejected when the low bits are below ``threshold``
    (``2**width mod (rng + 1)``: zero when ``rng + 1`` is a power of two).
    """
    if rng == 0:
        return 0, True, 0
    bits = 1 if dtype.kind == "b" else dtype.itemsize * 8
    width = 64 if bits == 64 and rng > 0xFFFFFFFF else min(bits, 32)
    if rng == (1 << width) - 1:
        return width, True, 0
    return width, False, (1 << width) % (rng + 1)


def per_u64(width: int) -> int:
    """Words (candidates) per 64-bit value."""
    return 64 // width


def candidate_limit(n: int, width: int, threshold: int) -> int:
    """Candidates to examine for ``n`` accepted ones, generously (a shortfall only costs one
    more round): the mean plus 8 standard deviations, whole 32-bit words."""
    p = 1.0 - threshold / float(1 << width)
    limit = int(math.ceil(n / p + 8.0 * math.sqrt(n * (1.0 - p)) / p)) + 64
    per = max(1, 32 // width)
    return -(-limit // per) * per


def blocks_for(state_o: int, lead: bool, candidates: int, width: int) -> int:
    """Philox blocks from ``S`` that hold the first ``candidates`` words (``width`` 64, or 32
    and below, ``32 // width`` words a 32-bit word; shifts, not max() and negated floor
    divisions: every draw computes this)."""
    if width == 64:
        u64s = candidates
    else:
        words32 = -(-candidates // (32 // width)) - (1 if lead else 0)
        u64s = (words32 + 1) >> 1 if words32 > 0 else 0
    return (state_o + u64s + 3) >> 2 if u64s > 0 else 1


def consume(state: StreamState, width: int, candidates: int) -> None:
    """Advance ``state`` past ``candidates`` words of ``width`` bits."""
    if width == 64:
        state.advance64(candidates)
    elif width == 32:
        state.advance32(candidates)
    else:
        state.advance32(-(-candidates // (32 // width)))


def dist_blocks(what: str, dtype: np.dtype, n: int) -> int:
    return -(-n // cg.DIST_PER_BLOCK[what][dtype.itemsize])
