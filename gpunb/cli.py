"""``python -m gpunb``: info, cache status|list|clear|warm, demo."""

from __future__ import annotations

import argparse
import json
import sys
import warnings


def _progress_printer(stream=sys.stderr):
    """Print warm progress: one updating line on a terminal, a line per module elsewhere."""
    from .core import events

    tty = stream.isatty()

    def on_event(ev):
        if isinstance(ev, events.BatchStarted):
            stream.write(f"warming {ev.what}\n")
        elif isinstance(ev, events.BatchProgress):
            state = "cached" if ev.cached else ("compiled" if ev.ok else "FAILED")
            text = f"[{ev.done}/{ev.total}] {ev.name}: {state}"
            stream.write(("\r\x1b[K" + text) if tty else text + "\n")
        elif isinstance(ev, events.BatchFinished):
            stream.write(("\n" if tty else "") + f"done in {ev.seconds:.1f} s"
                         + (f", {ev.failed} failed" if ev.failed else "") + "\n")
        stream.flush()

    return on_event


def _count(minimum: int):
    """argparse type: an int of at least ``minimum`` (as the %gpucache magic checks)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = "count"
    return parse


def _show_warning(message, category, filename, lineno, file=None, line=None):
    # a CacheWarning is addressed to the user: one "gpunb: warning:" line, no source location
    from .core.errors import CacheWarning

    if issubclass(category, CacheWarning):
        text = str(message).removeprefix("gpunb kernel cache: ")
        print(f"gpunb: warning: kernel cache: {text}", file=file or sys.stderr)
    else:
        _default_show_warning(message, category, filename, lineno, file, line)


_default_show_warning = warnings.showwarning


def _cmd_info(args) -> int:
    from . import report

    info = report.system_info()
    print(json.dumps(info, indent=2) if args.json else report.info_text(info))
    return 0


def _cmd_cache(args) -> int:
    from . import report
    from .core.build.cache import kernel_cache

    cache = kernel_cache()
    if args.cache_cmd == "status":
        stats = cache.stats()
        text = report.status_text(stats)
        if stats.get("swept"):
            text += (f"\n  crash leftovers: removed {stats['swept']} temp files of writers that "
                     f"died ({report.format_bytes(stats['swept_bytes'])})")
        if stats.get("orphans"):
            text += (f"\n  crash leftovers: {stats['orphans']} temp files of writers that died "
                     f"({report.format_bytes(stats['orphan_bytes'])}; `cache clear` removes them)")
        print(json.dumps(stats, indent=2) if args.json else text)
    elif args.cache_cmd == "list":
        rows = report.sort_entries(cache.entries(), args.sort, args.limit)
        if args.json:
            print(json.dumps(rows if args.source else
                             [{k: v for k, v in r.items() if k != "source"} for r in rows], indent=2))
        else:
            print(report.entries_table(rows))
    elif args.cache_cmd == "clear":
        n = cache.clear()
        print(json.dumps({"removed": n, "directory": str(cache.directory)}) if args.json
              else f"removed {n} entries from {cache.directory}")
    elif args.cache_cmd == "warm":
        return _cmd_warm(args, cache)
    return 0


def _cmd_warm(args, cache) -> int:
    from .core import events
    from .core.build.warm import ModuleSpec
    from .core.kernels.standard import warm

    modules = [ModuleSpec.from_file(p, args.opt) for p in args.files]
    with events.subscribed(_progress_printer()):
        rep = warm(modules, args.arch, jobs=args.jobs, standard=not args.no_standard)
    if args.json:
        print(json.dumps(rep.as_dict(), indent=2))
    else:
        print(f"{len(rep.compiled)} compiled, {len(rep.cached)} already cached, {len(rep.failed)} failed "
              f"for {rep.arch} in {rep.seconds:.1f} s (into {cache.directory})")
        for name, err in rep.failed.items():
            print(f"\n{name}:\n{err}")
    return 1 if rep.failed else 0


def _cmd_demo(args) -> int:
    from . import demo

    return demo.run(args.arch)


def build_parser() -> argparse.ArgumentParser:
    from .report import SORT_FIELDS

    p = argparse.ArgumentParser(prog="python -m gpunb", description="gpunb: GPU kernels compiled "
                                "with NVRTC, cached on disk, shown in notebooks.")
    sub = p.add_subparsers(dest="cmd", required=True)
    info = sub.add_parser("info", help="versions, the GPU (or why there is none), the cache directory")
    info.add_argument("--json", action="store_true")
    info.set_defaults(func=_cmd_info)

    demo = sub.add_parser("demo", help="a short kernel demo (compile-only without a GPU)")
    demo.add_argument("--arch", help="target architecture, e.g. sm_90 (default: the GPU's, or sm_90)")
    demo.set_defaults(func=_cmd_demo)

    cache = sub.add_parser("cache", help="inspect, clear or warm the kernel cache")
    csub = cache.add_subparsers(dest="cache_cmd", required=True)
    for name, text in (("status", "entries, bytes and this process's hit/miss counts"),
                       ("list", "entries with kernel names, sizes, compile times and ages"),
                       ("clear", "remove every entry"),
                       ("warm", "precompile the standard kernels (and FILES) in parallel")):
        c = csub.add_parser(name, help=text)
        c.add_argument("--json", action="store_true", help="machine-readable output")
        c.set_defaults(func=_cmd_cache)
        if name == "list":
            c.add_argument("--sort", default="last_used", choices=SORT_FIELDS)
            c.add_argument("--limit", type=_count(0), default=None, metavar="N")
            c.add_argument("--source", action="store_true", help="include sources in --json output")
        if name == "warm":
            c.add_argument("files", nargs="*", help="CUDA C++ files of your own to precompile")
            c.add_argument("--arch", help="target architecture (default: the current GPU's)")
            c.add_argument("--jobs", type=_count(1), default=None, metavar="N",
                           help="worker processes (default: CPU count)")
            c.add_argument("--opt", action="append", default=[], help="an NVRTC option for FILES")
            c.add_argument("--no-standard", action="store_true", help="only FILES, not the standard set")
    return p


def main(argv=None) -> int:
    from .core.errors import GPUNBError, GPUUnavailableError

    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.func(args)
    except GPUUnavailableError as e:
        print(f"gpunb: {e}", file=sys.stderr)
        if getattr(args, "cache_cmd", None) == "warm":
            print("gpunb: name a target with --arch (for example --arch sm_90) to warm without a GPU",
                  file=sys.stderr)
        return 2
    except (GPUNBError, ValueError, OSError) as e:
        print(f"gpunb: {e}", file=sys.stderr)
        return 2
