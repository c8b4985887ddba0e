"""Logic functions (NumPy's reference: "Logic functions"): truth value testing (``truth``).
The elementwise comparisons and logical operations are ufuncs (:mod:`gpunb._math.ufuncs`)."""
