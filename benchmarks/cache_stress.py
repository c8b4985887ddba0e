"""Adversarial figures for the kernel cache (issue 19), CPU only (NVRTC for sm_90, no GPU).

    python benchmarks/cache_stress.py              # all three parts
    python benchmarks/cache_stress.py --json
    python benchmarks/cache_stress.py --procs 8 16 --rounds 5 --kills 40

1. Concurrency: N processes x R rounds on one cache directory. Each round every process
   compiles one kernel that all of them share and one of its own, starting together.
   Reported: failures, corrupt entries left, compiles per new kernel across processes (goal 1).
2. Corruption: for each kind of damage (torn, flipped, swapped, forged metadata, a directory,
   FIFO or symlink in an entry's place, an entry others can write...), a fresh process-like
   cache compiles the kernel. Reported: tried / rebuilt (a valid entry is back on disk) /
   loaded (the damaged entry was returned; goal 0).
3. Crashes: a writer process is killed with SIGKILL at random moments while it writes large
   entries. Reported: kills, torn entries (goal 0), orphans left before and after the next
   open of the cache (goal 0 after).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ARCH = "sm_90"


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["GPUNB_SLOW_COMPILE_SECONDS"] = "off"
    return env


# -- 1. concurrency -------------------------------------------------------------------------------

_WORKER = textwrap.dedent("""
    import json, os, sys, time
    from gpunb.core.build.cache import KernelCache
    from gpunb.core.build.cached import compile_cached
    from gpunb.core.runtime import nvrtc
    directory, sync, me, rounds, salt = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    nvrtc.version()
    cache = KernelCache(directory)
    cache.lookup("0" * 64)
    out = dict(compiled=[], failures=[])
    for r in range(rounds):
        open(os.path.join(sync, f"ready.{r}.{me}"), "w").close()
        while not os.path.exists(os.path.join(sync, f"go.{r}")):
            time.sleep(0.001)
        for name in (f"shared_{salt}_{r}", f"own_{salt}_{r}_{me}"):
            src = 'extern "C" __global__ void %s(float* x) { x[threadIdx.x] += %d.0f; }' % (name, r)
            before = cache.stats()["compiles"]
            try:
                compile_cached(src, arch="sm_90", cache=cache)
            except Exception as e:
                out["failures"].append(f"{name}: {type(e).__name__}: {e}")
                continue
            if cache.stats()["compiles"] > before:
                out["compiled"].append(name)
    print(json.dumps(out))
""")


def concurrency(nprocs: int, rounds: int) -> dict:
    from gpunb.core.build.cache import KernelCache

    with tempfile.TemporaryDirectory(prefix="gpunb-stress-") as tmp:
        d, sync = Path(tmp) / "kernels", Path(tmp) / "sync"
        sync.mkdir()
        salt = f"{nprocs}x{rounds}_{time.time_ns()}"
        procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(d), str(sync), str(i), str(rounds), salt],
                                  env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in range(nprocs)]
        start = time.perf_counter()
        for r in range(rounds):
            while len(list(sync.glob(f"ready.{r}.*"))) < nprocs:
                if any(p.poll() is not None for p in procs):
                    break
                time.sleep(0.002)
            (sync / f"go.{r}").touch()
        outs, failures = [], []
        for p in procs:
            so, se = p.communicate(timeout=600)
            if p.returncode != 0:
                failures.append(se.strip().splitlines()[-1] if se.strip() else f"rc {p.returncode}")
                continue
            outs.append(json.loads(so.strip().splitlines()[-1]))
        seconds = time.perf_counter() - start
        compiled: dict[str, int] = {}
        for o in outs:
            failures += o["failures"]
            for name in o["compiled"]:
                compiled[name] = compiled.get(name, 0) + 1
        shared = [compiled.get(f"shared_{salt}_{r}", 0) for r in range(rounds)]
        own = [compiled.get(f"own_{salt}_{r}_{i}", 0) for r in range(rounds) for i in range(nprocs)]
        files = [p for p in (d / "entries").glob("*/*")]
        valid = len(KernelCache(d).entries())
        return dict(processes=nprocs, rounds=rounds, failures=len(failures), failure_samples=failures[:3],
                    new_kernels=rounds * (1 + nprocs), compiles=sum(compiled.values()),
                    compiles_per_shared_kernel=max(shared) if shared else 0,
                    compiles_per_own_kernel=max(own) if own else 0,
                    entries=len(files), corrupt_entries=len(files) - valid, seconds=round(seconds, 1))


# -- 2. corruption --------------------------------------------------------------------------------

def _flip(offset):
    def damage(p: Path):
        b = bytearray(p.read_bytes())
        b[offset(len(b))] ^= 0x40
        p.write_bytes(bytes(b))
    return damage


def _forge(change):
    def damage(p: Path):
        from gpunb.core.build.cache import pack_entry, unpack_entry

        meta, cubin = unpack_entry(p.read_bytes())
        p.write_bytes(pack_entry(change(meta), cubin))
    return damage


def _replace(make):
    def damage(p: Path):
        p.unlink()
        make(p)
    return damage


def _corruptions(other_entry: Path) -> dict:
    from gpunb.core.build.cache import SCHEMA

    kinds = {
        "empty file": lambda p: p.write_bytes(b""),
        "truncated to half": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
        "truncated by one byte": lambda p: p.write_bytes(p.read_bytes()[:-1]),
        "one byte appended": lambda p: p.write_bytes(p.read_bytes() + b"\0"),
        "zeros": lambda p: p.write_bytes(b"\0" * p.stat().st_size),
        "random bytes": lambda p: p.write_bytes(os.urandom(p.stat().st_size)),
        "flip in magic": _flip(lambda n: 3),
        "flip in checksum": _flip(lambda n: 20),
        "flip in metadata length": _flip(lambda n: 41),
        "flip in metadata": _flip(lambda n: 60),
        "flip in cubin": _flip(lambda n: n - 100),
        "another key's entry": lambda p: p.write_bytes(other_entry.read_bytes()),
        "metadata is a list": _forge(lambda m: [m]),
        "metadata is {}": _forge(lambda m: {}),
        "kernels=5": _forge(lambda m: dict(m, kernels=5)),
        "future schema": _forge(lambda m: dict(m, schema=SCHEMA + 1)),
        "kernel_info forged": _forge(lambda m: dict(m, kernel_info={"x": "y"})),
        "signature forged": _forge(lambda m: dict(m, signatures={"k": [["pointer"]]})),
        "key field of another": _forge(lambda m: dict(m, key="f" * 64)),
        "a directory": _replace(lambda p: (p.mkdir(), (p / "x").write_text("x"))),
        "a FIFO": _replace(lambda p: os.mkfifo(p)),
        "a symlink": _replace(lambda p: p.symlink_to(other_entry)),
        "writable by others": lambda p: p.chmod(0o666),
        "writable by group": lambda p: p.chmod(0o660),
    }
    if os.geteuid() == 0:
        kinds["owned by another user"] = lambda p: os.chown(p, 65534, 65534)
    return kinds


def corruption() -> dict:
    import threading

    from gpunb.core.build.cache import KernelCache
    from gpunb.core.build.cached import compile_cached

    tried = rebuilt = loaded = hung = failed = 0
    failed_kinds = []
    with tempfile.TemporaryDirectory(prefix="gpunb-corrupt-") as tmp:
        d = Path(tmp) / "kernels"
        other = compile_cached('extern "C" __global__ void other(float* x) { x[0] = 7.0f; }',
                               arch=ARCH, cache=KernelCache(d))
        other_path = _path(d, other.key)
        for i, (kind, damage) in enumerate(_corruptions(other_path).items()):
            src = 'extern "C" __global__ void victim_%d(float* x) { x[0] = %d.0f; }' % (i, i)
            good = compile_cached(src, arch=ARCH, cache=KernelCache(d))
            damage(_path(d, good.key))
            tried += 1
            result: dict = {}
            cache = KernelCache(d)

            def run():
                try:
                    result["entry"] = compile_cached(src, arch=ARCH, cache=cache)
                except Exception as e:   # noqa: BLE001 - counted
                    result["error"] = e

            t = threading.Thread(target=run, daemon=True)
            t.start()
            t.join(60)
            e = result.get("entry")
            if t.is_alive():
                hung += 1
                failed_kinds.append(kind + " (hung)")
                continue
            if e is None:
                failed += 1
                failed_kinds.append(kind + " (raised)")
                continue
            # a disk hit here returned the damaged entry (even where its cubin is intact, as
            # for an entry another user owns or can write)
            if (cache.stats()["disk_hits"] or e.cubin != good.cubin
                    or e.meta.get("kernels") != good.meta["kernels"]):
                loaded += 1
                failed_kinds.append(kind)
                continue
            again, level = KernelCache(d).lookup(good.key)
            if level == "disk" and again.cubin == good.cubin:
                rebuilt += 1
            else:
                failed_kinds.append(kind + " (not rebuilt)")
    return dict(corruptions_tried=tried, rebuilt=rebuilt, loaded=loaded, hung=hung, raised=failed,
                problems=failed_kinds)


def _path(d: Path, key: str) -> Path:
    h = hashlib.sha256(key.encode()).hexdigest()
    return d / "entries" / h[:2] / h[2:]


# -- 3. crashes -----------------------------------------------------------------------------------

_WRITER = textwrap.dedent("""
    import os, sys
    from gpunb.core.build.cache import KernelCache
    cache = KernelCache(sys.argv[1])
    blob = os.urandom(24 * 1024 * 1024)     # large entries: a wide window to die in
    print("ready", flush=True)
    i = 0
    while True:
        cache.put("%064x" % (i % 8), blob[: 16 * 1024 * 1024 + i % 1000], {"kernels": ["k%d" % i]})
        i += 1
""")


def crashes(kills: int, seed: int = 0) -> dict:
    from gpunb.core.build.cache import KernelCache

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="gpunb-kill-") as tmp:
        d = Path(tmp) / "kernels"
        orphans_seen = 0
        for _ in range(kills):
            p = subprocess.Popen([sys.executable, "-c", _WRITER, str(d)], env=_env(),
                                 stdout=subprocess.PIPE, text=True)
            p.stdout.readline()
            time.sleep(rng.uniform(0.0, 1.0))
            p.send_signal(signal.SIGKILL)
            p.wait()
            orphans_seen += len(list((d / "tmp").iterdir()))
        left_before_open = len(list((d / "tmp").iterdir()))
        cache = KernelCache(d)
        files = list((d / "entries").glob("*/*"))
        valid = len(cache.entries())
        cache.lookup("0" * 64)
        left_after_open = len(list((d / "tmp").iterdir()))
        cache.clear()
        left_after_clear = len(list((d / "tmp").iterdir()))
    return dict(kills=kills, orphans_seen_after_kills=orphans_seen, orphans_before_next_open=left_before_open,
                orphans_after_next_open=left_after_open, orphans_after_clear=left_after_clear,
                entries=len(files), torn_entries=len(files) - valid)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--procs", type=int, nargs="*", default=[8, 16])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--kills", type=int, default=40)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    import logging

    logging.getLogger("gpunb").setLevel(logging.ERROR)    # one line per dropped entry otherwise
    report = {"concurrency": [concurrency(n, args.rounds) for n in args.procs],
              "corruption": corruption(), "crashes": crashes(args.kills)}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for c in report["concurrency"]:
        print(f"{c['processes']} processes x {c['rounds']} rounds: {c['failures']} failures, "
              f"{c['corrupt_entries']} corrupt of {c['entries']} entries, {c['compiles']} compiles for "
              f"{c['new_kernels']} new kernels (per shared kernel: {c['compiles_per_shared_kernel']}, "
              f"per own kernel: {c['compiles_per_own_kernel']}), {c['seconds']} s")
    c = report["corruption"]
    print(f"corruptions: {c['corruptions_tried']} tried, {c['rebuilt']} rebuilt, {c['loaded']} loaded, "
          f"{c['hung']} hung, {c['raised']} raised"
          + (f"; problems: {', '.join(c['problems'])}" if c["problems"] else ""))
    k = report["crashes"]
    print(f"crashes: {k['kills']} kill -9 during writes, {k['torn_entries']} torn of {k['entries']} entries; "
          f"orphans: {k['orphans_seen_after_kills']} left by the kills in all, "
          f"{k['orphans_before_next_open']} before the last next open, {k['orphans_after_next_open']} "
          f"after it, {k['orphans_after_clear']} after clear")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
