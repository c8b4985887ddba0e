"""Kernel cache hardening (issue 19): trust, staleness, crash leftovers, LRU on use, forged
metadata, one bad path, single-flight compiles, linear parsing, and the small ones.

Every compile is a real NVRTC compile for sm_90 (no GPU). Child processes stand in for other
processes and other users (``setpriv``, or root without the capabilities that bypass file
modes); tests that need what this machine cannot give skip with the reason.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import pytest

import gpunb
from gpunb.core.build import cache as cache_mod
from gpunb.core.build import signature as signature_mod
from gpunb.core.build.cache import KernelCache, pack_entry
from gpunb.core.build.cached import cache_key, compile_cached, describe_kernels
from gpunb.core.build.compiler import compile_program, nvrtc_options
from gpunb.core.config import Config

ARCH = "sm_90"
ROOT = Path(__file__).resolve().parents[1]


def kernel(name: str, body: str = "x[threadIdx.x] *= 2.0f;") -> str:
    return f'extern "C" __global__ void {name}(float* x) {{ {body} }}\n'


def key_of(source, options=(), name="kernel.cu") -> str:
    final, arch = nvrtc_options(options, ARCH)
    return cache_key(source, final, arch, (), None, name)


def entry_path(directory: Path, key: str) -> Path:
    import hashlib

    h = hashlib.sha256(key.encode()).hexdigest()
    return Path(directory) / "entries" / h[:2] / h[2:]


def child_env(**extra) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update({k: str(v) for k, v in extra.items()})
    return env


def cache_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, gpunb.CacheWarning)]


def fresh_cubin(src, options=(), name="kernel.cu") -> bytes:
    return compile_program(src, options, ARCH, name=name).cubin


def _drop_dac_capabilities():
    # between fork and exec: root without the capabilities that bypass file modes
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2, 3):   # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
        if libc.prctl(24, cap, 0, 0, 0) != 0:   # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


# -- 1. trust: another user's directory or entry is never loaded ----------------------------------

def _plant(directory: Path, src: str, cubin_of: str) -> str:
    """Write a valid entry (envelope, checksum, metadata) for ``src`` holding the cubin and
    the signature of another program, as an attacker who can write ``directory`` could."""
    key = key_of(src)
    other = compile_cached(cubin_of, arch=ARCH, cache=KernelCache(directory.parent / "attacker"))
    meta = dict(other.meta, key=key, schema=cache_mod.SCHEMA, size=len(other.cubin), created=0.0)
    p = entry_path(directory, key)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(pack_entry(meta, other.cubin))
    return key


def test_group_or_world_writable_directory_is_not_loaded_from(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    src, evil = kernel("victim"), kernel("victim", "x[0] = 666.0f;")
    _plant(d, src, evil)
    d.chmod(0o777)
    c = KernelCache(d)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        e = compile_cached(src, arch=ARCH, cache=c)
        compile_cached(kernel("victim2"), arch=ARCH, cache=c)
    msgs = cache_warnings(caught)
    assert len(msgs) == 1, msgs
    assert str(d) in msgs[0] and "GPUNB_CACHE_SHARED" in msgs[0] and "writable" in msgs[0]
    assert e.cubin == fresh_cubin(src), "the planted cubin was loaded"
    s = c.stats()
    assert s["disk_hits"] == 0 and s["compiles"] == 2 and s["memory_only"] is True


def test_entry_writable_by_others_is_dropped_and_rebuilt(tmp_path):
    d = tmp_path / "kernels"
    KernelCache(d).lookup("0" * 64)                  # a private directory, 0700
    src = kernel("victim_entry")
    key = _plant(d, src, kernel("victim_entry", "x[0] = 666.0f;"))
    entry_path(d, key).chmod(0o666)
    c = KernelCache(d)
    e = compile_cached(src, arch=ARCH, cache=c)
    assert e.cubin == fresh_cubin(src)
    s = c.stats()
    assert s["disk_hits"] == 0 and s["untrusted"] == 1 and s["memory_only"] is False
    assert stat.S_IMODE(entry_path(d, key).stat().st_mode) == 0o600, "not rebuilt privately"
    assert KernelCache(d).lookup(key)[1] == "disk"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to act as another user")
def test_entry_planted_by_another_user_is_not_loaded():
    # The victim's cache directory is writable by others (a sloppy shared path); another user
    # (nobody, through setpriv) plants an entry with a forged signature for a kernel the
    # victim compiles. The victim must neither load it nor keep using that directory.
    import tempfile

    tmp_path = Path(tempfile.mkdtemp(prefix="gpunb-plant-"))     # nobody must reach it
    try:
        _plant_as_nobody(tmp_path)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _plant_as_nobody(tmp_path: Path):
    d = tmp_path / "kernels"
    d.mkdir()
    src = 'extern "C" __global__ void planted(float* x, int n) { x[0] = n; }\n'
    staged = tmp_path / "staged"
    staged.mkdir()
    key = _plant(staged, src, 'extern "C" __global__ void planted(int* x, int n) { x[0] = 7; }\n')
    h = entry_path(staged, key)
    tmp_path.chmod(0o755)
    staged.chmod(0o755)
    for p in (staged / "entries", h.parent):
        p.chmod(0o755)
    h.chmod(0o644)
    d.chmod(0o777)
    target = entry_path(d, key)
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c",
                        f"mkdir -p {target.parent} && cp {h} {target}"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        pytest.skip(f"setpriv could not act as nobody here: {r.stderr.strip()}")
    assert target.stat().st_uid == 65534
    d.chmod(0o755)                   # even once the directory is tidy, the entry is nobody's
    c = KernelCache(d)
    e = compile_cached(src, arch=ARCH, cache=c)
    assert e.cubin == fresh_cubin(src)
    assert e.meta["signatures"]["planted"][0][2] == "float32", "the forged signature was used"
    assert c.stats()["disk_hits"] == 0 and c.stats()["untrusted"] == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a directory to another user")
def test_directory_owned_by_another_user_is_not_used(tmp_path):
    d = tmp_path / "kernels"
    d.mkdir(mode=0o700)
    os.chown(d, 65534, 65534)
    c = KernelCache(d)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compile_cached(kernel("foreign_dir"), arch=ARCH, cache=c)
    msgs = cache_warnings(caught)
    assert len(msgs) == 1 and "another user" in msgs[0], msgs
    assert c.memory_only and list(d.iterdir()) == []
    # the deliberate team cache: opted in, the same directory is used
    team = KernelCache(d, shared=True)
    compile_cached(kernel("foreign_dir"), arch=ARCH, cache=team)
    assert not team.memory_only and team.stats()["entries"] == 1


def test_shared_setting_is_explicit_and_validated():
    assert Config.from_env({}).cache_shared is False
    assert Config.from_env({"GPUNB_CACHE_SHARED": "1"}).cache_shared is True
    assert Config.from_env({"GPUNB_CACHE_SHARED": "0"}).cache_shared is False
    with pytest.raises(ValueError, match="GPUNB_CACHE_SHARED"):
        Config.from_env({"GPUNB_CACHE_SHARED": "maybe"})


# -- 2. staleness: a hit is never built from other inputs ---------------------------------------

@pytest.mark.parametrize("how", ["macro", "define", "pre-include"])
def test_header_the_key_cannot_see_is_checked_on_every_hit(tmp_path, how):
    inc = tmp_path / "inc"
    inc.mkdir()
    hdr = inc / "hd.h"
    body = 'extern "C" __global__ void stale(float* x) { x[0] = SCALE; }\n'
    src, opts = {
        "macro": ('#define HDR "hd.h"\n#include HDR\n' + body, [f"-I{inc}"]),
        "define": ("#include HEADER\n" + body, [f"-I{inc}", '-DHEADER="hd.h"']),
        "pre-include": (body, [f"-I{inc}", f"--pre-include={hdr}"]),
    }[how]
    c = KernelCache(tmp_path / "kc")
    hdr.write_text("#define SCALE 2.0f\n")
    one = compile_cached(src, opts, ARCH, cache=c)
    hdr.write_text("#define SCALE 3.0f\n")
    expected = fresh_cubin(src, opts)
    assert expected != one.cubin
    assert compile_cached(src, opts, ARCH, cache=c).cubin == expected, "stale memory hit"
    hdr.write_text("#define SCALE 2.0f\n")
    fresh = KernelCache(tmp_path / "kc")                     # as a new process would
    assert compile_cached(src, opts, ARCH, cache=fresh).cubin == one.cubin, "stale disk hit"
    assert c.stats()["stale"] == 1 and fresh.stats()["stale"] == 1
    assert compile_cached(src, opts, ARCH, cache=fresh).cubin == one.cubin
    assert fresh.stats()["memory_hits"] == 1


def test_compiling_writes_nothing_into_the_working_directory(tmp_path, monkeypatch):
    # NVRTC's --fdevice-time-trace, once given, stays on for every later compile in the
    # process and writes '.json' into the working directory: gpunb must never turn it on
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "hd.h").write_text("#define SCALE 2.0f\n")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    c = KernelCache(tmp_path / "kc")
    body = 'extern "C" __global__ void k{}(float* x) {{ x[0] = SCALE; }}\n'
    compile_cached('#define HDR "hd.h"\n#include HDR\n' + body.format(1), [f"-I{inc}"], ARCH, cache=c)
    compile_cached("#define SCALE 1.0f\n" + body.format(2), [], ARCH, cache=c)
    assert list(work.iterdir()) == []


def test_program_name_is_in_the_key():
    src = kernel("named", "x[0] = sizeof(__FILE__);")
    assert key_of(src, name="a.cu") != key_of(src, name="bbbb.cu")
    c = KernelCache(Path(os.environ["GPUNB_CACHE_DIR"]))
    a = compile_cached(src, arch=ARCH, name="a.cu", cache=c)
    b = compile_cached(src, arch=ARCH, name="bbbb.cu", cache=c)
    assert a.cubin == fresh_cubin(src, name="a.cu") and b.cubin == fresh_cubin(src, name="bbbb.cu")
    assert a.cubin != b.cubin


def test_package_headers_count_by_version_once_per_process(monkeypatch):
    from gpunb.core.build import cached

    try:
        from gpunb.core.build import cccl

        inc = cccl.include_dir()
    except (ImportError, RuntimeError) as e:
        pytest.skip(f"no CCCL headers: {e}")
    src = "#include <cub/block/block_reduce.cuh>\n" + kernel("cub_key")
    final, arch = nvrtc_options([f"-I{inc}"], ARCH)
    record = cached.key_record(src, final, arch)
    (name, token), = record["headers"]
    assert name == "cub/block/block_reduce.cuh" and "nvidia_cuda_cccl" in token
    # a key (and so a hit) reads no CCCL header: hundreds of files are not hashed per call
    reads = []
    monkeypatch.setattr(cached, "_file_info", lambda p: reads.append(p))
    cached._keys.clear()
    assert cached.cache_key(src, final, arch) == cached._digest(record)
    assert reads == []


# -- 3. crash leftovers ---------------------------------------------------------------------------

_KILLED_WRITER = """
import os, sys, time
from gpunb.core.build.cache import KernelCache
from gpunb.core.build.cached import compile_cached
def stuck(fd):
    print("writing", flush=True)
    time.sleep(600)
os.fsync = stuck                       # dies here, mid-write, holding its temp file
compile_cached('extern "C" __global__ void killed(float* x) { x[0] = 1.0f; }', arch="sm_90",
               cache=KernelCache(sys.argv[1]))
"""

_LIVE_WRITER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, b"x" * 4096)
print("holding", flush=True)
time.sleep(600)
"""


def test_killed_writer_leaves_no_orphan_after_the_next_open(tmp_path):
    d = tmp_path / "kernels"
    c = KernelCache(d, max_bytes=10 * 1024**2)
    c.lookup("0" * 64)
    dead = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(d)], env=child_env(),
                            stdout=subprocess.PIPE, text=True)
    live_path = d / "tmp" / "99999.live.tmp"
    live = subprocess.Popen([sys.executable, "-c", _LIVE_WRITER, str(live_path)], env=child_env(),
                            stdout=subprocess.PIPE, text=True)
    try:
        assert dead.stdout.readline().strip() == "writing"
        assert live.stdout.readline().strip() == "holding"
        dead.send_signal(signal.SIGKILL)
        dead.wait(30)
        (d / "tmp" / "entry-old1234").write_bytes(b"\0" * (12 * 1024**2))   # an older gpunb's
        s = c.stats()
        assert s["orphans"] == 2 and s["orphan_bytes"] >= 12 * 1024**2, s
        e = compile_cached(kernel("after_kill"), arch=ARCH, cache=KernelCache(d, 10 * 1024**2))
        assert KernelCache(d).lookup(e.key)[1] == "disk", "orphans crowded out a new entry"
        left = sorted(p.name for p in (d / "tmp").iterdir())
        assert left == [live_path.name], "an orphan survived the next open, or a live write was swept"
        assert KernelCache(d).stats()["orphans"] == 0
        KernelCache(d).clear()
        assert sorted(p.name for p in (d / "tmp").iterdir()) == [live_path.name]
    finally:
        for p in (dead, live):
            if p.poll() is None:
                p.kill()
                p.wait(30)
    KernelCache(d).clear()
    assert list((d / "tmp").iterdir()) == [], "clear left a dead writer's file"


# -- 4. LRU: memory hits refresh the disk entry's recency ---------------------------------------

def test_memory_hits_refresh_disk_recency_throttled(tmp_path, monkeypatch):
    d = tmp_path / "kernels"
    c = KernelCache(d)
    e = compile_cached(kernel("hot"), arch=ARCH, cache=c)
    p = entry_path(d, e.key)
    past = time.time() - 86_400
    os.utime(p, (past, p.stat().st_mtime))
    assert c.lookup(e.key)[1] == "memory"
    assert p.stat().st_atime == pytest.approx(past), "refreshed on every hit (not throttled)"
    monkeypatch.setattr(cache_mod, "_TOUCH_SECONDS", 0.0)
    assert c.lookup(e.key)[1] == "memory"
    assert p.stat().st_atime > time.time() - 60, "a memory hit did not refresh the entry's recency"


def test_hot_kernel_survives_eviction(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_mod, "_TOUCH_SECONDS", 0.0)
    d = tmp_path / "kernels"
    probe = compile_cached(kernel("sizer"), arch=ARCH, cache=KernelCache(tmp_path / "probe"))
    size = len(pack_entry(dict(probe.meta), probe.cubin))
    c = KernelCache(d, max_bytes=int(3.5 * size))
    hot = compile_cached(kernel("hot_one"), arch=ARCH, cache=c)
    for i in range(6):
        compile_cached(kernel(f"cold_{i}"), arch=ARCH, cache=c)
        compile_cached(kernel("hot_one"), arch=ARCH, cache=c)       # a memory hit
    assert entry_path(d, hot.key).is_file(), "the most used kernel was evicted"


# -- 5. forged or future metadata -----------------------------------------------------------------

_FORGED = {
    "a list": lambda m: [1, 2, 3],
    "empty": lambda m: {},
    "kernels=5": lambda m: dict(m, kernels=5),
    "future schema": lambda m: dict(m, schema=cache_mod.SCHEMA + 1),
    "no schema": lambda m: {k: v for k, v in m.items() if k != "schema"},
    "kernel_info list": lambda m: dict(m, kernel_info=[1]),
    "kernel_info short": lambda m: dict(m, kernel_info={"forged": [[4], [0]]}),
    "signature str": lambda m: dict(m, signatures={"forged": "float*"}),
    "name_expressions list": lambda m: dict(m, name_expressions=["a"]),
    "options str": lambda m: dict(m, options="-O3"),
    "source int": lambda m: dict(m, source=5),
    "compile_seconds str": lambda m: dict(m, compile_seconds="fast"),
    "manifest list": lambda m: dict(m, manifest=["x"]),
    "key of another": lambda m: dict(m, key="0" * 64),
}


@pytest.mark.parametrize("forge", sorted(_FORGED))
def test_forged_metadata_is_dropped_and_rebuilt(tmp_path, forge, capsys):
    d = tmp_path / "kernels"
    src = 'extern "C" __global__ void forged(float* x) { x[0] = 1.0f; }\n'
    good = compile_cached(src, arch=ARCH, cache=KernelCache(d))
    p = entry_path(d, good.key)
    p.write_bytes(pack_entry(_FORGED[forge](dict(good.meta)), good.cubin))
    assert KernelCache(d).entries() == [], "a forged record was listed"
    from gpunb import cli

    os.environ["GPUNB_CACHE_DIR"] = str(d)
    cache_mod.set_kernel_cache(None)
    assert cli.main(["cache", "list"]) == 0
    assert "Traceback" not in capsys.readouterr().err
    c = KernelCache(d)
    e = compile_cached(src, arch=ARCH, cache=c)
    assert e.cubin == good.cubin and e.meta["kernels"] == ["forged"]
    s = c.stats()
    assert s["corrupted"] == 1 and s["compiles"] == 1 and s["disk_hits"] == 0
    assert KernelCache(d).lookup(good.key)[1] == "disk"


# -- 6. one bad path fails one entry, never the cache ------------------------------------------

def _bad_thing(kind: str, path: Path, tmp_path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "directory":
        path.mkdir()
        (path / "inner").write_text("x")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        (tmp_path / "elsewhere").write_bytes(b"GPUNBKC1")
        path.symlink_to(tmp_path / "elsewhere")


@pytest.mark.parametrize("kind", ["directory", "fifo", "symlink"])
def test_a_bad_path_fails_only_its_entry(tmp_path, kind):
    d = tmp_path / "kernels"
    other = compile_cached(kernel(f"neighbour_{kind}"), arch=ARCH, cache=KernelCache(d))
    src = kernel(f"bad_{kind}")
    p = entry_path(d, key_of(src))
    _bad_thing(kind, p, tmp_path)
    c = KernelCache(d)
    done: dict = {}

    def build():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            done["entry"] = compile_cached(src, arch=ARCH, cache=c)
        done["warnings"] = cache_warnings(caught)

    t = threading.Thread(target=build, daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), f"a {kind} at the entry's path blocked the compile"
    assert done["entry"].cubin == fresh_cubin(src)
    assert done["warnings"] == [], done["warnings"]
    assert c.memory_only is False
    assert c.lookup(other.key)[1] == "disk"
    assert p.is_file() and not p.is_symlink(), "the entry was not rebuilt as a regular file"
    assert KernelCache(d).lookup(key_of(src))[1] == "disk"
    if kind != "symlink":
        _bad_thing(kind, entry_path(d, key_of(kernel(f"again_{kind}"))), tmp_path)
    assert KernelCache(d).clear() >= 2
    assert not any((d / "entries").rglob("*")), "clear left something in entries/"


def test_unreadable_entry_fails_only_itself(tmp_path):
    d = tmp_path / "kernels"
    other = compile_cached(kernel("readable"), arch=ARCH, cache=KernelCache(d))
    src = kernel("unreadable")
    first = compile_cached(src, arch=ARCH, cache=KernelCache(d))
    entry_path(d, first.key).chmod(0o000)
    code = textwrap.dedent(f"""
        import json, warnings
        from gpunb.core.build.cache import KernelCache
        from gpunb.core.build.cached import compile_cached
        try:
            open({str(entry_path(d, first.key))!r}, "rb").close()
            readable = True
        except PermissionError:
            readable = False
        c = KernelCache({str(d)!r})
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            e = compile_cached({src!r}, arch="sm_90", cache=c)
        print(json.dumps(dict(readable=readable, warnings=[str(x.message) for x in w],
                              other=c.lookup({other.key!r})[1],
                              memory_only=c.memory_only, stats=c.stats())))
    """)
    kwargs = dict(preexec_fn=_drop_dac_capabilities) if os.geteuid() == 0 else {}
    r = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True,
                       text=True, timeout=120, **kwargs)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    if out["readable"]:
        pytest.skip("file modes do not bind this process here")
    assert out["stats"]["corrupted"] == 1
    assert out["warnings"] == [] and out["memory_only"] is False and out["other"] == "disk", out
    assert os.access(entry_path(d, first.key), os.R_OK)


# -- 7. single flight -------------------------------------------------------------------------

def test_threads_compile_a_kernel_once(tmp_path):
    c = KernelCache(tmp_path / "kernels")
    src = kernel("eight_threads")
    start = threading.Barrier(8)
    got = []

    def work():
        start.wait()
        got.append(compile_cached(src, arch=ARCH, cache=c).cubin)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(got) == 8 and len(set(got)) == 1
    s = c.stats()
    assert s["compiles"] == 1, s
    assert s["memory_hits"] + s["disk_hits"] >= 7, "the waiting threads did not take its entry"


def test_memory_only_threads_compile_a_kernel_once(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o777)                                  # untrusted: memory only
    c = KernelCache(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c.lookup("0" * 64)
    assert c.memory_only
    start = threading.Barrier(6)

    def work():
        start.wait()
        compile_cached(kernel("six_threads"), arch=ARCH, cache=c)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert c.stats()["compiles"] == 1


_RACER = """
import json, os, sys, time
from gpunb.core.build.cache import KernelCache
from gpunb.core.build.cached import compile_cached
from gpunb.core.runtime import nvrtc
nvrtc.version()
c = KernelCache(sys.argv[1])
c.lookup("0" * 64)
go = sys.argv[2]
open(go + "." + str(os.getpid()), "w").close()
while not os.path.exists(go):
    time.sleep(0.002)
srcs = ['extern "C" __global__ void race_%d(float* x) { x[0] = %d.0f; }' % (i, i) for i in range(3)]
cubins = [compile_cached(s, arch="sm_90", cache=c).cubin.hex()[:64] for s in srcs]
print(json.dumps(dict(stats=c.stats(), cubins=cubins)))
"""


def test_processes_compile_a_kernel_once(tmp_path):
    d, go = tmp_path / "kernels", tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _RACER, str(d), str(go)], env=child_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(6)]
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("go.*"))) < len(procs) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.write_text("go")
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
        outs.append(json.loads(out.strip().splitlines()[-1]))
    assert sum(o["stats"]["compiles"] for o in outs) == 3, [o["stats"] for o in outs]
    assert len({tuple(o["cubins"]) for o in outs}) == 1


# -- 8. parsing after compile is linear ---------------------------------------------------------

def _module(n: int) -> str:
    parts = []
    for i in range(n):
        if i % 3 == 2:
            parts.append(f"template <typename T>\n__global__ void __launch_bounds__(128) t{i}"
                         f"(T* x, long long n) {{ x[0] += T({i}); }}\n"
                         f"template __global__ void t{i}<double>(double*, long long);\n")
        else:
            parts.append(f'/* k{i} */ extern "C" __global__ void __launch_bounds__(256, 2) '
                         f"k{i}(float* x, const int* y, unsigned n) {{ x[0] = y[0] * {i}; }}\n")
    return "".join(parts)


def test_describe_kernels_parses_the_source_once(monkeypatch):
    src = _module(60)
    prog = compile_program(src, (), ARCH)
    calls = []
    real = signature_mod.kernel_declarations

    def counting(source):
        calls.append(1)
        return real(source)

    monkeypatch.setattr(signature_mod, "kernel_declarations", counting)
    signature_mod._declarations.cache_clear()
    info, sigs = describe_kernels(src, prog.cubin, prog.lowered_names)
    assert len(calls) <= 1, f"the source was parsed {len(calls)} times for {len(info)} kernels"
    assert len(info) == 60
    for i in range(60):
        if i % 3 == 2:
            continue
        assert [p[0] for p in sigs[f"k{i}"]] == ["pointer", "pointer", "scalar"]
        assert [p[2] for p in sigs[f"k{i}"]] == ["float32", "int32", "uint32"]


def test_kernel_declarations_of_a_large_module():
    # the one-pass parse finds what a declaration-by-declaration parse finds
    src = _module(40)
    decls = signature_mod.kernel_declarations(src)
    assert len(decls) == 40
    for i in range(40):
        if i % 3 == 2:
            assert decls[f"t{i}"] == [(["T"], ["T* x", "long long n"])]
        else:
            line = next(ln for ln in src.splitlines() if f" k{i}(" in ln)
            assert decls[f"k{i}"] == signature_mod.kernel_declarations(line)[f"k{i}"] \
                == [([], ["float* x", "const int* y", "unsigned n"])]


# -- 9. small ones --------------------------------------------------------------------------------

def test_raw_module_takes_the_arch_from_its_options():
    m = gpunb.RawModule(code=kernel("opt_arch"), options=("-arch=sm_90",))
    assert m.compile().kernel_names() == ["opt_arch"]


def test_name_expressions_must_be_strings():
    with pytest.raises(TypeError, match="name expression"):
        compile_cached(kernel("nx"), arch=ARCH, name_expressions=[1])
    with pytest.raises(TypeError, match="name expression"):
        compile_program(kernel("nx"), (), ARCH, name_expressions=[1])
    with pytest.raises(TypeError, match="name expression"):
        gpunb.RawModule(code=kernel("nx"), name_expressions=[1]).compile(arch=ARCH)


@pytest.mark.parametrize("opt", ["-I", "--include-path", "-D", "--pre-include"])
def test_a_value_option_at_the_end_needs_its_value(opt):
    with pytest.raises(ValueError, match=f"option '{opt}' needs a value"):
        compile_cached(kernel("dangling"), (opt,), ARCH)


def _cli(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "gpunb", *args], env=env or child_env(),
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def test_cli_rejects_negative_limit_and_jobs():
    from gpunb import cli

    for argv in (["cache", "list", "--limit", "-5"], ["cache", "warm", "--jobs", "0"],
                 ["cache", "warm", "--jobs", "-3"], ["cache", "warm", "--jobs", "two"]):
        with pytest.raises(SystemExit) as exc:
            cli.build_parser().parse_args(argv)
        assert exc.value.code == 2, argv


def test_cli_warm_names_a_file_that_is_not_text(tmp_path):
    r = _cli("cache", "warm", "--arch", "sm_90", "--no-standard", "/bin/ls",
             env=child_env(GPUNB_CACHE_DIR=tmp_path / "kc"))
    assert r.returncode == 2
    assert "/bin/ls" in r.stderr and "UTF-8" in r.stderr and "Traceback" not in r.stderr


def test_cli_shows_cache_warnings_as_one_plain_line(tmp_path):
    d = tmp_path / "open"
    d.mkdir()
    d.chmod(0o777)
    r = _cli("cache", "status", env=child_env(GPUNB_CACHE_DIR=d))
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("gpunb: warning: kernel cache:"), r.stderr
    assert "CacheWarning" not in r.stderr and "warnings.warn" not in r.stderr


def test_relative_cache_dir_is_resolved_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = Config.from_env({"GPUNB_CACHE_DIR": "rel/kernels"})
    assert cfg.cache_dir == tmp_path / "rel" / "kernels" and cfg.cache_dir.is_absolute()
    c = KernelCache("rel2")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    compile_cached(kernel("rel_dir"), arch=ARCH, cache=c)
    assert (tmp_path / "rel2" / "entries").is_dir() and not (tmp_path / "elsewhere" / "rel2").exists()


def test_clear_reports_what_it_really_removed(tmp_path):
    d = tmp_path / "kernels"
    c = KernelCache(d)
    for i in range(3):
        compile_cached(kernel(f"keep_{i}"), arch=ARCH, cache=c)
    shards = [p for p in (d / "entries").iterdir()]
    tmp_path.chmod(0o755)
    for p in shards:
        p.chmod(0o555)
    kwargs = dict(preexec_fn=_drop_dac_capabilities) if os.geteuid() == 0 else {}
    try:
        r = subprocess.run([sys.executable, "-m", "gpunb", "cache", "clear"],
                           env=child_env(GPUNB_CACHE_DIR=d), capture_output=True, text=True,
                           timeout=120, **kwargs)
    finally:
        for p in shards:
            p.chmod(0o700)
    if len(list((d / "entries").rglob("*"))) - len(shards) < 3:
        pytest.skip("file modes do not bind this process here")
    assert r.returncode == 0, r.stderr
    assert "removed 0 entries" in r.stdout, r.stdout
    assert "3 entries" in r.stderr and "could not be removed" in r.stderr, r.stderr


def test_a_cap_below_one_entry_says_so_once(tmp_path):
    c = KernelCache(tmp_path / "kernels", max_bytes=100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = compile_cached(kernel("too_big_a"), arch=ARCH, cache=c)
        compile_cached(kernel("too_big_b"), arch=ARCH, cache=c)
    msgs = cache_warnings(caught)
    assert len(msgs) == 1 and "size cap" in msgs[0] and "100 bytes" in msgs[0], msgs
    assert c.lookup(a.key)[1] == "memory" and c.stats()["entries"] == 0


def test_cli_status_reports_crash_leftovers_it_removed(tmp_path):
    d = tmp_path / "kernels"
    KernelCache(d).lookup("0" * 64)
    (d / "tmp" / "4242.dead.tmp").write_bytes(b"\0" * 5000)
    r = _cli("cache", "status", env=child_env(GPUNB_CACHE_DIR=d))
    assert r.returncode == 0, r.stderr
    assert "crash leftovers: removed 1 temp files" in r.stdout, r.stdout
    assert list((d / "tmp").iterdir()) == []
