"""Rearranging kernels: ``roll`` (each output element reads its source at ``(i - shift) mod
n`` along every rolled axis), ``pad`` in one pass (:class:`PadKernel`: a per-axis index map,
or a constant), the index of a per-element ``repeat`` and a concatenation's contiguous
pieces copied in one launch (:class:`JoinKernel`); CUDA C++ source.

A roll module is keyed by the itemsize and the number of (collapsed) dimensions: it moves
bytes, never values, so one module serves every dtype of that size. The output is a new
C-ordered array; the source any strided view. Entry points:

- ``<name>_vec``: 32-bit indices; each thread writes ``E`` elements (16 bytes) of one row with
  one vector store, reading them with one vector load when the row's source is contiguous,
  aligned and does not wrap inside the vector, else element by element (the loads of a warp
  still cover whole sectors). The host divides by the shape with a multiply-high and a shift.
- ``<name>_one``: the same with one element per step (rows not a multiple of ``E``).
- ``<name>_wide``: 64-bit indices and plain division, for 2**31 elements or more.

A pad module has the same three entry points over its output. One launch whatever the
number of rolled axes (NumPy's algorithm copies up to ``2**k``
slices, and their unaligned starts miss vector accesses).

Pure: imports nothing from CUDA, returns a string.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..elementwise.codegen import VEC_TYPE

THREADS = 256
VEC_BYTES = 16
_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long",
          16: "gpunb_b16"}


def _b16(align: int) -> str:
    """The 16-byte element type; rolls and pads of 16-byte items need 8-byte alignment only,
    the join copies aligned 16-byte words."""
    return f"struct __align__({align}) gpunb_b16 {{ unsigned long long lo, hi; }};"


@dataclass(frozen=True)
class RollKernel:
    itemsize: int
    ndim: int

    @property
    def name(self) -> str:
        return f"gpunb_roll_b{self.itemsize}_d{self.ndim}"


@dataclass(frozen=True)
class PadKernel:
    """``pad`` in one pass: each output element reads the source at a per-axis index map of
    its coordinate (``mode``: 'constant', 'edge', 'wrap', 'reflect' or 'symmetric', NumPy's
    even reflections), or, for 'constant', takes the constant of the highest-priority axis
    whose index falls outside the data (NumPy pads axis by axis, so a corner holds the last
    axis' value)."""

    itemsize: int
    ndim: int
    mode: str

    @property
    def name(self) -> str:
        return f"gpunb_pad_{self.mode}_b{self.itemsize}_d{self.ndim}"


@dataclass(frozen=True)
class RepeatKernel:
    """``out.flat[j] = src.flat[j // r]`` (a C-contiguous source repeated ``r`` times along
    its last axis): each thread writes ``E`` elements (16 bytes) with one vector store, with
    one division per vector. For counts too small for the copy kernel's vector rows (``r``
    elements of the output are fewer than 16 bytes)."""

    itemsize: int

    @property
    def name(self) -> str:
        return f"gpunb_repeat_b{self.itemsize}"


@dataclass(frozen=True)
class RepeatIndexKernel:
    name: str = "gpunb_repeat_index"


JOIN_PIECES = 32    # byte ranges one join launch copies (its table: 512 bytes of parameters)


@dataclass(frozen=True)
class JoinKernel:
    """Up to :data:`JOIN_PIECES` contiguous ranges copied one after another into one output
    in one launch (a concatenation's inputs): block row ``blockIdx.y`` copies range ``y`` in
    words of ``word`` bytes, which every address and length of the call is a multiple of.
    The table, a by-value parameter, holds each range's source address and its end in the
    output (words, inclusive running sum). It replaces a driver copy per range (about 10 us
    of host time each on an H100 host, and a copy each on the GPU)."""

    word: int

    @property
    def name(self) -> str:
        return f"gpunb_join_w{self.word}"


def vector_width(k) -> int:
    if isinstance(k, (RollKernel, PadKernel, RepeatKernel)):
        return max(1, VEC_BYTES // k.itemsize)
    return 1


def entry_points(k) -> tuple[str, ...]:
    if isinstance(k, (RollKernel, PadKernel)):
        return (f"{k.name}_vec", f"{k.name}_one", f"{k.name}_wide")
    if isinstance(k, RepeatKernel):
        return (f"{k.name}_vec", f"{k.name}_wide")
    return (k.name,)


def _repeat_entry(k: RepeatKernel, suffix: str, I: str) -> list[str]:
    T, E = _TYPES[k.itemsize], vector_width(k)
    return [
        f'extern "C" __global__ void {k.name}_{suffix}(const {T}* __restrict__ src, '
        f"{T}* __restrict__ out, {I} n, {I} r) {{",
        f"    const {I} stride = ({I})gridDim.x * blockDim.x;",
        f"    const {I} nv = n / {E};",
        f"    for ({I} v = ({I})blockIdx.x * blockDim.x + threadIdx.x; v < nv; v += stride) {{",
        f"        {I} q = v * {E} / r, rem = v * {E} - q * r;",
        f"        gpunb_vec<{T}, {E}> y;",
        "        #pragma unroll",
        f"        for (int e = 0; e < {E}; ++e) {{",
        "            y.v[e] = src[q];",
        "            if (++rem == r) { rem = 0; ++q; }",
        "        }",
        f"        reinterpret_cast<gpunb_vec<{T}, {E}>*>(out)[v] = y;",
        "    }",
        f"    for ({I} j = nv * {E} + ({I})blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride)",
        "        out[j] = src[j / r];",
        "}",
        "",
    ]


def _repeat(k: RepeatKernel) -> str:
    return "\n".join([VEC_TYPE, "", *_repeat_entry(k, "vec", "unsigned int"),
                      *_repeat_entry(k, "wide", "unsigned long long")])


def _roll_entry(k: RollKernel, suffix: str, E: int, wide: bool) -> list[str]:
    T = _TYPES[k.itemsize]
    nd = k.ndim
    I = "long long" if wide else "unsigned int"
    O = "long long" if wide else "int"
    geo = f"{k.name}_{'wide' if wide else 'geo'}"

    def div(d):
        return "rest / g.shape[d]" if wide else "(__umulhi(rest, g.magic[d]) + rest) >> g.shift[d]"

    lines = [
        f'extern "C" __global__ void {k.name}_{suffix}(const char* __restrict__ src, '
        f"{T}* __restrict__ out, {I} n, const {geo} g) {{",
        f"    const {I} stride = ({I})gridDim.x * blockDim.x;",
        f"    for ({I} i = ({I})blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {{",
        f"        {I} rest = i;",
        f"        {O} off = 0;",
        f"        {I} j = 0;       // the first element's index along the last axis",
        "        #pragma unroll",
        f"        for (int d = {nd - 1}; d >= 0; --d) {{",
        f"            {I} idx = rest;",
        "            if (d > 0) {",
        f"                const {I} q = {div('d')};",
        "                idx = rest - q * g.shape[d];",
        "                rest = q;",
        "            }",
        f"            if (d == {nd - 1}) {{ j = idx * {E}; continue; }}",
        f"            {I} s = idx + g.roll[d];",
        "            if (s >= g.extent[d]) s -= g.extent[d];",
        f"            off += ({O})s * g.strides[d];",
        "        }",
        f"        {I} s = j + g.roll[{nd - 1}];",
        f"        if (s >= g.extent[{nd - 1}]) s -= g.extent[{nd - 1}];",
    ]
    if E == 1:
        lines += [f"        out[i] = *reinterpret_cast<const {T}*>(src + off + ({O})s * g.strides[{nd - 1}]);"]
    else:
        lines += [
            f"        const char* p = src + off + ({O})s * g.strides[{nd - 1}];",
            f"        gpunb_vec<{T}, {E}> v;",
            f"        if (g.strides[{nd - 1}] == {k.itemsize} && s + {E} <= g.extent[{nd - 1}] "
            f"&& ((unsigned long long)p % {E * k.itemsize}) == 0) {{",
            f"            v = *reinterpret_cast<const gpunb_vec<{T}, {E}>*>(p);",
            "        } else {",
            "            #pragma unroll",
            f"            for (int e = 0; e < {E}; ++e) {{",
            f"                v.v[e] = *reinterpret_cast<const {T}*>(src + off + ({O})s * g.strides[{nd - 1}]);",
            f"                if (++s == g.extent[{nd - 1}]) s = 0;",
            "            }",
            "        }",
            f"        reinterpret_cast<gpunb_vec<{T}, {E}>*>(out)[i] = v;",
        ]
    return lines + ["    }", "}", ""]


def _roll(k: RollKernel) -> str:
    nd = k.ndim
    E = vector_width(k)
    return "\n".join([
        _b16(8),
        VEC_TYPE,
        # shape: the iteration space (the last axis in vector units for _vec); extent: each
        # axis' length; roll: (n - shift) mod n, the source offset of index 0
        f"struct {k.name}_geo {{ unsigned int shape[{nd}]; unsigned int magic[{nd}]; "
        f"unsigned int shift[{nd}]; unsigned int extent[{nd}]; unsigned int roll[{nd}]; "
        f"int strides[{nd}]; }};",
        f"struct {k.name}_wide {{ long long shape[{nd}]; long long extent[{nd}]; "
        f"long long roll[{nd}]; long long strides[{nd}]; }};",
        *_roll_entry(k, "vec", E, False),
        *_roll_entry(k, "one", 1, False),
        *_roll_entry(k, "wide", 1, True),
    ])


def _repeat_index(k: RepeatIndexKernel) -> str:
    # out[j] = the first i with cum[i] > j (cum: the inclusive running sum of the counts)
    return "\n".join([
        f'extern "C" __global__ void {k.name}(const long long* __restrict__ cum, long long n, '
        "long long* __restrict__ out, long long total) {",
        "    const long long stride = (long long)gridDim.x * blockDim.x;",
        "    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < total; j += stride) {",
        "        long long lo = 0, hi = n;",
        "        while (lo < hi) {",
        "            const long long mid = (lo + hi) >> 1;",
        "            if (cum[mid] > j) hi = mid; else lo = mid + 1;",
        "        }",
        "        out[j] = lo;",
        "    }",
        "}",
        "",
    ])


_MAPS = {
    # the source index of j = i - before outside [0, n), n > 0 (an empty source axis pads
    # only in 'constant' mode); NumPy's results (tests compare every width up to 15)
    "edge": "return j < 0 ? 0 : n - 1;",
    "wrap": "const I t = j % n; return t < 0 ? t + n : t;",
    "reflect": "if (n == 1) return 0; const I p = 2 * (n - 1); I t = j % p; if (t < 0) t += p; "
               "return t < n ? t : p - t;",
    "symmetric": "const I p = 2 * n; I t = j % p; if (t < 0) t += p; return t < n ? t : p - 1 - t;",
}


def _pad_entry(k: PadKernel, suffix: str, E: int, wide: bool) -> list[str]:
    T = _TYPES[k.itemsize]
    nd = k.ndim
    U = "long long" if wide else "unsigned int"
    I = "long long" if wide else "int"
    geo = f"{k.name}_{'wide' if wide else 'geo'}"
    div = "rest / g.shape[d]" if wide else "(__umulhi(rest, g.magic[d]) + rest) >> g.shift[d]"
    const = k.mode == "constant"

    def fetch(jexpr, target):
        """Statements setting ``target`` from the source at last-axis index ``jexpr``."""
        if const:
            return [f"            {{ const {I} jj = {jexpr};",
                    f"              if (jj < 0 || jj >= g.n[{nd - 1}]) {{ if (g.prio[{nd - 1}] > best) "
                    f"{target} = jj < 0 ? c.v[{2 * (nd - 1)}] : c.v[{2 * nd - 1}]; else {target} = fill; }}",
                    f"              else if (best >= 0) {target} = fill;",
                    f"              else {target} = *reinterpret_cast<const {T}*>(src + off + ({I})jj * "
                    f"g.strides[{nd - 1}]); }}"]
        return [f"            {{ {I} j = {jexpr}; const {I} n = g.n[{nd - 1}];",
                "              if (j < 0 || j >= n) j = pad_map(j, n);",
                f"              {target} = *reinterpret_cast<const {T}*>(src + off + j * g.strides[{nd - 1}]); }}"]

    lines = [
        f'extern "C" __global__ void {k.name}_{suffix}(const char* __restrict__ src, '
        f"{T}* __restrict__ out, {U} total, const {geo} g, const {k.name}_consts c) {{",
        f"    const {U} stride = ({U})gridDim.x * blockDim.x;",
        f"    for ({U} i = ({U})blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {{",
        f"        {U} rest = i;",
        f"        {I} off = 0, last = 0;",
        "        int best = -1;        // the priority of the constant chosen so far",
        f"        {T} fill;",
        "        #pragma unroll",
        f"        for (int d = {nd - 1}; d >= 0; --d) {{",
        f"            {U} idx = rest;",
        "            if (d > 0) {",
        f"                const {U} q = {div};",
        "                idx = rest - q * g.shape[d];",
        "                rest = q;",
        "            }",
        f"            if (d == {nd - 1}) {{ last = ({I})idx * {E} - g.before[d]; continue; }}",
        f"            {I} j = ({I})idx - g.before[d];",
    ]
    if const:
        lines += [
            "            if (j < 0 || j >= g.n[d]) {",
            "                if (g.prio[d] > best) { best = g.prio[d]; fill = j < 0 ? c.v[2 * d] : c.v[2 * d + 1]; }",
            "                j = 0;",
            "            }",
        ]
    else:
        lines += [f"            {{ const {I} n = g.n[d]; if (j < 0 || j >= n) j = pad_map(j, n); }}"]
    lines += ["            off += j * g.strides[d];", "        }"]
    if E == 1:
        lines += [f"        {T} v;", *fetch("last", "v"), "        out[i] = v;"]
    else:
        lines += [
            f"        gpunb_vec<{T}, {E}> v;",
            f"        const char* p = src + off + last * g.strides[{nd - 1}];",
            f"        if ({'best < 0 && ' if const else ''}last >= 0 && last + {E} <= g.n[{nd - 1}] && "
            f"g.strides[{nd - 1}] == {k.itemsize} && ((unsigned long long)p % {E * k.itemsize}) == 0) {{",
            f"            v = *reinterpret_cast<const gpunb_vec<{T}, {E}>*>(p);",
            "        } else {",
            "            #pragma unroll",
            f"            for (int e = 0; e < {E}; ++e)",
            *fetch("last + e", "v.v[e]"),
            "        }",
            f"        reinterpret_cast<gpunb_vec<{T}, {E}>*>(out)[i] = v;",
        ]
    return lines + ["    }", "}", ""]


def _pad(k: PadKernel) -> str:
    nd = k.ndim
    E = vector_width(k)
    T = _TYPES[k.itemsize]
    return "\n".join([
        _b16(8),
        VEC_TYPE,
        # shape: the iteration space (the last axis in vector units for _vec); before: the
        # pad before the data; n: the data's extent; prio: which axis' constant wins
        f"struct {k.name}_geo {{ unsigned int shape[{nd}]; unsigned int magic[{nd}]; "
        f"unsigned int shift[{nd}]; int before[{nd}]; int n[{nd}]; int strides[{nd}]; int prio[{nd}]; }};",
        f"struct {k.name}_wide {{ long long shape[{nd}]; long long before[{nd}]; long long n[{nd}]; "
        f"long long strides[{nd}]; long long prio[{nd}]; }};",
        f"struct {k.name}_consts {{ {T} v[{2 * nd}]; }};",
        "template <class I> __device__ __forceinline__ I pad_map(I j, I n) { "
        + _MAPS.get(k.mode, "return j;") + " }",
        *_pad_entry(k, "vec", E, False),
        *_pad_entry(k, "one", 1, False),
        *_pad_entry(k, "wide", 1, True),
    ])


def _join(k: JoinKernel) -> str:
    T = _TYPES[k.word]
    return "\n".join([
        _b16(16),
        f"struct gpunb_join_table {{ unsigned long long src[{JOIN_PIECES}]; "
        f"unsigned long long end[{JOIN_PIECES}]; }};",
        f'extern "C" __global__ void {k.name}({T}* __restrict__ out, const gpunb_join_table t) {{',
        "    const unsigned int p = blockIdx.y;",
        "    const unsigned long long start = p ? t.end[p - 1] : 0, n = t.end[p] - start;",
        f"    const {T}* __restrict__ src = reinterpret_cast<const {T}*>(t.src[p]);",
        f"    {T}* __restrict__ dst = out + start;",
        "    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;",
        "    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; "
        "i < n; i += stride)",
        "        dst[i] = src[i];",
        "}",
        "",
    ])


def render(k) -> str:
    if isinstance(k, JoinKernel):
        return _join(k)
    if isinstance(k, RollKernel):
        return _roll(k)
    if isinstance(k, RepeatKernel):
        return _repeat(k)
    return _pad(k) if isinstance(k, PadKernel) else _repeat_index(k)
