"""Settings read from the environment, validated once into a frozen dataclass.

Reading the settings touches neither the disk nor the GPU: the cache directory is only a path
here; the cache creates it on first use.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_BYTES = 2 * 1024**3
DEFAULT_SLOW_COMPILE_SECONDS = 2.0
DEFAULT_STD = "c++17"
_OFF_WORDS = {"off", "never", "none", "no", "false"}
_ON_WORDS = {"1", "on", "yes", "true"}


def _default_cache_dir() -> Path:
    import platformdirs  # small and pure Python; imported here so a bare import stays minimal

    return Path(platformdirs.user_cache_dir("gpunb", appauthor=False)) / "kernels"


def _parse_bytes(name: str, text: str) -> int:
    units = {"k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
    s = text.strip().lower().removesuffix("ib").removesuffix("b")
    scale = 1
    if s and s[-1] in units:
        scale, s = units[s[-1]], s[:-1]
    try:
        value = int(float(s) * scale)
    except (ValueError, OverflowError):
        raise ValueError(f"{name}={text!r} is not a size in bytes (examples: 2147483648, 512M, 2G)") from None
    if value <= 0:
        raise ValueError(f"{name}={text!r}: the cache size cap must be positive")
    return value


@dataclass(frozen=True)
class Config:
    """gpunb's settings.

    Parameters
    ----------
    cache_dir : pathlib.Path
        Directory of the persistent kernel cache (``GPUNB_CACHE_DIR``).
    cache_max_bytes : int
        Size cap of the disk cache; least recently used entries go first
        (``GPUNB_CACHE_MAX_BYTES``, default 2 GiB; accepts suffixes K, M, G).
    slow_compile_seconds : float or None
        Compiling that runs longer than this prints one warning (``GPUNB_SLOW_COMPILE_SECONDS``,
        default 2). ``None`` (``off``, or ``0``) silences it.
    cache_shared : bool
        ``GPUNB_CACHE_SHARED=1``: load entries from a cache directory (and entries) owned by
        other users or writable by the group, a deliberately shared team cache. Off by
        default: then a directory or entry that another user owns or can write is never
        loaded from, since whoever can write it can make this process run their code.
    """

    cache_dir: Path
    cache_max_bytes: int = DEFAULT_MAX_BYTES
    slow_compile_seconds: float | None = DEFAULT_SLOW_COMPILE_SECONDS
    cache_shared: bool = False

    def __post_init__(self):
        # absolute once, here: a later chdir (a notebook's %cd) must not move the cache
        object.__setattr__(self, "cache_dir", Path(self.cache_dir).expanduser().absolute())
        if not isinstance(self.cache_shared, bool):
            raise ValueError(f"cache_shared must be a bool, got {self.cache_shared!r}")
        if not isinstance(self.cache_max_bytes, int) or self.cache_max_bytes <= 0:
            raise ValueError(f"cache_max_bytes must be a positive int, got {self.cache_max_bytes!r}")
        s = self.slow_compile_seconds
        if s is not None and (not isinstance(s, (int, float)) or not s >= 0):
            raise ValueError(f"slow_compile_seconds must be >= 0 or None, got {s!r}")
        if s == 0 or s == math.inf:
            object.__setattr__(self, "slow_compile_seconds", None)

    @classmethod
    def from_env(cls, environ=None) -> "Config":
        env = os.environ if environ is None else environ
        cache_dir = env.get("GPUNB_CACHE_DIR") or _default_cache_dir()
        max_bytes = DEFAULT_MAX_BYTES
        if env.get("GPUNB_CACHE_MAX_BYTES"):
            max_bytes = _parse_bytes("GPUNB_CACHE_MAX_BYTES", env["GPUNB_CACHE_MAX_BYTES"])
        slow: float | None = DEFAULT_SLOW_COMPILE_SECONDS
        text = env.get("GPUNB_SLOW_COMPILE_SECONDS")
        if text:
            if text.strip().lower() in _OFF_WORDS:
                slow = None
            else:
                try:
                    slow = float(text)
                except ValueError:
                    slow = math.nan
                if math.isnan(slow):
                    raise ValueError(
                        f"GPUNB_SLOW_COMPILE_SECONDS={text!r} is not a number of seconds or 'off'")
                if math.isinf(slow):
                    slow = None
                elif slow < 0:
                    raise ValueError(f"GPUNB_SLOW_COMPILE_SECONDS={text!r} must not be negative")
        shared = False
        text = env.get("GPUNB_CACHE_SHARED")
        if text:
            word = text.strip().lower()
            if word not in _ON_WORDS | _OFF_WORDS | {"0"}:
                raise ValueError(f"GPUNB_CACHE_SHARED={text!r}: use 1 (a deliberately shared "
                                 "cache directory) or 0")
            shared = word in _ON_WORDS
        return cls(Path(cache_dir), max_bytes, slow, shared)
