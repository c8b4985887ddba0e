"""Process-wide memo tables, each resettable: :func:`clear_all` empties every one of them.

gpunb remembers answers that are slow to get and never change within a process (NumPy's
type resolution, parsed dtypes, validated launch dimensions, parsed kernel signatures). Each
such table is made here with :func:`table`, so that tests and :func:`gpunb.core.reset` can
start from nothing. Per-device state (loaded kernels, pools, streams) lives in the device
context instead (:class:`gpunb.core.runtime.driver.DeviceContext`).
"""

from __future__ import annotations

_clearers: dict[str, object] = {}     # name -> a callable that empties the table


def table(name: str, factory=dict):
    """A new memo table (a ``dict`` unless ``factory`` says otherwise), registered under
    ``name`` for :func:`clear_all` (a module reloaded replaces its old table)."""
    t = factory()
    _clearers[name] = t.clear
    return t


def names() -> list[str]:
    return sorted(_clearers)


def clear_all() -> None:
    """Empty every registered memo table."""
    for clear in _clearers.values():
        clear()
