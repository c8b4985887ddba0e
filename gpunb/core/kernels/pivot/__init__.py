"""The row interchanges of an LU solve (LAPACK laswp) on one vector in shared memory."""
