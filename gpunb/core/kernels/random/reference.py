"""Philox4x64 in pure Python: the reference the generated kernels are tested against, and
what the host uses for the few values it needs itself (a generator's buffered block, a
leftover 32-bit half).

Random123's Philox4x64-R (Salmon et al., SC'11) as NumPy's ``numpy.random.Philox`` runs it:
10 rounds, a 256-bit counter of four 64-bit words incremented BEFORE each block, four 64-bit
outputs per block taken in order.
"""

from __future__ import annotations

import functools

M0, M1 = 0xD2E7470EE14C6C93, 0xCA5A826395121157      # round multipliers
W0, W1 = 0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B      # Weyl key increments
MASK64 = (1 << 64) - 1
ROUNDS = 10


def philox4x64(counter, key, rounds: int = ROUNDS) -> tuple[int, int, int, int]:
    """One block: the four 64-bit outputs for ``counter`` (4 words) and ``key`` (2 words)."""
    c0, c1, c2, c3 = (int(c) & MASK64 for c in counter)
    k0, k1 = (int(k) & MASK64 for k in key)
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + W0) & MASK64, (k1 + W1) & MASK64
        p0, p1 = M0 * c0, M1 * c2
        c0, c1, c2, c3 = ((p1 >> 64) ^ c1 ^ k0), p1 & MASK64, ((p0 >> 64) ^ c3 ^ k1), p0 & MASK64
    return c0, c1, c2, c3


def counter_int(words) -> int:
    """The 256-bit counter as one integer (word 0 least significant)."""
    return sum((int(w) & MASK64) << (64 * i) for i, w in enumerate(words))


def counter_words(value: int) -> tuple[int, int, int, int]:
    value &= (1 << 256) - 1
    return tuple((value >> (64 * i)) & MASK64 for i in range(4))


def uint64_at(counter: int, key, position: int) -> int:
    """The stream's 64-bit value at ``position`` after the block ``counter``: position 0..3 is
    block ``counter + 1`` (the counter is incremented before use), 4..7 the next, ..."""
    return philox4x64(counter_words(counter + 1 + position // 4), key)[position % 4]


# Philox4x32-10: the continuous distributions' draws (codegen's ``dist`` kinds).
M0_32, M1_32 = 0xD2511F53, 0xCD9E8D57
W0_32, W1_32 = 0x9E3779B9, 0xBB67AE85
MASK32 = 0xFFFFFFFF


def philox4x32(counter, key, rounds: int = ROUNDS) -> tuple[int, int, int, int]:
    """One Philox4x32 block: four 32-bit outputs for ``counter`` (4 words), ``key`` (2)."""
    c0, c1, c2, c3 = (int(c) & MASK32 for c in counter)
    k0, k1 = (int(k) & MASK32 for k in key)
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + W0_32) & MASK32, (k1 + W1_32) & MASK32
        p0, p1 = M0_32 * c0, M1_32 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0), p1 & MASK32, ((p0 >> 32) ^ c3 ^ k1), p0 & MASK32
    return c0, c1, c2, c3


def key32(key) -> tuple[int, int]:
    """The Philox4x32 key of a Philox4x64 key (the continuous draws' stream)."""
    mixed = (int(key[0]) ^ ((int(key[1]) << 32) | (int(key[1]) >> 32))) & MASK64
    return mixed & MASK32, mixed >> 32


def round_keys32(k0: int, k1: int) -> tuple[int, ...]:
    """The ten rounds' Philox4x32 keys of key (k0, k1), interleaved (k0 of round 0, k1 of
    round 0, k0 of round 1, ...): the ``philox32_keys`` parameter of the continuous draws."""
    return tuple(((k0 + r * W0_32) & MASK32, (k1 + r * W1_32) & MASK32)[i]
                 for r in range(ROUNDS) for i in (0, 1))


@functools.lru_cache(maxsize=64)
def philox32_keys(key: tuple[int, int]) -> tuple[int, int, tuple[int, ...]]:
    """The continuous draws' keys of a Philox4x64 key: the 4x32 key's two words and its ten
    rounds' keys (made once per key: a small draw's host time)."""
    k32 = key32(key)
    return (*k32, round_keys32(*k32))


def dist_counter(block: int, first: int) -> tuple[int, int, int, int]:
    """The Philox4x32 counter of block ``block`` of a continuous draw that starts at the
    Philox4x64 block ``first``."""
    return block & MASK32, (block >> 32) & MASK32, first & MASK32, (first >> 32) & MASK32
