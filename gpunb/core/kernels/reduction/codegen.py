"""Reduction kernels: :class:`~gpunb.core.kernels.ir.ReductionKernel` -> CUDA C++ source.

One module, up to four entry points, all with the same thread layout (the partial state and
the split's combine: :mod:`.state`). A block of ``blockDim.x``
threads handles ``blockDim.x / G`` outputs with ``G`` threads ("lanes", a power of two) per
output. ``lane_fast`` puts the lanes of one output in consecutive threads (coalesced when the
reduced axis is the contiguous one: row sums, full sums); otherwise consecutive threads take
consecutive outputs (coalesced when the outputs are adjacent in memory: column sums).
``blockIdx.y`` splits the reduction (split ``s`` of ``S`` takes runs ``s, s + S, ...`` of ``G``
elements) when there are too few outputs to fill the device; each split then writes a
partial state to the scratch (:mod:`gpunb.core.runtime.scratch`: tickets, then states) and
takes a ticket, and the last block of each output group combines the group's states and
finishes, in the same launch; where a group holds too many large states for one block,
``<name>_combine`` does it in a second launch of many blocks.

- ``<name>_main``: any strides (collapsed shapes and byte strides in a struct by value).
- ``<name>_vec``: one reduced dimension, contiguous in the single 'array' operand, rows
  aligned to 16 bytes: each lane loads 16 bytes per step.
- ``<name>_cols``: column reductions, ``E`` adjacent outputs per thread.
- ``<name>_combine``: a split's states combined in a launch of their own.

Codegen is pure: no CUDA import, a string out.
"""

from __future__ import annotations

from ...dtypes import compute_type, storage_type
from .. import ir
from ..elementwise.codegen import VEC_BYTES, VEC_TYPE, Emitter
from ..prelude import prelude
from . import state
from .state import BLOCK, combine_entry, is_arg, is_user, split_functions, state_struct, lane_tree, write_output

THREADS = state.THREADS     # (read here by the launch plan, fusion and the tests)
# a split's partial states, after the tickets (final_: 1 writes the outputs at once)
_PARTIAL = "    S* const partial = final_ == 1 ? nullptr : reinterpret_cast<S*>(scratch_ + TICKET_BYTES);"


def _params(kernel) -> str:
    ps = []
    for i, o in enumerate(kernel.operands):
        if o.kind == "scalar":
            ps.append(f"const {compute_type(o.dtype)} a{i}")
        else:
            ps.append(f"const {storage_type(o.dtype)}* __restrict__ a{i}")
    ps += ["unsigned char* __restrict__ scratch_", f"{storage_type(kernel.out)}* __restrict__ out",
           "const long long M", "const long long K", "const int G",
           "const int lane_fast", "const int final_", "const double divisor",
           "const int CG", "const int clf"]
    return ", ".join(ps)


def strided_operands(kernel) -> list[int]:
    """Operands with strides in the geometry struct ('array' and 'outer'), in its order."""
    return [i for i, o in enumerate(kernel.operands) if o.kind != "scalar"]


def _geometry(kernel) -> str:
    n = max(1, len(strided_operands(kernel)))
    return (f"struct Geo {{ long long oshape[{kernel.ndim_outer}]; long long rshape[{kernel.ndim_reduce}]; "
            f"long long ostr[{n}][{kernel.ndim_outer}]; long long rstr[{n}][{kernel.ndim_reduce}]; }};")


def _walk(var: str, shape: str, nd: int, offsets: list[tuple[str, str]], indent: str) -> list[str]:
    """Decompose the flat index ``var`` over ``shape`` (C order) and add each dimension's index
    times the stride to each offset; the outermost dimension needs no division."""
    lines = [f"{indent}long long rest_ = {var};"]
    for d in range(nd - 1, -1, -1):
        if d == 0:
            lines.append(f"{indent}{{ const long long idx = rest_;")
        else:
            lines.append(f"{indent}{{ const long long q = rest_ / {shape}[{d}], idx = rest_ - q * {shape}[{d}]; rest_ = q;")
        lines += [f"{indent}  {off} += idx * {stride}[{d}];" for off, stride in offsets]
        lines.append(f"{indent}}}")
    return lines


def _element(kernel, access, index: str, indent: str, target: str = "acc") -> list[str]:
    """Statements folding one element (operand accesses from ``access``) into ``target``."""
    if is_user(kernel):
        # every access is read before the user's names are declared (a name may shadow one)
        ops = range(len(kernel.operands))
        return [f"{indent}{{ {' '.join(f'const {kernel.user_types[j]} _m{j} = {access(j)};' for j in ops)}",
                f"{indent}  {{ {' '.join(f'const {kernel.user_types[j]} {kernel.names[j]} = _m{j};' for j in ops)}",
                f"{indent}    S e_; e_.v = (_type_reduce)({kernel.map_expr}); {target} = comb({target}, e_); }} }}"]
    em = Emitter(access)
    v = em.emit(kernel.value)
    lines = [indent + ln for ln in em.lines]
    idx = f" e_.i = {index};" if is_arg(kernel) else ""
    lines.append(f"{indent}{{ S e_; e_.v = {v};{idx} {target} = comb({target}, e_); }}")
    return lines


def _prologue() -> list[str]:
    return ["    __shared__ S sh[%d];" % BLOCK,
            "    const int t = threadIdx.x;",
            "    const int BX = blockDim.x / G;",
            "    const int lane = lane_fast ? (t % G) : (t / BX);",
            "    const int slot = lane_fast ? (t / G) : (t % BX);",
            "    const int ls = lane_fast ? 1 : BX;",
            # split s of gridDim.y takes every gridDim.y-th run of G elements, so that the
            # blocks running together read neighbouring memory (DRAM pages), not far chunks
            "    const long long kb = (long long)blockIdx.y * G;",
            "    const long long ks = (long long)gridDim.y * G;",
            _PARTIAL]


def _store(kernel, indent: str) -> list[str]:
    return [f"{indent}if (lane == 0 && i < M) {{",
            f"{indent}    const S r = acc;",
            f"{indent}    if (final_ == 1) {write_output(kernel, 'i')}",
            f"{indent}    else partial[(long long)blockIdx.y * M + i] = r;",
            f"{indent}}}",
            f"{indent}__syncthreads();"]


def _outer_setup(kernel, indent: str) -> list[str]:
    """Offsets of output ``i`` in every strided operand, and the 'outer' operands' values."""
    slots = strided_operands(kernel)
    lines = [f"{indent}long long {', '.join(f'off{k} = 0' for k in range(max(1, len(slots))))};"]
    lines += _walk("i", "g.oshape", kernel.ndim_outer,
                   [(f"off{k}", f"g.ostr[{k}]") for k in range(len(slots))], indent)
    for k, i in enumerate(slots):
        o = kernel.operands[i]
        if o.kind == "outer":
            st = storage_type(o.dtype)
            lines.append(f"{indent}const {compute_type(o.dtype)} u{i} = gpunb::load(*reinterpret_cast<const {st}*>("
                         f"reinterpret_cast<const char*>(a{i}) + off{k}));")
    return lines


UNROLL = 8   # independent loads in flight per lane before they are folded in


def _main(kernel) -> list[str]:
    slots = strided_operands(kernel)
    arrays = [(k, i) for k, i in enumerate(slots) if kernel.operands[i].kind == "array"]

    def access(i):
        o = kernel.operands[i]
        if o.kind == "scalar":
            return f"a{i}"
        if o.kind == "outer":
            return f"u{i}"
        k = slots.index(i)
        st = storage_type(o.dtype)
        return f"gpunb::load(*reinterpret_cast<const {st}*>(reinterpret_cast<const char*>(a{i}) + r{k}))"

    def one(kk: str, indent: str) -> list[str]:
        lines = [f"{indent}{{ const long long kk = {kk};",
                 f"{indent}  long long {', '.join(f'r{k} = off{k}' for k, _ in arrays) or 'r_unused = 0'};"]
        lines += _walk("kk", "g.rshape", kernel.ndim_reduce, [(f"r{k}", f"g.rstr[{k}]") for k, _ in arrays],
                       indent + "  ")
        lines += _element(kernel, access, "kk", indent + "  ")
        return lines + [f"{indent}}}"]

    unrolled = [ln for u in range(UNROLL) for ln in one(f"k + {u}LL * ks", "                ")]
    return [f'extern "C" __global__ void {kernel.name}_main({_params(kernel)}, const Geo g) {{',
            *_prologue(),
            "    for (long long base = (long long)blockIdx.x * BX; base < M; base += (long long)gridDim.x * BX) {",
            "        const long long i = base + slot;",
            "        S acc = ident();",
            "        if (i < M) {",
            *_outer_setup(kernel, "            "),
            "            long long k = kb + lane;",
            f"            for (; k + {UNROLL - 1}LL * ks < K; k += {UNROLL}LL * ks) {{",
            *unrolled,
            "            }",
            "            for (; k < K; k += ks) {",
            *one("k", "                "),
            "            }",
            "        }",
            *lane_tree("        "),
            *_store(kernel, "        "),
            "    }",
            _split_tail("BX"),
            "}"]


def vector_width(kernel) -> int:
    arrays = [o for o in kernel.operands if o.kind == "array"]
    return max(1, VEC_BYTES // arrays[0].dtype.itemsize) if len(arrays) == 1 else 1


def has_vec(kernel) -> bool:
    """Whether the module has a ``_vec`` entry: one 'array' operand and one reduced dim."""
    return kernel.ndim_reduce == 1 and sum(o.kind == "array" for o in kernel.operands) == 1


def _vec(kernel) -> list[str]:
    slots = strided_operands(kernel)
    (a_idx,) = [i for i in slots if kernel.operands[i].kind == "array"]
    k_a = slots.index(a_idx)
    st = storage_type(kernel.operands[a_idx].dtype)
    E = vector_width(kernel)
    vt = f"gpunb_vec<{st}, {E}>"

    def fold(x: str, v: str, indent: str) -> list[str]:
        """Fold the elements of vector ``x`` (vector index ``v``) into ``acc``."""
        def access(i):
            o = kernel.operands[i]
            return f"a{i}" if o.kind == "scalar" else f"u{i}" if o.kind == "outer" else f"gpunb::load({x}.v[e])"
        return [f"{indent}#pragma unroll", f"{indent}for (int e = 0; e < {E}; ++e) {{",
                *_element(kernel, access, f"{v} * {E} + e", indent + "    "), f"{indent}}}"]

    def access_tail(i):
        o = kernel.operands[i]
        return f"a{i}" if o.kind == "scalar" else f"u{i}" if o.kind == "outer" else "gpunb::load(row[k])"

    return [f'extern "C" __global__ void {kernel.name}_vec({_params(kernel)}, const Geo g) {{',
            *_prologue(),
            "    for (long long base = (long long)blockIdx.x * BX; base < M; base += (long long)gridDim.x * BX) {",
            "        const long long i = base + slot;",
            "        S acc = ident();",
            "        if (i < M) {",
            *_outer_setup(kernel, "            "),
            f"            const {st}* row = reinterpret_cast<const {st}*>(reinterpret_cast<const char*>(a{a_idx}) + off{k_a});",
            f"            const long long nv = K / {E};",
            f"            const {vt}* rv = reinterpret_cast<const {vt}*>(row);",
            "            long long v = kb + lane;",
            f"            for (; v + {UNROLL - 1}LL * ks < nv; v += {UNROLL}LL * ks) {{",
            *[f"                const {vt} x{u} = rv[v + {u}LL * ks];" for u in range(UNROLL)],
            *[ln for u in range(UNROLL) for ln in fold(f"x{u}", f"(v + {u}LL * ks)", "                ")],
            "            }",
            "            for (; v < nv; v += ks) {",
            f"                const {vt} x0 = rv[v];",
            *fold("x0", "v", "                "),
            "            }",
            f"            for (long long k = nv * {E} + kb + lane; k < K; k += ks) {{",
            *_element(kernel, access_tail, "k", "                "),
            "            }",
            "        }",
            *lane_tree("        "),
            *_store(kernel, "        "),
            "    }",
            _split_tail("BX"),
            "}"]


def _split_tail(group: str) -> str:
    """The entry's last statement: the split's ticket and, in the last block, the combine of
    this block's ``group`` outputs."""
    return (f"    if (final_ == 0) finish_split(scratch_, out, M, divisor, (long long)blockIdx.x * {group}, "
            f"min(M, ((long long)blockIdx.x + 1) * {group}), CG, clf, sh);")


def has_cols(kernel) -> bool:
    """Whether the module has a ``_cols`` entry: the input array is the only operand and the
    reduction has one dimension."""
    return (kernel.ndim_reduce == 1 and len(kernel.operands) == 1
            and kernel.operands[0].kind == "array")


COLS_UNROLL = 4


def _cols(kernel) -> list[str]:
    """Column reductions: each thread takes ``E`` adjacent outputs with one 16-byte load per
    reduced row (consecutive threads, consecutive output groups), lanes split the rows."""
    st = storage_type(kernel.operands[0].dtype)
    E = vector_width(kernel)
    vt = f"gpunb_vec<{st}, {E}>"

    def fold(x: str, k: str, indent: str) -> list[str]:
        def access(i):
            return f"gpunb::load({x}.v[e])"
        return [f"{indent}#pragma unroll", f"{indent}for (int e = 0; e < {E}; ++e) {{",
                *_element(kernel, access, k, indent + "    ", "acc[e]"), f"{indent}}}"]

    def load(u: str, k: str) -> str:
        return f"const {vt} {u} = *reinterpret_cast<const {vt}*>(col + ({k}) * g.rstr[0][0]);"

    U = COLS_UNROLL
    return [f'extern "C" __global__ void {kernel.name}_cols({_params(kernel)}, const Geo g) {{',
            "    __shared__ S sh[%d];" % BLOCK,
            "    const int t = threadIdx.x;",
            "    const int BX = blockDim.x / G;",
            "    const int slot = t % BX, lane = t / BX;",
            "    const long long kb = (long long)blockIdx.y * G;",
            "    const long long ks = (long long)gridDim.y * G;",
            f"    const long long Mg = M / {E};",
            _PARTIAL,
            "    for (long long base = (long long)blockIdx.x * BX; base < Mg; base += (long long)gridDim.x * BX) {",
            "        const long long gi = base + slot;",
            f"        S acc[{E}];",
            "        #pragma unroll",
            f"        for (int e = 0; e < {E}; ++e) acc[e] = ident();",
            "        if (gi < Mg) {",
            f"            const long long i = gi * {E};",
            *_outer_setup(kernel, "            "),
            "            const char* col = reinterpret_cast<const char*>(a0) + off0;",
            "            long long k = kb + lane;",
            f"            for (; k + {U - 1}LL * ks < K; k += {U}LL * ks) {{",
            *[f"                {load(f'x{u}', f'k + {u}LL * ks')}" for u in range(U)],
            *[ln for u in range(U) for ln in fold(f"x{u}", f"k + {u}LL * ks", "                ")],
            "            }",
            "            for (; k < K; k += ks) {",
            f"                {load('x0', 'k')}",
            *fold("x0", "k", "                "),
            "            }",
            "        }",
            f"        for (int e = 0; e < {E}; ++e) {{",
            "            sh[t] = acc[e];",
            "            __syncthreads();",
            "            for (int s = G >> 1; s > 0; s >>= 1) {",
            "                if (lane < s) sh[t] = comb(sh[t], sh[t + s * BX]);",
            "                __syncthreads();",
            "            }",
            "            if (lane == 0 && gi < Mg) {",
            "                const S r = sh[t];",
            f"                const long long i = gi * {E} + e;",
            f"                if (final_ == 1) {write_output(kernel, 'i')}",
            "                else partial[(long long)blockIdx.y * M + i] = r;",
            "            }",
            "            __syncthreads();",
            "        }",
            "    }",
            _split_tail(f"(BX * {E})"),
            "}"]


def body(kernel: ir.ReductionKernel) -> str:
    """The kernel's own code, in a namespace of its own (``extern "C"`` names stay plain), so
    several kernels can share one module after a single prelude."""
    parts = [f"namespace {kernel.name}_ns {{", *state_struct(kernel), _geometry(kernel), "",
             *split_functions(kernel), "", *_main(kernel), ""]
    if has_vec(kernel):
        parts += [*_vec(kernel), ""]
    if has_cols(kernel):
        parts += [*_cols(kernel), ""]
    parts += [*combine_entry(kernel), "}", ""]
    return "\n".join(parts)


def render(kernel: ir.ReductionKernel) -> str:
    """The complete CUDA C++ source of a reduction kernel module."""
    return "\n".join([prelude(), VEC_TYPE, getattr(kernel, "header", ""), body(kernel)])


def nvrtc_options(kernel) -> tuple:
    """NVRTC options of a user reduction (none for gpunb's own)."""
    return tuple(getattr(kernel, "options", ()))


def entry_points(kernel: ir.ReductionKernel) -> tuple[str, ...]:
    names = [f"{kernel.name}_main"]
    if has_vec(kernel):
        names.append(f"{kernel.name}_vec")
    if has_cols(kernel):
        names.append(f"{kernel.name}_cols")
    return (*names, f"{kernel.name}_combine")
