"""``gpunb.random``: random numbers (NumPy's ``numpy.random``) on cuRAND. Empty so far: the
random-numbers issue fills it; each function will be one registry line
(:mod:`gpunb._registry`) and its implementation here."""

__all__: list[str] = []
