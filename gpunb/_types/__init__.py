"""Data types (NumPy's reference: "Data type routines" and "Scalars"): the scalar type names
(``names``: NumPy's own objects, as CuPy exposes them) and the dtype routines
(``routines``: ``result_type``, ``can_cast``, ``finfo``... taking gpunb arrays too)."""
