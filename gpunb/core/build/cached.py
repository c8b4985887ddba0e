"""Compile through the cache: ``compile_cached`` wraps :func:`.compiler.compile_program` from
outside, as tinygrad's ``compile_cached`` does.

The key is a SHA-256 over everything that determines the binary: the source, the content of
every header it includes (found in the given headers and ``-I`` directories), the options
without include paths, the NVRTC version, the arch, the name expressions and the cache schema.
No absolute path enters it, so the same kernel has the same key on any machine and from any
working directory. A hit never loads NVRTC.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

from .. import events
from ..config import Config
from ..errors import CompileError
from .cache import SCHEMA, CacheEntry, KernelCache, kernel_cache
from .compiler import compile_program, nvrtc_options

_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^">\n]+)[">]', re.M)
_INCLUDE_OPTS = ("-I", "--include-path=", "--include-path")


def include_dirs(options) -> tuple[list[Path], list[str]]:
    """Split options into include directories and the rest (which enter the key)."""
    dirs, rest, it = [], [], iter(options)
    for opt in it:
        if opt in ("-I", "--include-path"):
            nxt = next(it, None)
            if nxt is None:
                raise ValueError(f"option {opt!r} needs a directory")
            dirs.append(Path(nxt))
        elif opt.startswith("--include-path="):
            dirs.append(Path(opt.split("=", 1)[1]))
        elif opt.startswith("-I"):
            dirs.append(Path(opt[2:]))
        else:
            rest.append(opt)
    return dirs, rest


def header_digests(source: str, headers: dict[str, str], dirs: list[Path],
                   origin: Path | None = None) -> list[tuple[str, str]]:
    """(include name, SHA-256 of its content) for every header the source reaches.

    ``origin`` is the directory of the program's name, where NVRTC looks for quoted includes
    first. Headers NVRTC finds by itself (its built-ins) are covered by the NVRTC version in the
    key.
    Includes inside inactive ``#if`` branches are hashed too: harmless, and never too few.
    """
    found: dict[str, str] = {}
    todo = [(source, origin)]
    while todo:
        text, here = todo.pop()
        for quote, name in _INCLUDE_RE.findall(text):
            if name in found:
                continue
            content = headers.get(name)
            if content is None:
                where = ([here] if (quote == '"' and here is not None) else []) + list(dirs)
                for d in where:
                    p = d / name
                    if p.is_file():
                        content = p.read_text(errors="replace")
                        todo.append((content, p.parent))
                        break
            else:
                todo.append((content, None))
            if content is not None:
                found[name] = hashlib.sha256(content.encode()).hexdigest()
    return sorted(found.items())


def key_record(source: str, options, arch: str, name_expressions=(), headers=None,
               name: str = "kernel.cu") -> dict:
    """Everything the key covers, as a JSON-able record. ``options`` are the final options."""
    from ..runtime import nvrtc

    dirs, keyed = include_dirs(options)
    return {
        "schema": SCHEMA,
        "nvrtc": nvrtc.identity(),
        "arch": arch,
        "options": keyed,
        "source": source,
        "headers": header_digests(source, dict(headers or {}), dirs, Path(name).parent),
        "name_expressions": list(name_expressions),
    }


def cache_key(source: str, options, arch: str, name_expressions=(), headers=None,
              name: str = "kernel.cu") -> str:
    """The cache key (64 hex digits) of a program. ``options`` are the final NVRTC options."""
    return _digest(key_record(source, options, arch, name_expressions, headers, name))


def _digest(record: dict) -> str:
    blob = json.dumps(record, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


def kernel_names(source: str) -> list[str]:
    from .signature import kernel_declarations

    return list(kernel_declarations(source))


def describe_kernels(source: str, cubin: bytes, lowered: dict[str, str]):
    """Each kernel's parameter layout and resources from the cubin, and the parameter types
    of each kernel name and name expression from the source, stored with the entry so that a
    cache hit parses nothing."""
    from dataclasses import astuple

    from .cubin import read_kernels
    from .signature import demangled_base, kernel_declarations, signature

    infos = read_kernels(cubin)
    kernel_info = {s: list(astuple(i))[1:] for s, i in infos.items()}
    names = {n for n, decls in kernel_declarations(source).items() if len(decls) == 1}
    signatures = {}
    for symbol, info in infos.items():
        for name in {symbol, demangled_base(symbol)} & names | {e for e, s in lowered.items() if s == symbol}:
            params = signature(source, name, len(info.param_sizes))
            if params is not None:
                signatures[name] = [astuple(p) for p in params]
    return kernel_info, signatures


def compile_cached(source: str, options=(), arch=None, *, name: str = "kernel.cu",
                   headers: dict[str, str] | None = None, name_expressions=(),
                   display_name: str | None = None, force: bool = False,
                   cache: KernelCache | None = None, line_offset: int = 0) -> CacheEntry:
    """Return the cache entry of a program, compiling it (once) on a miss.

    Parameters are those of :func:`gpunb.core.build.compiler.compile_program`; ``force=True``
    recompiles and replaces the entry; ``display_name`` names the build in events and warnings.
    """
    cache = cache if cache is not None else kernel_cache()
    final, arch = nvrtc_options(options, arch)
    name_expressions = tuple(name_expressions)
    record = key_record(source, final, arch, name_expressions, headers, name)
    key = _digest(record)
    if not force:
        entry, level = cache.lookup(key)
        if entry is not None:
            events.emit(events.CacheHit(key, display_name or entry.meta.get("name", name), level))
            return entry
    what = display_name or ", ".join(kernel_names(source)[:4]) or name
    events.emit(events.CacheMiss(key, what))
    config = Config.from_env()
    events.emit(events.CompileStarted(key, what, arch))
    start = time.perf_counter()
    with events.build_scope(f"{what} for {arch}", config.slow_compile_seconds,
                            None if cache.memory_only else cache.directory):
        try:
            prog = compile_program(source, final, arch, name=name, headers=headers,
                                   name_expressions=name_expressions, line_offset=line_offset)
        except CompileError as e:
            events.emit(events.CompileFinished(key, what, arch, time.perf_counter() - start,
                                               error=e.log))
            raise
    kernel_info, signatures = describe_kernels(source, prog.cubin, prog.lowered_names)
    meta = {
        "name": what,
        "kernels": sorted(kernel_info),
        "kernel_info": kernel_info,
        "signatures": signatures,
        "name_expressions": prog.lowered_names,
        "source": source,
        "options": list(prog.options),
        "arch": arch,
        "nvrtc": record["nvrtc"],
        "compile_seconds": prog.seconds,
        "log": prog.log,
        "headers": [h for h, _ in record["headers"]],
    }
    entry = cache.put(key, prog.cubin, meta)
    events.emit(events.CompileFinished(key, what, arch, prog.seconds))
    return entry
