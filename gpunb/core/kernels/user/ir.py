"""User kernels as IR: CuPy's parameter strings parsed, type placeholders resolved, and the
description of one generated variant (:class:`UserElementwise`).

CuPy's rules (``cupy/_core/_kernel.pyx``): a parameter is ``[raw] [_non_const] TYPE NAME``;
``TYPE`` is a NumPy dtype name (``float32``) or a one-letter placeholder (``T``) that the
arguments' array dtypes decide (outputs first, then inputs, in order); scalars never decide a
placeholder and are converted to the parameter's type. Pure: no CUDA import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ... import dtypes, memo

_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z_0-9]*$")

# C++ names of each dtype in user code (CuPy's names; float16 and complex from USER_HEADER)
USER_TYPES = {
    "bool": "bool", "int8": "signed char", "int16": "short", "int32": "int",
    "int64": "long long", "uint8": "unsigned char", "uint16": "unsigned short",
    "uint32": "unsigned int", "uint64": "unsigned long long", "float16": "float16",
    "float32": "float", "float64": "double", "complex64": "complex<float>",
    "complex128": "complex<double>",
}


def user_type(dt) -> str:
    return USER_TYPES[np.dtype(dt).name]


def valid_name(name) -> bool:
    return isinstance(name, str) and _NAME.match(name) is not None


@dataclass(frozen=True)
class Param:
    """One parameter: ``dtype`` (None for a placeholder), ``ctype`` (the placeholder's letter,
    or the dtype's C++ name), ``raw`` and ``is_const`` (inputs are, unless ``_non_const``)."""

    name: str
    dtype: np.dtype | None
    ctype: str
    raw: bool
    is_const: bool


def parse_param(text: str, is_const: bool) -> Param:
    s = text.split()
    if len(s) < 2:
        raise ValueError(f"Syntax error: {text}")
    t, name = s[-2:]
    raw = False
    for kw in s[:-2]:
        if kw == "raw":
            raw = True
        elif kw == "_non_const":
            is_const = False
        else:
            raise ValueError(f'Unknown keyword "{kw}"')
    if not valid_name(name):
        raise ValueError(f"Syntax error: {text} ({name!r} is not a C identifier)")
    if len(t) == 1:
        return Param(name, None, t, raw, is_const)
    dt = dtypes.check(np.dtype(t))       # TypeError for an unknown or unsupported type name
    return Param(name, dt, user_type(dt), raw, is_const)


_parsed = memo.table("user.params")


def parse_params(text, is_const: bool) -> tuple[Param, ...]:
    """CuPy's ``_get_param_info``: a comma-separated parameter list (empty string: none)."""
    if not isinstance(text, str):
        raise TypeError(f"parameter list must be a str, not {type(text).__name__}")
    key = (text, is_const)
    r = _parsed.get(key)
    if r is None:
        r = () if len(text) == 0 else tuple(parse_param(p, is_const) for p in text.strip().split(","))
        _parsed[key] = r
    return r


def check_names(params) -> None:
    names = [p.name for p in params]
    if "i" in names:
        raise ValueError("Can not use 'i' as a parameter name")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"Duplicated parameter name: {dup[0]!r}")


class UndeterminedType(TypeError, KeyError):
    """A placeholder that no array argument decides (CuPy raises a bare KeyError)."""

    def __str__(self) -> str:
        return self.args[0]


def decide_types(in_params, out_params, in_dtypes, out_dtypes):
    """CuPy's ``_decide_params_type_core``: (in types, out types, placeholder map as sorted
    pairs). ``in_dtypes`` has None for a scalar argument; ``out_dtypes`` is empty when the
    outputs are allocated."""
    types: dict[str, np.dtype] = {}

    def bind(p, a):
        if p.dtype is not None:
            if a != p.dtype:
                raise TypeError(f"Type is mismatched. {p.name} {a} {p.dtype}")
        elif p.ctype in types:
            t = types[p.ctype]
            if t != a:
                raise TypeError(f"Type is mismatched. {p.name} {a} {t} {p.ctype}")
        else:
            types[p.ctype] = a

    for p, a in zip(out_params, out_dtypes):
        bind(p, a)
    for p, a in zip(in_params, in_dtypes):
        if a is not None:
            bind(p, a)

    def resolved(p):
        if p.dtype is not None:
            return p.dtype
        t = types.get(p.ctype)
        if t is None:
            raise UndeterminedType(f"Cannot determine the type of {p.ctype!r} (parameter "
                                   f"{p.name!r}): no array argument of that type was given")
        return t

    return (tuple(resolved(p) for p in in_params), tuple(resolved(p) for p in out_params),
            tuple(sorted(types.items())))


@dataclass(frozen=True)
class Arg:
    """A parameter of one variant: ``kind`` 'array' (one element per index), 'raw' (the
    whole array, indexed by the user; ``ndim`` and C-contiguity ``cc`` fix its indexing) or
    'scalar' (by value); ``out`` for outputs."""

    name: str
    dtype: np.dtype
    kind: str
    is_const: bool
    out: bool = False
    ndim: int = 0
    cc: bool = True


@dataclass(frozen=True)
class UserElementwise:
    """One variant of an ElementwiseKernel: its arguments' kinds and dtypes, the user's code,
    the placeholder typedefs, and the layout ('contiguous': every 'array' argument
    C-contiguous with the loop's shape; 'strided': ``ndim`` dims after collapsing)."""

    name: str
    args: tuple[Arg, ...]
    operation: str
    preamble: str
    loop_prep: str
    after_loop: str
    typedefs: tuple
    layout: str = "contiguous"
    ndim: int = 1
    options: tuple = ()


def parse_declaration(name, in_params, out_params, code: dict):
    """A user kernel's declaration checked as CuPy checks it: the name, each piece of code
    (``{argument name: str}``) a string, the parameters parsed and their names distinct.
    Returns (input params, output params)."""
    if not valid_name(name):
        raise ValueError(f'Invalid kernel name: "{name}"')
    for what, text in code.items():
        if not isinstance(text, str):
            raise TypeError(f"{what} must be a str of CUDA C++, not {type(text).__name__}")
    ins, outs = parse_params(in_params, True), parse_params(out_params, False)
    check_names(ins + outs)
    return ins, outs
