"""Indexing (NumPy's reference: "Indexing routines"): ``x[...]`` reading and writing
(``basic``: integers, slices, ``...``, ``newaxis``, as views; ``diagonal``), advanced indices
(``advanced``: integer and boolean arrays), gathering and scattering routines (``gather``:
``take``, ``put``, ``choose``, ``compress``...) and index generation (``generate``:
``tril_indices``, ``unravel_index``, ``ix_``...)."""
