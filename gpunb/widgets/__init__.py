"""ipywidgets views over gpunb's plain state and events, each with a readable text form.

- :class:`CompileProgress`: kernels compiling in the running cell (a bar), cache hits (a small
  badge), then a one-line summary; a view over :class:`ActivityState`.
- :class:`SlowBuildBanner`: the notice shown while a long first-time build runs.
- :class:`KernelViewer`: a kernel's highlighted source with PTX and resources tabs.
- :class:`CacheStatusPanel`: the kernel cache's status with a refresh button.
- :func:`install` / :func:`uninstall`: the IPython hook that shows compile events per cell
  (``%load_ext gpunb`` calls them); :func:`quiet_cell` keeps no summary of the running cell.

Every view is a plain object whose ``widget`` (stock ipywidgets) is built on first display;
``text()``, ``repr`` and the displayed ``text/plain`` are readable in terminals, nbconvert and
nbval, and nothing needs a browser. ipywidgets is imported only when a widget is built.
"""

from .banner import SlowBuildBanner
from .display import CellDisplay, install, installed, quiet_cell, uninstall
from .panel import CacheStatusPanel
from .progress import CompileProgress
from .state import ActivityState
from .viewer import KernelViewer

__all__ = ["ActivityState", "CacheStatusPanel", "CellDisplay", "CompileProgress", "KernelViewer",
           "SlowBuildBanner", "install", "installed", "quiet_cell", "uninstall"]
