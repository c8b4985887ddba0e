"""Window functions (numpy.bartlett, blackman, hamming, hanning, kaiser): NumPy's values for
``M`` points, computed on the host (M is small) and uploaded, so they are NumPy's exactly."""

from __future__ import annotations

import numpy as np

from .from_data import upload as _upload


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points (numpy.bartlett)."""
    return _upload(np.bartlett(M))


def blackman(M):
    """The Blackman window of ``M`` points (numpy.blackman)."""
    return _upload(np.blackman(M))


def hamming(M):
    """The Hamming window of ``M`` points (numpy.hamming)."""
    return _upload(np.hamming(M))


def hanning(M):
    """The Hann window of ``M`` points (numpy.hanning)."""
    return _upload(np.hanning(M))


def kaiser(M, beta):
    """The Kaiser window of ``M`` points and shape ``beta`` (numpy.kaiser)."""
    return _upload(np.kaiser(M, float(beta)))
