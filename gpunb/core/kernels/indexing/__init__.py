"""Gather/scatter kernels: advanced indexing, take/put, ``ufunc.at`` (codegen, plan, run)."""
