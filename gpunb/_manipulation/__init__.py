"""Array manipulation (NumPy's reference: "Array manipulation routines"): changing the shape
(``shape``), transpose-like operations (``transpose``) and the number of dimensions
(``dims``). Views whenever NumPy gives a view, so ``numpy.transpose(x)`` on a gpunb array
stays on the GPU and copies nothing."""
