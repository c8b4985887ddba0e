"""Compile through the cache: ``compile_cached`` wraps :func:`.compiler.compile_program` from
outside, as tinygrad's ``compile_cached`` does.

The key is a SHA-256 over everything known before compiling that determines the binary: the
source, the program's name (``__FILE__``), the content of every header it includes literally
(found in the given headers, next to the program and in ``-I`` directories), the options
without include paths, the NVRTC version, the arch, the name expressions and the cache schema.
No absolute path enters it, so the same kernel has the same key on any machine and from any
working directory. A hit never loads NVRTC.

What the key cannot know up front, a header reached through a macro (``#include HDR``) or a
``--pre-include``, is recorded when compiling, as ccache's direct mode does: every file it
may have read (see :func:`_reachable`) becomes the entry's manifest,
path -> content hash, checked on every hit; a changed header makes the hit a miss. Headers of
an installed package (the CCCL headers in the ``nvidia`` wheels) count by the package's
version, read once per process, not file by file.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import site
import sysconfig
import threading
import time
from pathlib import Path

from .. import events
from ..config import Config
from ..errors import CompileError
from .cache import SCHEMA, CacheEntry, KernelCache, kernel_cache
from .compiler import check_name_expressions, compile_program, nvrtc_options

_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^">\n]+)[">]', re.M)
# any #include whose operand is not a literal "..." or <...>: a macro, resolved by NVRTC only
_DYNAMIC_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include(?:_next)?\b(?![ \t]*[<"])', re.M)
_INCLUDE_OPTS = ("-I", "--include-path=", "--include-path")
_PRE_INCLUDE_OPTS = ("--pre-include", "-include")
_RACY_SECONDS = 2.0    # a file changed this recently is re-read: its mtime may not show the next change


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


# -- file digests, package headers -------------------------------------------------------------

_files: dict[str, tuple] = {}    # path -> (stat signature, sha256, has a macro include, includes)
_files_lock = threading.Lock()


def _summary(text: str) -> tuple[bool, list[tuple[str, str]]]:
    if "include" not in text:
        return False, []
    return bool(_DYNAMIC_INCLUDE_RE.search(text)), _INCLUDE_RE.findall(text)


def _file_info(path: str):
    """(sha256, has a macro include, literal includes) of a file, or None if it is not a
    readable regular file. Remembered per process by (inode, size, mtime, ctime), except for a
    file changed in the last two seconds, whose next change the timestamps might not show
    (ccache's rule), so a hit costs a stat per header, not a read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    sig = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    found = _files.get(path)
    if found is not None and found[0] == sig:
        return found[1:]
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    info = (hashlib.sha256(data).hexdigest(), *_summary(data.decode(errors="replace")))
    if time.time() - max(st.st_mtime, st.st_ctime) > _RACY_SECONDS:
        with _files_lock:
            if len(_files) > 65536:
                _files.clear()
            _files[path] = (sig, *info)
    return info


def file_digest(path) -> str | None:
    """SHA-256 of a file's content, or None if it is not a readable regular file."""
    info = _file_info(str(path))
    return None if info is None else info[0]


@functools.cache
def _site_roots() -> tuple[str, ...]:
    roots = set()
    for p in [*site.getsitepackages(), site.getusersitepackages(),
              sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]:
        if p and os.path.isdir(p):
            roots.update({os.path.abspath(p), os.path.realpath(p)})
    return tuple(sorted(roots, key=len, reverse=True))


@functools.cache
def _distributions_token(root: str, top: str) -> str:
    # the versions of every distribution installed under ``top`` (the nvidia-* wheels share
    # one 'nvidia' directory), from the dist-info names: one directory listing per process
    prefix = top.lower().replace("-", "_")
    names = sorted(d[:-len(".dist-info")] for d in os.listdir(root)
                   if d.endswith(".dist-info") and d.lower().replace("-", "_").startswith(prefix))
    return f"package {top}: " + (", ".join(names) or "unversioned")


def package_token(path) -> tuple[str, str] | None:
    """(package directory, version token) if ``path`` lies in an installed package (such as
    the CCCL headers of the nvidia-cuda-cccl wheel), else None. Such headers count in keys and
    manifests by their package's version: hashing hundreds of headers per compile would cost
    more than it guards against (pip replaces a package's files only with a new version)."""
    text = os.path.abspath(path)
    for root in _site_roots():
        if text.startswith(root + os.sep):
            top = text[len(root) + 1:].split(os.sep, 1)[0]
            return os.path.join(root, top), _distributions_token(root, top)
    return None


# -- what the key covers -------------------------------------------------------------------------

def _sig(path: str):
    """A file's (inode, size, mtime, ctime), or None if there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _scan(source: str, headers: dict[str, str], dirs: list[Path], origin: Path | None,
          probes: list | None = None):
    """Follow the literal includes: ({include name: digest}, {resolved paths}, whether some
    include NVRTC resolves cannot be followed here: a macro include, or one not found).
    ``probes`` collects (path, signature or None) of every place looked at, found or not."""
    found: dict[str, str] = {}
    paths: set[str] = set()
    dynamic, includes = _summary(source)
    opaque = dynamic
    todo = [(includes, origin)]
    while todo:
        includes, here = todo.pop()
        for quote, name in includes:
            if name in found:
                continue
            content = headers.get(name)
            if content is not None:
                found[name] = hashlib.sha256(content.encode()).hexdigest()
                dynamic, inner = _summary(content)
                opaque |= dynamic
                todo.append((inner, None))
                continue
            where = ([here] if (quote == '"' and here is not None) else []) + list(dirs)
            for d in where:
                p = os.path.join(d, name)
                if probes is not None:
                    probes.append((p, _sig(p)))
                pkg = package_token(p)
                if pkg is not None:
                    if os.path.isfile(p):
                        found[name] = pkg[1]        # the package's own includes: its version
                        break
                    continue
                info = _file_info(p)
                if info is not None:
                    found[name] = info[0]
                    paths.add(os.path.abspath(p))
                    opaque |= info[1]
                    todo.append((info[2], Path(p).parent))
                    break
            # not found here: one of NVRTC's built-in headers (the NVRTC version in the key
            # covers those), or a compile error
    return found, paths, opaque


def header_digests(source: str, headers: dict[str, str], dirs: list[Path],
                   origin: Path | None = None) -> list[tuple[str, str]]:
    """(include name, SHA-256 of its content) for every header the source reaches literally.

    ``origin`` is the directory of the program's name, where NVRTC looks for quoted includes
    first. Headers NVRTC finds by itself (its built-ins) are covered by the NVRTC version in the
    key; a header of an installed package by the package's version. Includes inside inactive
    ``#if`` branches are hashed too: harmless, and never too few.
    """
    return sorted(_scan(source, headers, dirs, origin)[0].items())


def key_record(source: str, options, arch: str, name_expressions=(), headers=None,
               name: str = "kernel.cu") -> dict:
    """Everything the key covers, as a JSON-able record. ``options`` are the final options."""
    return _key_record(source, options, arch, name_expressions, headers, name)[1]


_keys: dict[tuple, tuple] = {}   # memo of _key_record: (result, places the scan looked at)
_KEYS_MAX = 1024


@functools.lru_cache(maxsize=64)
def _origin(name: str) -> Path:
    return Path(name).parent


def _key_record(source, options, arch, name_expressions, headers, name):
    """(key, key record, header paths the key covers, whether NVRTC may read headers the key
    cannot see, include directories), remembered per process so that a memory hit costs a
    lookup (and a stat per header place)."""
    from ..runtime import nvrtc

    memo_key = (nvrtc.identity(), source, tuple(options), arch, tuple(name_expressions),
                tuple(headers.items()) if headers else (), name)
    found = _keys.get(memo_key)
    if found is not None:
        out, probes, cwd = found
        if (cwd is None or cwd == os.getcwd()) and all(_sig(p) == sig for p, sig in probes):
            return out
    probes: list = []
    out = _key_record_uncached(source, options, arch, name_expressions, headers, name, probes)
    out = (_digest(out[0]), *out)
    # Remembered with the status of every place the scan looked (a header found there, or
    # none): a hit then costs a stat per place, not a read. Not for a file changed in the
    # last two seconds, whose next change its timestamps might not show.
    recent = (time.time() - _RACY_SECONDS) * 1e9
    if all(sig is None or max(sig[2], sig[3]) < recent for _, sig in probes):
        if len(_keys) >= _KEYS_MAX:
            _keys.clear()
        # relative places (next to "kernel.cu", a relative -I) depend on the working directory
        cwd = os.getcwd() if any(not os.path.isabs(p) for p, _ in probes) else None
        _keys[memo_key] = (out, probes, cwd)
    return out


def _key_record_uncached(source, options, arch, name_expressions, headers, name, probes=None):
    from ..runtime import nvrtc

    dirs, keyed = include_dirs(options)
    found, paths, opaque = _scan(source, dict(headers or {}), dirs, _origin(name), probes)
    record = {
        "schema": SCHEMA,
        "nvrtc": nvrtc.identity(),
        "arch": arch,
        "options": keyed,
        "source": source,
        "name": name,                  # __FILE__ is in the binary
        "headers": sorted(found.items()),
        "name_expressions": list(name_expressions),
    }
    opaque = opaque or any(o.startswith(_PRE_INCLUDE_OPTS) for o in keyed)
    return record, paths, opaque, dirs


def cache_key(source: str, options, arch: str, name_expressions=(), headers=None,
              name: str = "kernel.cu") -> str:
    """The cache key (64 hex digits) of a program. ``options`` are the final NVRTC options."""
    return _key_record(source, options, arch, name_expressions, headers, name)[0]


def _digest(record: dict) -> str:
    blob = json.dumps(record, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


def kernel_names(source: str) -> list[str]:
    from .signature import kernel_declarations

    return list(kernel_declarations(source))


def describe_kernels(source: str, cubin: bytes, lowered: dict[str, str], declarations=None):
    """Each kernel's parameter layout and resources from the cubin, and the parameter types
    of each kernel name and name expression from the source, stored with the entry so that a
    cache hit parses nothing. One pass over the source and one over the cubin: linear in the
    number of kernels (``declarations``: :func:`.signature.kernel_declarations`, if known)."""
    from dataclasses import astuple

    from .cubin import read_kernels
    from .signature import demangled_base, kernel_declarations, signature

    infos = read_kernels(cubin)
    kernel_info = {s: list(astuple(i))[1:] for s, i in infos.items()}
    decls = kernel_declarations(source) if declarations is None else declarations
    names = {n for n, d in decls.items() if len(d) == 1}
    by_symbol: dict[str, list[str]] = {}
    for expr, symbol in lowered.items():
        by_symbol.setdefault(symbol, []).append(expr)
    signatures = {}
    for symbol, info in infos.items():
        for name in {symbol, demangled_base(symbol)} & names | set(by_symbol.get(symbol, ())):
            params = signature(source, name, len(info.param_sizes), declarations=decls)
            if params is not None:
                signatures[name] = [astuple(p) for p in params]
    return kernel_info, signatures


# -- the manifest: headers the compile read that the key could not know -------------------------

def _manifest(read: list[str], covered: set[str], headers: dict, dirs: list[Path],
              origin: Path) -> dict[str, str]:
    """path -> digest of every file NVRTC reported reading that the key does not cover.
    A relative name (a --pre-include) counts at every place NVRTC may have found it."""
    out: dict[str, str] = {}
    for name in read:
        if name.startswith(_UNVERIFIABLE):
            return {name: ""}
        if name in headers or name.startswith("__nv_nvrtc_builtin"):
            continue
        candidates = ([name] if os.path.isabs(name) else
                      [os.path.join(d, name) for d in (origin, *dirs, Path.cwd())])
        for c in candidates:
            c = os.path.abspath(c)
            if c in covered:
                continue
            pkg = package_token(c)
            if pkg is not None:
                out["package:" + pkg[0]] = pkg[1]
                continue
            digest = file_digest(c)
            if digest is not None:
                out[c] = digest
    return out


_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inc", ".inl", ".ipp", ".tcc", ".cu")
_WALK_FILES = 4000      # more files than this where a header may come from: no entry is trusted
_UNVERIFIABLE = "unverifiable:"


def _reachable(dirs: list[Path], origin: Path, options) -> list[str]:
    """Every file a macro include or a pre-include could name: the files under each include
    directory, the header-like files next to the program (two levels down), and the
    pre-included files. (NVRTC can list the headers it read only through its time trace,
    which then stays on for every later compile in the process and writes '.json' files
    into the working directory: not an option.)"""
    out: list[str] = []
    options = list(options)
    for i, o in enumerate(options):
        for p in _PRE_INCLUDE_OPTS:
            if o == p and i + 1 < len(options):          # --pre-include FILE
                out.append(options[i + 1])
            elif o.startswith(p) and len(o) > len(p):     # --pre-include=FILE, -includeFILE
                out.append(o[len(p):].lstrip("="))
    for root, depth, suffixes in [(d, 16, None) for d in dirs] + [(origin, 2, _HEADER_SUFFIXES)]:
        base = os.path.abspath(root)
        for here, subdirs, files in os.walk(base):
            if here[len(base):].count(os.sep) >= depth:
                subdirs[:] = []
            out += [os.path.join(here, f) for f in files if suffixes is None or f.endswith(suffixes)]
            if len(out) > _WALK_FILES:
                return [_UNVERIFIABLE + "too many files where headers may come from"]
    return out


def manifest_holds(manifest: dict[str, str]) -> bool:
    """True if every header recorded in an entry's manifest still has the recorded content."""
    for path, digest in manifest.items():
        if path.startswith(_UNVERIFIABLE):
            return False
        if path.startswith("package:"):
            pkg = package_token(os.path.join(path[len("package:"):], "x"))
            if pkg is None or pkg[1] != digest:
                return False
        elif file_digest(path) != digest:
            return False
    return True


def _fresh(entry: CacheEntry, cache: KernelCache) -> bool:
    manifest = entry.meta.get("manifest")
    if not manifest or manifest_holds(manifest):
        return True
    cache.count("stale")
    return False


def compile_cached(source: str, options=(), arch=None, *, name: str = "kernel.cu",
                   headers: dict[str, str] | None = None, name_expressions=(),
                   display_name: str | None = None, force: bool = False,
                   cache: KernelCache | None = None, line_offset: int = 0) -> CacheEntry:
    """Return the cache entry of a program, compiling it (once) on a miss.

    Parameters are those of :func:`gpunb.core.build.compiler.compile_program`; ``force=True``
    recompiles and replaces the entry; ``display_name`` names the build in events and warnings.
    Threads and processes that miss the same kernel together compile it once: one builds, the
    others wait for its entry.
    """
    cache = cache if cache is not None else kernel_cache()
    final, arch = nvrtc_options(options, arch)
    name_expressions = check_name_expressions(name_expressions)
    key, record, covered, opaque, dirs = _key_record(source, final, arch, name_expressions,
                                                     headers, name)
    if not force:
        entry, level = cache.lookup(key)
        if entry is not None and _fresh(entry, cache):
            events.emit(events.CacheHit(key, display_name or entry.meta.get("name", name), level))
            return entry
    from .signature import kernel_declarations

    decls = kernel_declarations(source)
    what = display_name or ", ".join(list(decls)[:4]) or name
    events.emit(events.CacheMiss(key, what))
    with cache.building(key) as waited:
        if waited and not force:     # another thread or process built it while we waited
            entry, level = cache.lookup(key, count_miss=False)
            if entry is not None and _fresh(entry, cache):
                events.emit(events.CacheHit(key, display_name or entry.meta.get("name", name), level))
                return entry
        return _build(source, final, arch, name, headers, name_expressions, line_offset, key,
                      record, covered, opaque, dirs, decls, what, cache)


def _build(source, final, arch, name, headers, name_expressions, line_offset, key, record,
           covered, opaque, dirs, decls, what, cache) -> CacheEntry:
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
    kernel_info, signatures = describe_kernels(source, prog.cubin, prog.lowered_names, decls)
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
    if opaque:
        manifest = _manifest(_reachable(dirs, Path(name).parent, final), covered,
                             dict(headers or {}), dirs, Path(name).parent)
        if manifest:
            meta["manifest"] = manifest
    entry = cache.put(key, prog.cubin, meta)
    events.emit(events.CompileFinished(key, what, arch, prog.seconds))
    return entry
