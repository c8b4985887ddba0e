"""Statistics (NumPy's reference: "Statistics"): order statistics (``order``: ``amax``,
``amin``, the nan-forms) and averages and variances (``meanvar``)."""
