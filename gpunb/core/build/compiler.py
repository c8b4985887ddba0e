"""CUDA C++ to cubin with NVRTC: ``compile(source, options, arch) -> bytes``.

No caching here; :mod:`gpunb.core.build` wraps this from outside. A rejected program raises
:class:`~gpunb.CompileError`, which carries the log, the options and the marked source lines.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from ..config import DEFAULT_STD
from ..errors import CompileError

_ARCH_RE = re.compile(r"^(?:sm_|compute_)?(\d)(\d+)([af]?)$")
_ARCH_OPTS = ("-arch=", "--gpu-architecture=", "-arch", "--gpu-architecture")
_STD_OPTS = ("-std=", "--std=", "-std", "--std")
# NVRTC options whose value may be the next list item: alone at the end, they would take the
# --gpu-architecture gpunb appends as their value
_VALUE_OPTS = frozenset({"-I", "--include-path", "-D", "--define-macro", "-U", "--undefine-macro",
                         "--pre-include", "-include", "-arch", "--gpu-architecture", "-std",
                         "--std"})


def normalize_arch(arch) -> str:
    """Spell an architecture the way NVRTC's cubin target wants it: ``'sm_90'``.

    Accepts ``'sm_90'``, ``'sm_90a'``, ``'90'``, ``90``, ``(9, 0)`` and ``'9.0'``.
    """
    if isinstance(arch, tuple) and len(arch) == 2:
        arch = f"{arch[0]}{arch[1]}"
    text = str(arch).strip().lower().replace(".", "")
    m = _ARCH_RE.match(text)
    if not m or text.startswith("compute_"):
        raise ValueError(
            f"arch={arch!r} is not a real GPU architecture; use a form like 'sm_90', 90 or (9, 0) "
            "(gpunb compiles to cubin, so virtual 'compute_XX' targets are not accepted)")
    return f"sm_{m.group(1)}{m.group(2)}{m.group(3)}"


def _split_option(options, prefixes):
    """Return (value, remaining options) for the first option among ``prefixes``."""
    rest, value, it = [], None, iter(options)
    for opt in it:
        for p in prefixes:
            if p.endswith("=") and opt.startswith(p):
                value = opt[len(p):]
                break
            if not p.endswith("=") and opt == p:
                value = next(it, None)
                if value is None:
                    raise ValueError(f"option {opt!r} needs a value")
                break
        else:
            rest.append(opt)
    return value, rest


def check_options(options) -> tuple[str, ...]:
    if isinstance(options, str):
        raise TypeError("options must be a sequence of strings such as ('-DN=4', '--use_fast_math'), "
                        f"not one string: {options!r}")
    options = tuple(options)
    for o in options:
        if not isinstance(o, str):
            raise TypeError(f"every option must be a str, got {o!r} ({type(o).__name__})")
    if options and options[-1] in _VALUE_OPTS:
        raise ValueError(f"option {options[-1]!r} needs a value after it "
                         f"(for example {options[-1]!r}, 'VALUE' or {options[-1] + '=VALUE'!r})")
    return options


def check_name_expressions(name_expressions) -> tuple[str, ...]:
    """``name_expressions`` as a tuple of str; TypeError naming the argument otherwise."""
    if isinstance(name_expressions, (str, bytes)):
        raise TypeError("name_expressions must be a sequence of strings such as ['add<float>'], "
                        f"not one string: {name_expressions!r}")
    try:
        exprs = tuple(name_expressions)
    except TypeError:
        raise TypeError("name_expressions must be a sequence of strings, got "
                        f"{type(name_expressions).__name__}") from None
    for e in exprs:
        if not isinstance(e, str):
            raise TypeError(f"every name expression must be a str such as 'add<float>', got {e!r} "
                            f"({type(e).__name__})")
    return exprs


def named_arch(options) -> str | None:
    """The architecture an ``-arch=``/``--gpu-architecture`` option names, normalized, or None."""
    named, _ = _split_option(check_options(options), _ARCH_OPTS)
    return None if named is None else normalize_arch(named)


def nvrtc_options(options, arch) -> tuple[list[str], str]:
    """The full NVRTC option list (``-std`` default, one ``--gpu-architecture``) and the arch.

    ``arch=None`` takes an architecture named in ``options``, else the current device's.
    """
    options = check_options(options)
    named, rest = _split_option(options, _ARCH_OPTS)
    if named is not None and arch is not None and normalize_arch(named) != normalize_arch(arch):
        raise ValueError(f"architecture given twice: arch={arch!r} and option {named!r}")
    if arch is None:
        arch = named
    if arch is None:
        from ..runtime import driver  # needs a GPU; only reached when none was named

        arch = driver.current_arch()
    arch = normalize_arch(arch)
    std, rest = _split_option(rest, _STD_OPTS)
    final = [f"-std={std or DEFAULT_STD}", *rest, f"--gpu-architecture={arch}"]
    return final, arch


@dataclass
class CompiledProgram:
    """What one NVRTC compile produced."""

    cubin: bytes
    arch: str
    options: tuple[str, ...]
    log: str = ""
    lowered_names: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    ptx: str = ""          # only when compile_program(..., want_ptx=True)


def compile_program(source: str, options=(), arch=None, *, name: str = "kernel.cu",
                    headers: dict[str, str] | None = None, name_expressions=(),
                    line_offset: int = 0, want_ptx: bool = False) -> CompiledProgram:
    """Compile ``source`` with NVRTC. Raises CompileError with the log if NVRTC rejects it.

    ``want_ptx=True`` also returns the PTX (see :mod:`gpunb.core.build.inspection`)."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str of CUDA C++, got {type(source).__name__}")
    final, arch = nvrtc_options(options, arch)
    name_expressions = check_name_expressions(name_expressions)
    from ..runtime import nvrtc

    start = time.perf_counter()
    out = nvrtc.compile_program(source, name, final, dict(headers or {}),
                                list(name_expressions), want_ptx=want_ptx)
    seconds = time.perf_counter() - start
    if not out.ok:
        raise CompileError(out.log, final, source, name, line_offset)
    return CompiledProgram(out.cubin, arch, tuple(final), out.log.strip(), out.lowered_names, seconds,
                           out.ptx)


def compile(source: str, options=(), arch=None) -> bytes:  # noqa: A001 - the pipeline stage's name
    """Compile CUDA C++ ``source`` to cubin bytes with NVRTC.

    Parameters
    ----------
    source : str
        CUDA C++ source.
    options : sequence of str
        NVRTC options, passed through (``-std=c++17`` is the default standard).
    arch : str or int, optional
        Target such as ``'sm_90'``; defaults to the current device's (which needs a GPU).
    """
    return compile_program(source, options, arch).cubin
