"""Sorting, searching and counting (NumPy's reference: "Sorting, searching, and counting"):
``search`` (``argmax``, ``argmin``, ``where``) and ``count`` (``count_nonzero``)."""
