"""Elementwise kernels: :class:`~gpunb.core.kernels.ir.ElementwiseKernel` -> CUDA C++ source.

A contiguous kernel module holds two entry points: ``<name>_vec`` (32-bit indices, each
thread moving 16 bytes of every array per step, for aligned operands and fewer than 2**31
elements) and ``<name>_flat`` (64-bit indices, one element per step, for anything else
contiguous). A strided module holds ``<name>_strided32`` (32-bit indices and offsets,
division by the shape as a multiply-high and a shift), ``<name>_rows`` (the same with ``E``
elements per step along an innermost dimension that every operand has contiguous or
broadcast: ``x - m[:, None]``) and ``<name>_strided`` (64-bit, for anything larger); each
takes the collapsed shape and every operand's byte strides in one by-value struct. All loops are grid-stride loops, so the
launch is sized to the device, not to the data.
"""

from __future__ import annotations

import numpy as np

from ...dtypes import compute_type, literal, storage_type
from .. import ir
from ..prelude import prelude
from .ops import get as get_op

VEC_BYTES = 16
THREADS = 256       # threads per block of every elementwise launch


def vector_width(kernel: ir.ElementwiseKernel) -> int:
    """Elements per thread step in the ``_vec`` entry point: 16 bytes of the widest array."""
    sizes = [o.dtype.itemsize for o in kernel.operands if o.kind == "array"]
    sizes += [dt.itemsize for dt, _ in kernel.outputs]
    return max(1, VEC_BYTES // max(sizes))


class Emitter:
    """Renders expression nodes into numbered locals, each computed once (common
    subexpressions are shared because equal nodes are equal dataclasses)."""

    def __init__(self, access):
        self.access = access         # operand index -> C expression of its element
        self.lines: list[str] = []
        self.names: dict = {}

    def emit(self, node: ir.Node) -> str:
        name = self.names.get(node)
        if name is not None:
            return name
        ct = compute_type(node.dtype)
        if isinstance(node, ir.Arg):
            expr = self.access(node.index)
        elif isinstance(node, ir.Const):
            return f"(({ct}){literal(node.value[1], node.dtype)})"
        elif isinstance(node, ir.Cast):
            inner = self.emit(node.arg)
            if node.dtype == np.float16:
                expr = f"gpunb::load(gpunb::store<gpunb::half>({inner}))"   # round to half
            else:
                expr = f"gpunb::cast<{ct}>({inner})"
        elif isinstance(node, ir.Apply):
            op = get_op(node.op)
            loop = tuple(np.dtype(d) for d in node.loop)
            for a, want in zip(node.args, loop):
                if a.dtype != want:
                    raise TypeError(f"{node.op}: argument of dtype {a.dtype} given to a {want} loop")
            args = [self.emit(a) for a in node.args]
            expr = op.render(loop, args, node.output) if op.nout > 1 else op.render(loop, args)
            if node.dtype == np.float16:    # computed in float; NumPy rounds each result to half
                expr = f"gpunb::load(gpunb::store<gpunb::half>({expr}))"
        else:
            raise TypeError(f"unknown IR node {node!r}")
        name = f"v{len(self.names)}"
        self.names[node] = name
        self.lines.append(f"const {ct} {name} = {expr};")
        return name


def _params(kernel: ir.ElementwiseKernel) -> list[str]:
    out = []
    for i, o in enumerate(kernel.operands):
        st = storage_type(o.dtype)
        if o.kind == "scalar":
            out.append(f"const {compute_type(o.dtype)} a{i}")
        else:
            out.append(f"const {st}* __restrict__ a{i}")
    for j, (dt, _) in enumerate(kernel.outputs):
        out.append(f"{storage_type(dt)}* o{j}")
    return out


def body(kernel, element, target, indent) -> list[str]:
    """Statements computing every output for one element."""
    def access(i):
        o = kernel.operands[i]
        if o.kind == "array":
            return f"gpunb::load({element(i)})"
        return f"u{i}" if o.kind == "uniform" else f"a{i}"

    em = Emitter(access)
    results = []
    for dt, node in kernel.outputs:
        if node.dtype != dt:
            node = ir.cast(node, dt)
        results.append(em.emit(node))
    lines = list(em.lines)
    for j, ((dt, _), r) in enumerate(zip(kernel.outputs, results)):
        lines.append(f"{target(j)} = gpunb::store<{storage_type(dt)}>({r});")
    return [indent + ln for ln in lines]


def _uniforms(kernel) -> list[str]:
    return [f"    const {compute_type(o.dtype)} u{i} = gpunb::load(a{i}[0]);"
            for i, o in enumerate(kernel.operands) if o.kind == "uniform"]


def _contiguous(kernel: ir.ElementwiseKernel) -> str:
    E = vector_width(kernel)
    params = ", ".join(_params(kernel))
    arrays = [i for i, o in enumerate(kernel.operands) if o.kind == "array"]
    vec_lines = [f"        const gpunb_vec<{storage_type(kernel.operands[i].dtype)}, {E}> x{i} = "
                 f"reinterpret_cast<const gpunb_vec<{storage_type(kernel.operands[i].dtype)}, {E}>*>(a{i})[i];"
                 for i in arrays]
    vec_lines += [f"        gpunb_vec<{storage_type(dt)}, {E}> y{j};" for j, (dt, _) in enumerate(kernel.outputs)]
    vec_lines += ["        #pragma unroll", f"        for (int k = 0; k < {E}; ++k) {{"]
    vec_lines += body(kernel, lambda i: f"x{i}.v[k]", lambda j: f"y{j}.v[k]", "            ")
    vec_lines += ["        }"]
    vec_lines += [f"        reinterpret_cast<gpunb_vec<{storage_type(dt)}, {E}>*>(o{j})[i] = y{j};"
                  for j, (dt, _) in enumerate(kernel.outputs)]
    tail = body(kernel, lambda i: f"a{i}[i]", lambda j: f"o{j}[i]", "        ")
    u = _uniforms(kernel)
    return "\n".join([
        f'extern "C" __global__ void {kernel.name}_vec({params}, unsigned int n) {{',
        *u,
        "    const unsigned int stride = gridDim.x * blockDim.x;",
        f"    const unsigned int nv = n / {E};",
        "    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += stride) {",
        *vec_lines,
        "    }",
        f"    for (unsigned int i = nv * {E} + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {{",
        *tail,
        "    }",
        "}",
        "",
        f'extern "C" __global__ void {kernel.name}_flat({params}, long long n) {{',
        *u,
        "    const long long stride = (long long)gridDim.x * blockDim.x;",
        "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {",
        *tail,
        "    }",
        "}",
    ])


def strided_operands(kernel: ir.ElementwiseKernel) -> list[int]:
    """Positions, in the strides struct, of each array operand and then each output."""
    return [i for i, o in enumerate(kernel.operands) if o.kind == "array"]


def _strided(kernel: ir.ElementwiseKernel) -> str:
    nd = max(1, kernel.ndim)
    arrays = strided_operands(kernel)
    n_arr = len(arrays) + len(kernel.outputs)
    slot = {i: k for k, i in enumerate(arrays)}
    out_slot = {j: len(arrays) + j for j in range(len(kernel.outputs))}

    def element(i):
        st = storage_type(kernel.operands[i].dtype)
        return f"*reinterpret_cast<const {st}*>(reinterpret_cast<const char*>(a{i}) + off{slot[i]})"

    def target(j):
        st = storage_type(kernel.outputs[j][0])
        return f"*reinterpret_cast<{st}*>(reinterpret_cast<char*>(o{j}) + off{out_slot[j]})"

    def walk(index, offset, div) -> list[str]:
        """The byte offset of element (or vector) ``i`` in every operand."""
        return [
            f"        {index} rest = i;",
            f"        {offset} {', '.join(f'off{k} = 0' for k in range(n_arr))};",
            "        #pragma unroll",
            f"        for (int d = {nd - 1}; d >= 1; --d) {{",
            f"            const {index} q = {div};",
            f"            const {offset} idx = ({offset})(rest - q * s.shape[d]);",
            "            rest = q;",
            *[f"            off{k} += idx * s.strides[{k}][d];" for k in range(n_arr)],
            "        }",
            # the outermost index needs no division: it is what remains
            *[f"        off{k} += ({offset})rest * s.strides[{k}][0];" for k in range(n_arr)],
        ]

    def entry(suffix, geo, index, offset, div, body, extra=""):
        return [
            f'extern "C" __global__ void {kernel.name}_{suffix}({", ".join(_params(kernel))}, {index} n, '
            f"const {kernel.name}_{geo}_geo s{extra}) {{",
            *_uniforms(kernel),
            f"    const {index} stride = ({index})gridDim.x * blockDim.x;",
            f"    for ({index} i = ({index})blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {{",
            *walk(index, offset, div),
            *body,
            "    }",
            "}",
        ]

    # rows: E elements per step along the innermost dim, which every operand has contiguous
    # (forwards, or backwards: bit 16 + k of ``bcast``) or broadcast (bit k); one division per
    # E elements and 16-byte accesses
    E = vector_width(kernel)
    rows = []
    for i in arrays:
        st = storage_type(kernel.operands[i].dtype)
        ptr = f"(reinterpret_cast<const char*>(a{i}) + off{slot[i]})"
        rows += [f"        gpunb_vec<{st}, {E}> x{i};",
                 f"        if (bcast & {1 << slot[i]}u) {{",
                 f"            const {st} t = *reinterpret_cast<const {st}*>{ptr};",
                 "            #pragma unroll",
                 f"            for (int k = 0; k < {E}; ++k) x{i}.v[k] = t;"]
        if slot[i] < 16:       # a reversed operand: the vector below, in reverse order
            rows += [f"        }} else if (bcast & {1 << (16 + slot[i])}u) {{",
                     f"            const gpunb_vec<{st}, {E}> r = *reinterpret_cast<const "
                     f"gpunb_vec<{st}, {E}>*>({ptr} - {E - 1} * sizeof({st}));",
                     "            #pragma unroll",
                     f"            for (int k = 0; k < {E}; ++k) x{i}.v[k] = r.v[{E - 1} - k];"]
        rows += [f"        }} else x{i} = *reinterpret_cast<const gpunb_vec<{st}, {E}>*>{ptr};"]
    rows += [f"        gpunb_vec<{storage_type(dt)}, {E}> y{j};" for j, (dt, _) in enumerate(kernel.outputs)]
    rows += ["        #pragma unroll", f"        for (int k = 0; k < {E}; ++k) {{"]
    rows += body(kernel, lambda i: f"x{i}.v[k]", lambda j: f"y{j}.v[k]", "            ")
    rows += ["        }"]
    rows += [f"        *reinterpret_cast<gpunb_vec<{storage_type(dt)}, {E}>*>(reinterpret_cast<char*>(o{j}) + "
             f"off{out_slot[j]}) = y{j};" for j, (dt, _) in enumerate(kernel.outputs)]
    fast = "(__umulhi(rest, s.magic[d]) + rest) >> s.shift[d]"
    scalar = body(kernel, element, target, "        ")
    return "\n".join([
        f"struct {kernel.name}_strided_geo {{ long long shape[{nd}]; long long strides[{n_arr}][{nd}]; }};",
        # 32-bit indices and offsets; division by a constant as a multiply-high and a shift
        # (magic numbers from the host): a 64-bit division per dimension per element would
        # make a broadcast operand compute-bound
        f"struct {kernel.name}_strided32_geo {{ unsigned int shape[{nd}]; unsigned int magic[{nd}]; "
        f"unsigned int shift[{nd}]; int strides[{n_arr}][{nd}]; }};",
        *entry("strided", "strided", "long long", "long long", "rest / s.shape[d]", scalar),
        "",
        *entry("strided32", "strided32", "unsigned int", "int", fast, scalar),
        "",
        *entry("rows", "strided32", "unsigned int", "int", fast, rows, ", const unsigned int bcast"),
    ])


def fast_divisor(d: int) -> tuple[int, int]:
    """``(magic, shift)`` with ``n // d == (umulhi(n, magic) + n) >> shift`` for every
    ``0 <= n < 2**31`` and ``1 <= d < 2**31`` (the unsigned division of Granlund and
    Montgomery, as PyTorch's IntDivider uses it)."""
    if not 1 <= d < 2**31:
        raise ValueError(f"divisor {d} out of range")
    shift = (d - 1).bit_length()
    magic = ((1 << 32) * ((1 << shift) - d)) // d + 1
    return magic, shift


VEC_TYPE = "template <class T, int E> struct __align__(sizeof(T) * E) gpunb_vec { T v[E]; };"


def render(kernel: ir.ElementwiseKernel) -> str:
    """The complete CUDA C++ source of an elementwise kernel module."""
    body = _contiguous(kernel) if kernel.layout == "contiguous" else _strided(kernel)
    return "\n".join([prelude(), VEC_TYPE, "", body, ""])


def entry_points(kernel: ir.ElementwiseKernel) -> tuple[str, ...]:
    if kernel.layout == "contiguous":
        return (f"{kernel.name}_vec", f"{kernel.name}_flat")
    return (f"{kernel.name}_strided", f"{kernel.name}_strided32", f"{kernel.name}_rows")
