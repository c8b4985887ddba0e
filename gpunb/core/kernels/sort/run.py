"""Radix sorts, run: gpunb's host dispatch of the kernels of :mod:`.codegen`.

The engine calls (for ``gpunb._sorting`` and the other sorting users: unique, searchsorted,
histograms, quantiles):

- :func:`sort_flat` ``(keys, values=None, descending=False) -> (keys, values)``: sort a 1-D
  C-contiguous array (``values``, if given, a 1-D C-contiguous array of the same length,
  reordered with the keys; stable). NumPy's order: NaN last, -0.0 ties with 0.0, complex
  lexicographic with NumPy's NaN groups; descending keeps NaN last. New arrays are returned;
  the inputs are not changed.
- :func:`argsort_flat` ``(keys, descending=False) -> positions``: the stable argsort (int64)
  of a 1-D array.
- :func:`take_flat` ``(src, idx) -> src[idx]`` (1-D, int64 ``idx`` in bounds) and
  :func:`lexsort_rows` ``(keys, L) -> positions`` (``numpy.lexsort`` within rows of ``L``).
- :func:`sort_rows` ``(keys, want_keys=True, want_positions=False) -> (keys, positions)``:
  sort every row of a C-contiguous array along its last axis (stable; positions are int64
  positions within the row, i.e. ``argsort(axis=-1)``).

Plans (:mod:`.plan`): a segment of at most one block's tile is sorted by one block in shared
memory (one launch: small arrays, and short rows, one block per row); a longer array by CUB's
onesweep passes: zero the bins, one histogram pass over the keys, one scan of the histograms,
then one pass per 8-bit digit (in portions of at most 2^28 items; from ``SKIP_PASSES_MIN``
keys on, the histograms are read back while the first pass runs and a later pass whose digit
is the same in every key is skipped, so the result may end in the scratch buffers, which
``_sort`` returns); argsort's first pass generates the positions (int32 ones, widened at the
end: ``NARROW_ARGSORT``). 8-byte keys whose top digits spread evenly (full-range int64) run
only the passes of the top 2 or 3 digits, then one block sorts each group of keys sharing
those bits (``SEGMENTS``, :func:`.plan.segment_plan`, :mod:`.segments`). Rows longer than a
tile: keys of at most 4 bytes by one flat sort of (row, key) composites (``COMPOSITE_ROWS``),
others (and argsort) by one stable sort of (key, flat position) over all rows, a stable sort
of the positions by row (one or two passes of a few bits), then a gather.

Inputs to these calls must be on the GPU; a non-contiguous one is copied first.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ... import memo
from ...ndarray import ndarray
from ...runtime import memory
from .. import loader
from ..execute import Step, execute
from . import codegen as cg
from . import plan as pl

_I64, _I32, _U8, _U64 = np.dtype("int64"), np.dtype("int32"), np.dtype("uint8"), np.dtype("uint64")
# Sorts (keys only) of many rows longer than a block, keys of at most 4 bytes: one flat sort of
# (row, key) composites (about 120 bytes of traffic per key for float32 rows against about
# 180 for the two stable sorts and a gather of the general path).
COMPOSITE_ROWS = True
# argsort of an array longer than a block: the digit passes carry int32 positions (8 bytes
# per key and pass less than int64 ones for 4-byte keys), widened to int64 at the end.
NARROW_ARGSORT = True
# Sorts of at least this many keys read the digit histograms back while their first pass runs
# and skip the later passes whose digit is the same in every key: int64 keys below 2^20 take
# 3 passes instead of 8. Smaller sorts, and graph captures, run every pass.
SKIP_PASSES_MIN = 1 << 20
# Integer keys in a narrow range that straddles zero or a byte boundary (int64 in [-1000,
# 1000]: 8 passes) are sorted, after the first pass, as their differences from the smallest
# (2 passes) by an offset source, when that saves a pass (see ``_offset_passes``).
OFFSET_KEYS = True
# 8-byte keys whose top digits spread evenly (full-range int64: 8 passes, about 136 bytes of
# traffic a key) from SEGMENTS_MIN keys on: the passes of the top 2 (or 3) digits group the
# keys (about SEG_MEAN a group), then one block a group sorts the low bits in shared memory
# (about 56 bytes a key in all). A group that does not fit a block is sorted by passes of its
# own; more than SEG_FALLBACK_GROUPS of them, by every pass (see plan.segment_plan).
SEGMENTS = True
SEGMENTS_MIN = 1 << 22
SEG_FALLBACK_GROUPS = 8
_kernels = memo.table("sort.kernels")    # (key dtype, value dtype or None, descending) -> its IR
_block_steps = memo.table("sort.block_steps")     # one-block sorts' launches, by kernel and size
_vp, _i64, _int, _null = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_void_p(0)
_u64 = ctypes.c_uint64


def kernel_for(key: np.dtype, value: np.dtype | None = None, descending: bool = False,
               rows: bool = False, offset: bool = False) -> cg.SortKernel:
    spec = (key, value, descending, rows, offset)
    k = _kernels.get(spec)
    if k is None:
        k = _kernels[spec] = cg.SortKernel(*spec)
    return k


def _load(k: cg.SortKernel):
    return loader.get(cg, (k.key, k.value, k.descending, k.rows, k.offset), lambda: k)


def _p(a) -> _vp:
    return _vp(a.data.ptr) if a is not None else _null


def _flat(a):
    """``a`` as a 1-D C-contiguous array (a copy only if it is not contiguous)."""
    if a is None or (a.ndim == 1 and a._c_contiguous):
        return a
    return (a if a._c_contiguous else a.copy()).reshape(a.size)


def _grid_stride(lk, n: int) -> int:
    return max(1, min(-(-n // cg.THREADS), lk.sm_count * 8))


# ---- flat sorts ----------------------------------------------------------------------------------

def sort_flat(keys: ndarray, values: ndarray | None = None, descending: bool = False):
    """``(sorted keys, values in the keys' order or None)`` of 1-D C-contiguous ``keys``
    (see the module docstring)."""
    keys, values = _flat(keys), _flat(values)
    n = keys.size
    out_k = ndarray._empty((n,), keys.dtype)
    out_v = ndarray._empty((n,), values.dtype) if values is not None else None
    if n:
        k = kernel_for(keys.dtype, values.dtype if values is not None else None, descending)
        out_k, out_v = _sort(k, _load(k), keys, out_k, values, out_v, n, 0,
                             cg.key_bits(keys.dtype), False)
    return out_k, out_v


def argsort_flat(keys: ndarray, descending: bool = False) -> ndarray:
    """The stable argsort (int64 positions) of 1-D C-contiguous ``keys``."""
    keys = _flat(keys)
    n = keys.size
    out_v = ndarray._empty((n,), _I64)
    if n:
        k = kernel_for(keys.dtype, _I64, descending)
        out_k = ndarray._empty((n,), keys.dtype)
        if NARROW_ARGSORT and (n > k.block_tile or descending) and n < 1 << 31:
            k = kernel_for(keys.dtype, _I32, descending)
            lk = _load(k)
            pos = ndarray._empty((n,), _I32)
            pos = _sort(k, lk, keys, out_k, None, pos, n, 0, cg.key_bits(keys.dtype), True)[1]
            execute((Step(lk.functions[k.name + "_widen"], (_grid_stride(lk, n),), (cg.THREADS,),
                          (0, 1, _i64(n))),), [_p(pos), _p(out_v)])
        else:
            out_v = _sort(k, _load(k), keys, out_k, None, out_v, n, 0, cg.key_bits(keys.dtype), True)[1]
    return out_v


def _sort(k, lk, keys, out_k, values, out_v, n: int, begin: int, end: int, iota: bool):
    """Sort ``n`` keys (bits ``begin`` to ``end``) into ``out_k`` (and values into ``out_v``;
    ``iota``: the values are 0..n-1, generated). Returns the arrays holding the result:
    ``(out_k, out_v)``, or, when passes were skipped, possibly a scratch pair like them."""
    f, name = lk.functions, k.name
    if n <= k.block_tile and not k.descending:          # one block, one launch
        spec = (name, n, iota, begin, end, lk.sm_count)
        step = _block_steps.get(spec)      # per-call host time: the launch, memoized
        if step is None:
            small = n <= cg.SMALL_THREADS * cg.SMALL_ITEMS
            step = Step(f[name + ("_block_small" if small else "_block")], (1,),
                        (cg.SMALL_THREADS if small else cg.THREADS,),
                        (0, 1, 2, 3, _i64(n), _int(int(iota)), _int(begin), _int(end)))
            if len(_block_steps) > 4096:
                _block_steps.clear()
            _block_steps[spec] = (step,)
        else:
            step = step[0]
        execute((step,), [_p(keys), _p(out_k), _p(values), _p(out_v)])
        return out_k, out_v
    if iota and not k.iota:
        values = ndarray._empty((n,), _I64)
        execute((Step(f[name + "_iota"], (_grid_stride(lk, n),), (cg.THREADS,), (0, _i64(n))),),
                [_p(values)])
        iota = False
    p = pl.onesweep_plan(n, k.tile, end - begin)
    temp = ndarray._empty((p.temp_bytes,), _U8)
    base = temp.data.ptr
    bins, ctrs, lookback = base + p.bins_offset, base + p.ctrs_offset, base + p.lookback_offset
    pairs = out_v is not None      # iota: the first pass generates the values
    hist_blocks = lk.sm_count * _hist_occupancy(lk, name)
    steps = [Step(f[name + "_zero"], (_grid_stride(lk, p.zero_words),), (cg.THREADS,),
                  (_vp(base), _i64(p.zero_words))),
             Step(f[name + "_hist"], (hist_blocks,), (cg.HIST_THREADS,),
                  (_vp(bins), 0, _i64(n), _int(begin), _int(end), _vp(base), _u64(0)))]
    readback, seg = None, False
    if n >= SKIP_PASSES_MIN and p.passes > 1 and not memory.get_default_memory_pool()._capturing:
        execute(steps, [_p(keys)])
        readback = memory.Readback(base, p.bins_offset + p.passes * p.digits * 8)
        steps = []
        # a segmented sort is decided on the histograms, so no pass runs while they come back
        seg = (SEGMENTS and k.segments and n >= SEGMENTS_MIN and p.portions == 1 and begin == 0
               and end == 64)
    steps.append(Step(f[name + "_scan"], (p.passes,), (cg.SCAN_THREADS,), (_vp(bins),)))
    bufs_k = [out_k, ndarray._empty((n,), out_k.dtype) if p.passes > 1 else None]
    bufs_v = [out_v, ndarray._empty((n,), out_v.dtype) if pairs and p.passes > 1 else None]
    # without skipping, ping-pong so that the last pass writes the outputs
    at = 0 if readback is not None else (p.passes - 1) % 2
    src_k, src_v = keys.data.ptr, values.data.ptr if pairs and not iota else 0

    def sweep(i: int, pas: int, fn: int | None = None, off: int = 0):
        nonlocal src_k, src_v
        dst_k = bufs_k[at].data.ptr
        dst_v = bufs_v[at].data.ptr if pairs else 0
        bit = begin + pas * cg.RADIX_BITS
        nbits = min(cg.RADIX_BITS, end - bit)
        for portion in range(p.portions):
            start = portion * p.portion_size
            count = min(n - start, p.portion_size)
            blocks = -(-count // k.tile)
            words = blocks * (1 << cg.RADIX_BITS)
            nxt = (bins + ((portion + 1) * p.passes + pas) * p.digits * 8
                   if portion < p.portions - 1 else 0)
            steps.append(Step(f[name + "_zero"], (_grid_stride(lk, words),), (cg.THREADS,),
                              (_vp(lookback), _i64(words))))
            first = iota and i == 0     # values "pointer": the portion's first position
            steps.append(Step(fn or f[name + ("_onesweep_iota" if first else "_onesweep")], (blocks,),
                              (k.onesweep[0],), (
                _vp(lookback), _vp(ctrs + (portion * p.passes + pas) * 4), _vp(nxt),
                _vp(bins + (portion * p.passes + pas) * p.digits * 8),
                _vp(dst_k), _vp(src_k + start * ksize), _vp(dst_v),
                _vp(src_v + start * vsize if pairs else 0),
                _int(count), _int(bit), _int(nbits), _u64(off))))
        src_k, src_v = dst_k, dst_v

    ksize = out_k.dtype.itemsize
    vsize = out_v.dtype.itemsize if pairs else 0
    if readback is None:
        sweep(0, 0)
        for pas in range(1, p.passes):
            at ^= 1
            sweep(pas, pas)
        execute(steps, [_p(keys)])
    else:
        # the first pass runs while the histograms come back; then only the passes whose
        # digit differs between keys (a pass with one digit moves nothing)
        # (a segmented sort needs no first pass: whether to run it while waiting is guessed
        # from the last sort of these keys, so a loop over similar data never waits)
        speculate = not (seg and _seg_last.get(k.name, True))
        if speculate:
            sweep(0, 0)
        execute(steps, [_p(keys)])
        raw = readback.wait()
        counts = np.frombuffer(raw, _U64, p.passes * p.digits, p.bins_offset)
        counts = _real(counts.reshape(p.passes, p.digits).astype(np.int64), n, begin, end)
        steps = []
        if seg:
            sp = pl.segment_plan(counts, n)
            _seg_last[k.name] = sp is not None
            if sp is not None and not speculate:
                for i, pas in enumerate(sp.digits):
                    if i:
                        at ^= 1
                    sweep(i, pas)
                    if i == 0:          # the GPU waits: launch the first pass now
                        execute(steps, [])
                        steps = []
                at ^= 1
                out = _segmented(k, lk, sp, steps, bufs_k, bufs_v, at, base + 16, n, pairs)
                del temp, values
                return out
        if not speculate:
            sweep(0, 0)
            execute(steps, [])
            steps = []
        moving = [int(q) for q in np.flatnonzero(counts[1:].max(axis=1) != n) + 1]
        top, off = _offset_passes(k, p, np.frombuffer(raw, _U64, 2), moving, begin)
        if top:
            # keys - off: the passes 1 .. top - 1 of an offset source, on new histograms
            ok = kernel_for(k.key, out_v.dtype if pairs else None, offset=True)
            olk = _load(ok)
            of, on = olk.functions, ok.name
            obins = bins + p.digits * 8
            words = (top - 1) * p.digits * 2
            steps += [Step(of[on + "_zero"], (_grid_stride(olk, words),), (cg.THREADS,),
                           (_vp(obins), _i64(words))),
                      Step(of[on + "_hist"], (olk.sm_count * _hist_occupancy(olk, on),), (cg.HIST_THREADS,),
                           (_vp(obins), _vp(src_k), _i64(n), _int(begin + cg.RADIX_BITS),
                            _int(begin + top * cg.RADIX_BITS), _null, _u64(off))),
                      Step(of[on + "_scan"], (top - 1,), (cg.SCAN_THREADS,), (_vp(obins),))]
            moving = [(q, of[on + "_onesweep"], off) for q in range(1, top)]
        else:
            moving = [(q, None, 0) for q in moving]
        for i, (pas, fn, o) in enumerate(moving):
            at ^= 1
            sweep(i + 1, pas, fn, o)
        execute(steps, [_p(keys)])
    del temp, values
    return bufs_k[at], bufs_v[at]


def _offset_passes(k, p, extremes: np.ndarray, moving: list, begin: int) -> tuple[int, int]:
    """``(top, off)``: sort ``key - off`` over its passes 1 .. ``top`` - 1 (its digits from
    ``top`` on are 0) instead of the ``moving`` passes of the keys themselves, when that is at
    least one pass fewer; else ``(0, 0)``. ``extremes``: the histogram's complemented smallest
    and its largest bit-ordered key. ``off`` is a multiple of 2^8, so pass 0's digits (already
    sorted by) are those of the keys themselves."""
    if not k.minmax or k.descending or p.portions > 1 or begin or not OFFSET_KEYS:
        return 0, 0
    lo, hi = ~int(extremes[0]) & (2**64 - 1), int(extremes[1])
    off = lo & ~((1 << cg.RADIX_BITS) - 1)
    top = max(1, -(-(hi - off).bit_length() // cg.RADIX_BITS))
    return (top, off) if hi >= lo and 1 < top and top - 1 < len(moving) else (0, 0)


def _real(counts: np.ndarray, n: int, begin: int, end: int) -> np.ndarray:
    """The digit histograms (passes x digits) of the ``n`` keys alone: CUB's histogram also
    counts the last tile's padding, at each pass's largest digit (its padding key is the
    largest bit-ordered key). A pass reorders nothing when one digit holds all ``n`` keys."""
    if (end - begin) % cg.RADIX_BITS == 0:         # (cheap: the GPU waits for this)
        counts[:, -1] -= counts.sum(axis=1) - n
        return counts
    passes = np.arange(len(counts))
    nbits = np.minimum(cg.RADIX_BITS, end - begin - passes * cg.RADIX_BITS)
    counts[passes, (1 << nbits) - 1] -= counts.sum(axis=1) - n
    return counts


def _segmented(k, lk, sp, steps: list, bufs_k, bufs_v, at: int, word: int, n: int, pairs: bool):
    """The rest of a segmented sort (``steps`` holds the top digit passes, which left the
    keys grouped in ``bufs_*[at ^ 1]``): each group's low bits sorted by one block into
    ``bufs_*[at]``. ``word``: a zeroed 8-byte word of scratch for the largest group's size.
    A group larger than a block's tile (uneven keys) is sorted afterwards by digit passes of
    its own; many of them, by every digit pass over all the keys. Returns ``(keys, values)``."""
    f, name = lk.functions, k.name
    src_k, dst_k = bufs_k[at ^ 1], bufs_k[at]
    src_v, dst_v = (bufs_v[at ^ 1], bufs_v[at]) if pairs else (None, None)
    starts = ndarray._empty((sp.groups + 1,), _I64)
    steps += [Step(f[name + "_bounds"], (_grid_stride(lk, n + 1),), (cg.THREADS,),
                   (0, _i64(n), _int(sp.bit), _int(sp.nbits), _int(sp.shift), 1, _i64(sp.groups))),
              Step(f[name + "_segmax"], (_grid_stride(lk, sp.groups),), (cg.THREADS,),
                   (1, _i64(sp.groups), _vp(word)))]
    execute(steps, [_p(src_k), _p(starts)])
    largest = memory.Readback(word, 8)      # waited for while the groups are sorted
    execute((Step(f[name + "_segs"], (sp.groups,), (cg.SEG_THREADS,),
                  (0, 1, 2, 3, 4, _int(sp.begin), _int(sp.end))),),
            [_p(src_k), _p(dst_k), _p(src_v), _p(dst_v), _p(starts)])
    if int(np.frombuffer(largest.wait(), _U64)[0]) <= cg.SEG_THREADS * cg.SEG_ITEMS:
        return dst_k, dst_v
    bounds = starts.get()
    big = np.flatnonzero(np.diff(bounds) > cg.SEG_THREADS * cg.SEG_ITEMS)
    if len(big) > SEG_FALLBACK_GROUPS:      # every digit pass again (stable, so still correct)
        rest = [q for q in range(sp.digits[0]) if q * cg.RADIX_BITS >= sp.begin] + list(sp.digits)
        out_k, out_v = dst_k, dst_v
        for q in rest:
            _sort_range(k, lk, src_k, out_k, src_v, out_v, 0, n, q * cg.RADIX_BITS,
                        (q + 1) * cg.RADIX_BITS)
            src_k, src_v, out_k, out_v = out_k, out_v, src_k, src_v
        return src_k, src_v
    for g in big:
        a, b = int(bounds[g]), int(bounds[g + 1])
        _sort_range(k, lk, src_k, dst_k, src_v, dst_v, a, b, sp.begin, sp.end)
    return dst_k, dst_v


def _sort_range(k, lk, src_k, dst_k, src_v, dst_v, a: int, b: int, begin: int, end: int) -> None:
    """Sort positions [a, b) of ``src_*`` by bits [begin, end) into the same positions of
    ``dst_*`` (a stable sort by digit passes of its own)."""
    sl = slice(a, b)
    vk, vv = dst_k[sl], dst_v[sl] if dst_v is not None else None
    rk, rv = _sort(k, lk, src_k[sl], vk, src_v[sl] if src_v is not None else None, vv, b - a,
                   begin, end, False)
    if rk.data.ptr != vk.data.ptr:
        memory.copy_device(vk.data.ptr, rk.data.ptr, vk.nbytes)
        if vv is not None:
            memory.copy_device(vv.data.ptr, rv.data.ptr, vv.nbytes)


_hist_occ = memo.table("sort.hist_occupancy")
_seg_last = memo.table("sort.segmented_last")    # kernel name -> whether its last sort was segmented


def _hist_occupancy(lk, name: str) -> int:
    occ = _hist_occ.get(name)
    if occ is None:
        occ = _hist_occ[name] = loader.blocks_per_sm(lk.functions[name + "_hist"], cg.HIST_THREADS)
    return occ


# ---- rows ----------------------------------------------------------------------------------------

def sort_rows(keys: ndarray, want_keys: bool = True, want_positions: bool = False):
    """Sort each row of C-contiguous ``keys`` (ndim >= 1) along the last axis: ``(sorted keys
    or None, int64 positions within the row or None)``, both of ``keys``' shape. Stable."""
    shape = keys.shape
    n = keys.size
    L = shape[-1] if shape else 1
    rows = n // L if L else 0
    if rows == 1:
        flat = keys.reshape(n)
        if want_positions and not want_keys:
            return None, argsort_flat(flat).reshape(shape)
        if want_positions:          # the pairs sort returns the sorted keys too
            ks, pos = _pairs_with_iota(flat)
            return ks.reshape(shape), pos.reshape(shape)
        return sort_flat(flat)[0].reshape(shape), None
    out_k = ndarray._empty(shape, keys.dtype) if want_keys else None
    out_p = ndarray._empty(shape, _I64) if want_positions else None
    if n == 0:
        return out_k, out_p
    k = kernel_for(keys.dtype, _I64 if want_positions else None)
    if L <= k.block_tile:            # one block per row
        lk = _load(k)
        small = L <= cg.SMALL_THREADS * cg.SMALL_ITEMS
        dst_k = out_k if want_keys else ndarray._empty(shape, keys.dtype)
        step = Step(lk.functions[k.name + ("_block_small" if small else "_block")], (rows,),
                    (cg.SMALL_THREADS if small else cg.THREADS,),
                    (0, 1, 2, 3, _i64(L), _int(1), _int(0), _int(cg.key_bits(keys.dtype))))
        execute((step,), [_p(keys), _p(dst_k), _null, _p(out_p)])
        return out_k, out_p
    flat = keys.reshape(n)
    if COMPOSITE_ROWS and not want_positions and keys.dtype.itemsize <= 4 and keys.dtype.kind != "c":
        kc = kernel_for(keys.dtype, rows=True)
        lkc = _load(kc)
        comp, done = ndarray._empty((n,), _U64), ndarray._empty((n,), _U64)
        g = _grid_stride(lkc, n)
        execute((Step(lkc.functions[kc.name + "_compose"], (g,), (cg.THREADS,), (0, 1, _i64(n), _i64(L))),),
                [_p(flat), _p(comp)])
        done = _sort(kc, lkc, comp, done, None, None, n, 0,
                     cg.key_bits(keys.dtype) + max(1, (rows - 1).bit_length()), False)[0]
        execute((Step(lkc.functions[kc.name + "_extract"], (g,), (cg.THREADS,), (0, 1, _i64(n))),),
                [_p(done), _p(out_k)])
        return out_k, out_p
    # long rows: a stable sort of (key, flat position), then of the positions by row
    kp = kernel_for(keys.dtype, _I64)
    lkp = _load(kp)
    _, pos = _pairs_with_iota(flat, kp, lkp)
    row = ndarray._empty((n,), _I32)
    g = _grid_stride(lkp, n)
    execute((Step(lkp.functions[kp.name + "_rowkey"], (g,), (cg.THREADS,), (0, 1, _i64(n), _i64(L))),),
            [_p(pos), _p(row)])
    kr = kernel_for(_I32, _I64)
    lkr = _load(kr)
    row_sorted = ndarray._empty((n,), _I32)
    pos2 = ndarray._empty((n,), _I64)
    pos2 = _sort(kr, lkr, row, row_sorted, pos, pos2, n, 0, max(1, (rows - 1).bit_length()), False)[1]
    execute((Step(lkp.functions[kp.name + "_gather"], (g,), (cg.THREADS,), (0, 1, 2, 3, _i64(n), _i64(L))),),
            [_p(flat), _p(pos2), _p(out_k), _p(out_p)])
    return out_k, out_p


def _pairs_with_iota(flat: ndarray, k=None, lk=None):
    """(sorted keys, int64 positions) of a 1-D C-contiguous array: one stable pairs sort."""
    n = flat.size
    if n == 0:
        return ndarray._empty((0,), flat.dtype), ndarray._empty((0,), _I64)
    if k is None:
        k = kernel_for(flat.dtype, _I64)
        lk = _load(k)
    out_k = ndarray._empty((n,), flat.dtype)
    out_v = ndarray._empty((n,), _I64)
    return _sort(k, lk, flat, out_k, None, out_v, n, 0, cg.key_bits(flat.dtype), True)


# ---- gathers and lexsort ---------------------------------------------------------------------------

def take_flat(src: ndarray, idx: ndarray) -> ndarray:
    """``src[idx]`` for 1-D C-contiguous ``src`` and int64 ``idx`` (in bounds)."""
    n = idx.size
    out = ndarray._empty((n,), src.dtype)
    if n:
        k = kernel_for(src.dtype)
        lk = _load(k)
        execute((Step(lk.functions[k.name + "_gather"], (_grid_stride(lk, n),), (cg.THREADS,),
                      (0, 1, 2, 3, _i64(n), _i64(1))),), [_p(src), _p(idx), _p(out), _null])
    return out


def _positions_in_rows(lk, k, perm: ndarray, L: int) -> ndarray:
    n = perm.size
    out = ndarray._empty((n,), _I64)
    execute((Step(lk.functions[k.name + "_gather"], (_grid_stride(lk, n),), (cg.THREADS,),
                  (0, 1, 2, 3, _i64(n), _i64(L))),), [_null, _p(perm), _null, _p(out)])
    return out


def lexsort_rows(keys: list, L: int) -> ndarray:
    """``numpy.lexsort`` of 1-D C-contiguous ``keys`` (the last is the primary key), each
    ``rows * L`` long and sorted within rows of ``L``: the int64 positions within the rows."""
    n = keys[0].size
    if n == 0:
        return ndarray._empty((0,), _I64)
    perm = None
    for key in keys:            # least significant first: stable sorts compose
        kk = key if perm is None else take_flat(key, perm)
        idx = argsort_flat(kk)
        perm = idx if perm is None else take_flat(perm, idx)
    rows = n // L
    if rows == 1:
        return perm
    kp = kernel_for(_I64, _I64)
    lkp = _load(kp)
    row = ndarray._empty((n,), _I32)
    execute((Step(lkp.functions[kp.name + "_rowkey"], (_grid_stride(lkp, n),), (cg.THREADS,),
                  (0, 1, _i64(n), _i64(L))),), [_p(perm), _p(row)])
    kr = kernel_for(_I32, _I64)
    row_sorted, perm2 = ndarray._empty((n,), _I32), ndarray._empty((n,), _I64)
    perm2 = _sort(kr, _load(kr), row, row_sorted, perm, perm2, n, 0, max(1, (rows - 1).bit_length()), False)[1]
    return _positions_in_rows(lkp, kp, perm2, L)
