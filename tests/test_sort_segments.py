"""Segmented sorts of 8-byte keys (gpunb.core.kernels.sort: ``SEGMENTS``): the digit passes
of the top 2 or 3 digits group the keys, then one block a group sorts the low bits.

CPU: the plan (which keys qualify, how many digits group them, the group ids' range and mean
size) against a NumPy model of the keys' digits, and the entry points of the sources that
have the group kernels. GPU: full-range int64 keys, ties (argsort stable), float64 and
complex64 keys of random bits with NaN/inf/-0.0, keys spread over the top 6 bits only (3
grouping digits), and groups too large for a block (sorted after, by passes of their own or
by every pass), each against NumPy, with the path taken checked."""

import numpy as np
import pytest

import gpunb as gp
from gpunb.core.kernels.sort import codegen as cg
from gpunb.core.kernels.sort import plan as sp
from tests import data

rng = np.random.default_rng(2611)
gpu = pytest.mark.gpu


def _bit_ordered(h):
    u = np.ascontiguousarray(h).view(np.uint64)
    if h.dtype.kind == "i":
        return u ^ np.uint64(1 << 63)
    return u


def _counts(b):
    """The digit histograms (8 passes x 256) of bit-ordered 64-bit keys."""
    return np.stack([np.bincount(((b >> np.uint64(8 * q)) & np.uint64(255)).astype(np.int64),
                                 minlength=256) for q in range(8)])


def _groups(b, p):
    return ((b >> np.uint64(p.bit)) & np.uint64((1 << p.nbits) - 1)) >> np.uint64(p.shift)


# -- CPU: the plan -----------------------------------------------------------------------------

@pytest.mark.parametrize("n, top_bits, digits", [
    (1 << 20, 64, (6, 7)), (1 << 22, 64, (6, 7)), (3 << 21, 64, (6, 7)),
    (1 << 22, 58, (5, 6, 7)),          # the top digit holds 2 bits' worth: 3 digits group
    (1 << 22, 61, (6, 7)),             # 5 bits of the top digit: 2^13 ids, still 2 digits
])
def test_plan_groups_keys_near_the_mean(n, top_bits, digits):
    """Uniform keys: the grouping digits, the group ids within ``groups``, and the mean group
    between 1/2 and 3/2 of SEG_MEAN keys (the larger tile holds 2 SEG_MEAN)."""
    b = rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n).astype(np.uint64)
    b >>= np.uint64(64 - top_bits)
    p = sp.segment_plan(_counts(b), n)
    assert p is not None and p.digits == digits
    assert p.bit == 8 * digits[0] and p.nbits == 8 * len(digits) and p.begin == 0
    ids = _groups(b, p)
    assert int(ids.max()) < p.groups
    used = np.unique(ids).size
    assert sp.SEG_MEAN / 2 <= n / used <= sp.SEG_MEAN * 3 / 2, n / used
    assert int(np.bincount(ids.astype(np.int64)).max()) <= cg.SEG_THREADS * cg.SEG_ITEMS
    # ordered by group, then by the bits a block sorts: the keys' order
    low = b & np.uint64((1 << p.end) - 1) if p.end < 64 else b
    assert p.end - p.begin <= 64 - 8 * len(digits) + p.shift
    order = np.lexsort((low >> np.uint64(p.begin), ids))
    assert (b[order][1:] >= b[order][:-1]).all()


def test_plan_skips_keys_the_passes_sort_as_fast():
    n = 1 << 22
    full = rng.integers(0, 1 << 64, n, dtype=np.uint64)
    assert sp.segment_plan(_counts(full >> np.uint64(24)), n) is None         # 5 moving digits
    skewed = full.copy()
    skewed[: n // 4] &= np.uint64((1 << 56) - 1)          # a quarter of the keys in top digit 0
    assert sp.segment_plan(_counts(skewed), n) is None
    floats = _bit_ordered(rng.standard_normal(n))         # exponents: a few top digits
    fb = floats ^ np.where(floats >> np.uint64(63), np.uint64(~0 & (2**64 - 1)), np.uint64(1 << 63))
    assert sp.segment_plan(_counts(fb), n) is None
    low = full & ~np.uint64(0xFFFF)                     # the low two digits never move
    p = sp.segment_plan(_counts(low), n)
    assert p is not None and p.begin == 16 and p.digits == (6, 7)


def test_group_kernels_are_in_the_8_byte_ascending_sources():
    for k, has in ((cg.SortKernel("int64"), True), (cg.SortKernel("float64", "int32"), True),
                   (cg.SortKernel("complex64"), True), (cg.SortKernel("float32"), False),
                   (cg.SortKernel("int64", descending=True), False),
                   (cg.SortKernel("int64", offset=True), False)):
        assert k.segments == has
        assert ("_segs" in "".join(cg.entry_points(k))) == has
        assert ("#define SEGS 1" in cg.render(k)) == has


# -- GPU ---------------------------------------------------------------------------------------

@pytest.fixture
def segmented(monkeypatch):
    """Segmented sorts from 2^16 keys on; returns the list of the segmented plans run."""
    from gpunb.core.kernels.sort import run

    monkeypatch.setattr(run, "SEGMENTS_MIN", 1 << 16)
    monkeypatch.setattr(run, "SKIP_PASSES_MIN", 1 << 16)
    monkeypatch.setattr(run, "_seg_last", {})
    plans = []
    real = run._segmented
    monkeypatch.setattr(run, "_segmented", lambda k, lk, p, *a: plans.append(p) or real(k, lk, p, *a))
    return plans


def _same_bits(got, want):
    got = gp.asnumpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


def _all_ways(h):
    """sort, argsort (stable), a pairs sort with int64 values, unique's counts."""
    from gpunb.core.kernels.sort import run

    x = gp.asarray(h)
    _same_bits(gp.sort(x), np.sort(h, kind="stable"))
    data.same(gp.argsort(x), np.argsort(h, kind="stable"))
    vals = rng.integers(-9, 9, h.size)
    k, v = run.sort_flat(x, gp.asarray(vals))
    np.testing.assert_array_equal(v.get(), vals[np.argsort(h, kind="stable")])


@gpu
@pytest.mark.parametrize("n", [1 << 17, 300_001])
def test_full_range_int64(n, segmented):
    h = rng.integers(-(1 << 63), (1 << 63) - 1, n, endpoint=True)
    h[:3] = [-(1 << 63), (1 << 63) - 1, 0]
    _all_ways(h)
    assert len(segmented) == 3 and all(p.digits == (6, 7) for p in segmented)


@gpu
def test_ties_keep_their_order(segmented):
    pool = rng.integers(-(1 << 63), (1 << 63) - 1, 1 << 15)
    h = rng.choice(pool, 1 << 17)
    _all_ways(h)
    assert segmented
    counts = gp.unique(gp.asarray(h), return_counts=True)
    want = np.unique(h, return_counts=True)
    for g, w in zip(counts, want):
        np.testing.assert_array_equal(g.get(), w)


@gpu
@pytest.mark.parametrize("dt", ["float64", "complex64", "uint64"])
def test_random_bits(dt, segmented):
    """Keys of random bits: NaNs of many payloads (last, tied), infinities, -0.0 tied with
    0.0, as NumPy's stable sort orders them."""
    n = 1 << 17
    h = rng.integers(0, 1 << 64, n, dtype=np.uint64).view(dt)
    if dt != "uint64":
        special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0], dt)
        h[rng.integers(0, n, 600)] = rng.choice(special, 600)
    _all_ways(h)
    assert segmented


@gpu
def test_three_grouping_digits(segmented):
    h = rng.integers(0, 1 << 57, 1 << 20)
    _all_ways(h)
    assert segmented and all(p.digits == (5, 6, 7) for p in segmented)


@gpu
@pytest.mark.parametrize("big", [3, 40])
def test_groups_larger_than_a_block(big, segmented, monkeypatch):
    """Groups over a block's tile (keys sharing their top 16 bits): a few are sorted by
    passes of their own, many by every pass over all the keys."""
    from gpunb.core.kernels.sort import run

    ranges = []
    real = run._sort_range
    monkeypatch.setattr(run, "_sort_range", lambda *a: ranges.append(a[7] - a[6]) or real(*a))
    n = 1 << 18
    h = rng.integers(-(1 << 63), (1 << 63) - 1, n)
    tile = cg.SEG_THREADS * cg.SEG_ITEMS
    # each top digit, and each second one, in at most one big group (so the digits stay even)
    tops = rng.choice(256, big, replace=False) << 8 | rng.choice(256, big, replace=False)
    for j in range(big):
        bits = np.uint64(int(tops[j]) << 48) | rng.integers(0, 1 << 48, tile + 500, dtype=np.uint64)
        h[j * (tile + 500):(j + 1) * (tile + 500)] = (bits ^ np.uint64(1 << 63)).view(np.int64)
    x = gp.asarray(h)
    _same_bits(gp.sort(x), np.sort(h, kind="stable"))
    data.same(gp.argsort(x), np.argsort(h, kind="stable"))
    assert segmented
    if big <= run.SEG_FALLBACK_GROUPS:
        assert ranges and all(r < n for r in ranges)
    else:
        assert ranges and all(r == n for r in ranges)


@gpu
def test_uneven_low_bits(segmented):
    """Groups whose next 8 bits are all equal (every key in one bin) take the block's radix
    sort; the other groups the bins."""
    h = rng.integers(-(1 << 63), (1 << 63) - 1, 1 << 18)
    even = ((h.view(np.uint64) >> np.uint64(48)) & np.uint64(1)) == 0
    h[even] &= ~np.int64(0xFF << 40)
    _all_ways(h)
    assert segmented


@gpu
def test_the_first_pass_is_guessed_from_the_last_sort(segmented):
    """After keys that do not qualify, the next sort runs its first pass while the histograms
    come back (so it is not segmented, and still right); the one after is segmented."""
    narrow = rng.integers(-(1 << 40), 1 << 40, 1 << 17)      # the top digits uneven
    full = rng.integers(-(1 << 63), (1 << 63) - 1, 1 << 17)
    for h, want in ((narrow, 0), (full, 0), (full, 1), (narrow, 1), (full, 1)):
        _same_bits(gp.sort(gp.asarray(h)), np.sort(h, kind="stable"))
        assert len(segmented) == want
