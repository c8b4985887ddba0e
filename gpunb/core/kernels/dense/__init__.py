"""Small dense factorizations (LU solve, inverse, Cholesky) in one thread block per matrix."""
