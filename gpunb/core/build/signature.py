"""Kernel parameter types, read from the CUDA C++ source.

The cubin gives each parameter's size (:mod:`gpunb.core.build.cubin`); the source says whether it is
a pointer and which scalar type it is, which is what argument checking needs. Parsing is
deliberately modest: ``__global__`` declarations with builtin, ``<cstdint>`` and pointer
types, and template parameters substituted from a name expression such as ``'add<float>'``.
Anything else is "opaque": checked by size only.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

_SCALARS = {
    "bool": "bool", "char": "int8", "signed char": "int8", "unsigned char": "uint8",
    "short": "int16", "short int": "int16", "signed short": "int16",
    "unsigned short": "uint16", "unsigned short int": "uint16",
    "int": "int32", "signed": "int32", "signed int": "int32",
    "unsigned": "uint32", "unsigned int": "uint32",
    "long": "int64", "long int": "int64", "signed long": "int64",
    "long long": "int64", "long long int": "int64", "signed long long": "int64",
    "unsigned long": "uint64", "unsigned long int": "uint64",
    "unsigned long long": "uint64", "unsigned long long int": "uint64",
    "float": "float32", "double": "float64", "__half": "float16", "half": "float16",
    "int8_t": "int8", "int16_t": "int16", "int32_t": "int32", "int64_t": "int64",
    "uint8_t": "uint8", "uint16_t": "uint16", "uint32_t": "uint32", "uint64_t": "uint64",
    "size_t": "uint64", "ptrdiff_t": "int64", "intptr_t": "int64", "uintptr_t": "uint64",
    "complex<float>": "complex64", "complex<double>": "complex128",
}
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "class",
               "typename", "__grid_constant__", "register"}


@dataclass(frozen=True)
class Param:
    """One kernel parameter: ``kind`` is 'pointer', 'scalar' or 'opaque'."""

    kind: str
    ctype: str            # as written, for messages
    dtype: str | None = None   # NumPy dtype name for scalars and pointees


def _strip_comments(src: str) -> str:
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", " ", src)


def _split_top(text: str, sep: str = ",") -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts]


def _balanced(text: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index just past the bracket that closes the one at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def _param(decl: str, subst: dict[str, str]) -> Param:
    text = re.sub(r"=.*$", "", decl).strip()          # default arguments
    text = re.sub(r"\[\s*\d*\s*\]", "*", text)       # T a[] is a pointer
    text = re.sub(r"__align__\s*\(\s*\d+\s*\)", " ", text)
    pointer = "*" in text or "&" in text
    words = re.findall(r"[A-Za-z_][\w:]*(?:\s*<[^<>]*>)?", text.replace("*", " ").replace("&", " "))
    words = [w for w in words if w not in _QUALIFIERS]
    if len(words) > 1 and words[-1].isidentifier() and words[-1] not in _SCALARS \
            and words[-1] not in ("short", "long", "int", "unsigned", "signed", "char"):
        words = words[:-1]                           # drop the parameter's name
    words = [subst.get(w, w) for w in words]
    base = " ".join(words)
    base = re.sub(r"^(?:std::|cuda::std::|::)", "", base)
    base = re.sub(r"\s*<\s*", "<", re.sub(r"\s*>", ">", base))
    if "*" in base:                                  # a template argument that is a pointer type
        pointer, base = True, base.replace("*", "").strip()
    dtype = _SCALARS.get(base)
    if pointer:
        return Param("pointer", decl.strip(), dtype)
    return Param("scalar" if dtype else "opaque", decl.strip(), dtype)


_GLOBAL_RE = re.compile(r"__global__")


_ATTR_RE = re.compile(r"\b(?:__launch_bounds__|__maxnreg__|__cluster_dims__)\s*\(")


def _strip_attributes(src: str) -> str:
    """Remove ``__launch_bounds__(...)`` and kin, which sit between ``__global__`` and the name.
    One pass (pieces joined once): rebuilding the string per attribute was quadratic."""
    pieces, pos = [], 0
    while (m := _ATTR_RE.search(src, pos)) is not None:
        end = _balanced(src, m.end() - 1, "(", ")")
        pieces += [src[pos:m.start()], " "]
        pos = end if end > 0 else m.end()
    pieces.append(src[pos:])
    return "".join(pieces)


_TEMPLATE_RE = re.compile(r"template\s*<([^{};]*)>\s*(?:(?:static|inline|extern\s*\"C\")\s*)*$")
_BOUNDARY_RE = re.compile(r"[{};]")


def kernel_declarations(source: str) -> dict[str, list[tuple[list[str], list[str]]]]:
    """Map kernel name to its declarations: (template parameter names, parameter texts).

    Linear in the source: a template header before a declaration holds no ``{``, ``}`` or
    ``;``, so it is looked for only after the last of those (found by bisection), not in the
    whole text before the declaration."""
    src = _strip_attributes(_strip_comments(source))
    found: dict[str, list[tuple[list[str], list[str]]]] = {}
    bounds = [b.start() for b in _BOUNDARY_RE.finditer(src)]
    for m in _GLOBAL_RE.finditer(src):
        paren = src.find("(", m.end())
        if paren < 0:
            continue
        head = src[m.end():paren]
        name_m = re.search(r"([A-Za-z_]\w*)\s*$", head)
        if not name_m:
            continue
        end = _balanced(src, paren, "(", ")")
        if end < 0:
            continue
        params = [p for p in _split_top(src[paren + 1:end - 1]) if p and p != "void"]
        # A template header right before this declaration (possibly before extern/static words).
        i = bisect.bisect_left(bounds, m.start()) - 1
        before = src[bounds[i] + 1 if i >= 0 else 0:m.start()].rstrip()
        tparams: list[str] = []
        tm = _TEMPLATE_RE.search(before)
        if tm:
            for tp in _split_top(tm.group(1)):
                w = re.findall(r"[A-Za-z_]\w*", re.sub(r"=.*$", "", tp))
                if w:
                    tparams.append(w[-1])
        found.setdefault(name_m.group(1), []).append((tparams, params))
    return found


@functools.lru_cache(maxsize=8)
def _declarations(source: str):
    return kernel_declarations(source)


def signature(source: str, name: str, n_params: int | None = None, *,
              declarations=None) -> list[Param] | None:
    """Parameter types of kernel ``name`` (a plain name or a name expression such as
    ``'add<float>'``), or None when the source does not show a matching declaration.
    ``declarations``: :func:`kernel_declarations` of ``source`` when already parsed."""
    base, _, targs = name.partition("<")
    base = base.strip().split("::")[-1]
    args = _split_top(targs.rsplit(">", 1)[0]) if targs else []
    decls = _declarations(source) if declarations is None else declarations
    for tparams, params in decls.get(base, []):
        if n_params is not None and len(params) != n_params:
            continue
        subst = dict(zip(tparams, args))
        return [_param(p, subst) for p in params]
    return None


def demangled_base(symbol: str) -> str:
    """The unqualified function name inside an Itanium-mangled symbol (or the symbol itself)."""
    m = re.match(r"_Z(?:N\d+\w*?)?(\d+)", symbol)
    if not m:
        return symbol
    n = int(m.group(1))
    return symbol[m.end():m.end() + n]
