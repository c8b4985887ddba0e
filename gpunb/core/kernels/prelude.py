"""The CUDA C++ prelude of generated kernels (``prelude.cuh``: types, NumPy-exact helpers)."""

from importlib import resources


def prelude() -> str:
    """The CUDA C++ prelude every generated kernel starts with (types, NumPy-exact helpers)."""
    return resources.files(__package__).joinpath("prelude.cuh").read_text()
