"""Indexing (NumPy's reference: "Indexing routines"): ``x[...]`` reading and writing
(``basic``: integers, slices, ``...``, ``newaxis``, as views)."""
