"""The CUDA C++ prelude of generated kernels (``prelude.cuh``: types, NumPy-exact helpers)."""

from pathlib import Path


def prelude() -> str:
    """The CUDA C++ prelude every generated kernel starts with (types, NumPy-exact helpers)."""
    # next to this module (importlib.resources' readers cost a first kernel 4 ms of imports)
    return Path(__file__).with_name("prelude.cuh").read_text()
