"""The disk store under the kernel cache: cuda.core's ``FileStreamProgramCache``.

It gives atomic writes (temp file, fsync, ``os.replace``), sharded SHA-256 file names, safe
concurrent use by many processes, and a size cap with least-recently-used eviction (by atime,
which it refreshes on every read). gpunb wraps it for checksums, metadata, stats and events.
"""

from __future__ import annotations

from pathlib import Path


def open_store(directory: Path, max_bytes: int | None):
    from cuda.core.utils import FileStreamProgramCache

    return FileStreamProgramCache(directory, max_size_bytes=max_bytes)


def entry_files(directory: Path):
    """Every entry file in a store directory (the store's layout: ``entries/<2 hex>/<rest>``)."""
    root = Path(directory) / "entries"
    if not root.is_dir():
        return
    for shard in root.iterdir():
        if shard.is_dir():
            yield from (p for p in shard.iterdir() if p.is_file())
