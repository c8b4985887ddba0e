"""Codegen: pure functions from kernel IR to CUDA C++ source strings. No CUDA import here."""

from importlib import resources


def prelude() -> str:
    """The CUDA C++ prelude every generated kernel starts with (types, NumPy-exact helpers)."""
    return resources.files(__package__).joinpath("prelude.cuh").read_text()
