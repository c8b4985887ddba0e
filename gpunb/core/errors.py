"""Exception types of gpunb.

They live in a module that imports no other gpunb module and nothing heavy, so that ``import
gpunb`` stays cheap and every layer (compiler, cache, runtime, magics) can raise or catch them.
A compile error renders itself here too (the log's error locations marked in the source).
"""

from __future__ import annotations

import re


class GPUNBError(Exception):
    """Base class of gpunb's own errors."""


class GPUUnavailableError(GPUNBError, RuntimeError):
    """No usable GPU: no driver library, no device, or a driver too old for this NVRTC.

    Compiling kernels for a named architecture and the kernel cache keep working without a GPU;
    only launching needs one.
    """

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(
            f"No usable CUDA GPU: {reason}\n"
            "Compiling kernels for a named architecture (for example arch='sm_90') and the "
            "kernel cache still work without a GPU; launching a kernel needs one."
        )

    def _render_traceback_(self):
        # IPython calls this instead of printing a traceback: the cause is no GPU, not a line
        # of code, so the cell shows the message alone (as CompileError shows its log).
        return [f"{type(self).__name__}: {line}" if i == 0 else line
                for i, line in enumerate(str(self).splitlines())]


class OutOfMemoryError(GPUNBError, MemoryError):
    """The GPU (or the pool's limit, ``MemoryPool.set_limit``) has no room for an allocation
    (CuPy's ``cupy.cuda.memory.OutOfMemoryError``; a MemoryError)."""


class CompileError(GPUNBError):
    """NVRTC rejected a program.

    Attributes
    ----------
    log : str
        The NVRTC log, unchanged.
    options : tuple of str
        The options NVRTC was given.
    source : str
        The program's source.
    name : str
        The program's file name as NVRTC saw it (it prefixes every log line).
    line_offset : int
        Added to NVRTC's line numbers when the source is shown, so that a ``%%cuda`` cell can
        report its own line numbers.
    """

    def __init__(self, log: str, options, source: str, name: str = "kernel.cu",
                 line_offset: int = 0):
        self.log = log.rstrip("\x00").rstrip()
        self.options = tuple(options)
        self.source = source
        self.name = name
        self.line_offset = line_offset
        super().__init__(self.render())

    def error_lines(self) -> list[tuple[int, int | None]]:
        """The (line, column) pairs that the log reports as errors, in source numbering."""
        return parse_log_locations(self.log, self.name, self.source)

    def render(self) -> str:
        """The log, the options and the offending source lines marked with a caret."""
        return render_compile_error(self)

    def _render_traceback_(self):
        # IPython calls this instead of printing a long traceback: the cell shows the log only.
        return self.render().splitlines()


class CacheWarning(UserWarning):
    """The kernel cache could not use its directory and keeps entries in memory only."""


class KernelArgumentError(GPUNBError, TypeError):
    """Arguments given to a kernel do not match its signature."""


def warn(message: str, category=RuntimeWarning) -> None:
    """``warnings.warn`` attributed to the user's line: the first caller outside gpunb, however
    many gpunb frames (the public function, the engine) lie between."""
    import sys
    import warnings

    frame, level = sys._getframe(1), 2     # level 1 is this function
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "gpunb":
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


# -- NVRTC logs: where the errors are, and the message that marks them in the source -------------

def _loc_re(name: str):
    return re.compile(rf"^{re.escape(name)}\((\d+)\): (?:catastrophic )?(error|warning)")


def parse_log_locations(log: str, name: str, source: str) -> list[tuple[int, int | None]]:
    """(line, column) of each error in an NVRTC log; column from NVRTC's caret line if shown."""
    lines = log.splitlines()
    rx = _loc_re(name)
    found = []
    for i, text in enumerate(lines):
        m = rx.match(text)
        if not m or m.group(2) != "error":
            continue
        col = None
        if i + 2 < len(lines) and lines[i + 2].strip() == "^":
            col = lines[i + 2].index("^") - 2  # NVRTC indents the echoed line by two spaces
            col = col if col >= 0 else None
        found.append((int(m.group(1)), col))
    return found


def render_compile_error(err: CompileError, context: int = 2) -> str:
    src = err.source.splitlines()
    locs = parse_log_locations(err.log, err.name, err.source)
    n_err = len(locs)
    head = (f"NVRTC could not compile {err.name}"
            + (f" ({n_err} error{'' if n_err == 1 else 's'})" if n_err else ""))
    out = [head, "", err.log, "", "options: " + " ".join(err.options)]
    if locs and src:
        out += ["", "source:"]
        width = len(str(len(src) + err.line_offset))
        shown: set[int] = set()
        marks = {line: col for line, col in locs}
        wanted = sorted({k for line, _ in locs
                         for k in range(max(1, line - context), min(len(src), line + context) + 1)})
        prev = None
        for k in wanted:
            if k in shown:
                continue
            if prev is not None and k != prev + 1:
                out.append(" " * (width + 4) + "...")
            shown.add(k)
            mark = ">" if k in marks else " "
            out.append(f"{mark} {k + err.line_offset:>{width}} | {src[k - 1]}")
            if k in marks and marks[k] is not None:
                pad = "".join(c if c == "\t" else " " for c in src[k - 1][:marks[k]])
                out.append(" " * (width + 3) + "| " + pad + "^")
            prev = k
    return "\n".join(out)
