"""The kernel cache: compiled cubins with their metadata, in memory and on disk.

A small class with get/put. The disk layer is cuda.core's ``FileStreamProgramCache`` (atomic
writes, multi-process safety, size cap with LRU eviction); gpunb adds an envelope around each
cubin: a magic tag, a SHA-256 checksum and a JSON metadata record, so that a torn or corrupted
entry is detected, dropped and rebuilt, never loaded. An in-memory layer in front answers
repeats within a process without reading a file. If the directory cannot be written the cache
keeps new entries in memory only and warns once.
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

SCHEMA = 1                      # bump when the key recipe or the envelope changes
_MAGIC = b"GPUNBKC1"
_HEAD = len(_MAGIC) + 32 + 4    # magic, sha256 of the rest, metadata length
_MEMORY_CAP = 256 * 1024**2


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

    Nothing touches the disk until the first lookup.
    """

    def __init__(self, directory=None, max_bytes: int | None = None):
        config = Config.from_env() if directory is None or max_bytes is None else None
        self.directory = Path(directory).expanduser() if directory is not None else config.cache_dir
        self.max_bytes = int(max_bytes) if max_bytes is not None else config.cache_max_bytes
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
        self.reset_stats()

    # -- state -----------------------------------------------------------------------------

    @property
    def memory_only(self) -> bool:
        """True once the directory proved unusable: new entries then live in memory only."""
        self._open()
        return self._store is None or not self._writable

    def reset_stats(self) -> None:
        self._stats = dict(memory_hits=0, disk_hits=0, misses=0, compiles=0,
                           compile_seconds=0.0, corrupted=0, disk_errors=0)

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

    def _open(self):
        if self._opened:
            return self._store
        with self._lock:
            if self._opened:
                return self._store
            try:
                # exist_ok: processes starting together race to create it (no exists() check)
                self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
                from ..runtime.store import open_store

                self._store = open_store(self.directory, self.max_bytes)
            except OSError as e:
                self._store = None
                self._degrade("use the cache directory", e)
            except ImportError as e:   # a cuda-core older than 1.2 has no FileStreamProgramCache
                self._store = None
                self._degrade("open (cuda-core >= 1.2.2 is needed for the disk cache)",
                              OSError(str(e)))
            self._opened = True
            return self._store

    # -- get / put ---------------------------------------------------------------------------

    def lookup(self, key: str) -> tuple[CacheEntry | None, str | None]:
        """Return ``(entry, level)``, level being ``'memory'``, ``'disk'`` or None for a miss."""
        with self._lock:
            entry = self._memory.get(key)
            if entry is not None:
                self._memory.move_to_end(key)
                self._last_used[key] = time.time()
                self._stats["memory_hits"] += 1
                return entry, "memory"
        store = self._open()
        if store is not None:
            try:
                blob = store.get(key)
            except OSError as e:
                blob = None
                self._degrade("read from", e)
            if blob is not None:
                try:
                    meta, cubin = unpack_entry(blob)
                    if meta.get("key") != key:
                        raise CorruptEntry("entry holds another key")
                except CorruptEntry as e:
                    self._drop_corrupt(store, key, e)
                else:
                    entry = CacheEntry(key, cubin, meta)
                    with self._lock:
                        self._remember(entry)
                        self._stats["disk_hits"] += 1
                    return entry, "disk"
        with self._lock:
            self._stats["misses"] += 1
        return None, None

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
            try:
                store[key] = pack_entry(meta, entry.cubin)
            except OSError as e:
                self._degrade("write to", e)
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
        self._stats["corrupted"] += 1
        logger.warning("gpunb kernel cache: dropped a corrupted entry %s (%s); it will be rebuilt",
                       key[:16], error)
        with contextlib.suppress(KeyError, OSError):
            del store[key]

    # -- inspection --------------------------------------------------------------------------

    def _disk_records(self):
        from ..runtime.store import entry_files

        for path in entry_files(self.directory):
            try:
                st = path.stat()
                meta, _ = unpack_entry(path.read_bytes())
            except FileNotFoundError:
                continue          # evicted or replaced under us
            except (OSError, CorruptEntry):
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
        ``corrupted``, ``disk_errors``, ``entries``, ``bytes``, ``max_bytes``, ``directory``,
        ``memory_only``.
        """
        self._open()
        n = size = 0
        if self._store is not None:
            from ..runtime.store import entry_files

            for path in entry_files(self.directory):
                with contextlib.suppress(OSError):
                    size += path.stat().st_size
                    n += 1
        with self._lock:
            if self._store is None or not self._writable:
                n = max(n, len(self._memory))
                size = max(size, self._memory_bytes)
            out = dict(self._stats)
        out.update(entries=n, bytes=size, max_bytes=self.max_bytes, directory=str(self.directory),
                   memory_only=self.memory_only)
        return out

    def clear(self) -> int:
        """Remove every entry, on disk and in memory. Returns how many disk entries went."""
        store = self._open()
        removed = 0
        if store is not None:
            from ..runtime.store import entry_files

            removed = sum(1 for _ in entry_files(self.directory))
            try:
                store.clear()
            except OSError as e:
                self._degrade("clear", e)
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

