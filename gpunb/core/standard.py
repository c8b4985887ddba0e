"""The standard kernels: what ``gpunb cache warm`` precompiles besides the user's modules.

For now the demo kernels; the array runtime's ufunc and reduction kernels join this set.
"""

from __future__ import annotations

from .warm import ModuleSpec, register_standard

DEMO_SOURCE = r"""
extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ out, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = a[i] + b[i];
}

// One Jacobi step of the 2-D Laplace equation: every interior point becomes the mean of its
// four neighbours; the boundary is copied.
extern "C" __global__ void laplace_step(const float* __restrict__ in, float* __restrict__ out,
                                        int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= cols) return;
    int i = r * cols + c;
    if (r == 0 || c == 0 || r == rows - 1 || c == cols - 1) { out[i] = in[i]; return; }
    out[i] = 0.25f * (in[i - 1] + in[i + 1] + in[i - cols] + in[i + cols]);
}
"""

DEMO = register_standard(ModuleSpec("demo", DEMO_SOURCE))
