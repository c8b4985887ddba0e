"""``gpunb.linalg``: linear algebra (NumPy's ``numpy.linalg``) on NVIDIA's math libraries
(cuBLAS, cuSOLVER through nvmath-python's bindings). Empty so far: the linear-algebra issue
fills it; each function will be one registry line (:mod:`gpunb._registry`, ``numpy`` named
``'linalg.<name>'``) and its implementation here."""

__all__: list[str] = []
