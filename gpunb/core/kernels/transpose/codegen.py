"""Tiled transpose-copy kernels: ``dst[b, i, j] = src[b, i, j]`` with a cast, CUDA C++ source.

The problem, after :mod:`.plan` has collapsed and permuted the axes: a batch of
2-D slabs where the source is contiguous along ``i`` (element stride 1) and the destination
along ``j``. A block stages a ``TI x TJ`` tile in shared memory: it reads the tile with lanes
running along ``i`` (coalesced in the source) and writes it with lanes running along ``j``
(coalesced in the destination). The shared rows are padded so that both phases are free of
bank conflicts.

A cast is the one the elementwise copy kernel applies (:func:`gpunb.core.kernels.elementwise.ir.copy_kernel`
rendered by the same emitter), so float16, complex and bool conversions match NumPy's unsafe
casting exactly; a copy without a cast moves the stored bits. The tile holds destination
values: the cast happens while reading.

Pure: imports nothing from CUDA, returns a string.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...dtypes import storage_type
from ..elementwise.codegen import body
from ..elementwise.ir import copy_kernel
from ..prelude import prelude

BLOCK_X = 32          # lanes: along i while reading, along j while writing
BLOCK_Y = 8           # warps per block
THREADS = BLOCK_X * BLOCK_Y
IN_FLIGHT = 16        # loads a thread issues before using their values
MAX_BATCH_DIMS = 3    # batch axes the kernel walks (unused ones have extent 1)
# The by-value argument struct, in order: 7 scalars then three arrays of MAX_BATCH_DIMS.
ARG_FIELDS = ("I", "J", "src_j", "dst_i", "tiles_i", "tiles_j", "ntiles")
ARG_WORDS = len(ARG_FIELDS) + 3 * MAX_BATCH_DIMS


def tile_shape(src_dtype, dst_dtype) -> tuple[int, int]:
    """``(TI, TJ)``: the tile's extent along ``i`` (source-contiguous) and ``j``
    (destination-contiguous).

    64 x 64 (16 elements per thread), or 32 x 32 (4 per thread) when either dtype is 16 bytes
    wide, whose 64 x 64 tile would need more than the 48 KiB of static shared memory. The
    size goes by the wider of the two dtypes. A warp's access is one contiguous run of 32
    elements: 128 bytes and more for 4-byte types and wider, 64 or 32 bytes for 2- and 1-byte
    types (whole 32-byte sectors still; a 128 x 128 byte tile held 94 registers per thread
    and so quartered the occupancy).
    """
    size = max(np.dtype(src_dtype).itemsize, np.dtype(dst_dtype).itemsize)
    t = 32 if size >= 16 else 64
    return t, t


def _pad(dst_dtype) -> int:
    """Shared-row padding in elements, so that a warp reading a tile column (lane k at row k)
    touches every bank once.

    One element for 4-, 8- and 16-byte types (a pitch of 65, 130 or 132 words: odd, or
    spreading each 64-/128-bit phase of the warp over all banks); 4 bytes' worth for 1- and
    2-byte types (a pitch of 17 or 33 words), where one element of padding would put
    several lanes in one bank.
    """
    return max(1, 4 // np.dtype(dst_dtype).itemsize)


def shared_bytes(src_dtype, dst_dtype) -> int:
    """Static shared memory of the kernel, in bytes."""
    ti, tj = tile_shape(src_dtype, dst_dtype)
    return tj * (ti + _pad(dst_dtype)) * np.dtype(dst_dtype).itemsize


@dataclass(frozen=True)
class TransposeKernel:
    """The tiled copy of ``src`` elements into ``dst`` ones (what the loader renders)."""

    src: np.dtype
    dst: np.dtype

    def __post_init__(self):
        object.__setattr__(self, "src", np.dtype(self.src))
        object.__setattr__(self, "dst", np.dtype(self.dst))

    @property
    def name(self) -> str:
        return kernel_name(self.src, self.dst)


def render(kernel: TransposeKernel) -> str:
    """The complete CUDA C++ source of a :class:`TransposeKernel` (see :func:`source`)."""
    return source(kernel.name, kernel.src, kernel.dst)


def entry_points(kernel: TransposeKernel) -> tuple[str, ...]:
    return (kernel.name,)


def vector_width(kernel: TransposeKernel) -> int:
    return 1


def source(name: str, src_dtype, dst_dtype) -> str:
    """The complete CUDA C++ source of the kernel ``name`` copying ``src_dtype`` elements into
    ``dst_dtype`` ones.

    Signature: ``name(const S* src, D* dst, const name_args a)`` where ``name_args`` holds, as
    64-bit integers: ``I, J`` (extents), ``src_j`` (source element stride along ``j``; along
    ``i`` it is 1), ``dst_i`` (destination element stride along ``i``; along ``j`` it is 1),
    ``tiles_i, tiles_j`` (tiles per slab along each axis), ``ntiles`` (tiles in all, slabs
    included), then ``bshape[3], src_b[3], dst_b[3]``: the batch extents and element strides
    (extent 1 for unused batch axes). The pointers point at element ``[0, 0, 0]``; any stride
    other than the two unit ones may be negative. Launch with ``THREADS`` threads as
    ``(BLOCK_X, BLOCK_Y)`` and any number of blocks: blocks loop over the tiles.
    """
    src_dtype, dst_dtype = np.dtype(src_dtype), np.dtype(dst_dtype)
    S, D = storage_type(src_dtype), storage_type(dst_dtype)
    ti, tj = tile_shape(src_dtype, dst_dtype)
    pitch = ti + _pad(dst_dtype)
    nb = MAX_BATCH_DIMS
    if src_dtype == dst_dtype:       # the stored bits, as NumPy copies (float16 NaN payloads)
        convert = [" " * 24 + "tile[jj][ii] = held[kr][ki];"]
    else:                            # exactly as the elementwise copy kernel converts
        convert = body(copy_kernel(src_dtype, dst_dtype), lambda i: "held[kr][ki]",
                        lambda j: "tile[jj][ii]", " " * 24)
    kj, ki = tj // BLOCK_Y, ti // BLOCK_X      # elements per thread: kj * ki
    rows = min(kj, max(1, IN_FLIGHT // ki))    # tile rows per read chunk
    fields = " ".join(f"long long {f};" for f in ARG_FIELDS)
    lines = [
        prelude(),
        f"struct {name}_args {{ {fields} long long bshape[{nb}]; long long src_b[{nb}]; "
        f"long long dst_b[{nb}]; }};",
        "",
        f'extern "C" __global__ void __launch_bounds__({THREADS}) '
        f"{name}(const {S}* __restrict__ src, {D}* __restrict__ dst, const {name}_args a) {{",
        f"    __shared__ {D} tile[{tj}][{pitch}];",
        "    const int tx = threadIdx.x, ty = threadIdx.y;",
        "    for (long long t = blockIdx.x; t < a.ntiles; t += gridDim.x) {",
        "        // Which tile: j fastest, then i, then the batch (64-bit: counts may be large).",
        "        long long rest = t / a.tiles_j;",
        "        const long long tile_j = t - rest * a.tiles_j;",
        "        const long long b = rest / a.tiles_i;",
        "        const long long tile_i = rest - b * a.tiles_i;",
        "        long long src_off = 0, dst_off = 0, r = b;",
        "        #pragma unroll",
        f"        for (int d = {nb - 1}; d >= 0; --d) {{",
        "            const long long q = r / a.bshape[d], idx = r - q * a.bshape[d];",
        "            r = q;",
        "            src_off += idx * a.src_b[d];",
        "            dst_off += idx * a.dst_b[d];",
        "        }",
        f"        const long long i0 = tile_i * {ti}, j0 = tile_j * {tj};",
        "        // Extents of this tile (partial at the edges): 32-bit from here on.",
        f"        const int ni = (int)min((long long){ti}, a.I - i0);",
        f"        const int nj = (int)min((long long){tj}, a.J - j0);",
        f"        const {S}* s = src + src_off + i0 + j0 * a.src_j;",
        f"        {D}* o = dst + dst_off + i0 * a.dst_i + j0;",
        "        // Read: lanes along i, where the source is contiguous. Loads are issued in chunks",
        f"        // of {rows * ki} per thread before any value is used, so they are in flight together.",
        "        #pragma unroll",
        f"        for (int c = 0; c < {kj // rows}; ++c) {{",
        f"            {S} held[{rows}][{ki}];",
        "            #pragma unroll",
        f"            for (int kr = 0; kr < {rows}; ++kr) {{",
        f"                const int jj = ty + (c * {rows} + kr) * {BLOCK_Y};",
        "                #pragma unroll",
        f"                for (int ki = 0; ki < {ki}; ++ki) {{",
        f"                    const int ii = tx + ki * {BLOCK_X};",
        "                    if (jj < nj && ii < ni) held[kr][ki] = s[ii + (long long)jj * a.src_j];",
        "                }",
        "            }",
        "            #pragma unroll",
        f"            for (int kr = 0; kr < {rows}; ++kr) {{",
        f"                const int jj = ty + (c * {rows} + kr) * {BLOCK_Y};",
        "                #pragma unroll",
        f"                for (int ki = 0; ki < {ki}; ++ki) {{",
        f"                    const int ii = tx + ki * {BLOCK_X};",
        "                    if (jj < nj && ii < ni) {",
        *convert,
        "                    }",
        "                }",
        "            }",
        "        }",
        "        __syncthreads();",
        "        // Write: lanes along j, where the destination is contiguous.",
        "        #pragma unroll",
        f"        for (int ki = 0; ki < {ti // BLOCK_Y}; ++ki) {{",
        f"            const int ii = ty + ki * {BLOCK_Y};",
        "            if (ii < ni) {",
        f"                {D}* row = o + (long long)ii * a.dst_i;",
        "                #pragma unroll",
        f"                for (int kj = 0; kj < {tj // BLOCK_X}; ++kj) {{",
        f"                    const int jj = tx + kj * {BLOCK_X};",
        "                    if (jj < nj) row[jj] = tile[jj][ii];",
        "                }",
        "            }",
        "        }",
        "        __syncthreads();   // the next tile overwrites the shared one",
        "    }",
        "}",
        "",
    ]
    return "\n".join(lines)


def kernel_name(src_dtype, dst_dtype) -> str:
    return f"transpose_copy_{np.dtype(src_dtype).name}_to_{np.dtype(dst_dtype).name}"
