"""The kernel cache: compiled cubins with their metadata, in memory and on disk.

A small class with get/put. The disk layer is :mod:`gpunb.core.runtime.store` (atomic writes,
per-key build locks across processes, crash leftovers swept, size cap with LRU eviction, only
regular files this user owns are read); gpunb adds an envelope around each cubin: a magic tag,
a SHA-256 checksum and a JSON metadata record validated on read, so that a torn, corrupted or
forged entry is detected, dropped and rebuilt, never loaded. An in-memory layer in front
answers repeats within a process without reading a file. If the directory cannot be used (or
is not safe: another user owns it or can write it, see ``GPUNB_CACHE_SHARED``) the cache keeps
new entries in memory only and warns once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import struct
import threading
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from ..config import Config
from ..errors import CacheWarning

logger = logging.getLogger("gpunb")

SCHEMA = 2                      # bump when the key recipe, the envelope or the metadata changes
_MAGIC = b"GPUNBKC1"
_HEAD = len(_MAGIC) + 32 + 4    # magic, sha256 of the rest, metadata length
_MEMORY_CAP = 256 * 1024**2
_TOUCH_SECONDS = 60.0           # a memory hit refreshes the disk entry's recency at most this often


class CorruptEntry(ValueError):
    pass


def pack_entry(meta: dict, cubin: bytes) -> bytes:
    body_meta = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()
    body = struct.pack("<I", len(body_meta)) + body_meta + cubin
    return _MAGIC + hashlib.sha256(body).digest() + body


def unpack_entry(blob: bytes) -> tuple[dict, bytes]:
    if len(blob) < _HEAD or blob[:len(_MAGIC)] != _MAGIC:
        raise CorruptEntry("not a gpunb cache entry (bad magic or too short)")
    digest, body = blob[len(_MAGIC):len(_MAGIC) + 32], blob[len(_MAGIC) + 32:]
    if hashlib.sha256(body).digest() != digest:
        raise CorruptEntry("checksum mismatch")
    n, = struct.unpack_from("<I", body)
    if 4 + n > len(body):
        raise CorruptEntry("metadata length past the end")
    try:
        meta = json.loads(body[4:4 + n])
    except ValueError as e:
        raise CorruptEntry(f"unreadable metadata: {e}") from None
    return meta, body[4 + n:]


def _is_str_list(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _is_int_list(v) -> bool:
    return isinstance(v, list) and all(type(x) is int and x >= 0 for x in v)


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def validate_meta(meta, key: str | None = None) -> dict:
    """Check a metadata record read from disk; raise CorruptEntry for any it does not match.

    A checksum only proves the bytes are as written; a record from another gpunb version,
    forged, or hand-edited must not crash a compile or ``cache list``.
    """
    def bad(why):
        raise CorruptEntry(f"invalid metadata: {why}")

    if not isinstance(meta, dict):
        bad(f"a JSON {type(meta).__name__}, not an object")
    if meta.get("schema") != SCHEMA:
        bad(f"schema {meta.get('schema')!r}, this gpunb reads schema {SCHEMA}")
    if not isinstance(meta.get("key"), str) or (key is not None and meta["key"] != key):
        bad("holds another key")
    if not _is_str_list(meta.get("kernels")):
        bad("'kernels' is not a list of names")
    for name, check in (("kernel_info", dict), ("signatures", dict), ("name_expressions", dict),
                        ("manifest", dict)):
        if name in meta and not isinstance(meta[name], check):
            bad(f"{name!r} is not an object")
    for sym, info in meta.get("kernel_info", {}).items():
        if not (isinstance(info, list) and len(info) == 5 and _is_int_list(info[0])
                and _is_int_list(info[1]) and len(info[0]) == len(info[1])
                and (info[2] is None or type(info[2]) is int)
                and type(info[3]) is int and type(info[4]) is int):
            bad(f"kernel_info of {sym!r}")
    for name, params in meta.get("signatures", {}).items():
        if not (isinstance(params, list) and all(
                isinstance(p, list) and len(p) == 3 and isinstance(p[0], str)
                and isinstance(p[1], str) and (p[2] is None or isinstance(p[2], str))
                for p in params)):
            bad(f"signature of {name!r}")
    for k, v in meta.get("name_expressions", {}).items():
        if not isinstance(v, str):
            bad(f"name expression {k!r}")
    for k, v in meta.get("manifest", {}).items():
        if not isinstance(v, str):
            bad(f"manifest entry {k!r}")
    for name in ("source", "name", "arch", "nvrtc", "log"):
        if name in meta and not isinstance(meta[name], str):
            bad(f"{name!r} is not a string")
    for name in ("options", "headers"):
        if name in meta and not _is_str_list(meta[name]):
            bad(f"{name!r} is not a list of strings")
    for name in ("size", "created", "compile_seconds"):
        if name in meta and not _is_num(meta[name]):
            bad(f"{name!r} is not a number")
    return meta


@dataclass(frozen=True)
class CacheEntry:
    """A cached cubin and its metadata record (see :meth:`KernelCache.entries`)."""

    key: str
    cubin: bytes
    meta: dict

    @property
    def kernels(self) -> list[str]:
        return list(self.meta.get("kernels", ()))


class KernelCache:
    """Compiled kernels on disk, keyed by everything that determines the binary.

    Parameters
    ----------
    directory : path-like, optional
        Cache directory; default ``GPUNB_CACHE_DIR`` or the platform's user cache directory.
    max_bytes : int, optional
        Size cap of the disk cache (default ``GPUNB_CACHE_MAX_BYTES``, 2 GiB).
    shared : bool, optional
        Accept a directory and entries other users own or the group can write (default
        ``GPUNB_CACHE_SHARED``, off; see the README on the risk).

    Nothing touches the disk until the first lookup.
    """

    def __init__(self, directory=None, max_bytes: int | None = None, shared: bool | None = None):
        config = (Config.from_env() if directory is None or max_bytes is None or shared is None
                  else None)
        # absolute once: a later chdir must not move the cache
        self.directory = (Path(directory).expanduser().absolute() if directory is not None
                          else config.cache_dir)
        self.max_bytes = int(max_bytes) if max_bytes is not None else config.cache_max_bytes
        self.shared = bool(shared) if shared is not None else config.cache_shared
        if self.max_bytes <= 0:
            raise ValueError(f"max_bytes must be positive, got {max_bytes!r}")
        self._lock = threading.RLock()
        self._store = None
        self._opened = False
        self._writable = True
        self._warned = False
        self._memory: OrderedDict[str, CacheEntry] = OrderedDict()
        self._memory_bytes = 0
        self._last_used: dict[str, float] = {}
        self._touched: dict[str, float] = {}      # when a memory hit last refreshed the disk entry
        self._warned_about: set[str] = set()
        self._building: dict[str, list] = {}      # key -> [lock, users]: one build per key
        self.reset_stats()

    # -- state -----------------------------------------------------------------------------

    @property
    def memory_only(self) -> bool:
        """True once the directory proved unusable: new entries then live in memory only."""
        self._open()
        return self._store is None or not self._writable

    def reset_stats(self) -> None:
        # Counter names are read by report.py, the %gpucache magic and the notebook panel:
        # keep them stable (add, don't rename). untrusted: entries not loaded because another
        # user owns or can write them; stale: hits whose recorded headers had changed.
        self._stats = dict(memory_hits=0, disk_hits=0, misses=0, compiles=0,
                           compile_seconds=0.0, corrupted=0, disk_errors=0, untrusted=0, stale=0)

    def _degrade(self, action: str, error: OSError) -> None:
        self._writable = False
        self._stats["disk_errors"] += 1
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"gpunb kernel cache: cannot {action} {self.directory} ({error.strerror or error}); "
                "compiled kernels are kept in memory only for this process. Set GPUNB_CACHE_DIR "
                "to a writable directory to keep them across sessions.",
                CacheWarning, stacklevel=4)

    def _warn_once(self, topic: str, message: str) -> None:
        if topic not in self._warned_about:
            self._warned_about.add(topic)
            warnings.warn(f"gpunb kernel cache: {message}", CacheWarning, stacklevel=4)

    def _open(self):
        if self._opened:
            return self._store
        with self._lock:
            if self._opened:
                return self._store
            try:
                # exist_ok: processes starting together race to create it (no exists() check)
                self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
                from ..runtime.store import check_directory, open_store

                why = check_directory(self.directory, self.shared)
                if why is not None:
                    self._store = None
                    self._writable = False
                    self._warned = True
                    self._stats["untrusted"] += 1
                    warnings.warn(
                        f"gpunb kernel cache: not using {self.directory}: it is {why}, so another "
                        "user could plant kernels in it. Compiled kernels are kept in memory only "
                        "for this process. Point GPUNB_CACHE_DIR at a directory only you can "
                        "write, or set GPUNB_CACHE_SHARED=1 if this is a deliberately shared "
                        "team cache (whoever can write it can run code in your process).",
                        CacheWarning, stacklevel=4)
                    self._opened = True
                    return None
                self._store = open_store(self.directory, self.max_bytes, self.shared)
            except OSError as e:
                self._store = None
                self._degrade("use the cache directory", e)
            self._opened = True
            return self._store

    # -- get / put ---------------------------------------------------------------------------

    def lookup(self, key: str, *, count_miss: bool = True) -> tuple[CacheEntry | None, str | None]:
        """Return ``(entry, level)``, level being ``'memory'``, ``'disk'`` or None for a miss.

        ``count_miss=False``: a second look after waiting for another builder (a miss then
        was already counted)."""
        with self._lock:
            entry = self._memory.get(key)
            if entry is not None:
                self._memory.move_to_end(key)
                now = self._last_used[key] = time.time()
                self._stats["memory_hits"] += 1
                touch = now - self._touched.get(key, 0.0) > _TOUCH_SECONDS
                if touch:
                    self._touched[key] = now
        if entry is not None:
            if touch and self._store is not None and self._writable:
                self._store.touch(key)      # LRU: the hottest kernels must not be evicted first
            return entry, "memory"
        store = self._open()
        if store is not None:
            from ..runtime.store import BadEntry

            try:
                blob = store.get(key)
            except BadEntry as e:
                blob = None
                self._drop_corrupt(store, key, e)
            except OSError as e:
                blob = None
                self._degrade("read from", e)
            if blob is not None:
                try:
                    meta, cubin = unpack_entry(blob)
                    validate_meta(meta, key)
                except CorruptEntry as e:
                    self._drop_corrupt(store, key, e)
                else:
                    entry = CacheEntry(key, cubin, meta)
                    with self._lock:
                        self._remember(entry)
                        self._touched[key] = time.time()
                        self._stats["disk_hits"] += 1
                    return entry, "disk"
        if count_miss:
            with self._lock:
                self._stats["misses"] += 1
        return None, None

    @contextlib.contextmanager
    def building(self, key: str):
        """Hold the build of ``key``: one thread of this process and one process sharing the
        directory at a time. Yields whether another builder held it first: then its entry is
        likely there now (look it up again with ``count_miss=False``). A holder that dies
        releases the lock."""
        with self._lock:
            slot = self._building.setdefault(key, [threading.Lock(), 0])
            slot[1] += 1
        try:
            waited = not slot[0].acquire(blocking=False)
            if waited:
                slot[0].acquire()
            try:
                store = self._open()
                if store is None or not self._writable:
                    yield waited
                else:
                    with store.lock(key) as other:
                        yield waited or other
            finally:
                slot[0].release()
        finally:
            with self._lock:
                slot[1] -= 1
                if slot[1] == 0:
                    self._building.pop(key, None)

    def count(self, counter: str) -> None:
        """Add one to a counter of :meth:`stats` (``stale``: a hit whose headers changed)."""
        with self._lock:
            self._stats[counter] += 1

    def get(self, key: str) -> CacheEntry | None:
        """The entry for ``key``, or None."""
        return self.lookup(key)[0]

    def put(self, key: str, cubin: bytes, meta: dict) -> CacheEntry:
        """Store a freshly compiled cubin. ``meta['compile_seconds']`` counts in the stats."""
        meta = dict(meta, key=key, schema=SCHEMA, size=len(cubin),
                    created=meta.get("created", time.time()))
        entry = CacheEntry(key, bytes(cubin), meta)
        with self._lock:
            self._remember(entry)
            self._stats["compiles"] += 1
            self._stats["compile_seconds"] += float(meta.get("compile_seconds", 0.0))
        store = self._open()
        if store is not None and self._writable:
            from ..runtime.store import BadEntry

            blob = pack_entry(meta, entry.cubin)
            try:
                if not store.put(key, blob):
                    self._warn_once("cap", f"an entry of {len(blob)} bytes is larger than the size "
                                    f"cap of {self.max_bytes} bytes (GPUNB_CACHE_MAX_BYTES), so it "
                                    "is kept in memory only; raise the cap to keep such kernels "
                                    "across sessions.")
            except BadEntry as e:      # this entry's path only; the rest of the cache works
                self._stats["disk_errors"] += 1
                logger.warning("gpunb kernel cache: cannot write the entry %s (%s); kept in memory",
                               e.path, e.reason)
            except OSError as e:
                self._degrade("write to", e)
            with self._lock:
                self._touched[key] = time.time()
        return entry

    def _remember(self, entry: CacheEntry) -> None:
        old = self._memory.pop(entry.key, None)
        if old is not None:
            self._memory_bytes -= len(old.cubin)
        self._memory[entry.key] = entry
        self._memory_bytes += len(entry.cubin)
        self._last_used[entry.key] = time.time()
        while self._memory_bytes > _MEMORY_CAP and len(self._memory) > 1:
            _, dropped = self._memory.popitem(last=False)
            self._memory_bytes -= len(dropped.cubin)

    def _drop_corrupt(self, store, key: str, error: Exception) -> None:
        untrusted = getattr(error, "untrusted", False)
        self._stats["untrusted" if untrusted else "corrupted"] += 1
        what = "an untrusted" if untrusted else "a corrupted"
        logger.warning("gpunb kernel cache: dropped %s entry %s (%s); it will be rebuilt",
                       what, key[:16], error)
        with contextlib.suppress(OSError):
            store.remove(key)

    # -- inspection --------------------------------------------------------------------------

    def _disk_records(self):
        from ..runtime.store import BadEntry

        for path in self._store.entry_paths():
            try:
                got = self._store.read_path(path, touch=False)
                if got is None:
                    continue      # evicted or replaced under us
                blob, st = got
                meta, _ = unpack_entry(blob)
                validate_meta(meta)
                if self._store.path(meta["key"]) != path:
                    raise CorruptEntry("filed under another key")
            except (OSError, CorruptEntry, BadEntry):
                yield None, path
                continue
            rec = {k: v for k, v in meta.items()}
            rec["bytes"] = st.st_size
            rec["last_used"] = max(st.st_atime, self._last_used.get(meta.get("key"), 0.0))
            yield rec, path

    def entries(self) -> list[dict]:
        """Metadata records of every entry: key, kernels, source, options, arch, nvrtc,
        compile_seconds, size (cubin bytes), bytes (on disk), created, last_used."""
        self._open()
        records: dict[str, dict] = {}
        if self._store is not None:
            for rec, _ in self._disk_records():
                if rec is not None:
                    records[rec["key"]] = rec
        with self._lock:
            for key, e in self._memory.items():
                if key not in records:
                    rec = dict(e.meta, bytes=len(e.cubin), last_used=self._last_used.get(key, 0.0),
                               memory_only=True)
                    records[key] = rec
        return sorted(records.values(), key=lambda r: r.get("last_used", 0.0), reverse=True)

    def find(self, text: str) -> list[dict]:
        """Entries whose key starts with ``text`` or that hold a kernel named ``text`` (its
        symbol, its C++ name or a name expression)."""
        from .signature import demangled_base

        return [r for r in self.entries()
                if r["key"].startswith(text) or text in r.get("name_expressions", {})
                or any(k == text or demangled_base(k) == text for k in r.get("kernels", ()))]

    def stats(self) -> dict:
        """Counters of this process plus the cache's current size.

        Keys: ``memory_hits``, ``disk_hits``, ``misses``, ``compiles``, ``compile_seconds``,
        ``corrupted``, ``disk_errors``, ``untrusted``, ``stale``, ``entries``, ``bytes``,
        ``max_bytes``, ``directory``, ``memory_only``, ``orphans`` and ``orphan_bytes`` (temp
        files of writers that died; swept on the next open, eviction or clear), ``swept`` and
        ``swept_bytes`` (those this process removed).
        """
        self._open()
        n = size = orphans = orphan_bytes = 0
        swept = [0, 0]
        if self._store is not None:
            from ..runtime.store import entry_files

            for path in entry_files(self.directory):
                with contextlib.suppress(OSError):
                    size += path.stat().st_size
                    n += 1
            orphans, orphan_bytes = self._store.orphans()
            swept = self._store.swept
        with self._lock:
            if self._store is None or not self._writable:
                n = max(n, len(self._memory))
                size = max(size, self._memory_bytes)
            out = dict(self._stats)
        out.update(entries=n, bytes=size, max_bytes=self.max_bytes, directory=str(self.directory),
                   memory_only=self.memory_only, orphans=orphans, orphan_bytes=orphan_bytes,
                   swept=swept[0], swept_bytes=swept[1])
        return out

    def clear(self) -> int:
        """Remove every entry (and crash leftovers), on disk and in memory. Returns how many
        disk entries really went; warns (CacheWarning) about those that could not go."""
        store = self._open()
        removed = 0
        if store is not None:
            try:
                removed, failed = store.clear()
            except OSError as e:
                failed = []
                self._degrade("clear", e)
            if failed:
                path, why = failed[0]
                warnings.warn(f"gpunb kernel cache: {len(failed)} entr"
                              f"{'y' if len(failed) == 1 else 'ies'} in {self.directory} could not "
                              f"be removed ({why}: {path})", CacheWarning, stacklevel=2)
        with self._lock:
            self._memory.clear()
            self._memory_bytes = 0
            self._last_used.clear()
        return removed

    def __repr__(self) -> str:
        return f"<gpunb.KernelCache {str(self.directory)!r} max_bytes={self.max_bytes}>"


_default: KernelCache | None = None
_default_lock = threading.Lock()


def kernel_cache() -> KernelCache:
    """The process's kernel cache (configured from the environment on first call)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = KernelCache()
    return _default


def set_kernel_cache(cache: KernelCache | None) -> KernelCache | None:
    """Replace the process's kernel cache (None: rebuild from the environment on next use).
    Returns the previous one."""
    global _default
    with _default_lock:
        old, _default = _default, cache
    return old

