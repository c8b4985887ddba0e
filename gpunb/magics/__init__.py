"""IPython magics (``%%cuda``, ``%gpucache``, ``%gputimeit``): thin layers over gpunb's core.

``%load_ext gpunb`` calls :func:`load_ipython_extension`: it registers ``%%cuda``
(:class:`gpunb.magics.cuda.CudaMagics`), ``%gputimeit``
(:class:`gpunb.magics.timing.TimingMagics`) and ``%gpucache``
(:class:`gpunb.magics.gpucache.GpuCacheMagics`), and installs the notebook display of compile
events (:func:`gpunb.widgets.install`). ``%unload_ext gpunb`` undoes all of it, and
``%reload_ext gpunb`` does both, so nothing is ever registered twice. IPython has no way to
unregister magics, so :func:`unload_ipython_extension` removes our entries from the shell's
magics manager itself.

Nothing here imports IPython at module level: ``import gpunb`` stays cheap.
"""

from __future__ import annotations

_loaded: dict[int, tuple[object, list, object]] = {}   # id(shell) -> (shell, magics, uninstall)


def _optional_magics(shell) -> list:
    """Magics objects of the parts that are installed (``%gpucache`` may be absent)."""
    found = []
    try:
        from .gpucache import GpuCacheMagics
    except (ImportError, AttributeError):
        return found
    found.append(GpuCacheMagics(shell))
    return found


def load_ipython_extension(ip) -> None:
    """Register gpunb's magics and notebook displays with the shell ``ip``.

    Loading twice replaces the first registration rather than adding a second one.
    """
    from .cuda import CudaMagics
    from .timing import TimingMagics

    unload_ipython_extension(ip)
    magics = [CudaMagics(ip), *_optional_magics(ip), TimingMagics(ip)]
    for m in magics:
        ip.register_magics(m)
    try:
        from ..widgets import install, uninstall
    except (ImportError, AttributeError):   # the widgets are optional here
        install = uninstall = None
    # recorded before install() runs, so that an unload undoes whatever a failing install left
    _loaded[id(ip)] = (ip, magics, uninstall)
    if install is not None:
        install(ip)


def unload_ipython_extension(ip) -> None:
    """Remove what :func:`load_ipython_extension` registered with ``ip`` (nothing if it
    registered nothing)."""
    state = _loaded.pop(id(ip), None)
    if state is None or state[0] is not ip:
        return
    _, magics, uninstall = state
    manager = ip.magics_manager
    for m in magics:
        for kind in ("line", "cell"):
            table = manager.magics[kind]
            for name, fn in list(table.items()):
                if getattr(fn, "__self__", None) is m:
                    del table[name]
        if manager.registry.get(type(m).__name__) is m:
            del manager.registry[type(m).__name__]
        close = getattr(m, "close", None)
        if close is not None:
            close()
    if uninstall is not None:
        uninstall(ip)


def registered(ip) -> list:
    """The magics objects gpunb has registered with ``ip`` (empty when not loaded)."""
    state = _loaded.get(id(ip))
    return list(state[1]) if state is not None and state[0] is ip else []
