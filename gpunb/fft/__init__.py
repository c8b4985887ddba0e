"""``gpunb.fft``: discrete Fourier transforms (NumPy's ``numpy.fft``) on cuFFT. Empty so far:
the FFT issue fills it; each function will be one registry line (:mod:`gpunb._registry`,
``numpy`` named ``'fft.<name>'``) and its implementation here."""

__all__: list[str] = []
