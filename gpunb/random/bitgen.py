"""Bit generators (NumPy's ``numpy.random.BitGenerator``, ``Philox``, ``SeedSequence``).

gpunb's :class:`Philox` keeps NumPy's Philox state on the host (a 256-bit counter, the key,
the buffered block's position, a pending 32-bit half) and draws on the GPU: every value a
kernel needs is a pure function of the counter, so the GPU computes the stream's values
where they are written. ``gpunb.random.Philox(seed)`` is NumPy's ``numpy.random.Philox(seed)``
stream exactly, and its ``state`` reads and writes NumPy's state dictionary.
"""

from __future__ import annotations

import operator

import numpy as np

from ..core.kernels.random import plan as pl
from ..core.kernels.random.reference import counter_int

# Seeding is host arithmetic: NumPy's own SeedSequence (the same keys, spawn tree, entropy).
SeedSequence = np.random.SeedSequence
_ISEED = np.random.bit_generator.ISeedSequence


class BitGenerator:
    """Base class of gpunb's bit generators (NumPy's ``numpy.random.BitGenerator``).

    Holds a :class:`SeedSequence` (``seed_seq``) and draws raw 64-bit values on the GPU
    (:meth:`random_raw`). Subclasses set ``_state`` (:class:`gpunb.core.kernels.random.plan.StreamState`)."""

    def __init__(self, seed=None):
        if isinstance(seed, _ISEED):
            self._seed_seq = seed
        else:
            self._seed_seq = SeedSequence(seed)

    @property
    def seed_seq(self):
        return self._seed_seq

    def spawn(self, n_children: int) -> list:
        """``n_children`` independent bit generators from ``seed_seq.spawn`` (NumPy's
        ``BitGenerator.spawn``)."""
        return [type(self)(s) for s in self._seed_seq.spawn(n_children)]

    # NumPy's values: random, uniform, integers, bytes and random_raw are NumPy's for this
    # generator (else they come from Philox4x32-10 blocks, as every other distribution's)
    _NUMPY_VALUES = True

    def _fill_integers(self, out, off: int, rng: int) -> None:
        """``off + [0, rng]`` into ``out`` (``integers``, ``bytes`` and ``random_raw``'s
        draw): NumPy's stream, or Philox4x32 words."""
        from ..core.kernels.random import run
        (run.fill_integers if self._NUMPY_VALUES else run.fill_integers32)(self._state, out, off, rng)

    def random_raw(self, size=None, output: bool = True):
        """The next raw 64-bit values as a uint64 gpunb array (NumPy's ``random_raw``)."""
        from .generator import _alloc
        out = _alloc(size, np.dtype(np.uint64))
        self._fill_integers(out, 0, pl.MASK64)
        return out if output else None


def _words(value, n: int, name: str) -> np.ndarray:
    """NumPy's reading of Philox's ``counter``/``key``: an int below ``2**(64 n)`` or ``n``
    words."""
    if isinstance(value, (int, np.integer)):
        v = int(value)
        if not 0 <= v < 1 << (64 * n):
            raise ValueError(f"{name} must be positive and less than 2**{64 * n}.")
        return np.array([(v >> (64 * i)) & pl.MASK64 for i in range(n)], np.uint64)
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, np.integer)) for v in value):
        # exact words (NumPy's np.asarray would round ints above 2**63 through float64)
        arr = np.array([int(v) & pl.MASK64 for v in value], np.uint64)
    else:
        arr = np.asarray(value)
    if arr.size != n:
        raise ValueError(f"{name} must have {n} elements when using array form")
    return arr.astype(np.uint64).ravel()


class _Counter(BitGenerator):
    """A counter-based generator's state on the host (NumPy's Philox's: a 256-bit counter of
    Philox4x64 blocks and a key) and its operations; the draws run on the GPU."""

    _NAME = "Philox"

    def __init__(self, seed=None, counter=None, key=None):
        if seed is not None and key is not None:
            raise ValueError("seed and key cannot be both used")
        BitGenerator.__init__(self, seed)
        key = self._seed_seq.generate_state(2, np.uint64) if key is None else _words(key, 2, "key")
        ctr = np.zeros(4, np.uint64) if counter is None else _words(counter, 4, "counter")
        self._state = pl.StreamState(counter_int(ctr), key)

    @property
    def state(self) -> dict:
        """NumPy's state dictionary (``numpy.random.Philox().state``'s keys and types)."""
        s = self._state
        return {"bit_generator": self._NAME,
                "state": {"counter": np.array([(s.counter >> (64 * i)) & pl.MASK64 for i in range(4)],
                                              np.uint64),
                          "key": np.array(s.key, np.uint64)},
                "buffer": np.array(s.buffer(), np.uint64), "buffer_pos": s.buffer_pos,
                "has_uint32": int(s.has_uint32), "uinteger": s.uinteger}

    @state.setter
    def state(self, value):
        if not isinstance(value, dict):
            raise TypeError("state must be a dict")
        if value.get("bit_generator") != self._NAME:
            raise ValueError(f"state must be for a {self._NAME} PRNG")
        st = value["state"]
        self._state = pl.StreamState(counter_int(np.asarray(st["counter"], np.uint64)), st["key"],
                                     int(value["buffer_pos"]), bool(value["has_uint32"]),
                                     int(value["uinteger"]))

    def jumped(self, jumps: int = 1):
        """A new generator ``jumps * 2**128`` blocks ahead, its buffers reset (NumPy's
        ``Philox.jumped``)."""
        new = type(self).__new__(type(self))
        new._seed_seq = self._seed_seq
        new._state = pl.StreamState(self._state.counter + (int(jumps) << 128), self._state.key)
        return new

    def advance(self, delta: int):
        """Advance the counter by ``delta`` blocks and reset the buffers (NumPy's
        ``Philox.advance``)."""
        self._state = pl.StreamState(self._state.counter + operator.index(delta), self._state.key)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__} at 0x{id(self):X}"


class Philox(_Counter):
    """Philox4x64-10, counter-based (NumPy's ``numpy.random.Philox``; the same stream).

    ``Philox(seed)`` takes its key from ``SeedSequence(seed).generate_state(2, uint64)``;
    ``counter`` (up to four 64-bit words) and ``key`` (two words, instead of a seed) as
    NumPy's. ``Generator(Philox(seed))``'s ``random``, ``uniform``, ``integers``, ``bytes``
    and ``random_raw`` are NumPy's values bit for bit. The draws run on the GPU; the state
    stays on the host.
    """


class Philox4x3210(_Counter):
    """Philox4x32-10 (CuPy's ``cupy.random.Philox4x3210``; cuRAND's and torch's generator):
    the bit generator of :func:`~gpunb.random.default_rng`.

    Seeded, keyed and advanced as :class:`Philox` (``seed``, ``counter``, ``key``,
    ``state``, ``jumped``, ``spawn``), but ``random`` and ``uniform`` (``(x >> 11) * 2**-53``
    of a 64-bit word; float32 from a 32-bit word), ``integers`` (Lemire's multiply-shift, a
    rejected word drawn again on its own, so one pass over the elements), ``bytes`` and
    ``random_raw`` come from Philox4x32-10 blocks keyed from its key, as the normals and
    exponentials do under either generator: a quarter of the multiply work per bit of NumPy's
    Philox4x64-10 stream, at the write bandwidth. The rejection samplers (gamma, poisson, ...)
    and the permutations draw Philox4x64 blocks as under ``Philox``. Not NumPy's values: use
    ``Philox`` for those.
    """

    _NAME = "Philox4x3210"
    _NUMPY_VALUES = False
