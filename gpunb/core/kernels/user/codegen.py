"""User elementwise kernels: :class:`.ir.UserElementwise` -> CUDA C++ source.

The user's operation is pasted into the loops of the elementwise family's two layouts, with
the names CuPy gives it: each 'array' parameter a reference to its element (``const T& x``,
``T& y``), each 'raw' parameter an array object indexed with ``[]`` (``x[j]``, ``x.size()``),
each scalar a local constant, ``i`` the element's C-order index over the broadcast shape
and ``_ind.size()`` / ``_ind.get()`` the loop size and ``i``.

- contiguous module: ``<name>_vec`` (32-bit count, each thread moving 16 bytes of every
  'array' argument per step into registers, running the operation on each element there;
  only when the operation has no ``continue``/``break``/``return`` and no input is
  ``_non_const``) and ``<name>_flat`` (64-bit, one element per step, in place in memory);
- strided module: ``<name>_strided32`` (32-bit offsets, division as multiply-high and
  shift) and ``<name>_strided`` (64-bit), taking the collapsed shape and byte strides in the
  structs that :func:`gpunb.core.kernels.elementwise.plan._strided_geometry` fills.

Codegen is pure: no CUDA import, a string out.
"""

from __future__ import annotations

import re

from ...dtypes import compute_type
from ..elementwise.codegen import VEC_BYTES, VEC_TYPE
from ..prelude import prelude
from . import ir as uir

THREADS = 256

# Types and helpers user code sees (CuPy's names): float16 with float arithmetic, complex<T>
# with mixed scalar operators and real/imag/conj/abs, raw arrays, the loop index object.
USER_HEADER = r"""
struct __align__(2) float16 {
    unsigned short x;
    __device__ __forceinline__ float16() {}
    __device__ __forceinline__ float16(const gpunb::half h) : x(h.x) {}
    __device__ __forceinline__ float16(const double v) : x(gpunb::to_half(v).x) {}
    template <class U> __device__ __forceinline__ float16(const U v) : x(gpunb::to_half((float)v).x) {}
    __device__ __forceinline__ operator float() const { gpunb::half h; h.x = x; return gpunb::to_float(h); }
};
using gpunb::complex;
template <class T> __device__ __forceinline__ complex<T> operator+(complex<T> a, T b) { return complex<T>(a.re + b, a.im); }
template <class T> __device__ __forceinline__ complex<T> operator+(T a, complex<T> b) { return complex<T>(a + b.re, b.im); }
template <class T> __device__ __forceinline__ complex<T> operator-(complex<T> a, T b) { return complex<T>(a.re - b, a.im); }
template <class T> __device__ __forceinline__ complex<T> operator-(T a, complex<T> b) { return complex<T>(a - b.re, -b.im); }
template <class T> __device__ __forceinline__ complex<T> operator*(complex<T> a, T b) { return complex<T>(a.re * b, a.im * b); }
template <class T> __device__ __forceinline__ complex<T> operator*(T a, complex<T> b) { return complex<T>(a * b.re, a * b.im); }
template <class T> __device__ __forceinline__ complex<T> operator/(complex<T> a, T b) { return complex<T>(a.re / b, a.im / b); }
template <class T> __device__ __forceinline__ T real(complex<T> a) { return a.re; }
template <class T> __device__ __forceinline__ T imag(complex<T> a) { return a.im; }
template <class T> __device__ __forceinline__ complex<T> conj(complex<T> a) { return complex<T>(a.re, -a.im); }
template <class T> __device__ __forceinline__ T abs(complex<T> a) { return hypot(a.re, a.im); }
template <class T> __device__ __forceinline__ T norm(complex<T> a) { return a.re * a.re + a.im * a.im; }
typedef long long gpunb_index;
struct gpunb_ind {
    gpunb_index n_, i_;
    __device__ __forceinline__ gpunb_ind(gpunb_index n, gpunb_index i) : n_(n), i_(i) {}
    __device__ __forceinline__ gpunb_index size() const { return n_; }
    __device__ __forceinline__ gpunb_index get() const { return i_; }
};
template <class T, int ND, bool CC> struct gpunb_raw {
    T* data_;
    gpunb_index size_, shape_[ND], strides_[ND];
    __device__ __forceinline__ gpunb_index size() const { return size_; }
    __device__ __forceinline__ const gpunb_index* shape() const { return shape_; }
    __device__ __forceinline__ const gpunb_index* strides() const { return strides_; }
    __device__ __forceinline__ T* data() const { return data_; }
    template <class I> __device__ __forceinline__ T& operator[](const I* idx) const {
        const char* p = reinterpret_cast<const char*>(data_);
        for (int d = 0; d < ND; ++d) p += (gpunb_index)idx[d] * strides_[d];
        return *const_cast<T*>(reinterpret_cast<const T*>(p));
    }
    __device__ __forceinline__ T& operator[](gpunb_index k) const {
        if (CC) return data_[k];
        const char* p = reinterpret_cast<const char*>(data_);
        for (int d = ND - 1; d > 0; --d) {
            const gpunb_index q = k / shape_[d];
            p += (k - q * shape_[d]) * strides_[d];
            k = q;
        }
        p += k * strides_[0];
        return *const_cast<T*>(reinterpret_cast<const T*>(p));
    }
};
"""

_ESCAPES = re.compile(r"\b(continue|break|return)\b")


def _uses_name(code: str, name: str) -> list[str]:
    """What follows each use of identifier ``name`` in ``code`` (to tell reads from writes)."""
    return [code[m.end():m.end() + 3] for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\b", code)]


def reads_output(k: uir.UserElementwise, a: uir.Arg) -> bool:
    """Whether the operation may read output ``a`` before writing it (``y += x``, ``y = y * 2``):
    the vector entry then loads it. A plain ``y = ...`` is a write only."""
    uses = _uses_name(k.operation, a.name)
    return any(not re.match(r"\s*=(?!=)", u) for u in uses)


def has_vec(k: uir.UserElementwise) -> bool:
    return (k.layout == "contiguous" and _ESCAPES.search(k.operation) is None
            and not any(a.kind == "array" and not a.out and not a.is_const for a in k.args))


def vector_width(k: uir.UserElementwise) -> int:
    sizes = [a.dtype.itemsize for a in k.args if a.kind == "array"]
    return max(1, VEC_BYTES // max(sizes)) if sizes else 1


def _ut(a: uir.Arg) -> str:
    return uir.user_type(a.dtype)


def raw_type(a: uir.Arg) -> str:
    const = "const " if a.is_const and not a.out else ""
    return f"gpunb_raw<{const}{_ut(a)}, {max(1, a.ndim)}, {'true' if a.cc else 'false'}>"


def _params(k: uir.UserElementwise) -> list[str]:
    out = []
    for a in k.args:
        if a.kind == "scalar":
            out.append(f"const {compute_type(a.dtype)} _s_{a.name}")
        elif a.kind == "raw":
            out.append(f"const {raw_type(a)} {a.name}")
        else:
            const = "const " if a.is_const and not a.out else ""
            out.append(f"{const}{_ut(a)}* _raw_{a.name}")
    return out


def _prologue(k) -> list[str]:
    lines = [f"    const {_ut(a)} {a.name} = _s_{a.name};" for a in k.args if a.kind == "scalar"]
    return lines + [f"    {k.loop_prep};"]


def _op(k, indent: str) -> list[str]:
    return [f"{indent}{{", *(indent + "    " + ln for ln in k.operation.splitlines()),
            f"{indent}    ;", f"{indent}}}"]


def _refs(k, target, indent: str) -> list[str]:
    """Each 'array' parameter as a reference to its element (``target(a)`` an lvalue)."""
    lines = []
    for a in k.args:
        if a.kind != "array":
            continue
        const = "const " if a.is_const and not a.out else ""
        lines.append(f"{indent}{const}{_ut(a)}& {a.name} = {target(a)};")
    return lines


def _contiguous(k) -> str:
    E = vector_width(k)
    params = ", ".join(_params(k))
    arrays = [a for a in k.args if a.kind == "array"]
    flat = [
        f'extern "C" __global__ void {k.name}_flat({params}, const long long n) {{',
        *_prologue(k),
        "    const long long stride = (long long)gridDim.x * blockDim.x;",
        "    for (long long i_ = (long long)blockIdx.x * blockDim.x + threadIdx.x; i_ < n; i_ += stride) {",
        "        const gpunb_index i = i_;",
        "        const gpunb_ind _ind(n, i);",
        *_refs(k, lambda a: f"_raw_{a.name}[i]", "        "),
        *_op(k, "        "),
        "    }",
        f"    {k.after_loop};",
        "}",
    ]
    if not has_vec(k):
        return "\n".join(flat)
    vt = {a.name: f"gpunb_vec<{_ut(a)}, {E}>" for a in arrays}
    loads = []
    for a in arrays:
        if a.out and not reads_output(k, a):
            loads.append(f"        {vt[a.name]} _v_{a.name};")
        else:
            loads.append(f"        {'const ' if not a.out else ''}{vt[a.name]} _v_{a.name} = "
                         f"reinterpret_cast<const {vt[a.name]}*>(_raw_{a.name})[v];")
    stores = [f"        reinterpret_cast<{vt[a.name]}*>(_raw_{a.name})[v] = _v_{a.name};"
              for a in arrays if a.out]
    vec = [
        f'extern "C" __global__ void {k.name}_vec({params}, const unsigned int n) {{',
        *_prologue(k),
        "    const unsigned int stride = gridDim.x * blockDim.x;",
        f"    const unsigned int nv = n / {E};",
        "    for (unsigned int v = blockIdx.x * blockDim.x + threadIdx.x; v < nv; v += stride) {",
        *loads,
        "        #pragma unroll",
        f"        for (int e_ = 0; e_ < {E}; ++e_) {{",
        f"            const gpunb_index i = (gpunb_index)v * {E} + e_;",
        "            const gpunb_ind _ind(n, i);",
        *_refs(k, lambda a: f"_v_{a.name}.v[e_]", "            "),
        *_op(k, "            "),
        "        }",
        *stores,
        "    }",
        f"    for (unsigned int t_ = nv * {E} + blockIdx.x * blockDim.x + threadIdx.x; t_ < n; t_ += stride) {{",
        "        const gpunb_index i = t_;",
        "        const gpunb_ind _ind(n, i);",
        *_refs(k, lambda a: f"_raw_{a.name}[i]", "        "),
        *_op(k, "        "),
        "    }",
        f"    {k.after_loop};",
        "}",
    ]
    return "\n".join(vec + [""] + flat)


def _strided(k) -> str:
    nd = max(1, k.ndim)
    arrays = [a for a in k.args if a.kind == "array"]
    n_arr = len(arrays)
    slot = {a.name: s for s, a in enumerate(arrays)}
    params = ", ".join(_params(k))

    def target(a):
        const = "const " if a.is_const and not a.out else ""
        return (f"*reinterpret_cast<{const}{_ut(a)}*>(reinterpret_cast<{const}char*>(_raw_{a.name}) "
                f"+ off{slot[a.name]})")

    def entry(suffix, geo, index, offset, div):
        walk = [f"        {index} rest = i_;",
                f"        {offset} {', '.join(f'off{s} = 0' for s in range(max(1, n_arr)))};",
                "        #pragma unroll",
                f"        for (int d = {nd - 1}; d >= 1; --d) {{",
                f"            const {index} q = {div};",
                f"            const {offset} idx = ({offset})(rest - q * s.shape[d]);",
                "            rest = q;",
                *[f"            off{s} += idx * s.strides[{s}][d];" for s in range(n_arr)],
                "        }",
                *[f"        off{s} += ({offset})rest * s.strides[{s}][0];" for s in range(n_arr)]]
        return [
            f'extern "C" __global__ void {k.name}_{suffix}({params}, const {index} n, const {k.name}_{geo}_geo s) {{',
            *_prologue(k),
            f"    const {index} stride = ({index})gridDim.x * blockDim.x;",
            f"    for ({index} i_ = ({index})blockIdx.x * blockDim.x + threadIdx.x; i_ < n; i_ += stride) {{",
            "        const gpunb_index i = i_;",
            "        const gpunb_ind _ind(n, i);",
            *walk,
            *_refs(k, target, "        "),
            *_op(k, "        "),
            "    }",
            f"    {k.after_loop};",
            "}",
        ]

    fast = "(__umulhi(rest, s.magic[d]) + rest) >> s.shift[d]"
    n_st = max(1, n_arr)
    return "\n".join([
        f"struct {k.name}_strided_geo {{ long long shape[{nd}]; long long strides[{n_st}][{nd}]; }};",
        f"struct {k.name}_strided32_geo {{ unsigned int shape[{nd}]; unsigned int magic[{nd}]; "
        f"unsigned int shift[{nd}]; int strides[{n_st}][{nd}]; }};",
        *entry("strided", "strided", "long long", "long long", "rest / s.shape[d]"),
        "",
        *entry("strided32", "strided32", "unsigned int", "int", fast),
    ])


def header(typedefs, preamble: str) -> str:
    """What the user's code may name: CuPy's types, the placeholders' typedefs, the preamble."""
    defs = [f"typedef {uir.user_type(dt)} {c};" for c, dt in typedefs]
    return "\n".join([USER_HEADER, *defs, preamble, ""])


def render(k: uir.UserElementwise) -> str:
    """The complete CUDA C++ source of one variant of a user elementwise kernel."""
    body = _contiguous(k) if k.layout == "contiguous" else _strided(k)
    return "\n".join([prelude(), VEC_TYPE, header(k.typedefs, k.preamble), body, ""])


def entry_points(k: uir.UserElementwise) -> tuple[str, ...]:
    if k.layout == "contiguous":
        return ((f"{k.name}_vec",) if has_vec(k) else ()) + (f"{k.name}_flat",)
    return (f"{k.name}_strided", f"{k.name}_strided32")


def nvrtc_options(k) -> tuple:
    return tuple(k.options)
