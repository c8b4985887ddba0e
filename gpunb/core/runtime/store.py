"""The disk store under the kernel cache: one file per entry, written atomically.

Layout (that of cuda.core's ``FileStreamProgramCache``, which this replaces, so existing caches
stay readable): ``entries/<2 hex>/<62 hex>`` (the SHA-256 of the key), ``tmp/`` for writes in
flight, and ``locks/<64 hex>`` for the per-key build locks.

What it adds over a plain file cache, each for a failure seen in practice:

- Every entry is opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked with ``fstat`` on the open
  descriptor: only a regular file is read (a FIFO never blocks a compile, a directory never
  disables the cache), and, unless the cache is deliberately shared, only a file owned by this
  user that group and others cannot write (another user's planted entry is never loaded).
  Such an entry is a :class:`BadEntry`: the cache drops it and rebuilds that one kernel.
- A writer holds an exclusive ``flock`` on its temp file until the rename, so a temp file
  nobody holds a lock on is a crashed writer's orphan: swept on open, before eviction, and by
  ``clear``, and never one that a live process is still writing.
- Reads and :meth:`Store.touch` set the access time explicitly (``relatime`` and ``noatime``
  mounts would not), and eviction removes the least recently used entries first.
- :meth:`Store.lock` is a per-key ``flock``: one process compiles a kernel while the others
  wait and then read its entry; a holder that dies releases it with its last descriptor.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import secrets
import shutil
import stat
import threading
import time
from pathlib import Path

_ENTRIES, _TMP, _LOCKS = "entries", "tmp", "locks"
_OPEN_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
_UNSAFE_MODE = 0o022        # group- or other-writable
LOCK_TIMEOUT = 600.0        # seconds a build waits for another process's compile of its kernel


class BadEntry(Exception):
    """One entry cannot be used (not a regular file, unreadable, untrusted): drop and rebuild
    it; the rest of the cache is fine. ``untrusted`` marks the ownership/mode check."""

    def __init__(self, path: Path, reason: str, untrusted: bool = False):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason, self.untrusted = path, reason, untrusted


def untrusted_reason(st: os.stat_result, shared: bool, euid: int | None = None) -> str | None:
    """Why a file or directory with status ``st`` must not be trusted, or None.

    Like ssh with ``~/.ssh``: it must be owned by this user (or root) and not writable by group
    or others. ``shared`` (``GPUNB_CACHE_SHARED=1``) accepts any owner and group-writable modes,
    and still refuses world-writable ones.
    """
    euid = os.geteuid() if euid is None else euid
    if shared:
        return "writable by every user" if st.st_mode & 0o002 else None
    if st.st_uid not in (euid, 0):
        return f"owned by another user (uid {st.st_uid})"
    if st.st_mode & _UNSAFE_MODE:
        return f"writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def check_directory(directory: Path, shared: bool) -> str | None:
    """Why ``directory`` (which exists) is unsafe to load kernels from, or None.

    Its ancestors count too: whoever can rename a parent can swap the directory. A parent that
    is world-writable with the sticky bit (``/tmp``) only lets its owners rename.
    """
    directory = Path(directory)
    st = os.stat(directory)
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    why = untrusted_reason(st, shared)
    if why is not None:
        return why
    for parent in directory.parents:
        try:
            pst = os.stat(parent)
        except OSError:
            continue
        if pst.st_mode & stat.S_ISVTX or shared:
            continue
        if pst.st_uid not in (os.geteuid(), 0) or pst.st_mode & 0o002:
            return f"its parent {parent} can be changed by another user"
    return None


def _key_name(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _remove_any(path: Path) -> None:
    """Remove whatever is at ``path`` (a directory tree too); never follows a symlink."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


class Store:
    """Entries on disk under ``directory``; see the module docstring."""

    def __init__(self, directory: Path, max_bytes: int, shared: bool = False):
        self.root = Path(directory)
        self.max_bytes = max_bytes
        self.shared = shared
        self._entries = self.root / _ENTRIES
        self._tmp = self.root / _TMP
        self._locks = self.root / _LOCKS
        self._dir_mode = 0o2770 if shared else 0o700
        self._file_mode = 0o640 if shared else 0o600
        for d in (self._entries, self._tmp, self._locks):
            d.mkdir(exist_ok=True, mode=self._dir_mode)
        self._euid = os.geteuid()
        self._size_lock = threading.Lock()
        self.swept = [0, 0]          # crash leftovers removed by this store: count, bytes
        self.sweep_orphans()
        self._size: int | None = None    # walked on the first write: a reader never pays for it

    # -- paths -------------------------------------------------------------------------------

    def path(self, key: str) -> Path:
        h = _key_name(key)
        return self._entries / h[:2] / h[2:]

    def entry_paths(self):
        """Every entry path (regular or not: ``clear`` must see a FIFO or directory too)."""
        try:
            shards = list(os.scandir(self._entries))
        except FileNotFoundError:
            return
        for shard in shards:
            if not shard.is_dir(follow_symlinks=False):
                continue
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                with os.scandir(shard.path) as it:
                    yield from (Path(e.path) for e in it)

    # -- read / write ------------------------------------------------------------------------

    def read_path(self, path: Path, touch: bool = True) -> tuple[bytes, os.stat_result] | None:
        """The bytes of the entry file ``path``, or None if there is none. Raises BadEntry
        for an entry that cannot be used, OSError for a failure of the disk itself.
        ``touch=False`` (listing) leaves its recency alone."""
        try:
            fd = os.open(path, _OPEN_READ)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.EACCES, errno.EPERM, errno.ENXIO, errno.ENOTDIR,
                           errno.EISDIR):
                raise BadEntry(path, e.strerror or str(e)) from None
            raise
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
                raise BadEntry(path, kind)
            why = untrusted_reason(st, self.shared, self._euid)
            if why is not None:
                raise BadEntry(path, why, untrusted=True)
            chunks, left = [], st.st_size
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 24))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            if touch:
                with contextlib.suppress(OSError):   # recency for eviction (best effort)
                    os.utime(fd, ns=(time.time_ns(), st.st_mtime_ns))
            return b"".join(chunks), st
        finally:
            os.close(fd)

    def get(self, key: str) -> bytes | None:
        got = self.read_path(self.path(key))
        return None if got is None else got[0]

    def put(self, key: str, data: bytes) -> bool:
        """Write the entry of ``key`` atomically. False when it is larger than the size cap
        (it is then not written). Raises BadEntry when something that cannot be replaced sits
        at the entry's path, OSError when the disk fails."""
        if len(data) > self.max_bytes:
            return False
        target = self.path(key)
        target.parent.mkdir(exist_ok=True, mode=self._dir_mode)
        self._tmp.mkdir(exist_ok=True, mode=self._dir_mode)
        for _ in range(3):
            tmp = self._tmp / f"{os.getpid()}.{secrets.token_hex(6)}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         self._file_mode)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                if os.fstat(fd).st_nlink == 0:      # swept between create and lock: start over
                    continue
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
                try:
                    os.replace(tmp, target)
                except FileNotFoundError:
                    continue                          # swept while we wrote: start over
                except (IsADirectoryError, NotADirectoryError, PermissionError) as e:
                    # a directory (or a file we may not replace) where the entry belongs
                    try:
                        _remove_any(target)
                        os.replace(tmp, target)
                    except OSError:
                        raise BadEntry(target, e.strerror or str(e)) from None
                break
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            finally:
                os.close(fd)
        with self._size_lock:
            if self._size is None:
                self._size = self._total_size()
            else:
                self._size += len(data)
            over = self._size > self.max_bytes
        if over:
            self.evict()
        return True

    def remove(self, key_or_path) -> bool:
        path = key_or_path if isinstance(key_or_path, Path) else self.path(key_or_path)
        try:
            _remove_any(path)
        except FileNotFoundError:
            return False
        return True

    def touch(self, key: str) -> None:
        """Mark the entry of ``key`` as used now (its access time), keeping its mtime."""
        with contextlib.suppress(OSError):
            fd = os.open(self.path(key), _OPEN_READ)
            try:
                st = os.fstat(fd)
                if stat.S_ISREG(st.st_mode) and st.st_uid == self._euid:
                    os.utime(fd, ns=(time.time_ns(), st.st_mtime_ns))
            finally:
                os.close(fd)

    # -- size and eviction -------------------------------------------------------------------

    def _total_size(self) -> int:
        total = 0
        for p in self.entry_paths():
            with contextlib.suppress(OSError):
                total += os.lstat(p).st_size
        return total

    def evict(self) -> int:
        """Remove least recently used entries until the store fits its cap. Returns how many."""
        self.sweep_orphans()
        found = []
        for p in self.entry_paths():
            with contextlib.suppress(OSError):
                st = os.lstat(p)
                found.append((st.st_atime, st.st_size, p))
        total = sum(f[1] for f in found)
        removed = 0
        for _, size, p in sorted(found):
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                _remove_any(p)
                removed += 1
            total -= size
        with self._size_lock:
            self._size = total
        return removed

    # -- crash leftovers ---------------------------------------------------------------------

    def _tmp_files(self):
        try:
            with os.scandir(self._tmp) as it:
                return [Path(e.path) for e in it]
        except (FileNotFoundError, NotADirectoryError):
            return []

    def _orphan(self, path: Path):
        """(fd holding the lock, size) if ``path`` is a temp file no live writer holds, else
        None. The caller closes the fd (releasing the lock) after removing the file."""
        try:
            fd = os.open(path, _OPEN_READ)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd, st.st_size
        except OSError:       # BlockingIOError: a live writer holds it
            os.close(fd)
            return None

    def orphans(self) -> tuple[int, int]:
        """(count, bytes) of temp files left by writers that died."""
        n = size = 0
        for p in self._tmp_files():
            got = self._orphan(p)
            if got is not None:
                n, size = n + 1, size + got[1]
                os.close(got[0])
        return n, size

    def sweep_orphans(self) -> int:
        """Remove temp files of writers that died (never one a live writer holds)."""
        removed = 0
        for p in self._tmp_files():
            got = self._orphan(p)
            if got is None:
                continue
            try:
                _remove_any(p)
                removed += 1
                self.swept[0] += 1
                self.swept[1] += got[1]
            except OSError:
                pass
            finally:
                os.close(got[0])
        return removed

    # -- per-key build lock ------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, key: str, timeout: float | None = None):
        """Hold the build lock of ``key`` (across processes). Yields whether another process
        held it first (then its entry may be there now). If the lock cannot be taken (no lock
        directory, or ``timeout`` passed) the caller builds anyway."""
        timeout = LOCK_TIMEOUT if timeout is None else timeout
        try:
            self._locks.mkdir(exist_ok=True, mode=self._dir_mode)
            fd = os.open(self._locks / _key_name(key),
                         os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o660 if self.shared else 0o600)
        except OSError:
            yield False
            return
        try:
            deadline, pause, waited = time.monotonic() + timeout, 0.002, False
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    waited = True
                    if time.monotonic() > deadline:
                        break
                    time.sleep(pause)
                    pause = min(pause * 2, 0.05)
                except OSError:
                    break
            yield waited
        finally:
            os.close(fd)        # releases the lock

    # -- clear -------------------------------------------------------------------------------

    def clear(self) -> tuple[int, list[tuple[Path, str]]]:
        """Remove every entry, orphan and lock file. Returns (entries removed, [(path, why)]
        of those that could not be removed)."""
        removed, failed = 0, []
        for p in list(self.entry_paths()):
            try:
                _remove_any(p)
                removed += 1
            except FileNotFoundError:
                pass
            except OSError as e:
                failed.append((p, e.strerror or str(e)))
        self.sweep_orphans()           # a temp file a live writer holds stays
        for p in self._lock_files():   # at worst a racing build compiles once more
            with contextlib.suppress(OSError):
                _remove_any(p)
        with contextlib.suppress(OSError):
            for shard in os.scandir(self._entries):
                with contextlib.suppress(OSError):
                    os.rmdir(shard.path)
        with self._size_lock:
            self._size = self._total_size()
        return removed, failed

    def _lock_files(self):
        try:
            with os.scandir(self._locks) as it:
                return [Path(e.path) for e in it]
        except (FileNotFoundError, NotADirectoryError):
            return []


def open_store(directory: Path, max_bytes: int, shared: bool = False) -> Store:
    return Store(directory, max_bytes, shared)


def entry_files(directory: Path):
    """Every regular entry file in a store directory (``entries/<2 hex>/<rest>``)."""
    root = Path(directory) / _ENTRIES
    if not root.is_dir():
        return
    for shard in root.iterdir():
        if shard.is_dir() and not shard.is_symlink():
            with contextlib.suppress(OSError):
                yield from (p for p in shard.iterdir() if p.is_file() and not p.is_symlink())
