"""IPython magics (``%%cuda``, ``%gpucache``): thin layers over gpunb's core."""
