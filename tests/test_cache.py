"""The kernel cache: disk and memory layers, the entry envelope, keys, failure modes.

Every compile here is a real NVRTC compile for a named architecture, so no GPU is needed.
Several tests run child processes (a fresh interpreter is the only honest way to check a
cross-process disk hit, that NVRTC is never loaded on a hit, concurrent writers, dropped
privileges and file-size limits).
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb
from gpunb.core.build import cache as cache_mod
from gpunb.core.build.cached import cache_key, compile_cached, key_record
from gpunb.core.build.cache import CorruptEntry, KernelCache, pack_entry, unpack_entry
from gpunb.core.build.compiler import compile_program, nvrtc_options

ARCH = "sm_90"
ROOT = Path(__file__).resolve().parents[1]
_HEAD = 8 + 32 + 4  # magic, sha256, metadata length (the envelope's fixed header)


def kernel(name: str, body: str = "x[threadIdx.x] *= 2.0f;") -> str:
    return f'extern "C" __global__ void {name}(float* x) {{ {body} }}\n'


def key_of(source, options=(), arch=ARCH, name_expressions=(), headers=None) -> str:
    final, arch = nvrtc_options(options, arch)
    return cache_key(source, final, arch, name_expressions, headers)


def entry_path(directory: Path, key: str) -> Path:
    """Where the store keeps the entry of ``key``: entries/<2 hex>/<62 hex>."""
    h = hashlib.sha256(key.encode()).hexdigest()
    return Path(directory) / "entries" / h[:2] / h[2:]


def entry_files(directory: Path) -> list[Path]:
    root = Path(directory) / "entries"
    if not root.is_dir():
        return []
    return sorted(p for p in root.glob("*/*") if p.is_file())


def child_env(**extra) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_child(code: str, *, cwd=None, timeout=180, **run_kwargs) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line last, which is returned."""
    env = run_kwargs.pop("env", None) or child_env()
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=cwd,
                       capture_output=True, text=True, timeout=timeout, **run_kwargs)
    assert r.returncode == 0, f"child failed (rc {r.returncode}):\n{r.stdout}\n{r.stderr}"
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert lines, f"child printed nothing:\n{r.stderr}"
    return json.loads(lines[-1])


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


# -- the envelope --------------------------------------------------------------------------------

def test_pack_unpack_round_trip():
    meta = {"key": "k" * 64, "kernels": ["f", "g"], "compile_seconds": 0.25, "nested": {"a": [1, None]}}
    cubin = bytes(range(256)) * 3
    blob = pack_entry(meta, cubin)
    assert blob.startswith(b"GPUNBKC1")
    assert unpack_entry(blob) == (meta, cubin)
    assert unpack_entry(pack_entry({}, b"")) == ({}, b"")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(meta=st.dictionaries(st.text(), _json, max_size=8), payload=st.binary(max_size=2048))
def test_envelope_round_trip_random(meta, payload):
    got_meta, got_payload = unpack_entry(pack_entry(meta, payload))
    assert got_meta == meta
    assert got_payload == payload


_SAMPLE_BLOB = pack_entry({"key": "ab" * 32, "kernels": ["vadd"], "source": kernel("vadd")},
                          bytes(range(256)) * 4)


@settings(max_examples=400, deadline=None)
@given(pos=st.integers(0, len(_SAMPLE_BLOB) - 1), xor=st.integers(1, 255))
def test_any_single_byte_flip_is_detected(pos, xor):
    bad = bytearray(_SAMPLE_BLOB)
    bad[pos] ^= xor
    with pytest.raises(CorruptEntry):
        unpack_entry(bytes(bad))


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, len(_SAMPLE_BLOB) - 1))
def test_any_truncation_is_detected(n):
    with pytest.raises(CorruptEntry):
        unpack_entry(_SAMPLE_BLOB[:n])


def test_unpack_rejects_garbage():
    for blob in (b"", b"GPUNBKC1", b"\x7fELF" + bytes(100), os.urandom(500)):
        with pytest.raises(CorruptEntry):
            unpack_entry(blob)


# -- memory and disk layers ----------------------------------------------------------------------

def test_round_trip_across_processes_never_loads_nvrtc(cache_dir):
    src = kernel("xproc_scale")
    code = f"""
        import hashlib, json
        from gpunb.core.build.cached import compile_cached
        from gpunb.core.build.cache import kernel_cache
        def nvrtc_loaded():
            with open("/proc/self/maps") as f:
                return "libnvrtc" in f.read()
        before = nvrtc_loaded()
        e = compile_cached({src!r}, arch={ARCH!r})
        print(json.dumps(dict(key=e.key, sha=hashlib.sha256(e.cubin).hexdigest(),
                              stats=kernel_cache().stats(), before=before, after=nvrtc_loaded())))
    """
    env = child_env(GPUNB_CACHE_DIR=cache_dir)
    first = run_child(code, env=env)
    assert first["stats"]["compiles"] == 1 and first["stats"]["disk_hits"] == 0
    assert first["after"], "the compiling process must show libnvrtc in its maps (check is live)"
    assert entry_path(cache_dir, first["key"]).is_file()

    second = run_child(code, env=env)
    assert second["key"] == first["key"]
    assert second["stats"]["disk_hits"] == 1
    assert second["stats"]["compiles"] == 0
    assert second["stats"]["misses"] == 0
    assert not second["before"] and not second["after"], "a disk hit loaded NVRTC"
    assert second["sha"] == first["sha"]


def test_second_lookup_is_a_memory_hit_and_reads_no_file(cache_dir):
    src = kernel("mem_hit")
    built = compile_cached(src, arch=ARCH, cache=KernelCache(cache_dir))
    path = entry_path(cache_dir, built.key)
    assert path.is_file()

    c = KernelCache(cache_dir)
    entry, level = c.lookup(built.key)
    assert level == "disk" and entry.cubin == built.cubin
    path.unlink()                       # nothing left to read: a second hit must come from memory
    again = compile_cached(src, arch=ARCH, cache=c)
    assert again.cubin == built.cubin
    s = c.stats()
    assert (s["disk_hits"], s["memory_hits"], s["compiles"], s["misses"]) == (1, 1, 0, 0)
    assert not path.exists()
    entry, level = c.lookup(built.key)
    assert level == "memory"


def test_default_cache_uses_gpunb_cache_dir(cache_dir):
    e = gpunb.compile_cached(kernel("default_dir"), arch=ARCH)
    assert entry_path(cache_dir, e.key).is_file()
    assert gpunb.kernel_cache().directory == cache_dir


def test_cache_dir_created_private_and_lazily(tmp_path):
    d = tmp_path / "a" / "b" / "kernels"
    c = KernelCache(d)
    assert not d.exists(), "constructing a KernelCache must not touch the disk"
    assert c.lookup("0" * 64) == (None, None)
    assert d.is_dir()
    assert d.stat().st_mode & 0o777 == 0o700


# -- concurrency ---------------------------------------------------------------------------------

_CONCURRENT_KERNELS = [kernel(f"conc_{i}", f"x[threadIdx.x] = x[threadIdx.x] * {i + 2}.0f + {i}.5f;")
                       for i in range(4)]

_CONCURRENT_CHILD = """
import hashlib, json, os, sys, time
from pathlib import Path
from gpunb.core.build.cached import compile_cached
from gpunb.core.build.cache import kernel_cache
from gpunb.core.runtime import nvrtc

sources = json.loads(sys.argv[1])
sync, rank = Path(sys.argv[2]), int(sys.argv[3])
nvrtc.version()                                   # load NVRTC before the start line
(sync / f"ready-{rank}").touch()
deadline = time.monotonic() + 120
while not (sync / "go").exists():
    if time.monotonic() > deadline:
        sys.exit("no start signal")
    time.sleep(0.002)
order = sources[rank % len(sources):] + sources[:rank % len(sources)]
out = {}
for src in order:
    e = compile_cached(src, arch="sm_90")
    out[e.key] = hashlib.sha256(e.cubin).hexdigest()
print(json.dumps(dict(cubins=out, stats=kernel_cache().stats())))
"""


def test_concurrent_processes_share_one_cache(cache_dir, tmp_path):
    n = 8
    sync = tmp_path / "sync"
    sync.mkdir()
    env = child_env(GPUNB_CACHE_DIR=cache_dir)
    arg = json.dumps(_CONCURRENT_KERNELS)
    procs = [subprocess.Popen([sys.executable, "-c", _CONCURRENT_CHILD, arg, str(sync), str(i)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(n)]
    try:
        deadline = time.monotonic() + 150
        while len(list(sync.glob("ready-*"))) < n:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                break
            time.sleep(0.01)
        (sync / "go").touch()
        results = [p.communicate(timeout=180) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, f"worker failed (rc {p.returncode}):\n{out}\n{err}"
    reports = [json.loads(out.strip().splitlines()[-1]) for out, _ in results]

    expected = reports[0]["cubins"]
    assert len(expected) == 4
    for r in reports:
        assert r["cubins"] == expected, "workers disagree on a kernel's cubin"
        s = r["stats"]
        assert s["compiles"] + s["disk_hits"] == 4
        assert s["corrupted"] == 0 and s["disk_errors"] == 0 and not s["memory_only"]

    files = entry_files(cache_dir)
    assert len(files) == 4
    assert sorted(files) == sorted(entry_path(cache_dir, k) for k in expected)
    for path in files:
        meta, cubin = unpack_entry(path.read_bytes())   # raises on a torn or mixed entry
        assert entry_path(cache_dir, meta["key"]) == path
        assert sha(cubin) == expected[meta["key"]]
    tmp = cache_dir / "tmp"
    assert not tmp.exists() or list(tmp.iterdir()) == [], "a writer left a temp file behind"

    code = f"""
        import hashlib, json
        from gpunb.core.build.cached import compile_cached
        from gpunb.core.build.cache import kernel_cache
        out = {{}}
        for src in {_CONCURRENT_KERNELS!r}:
            e = compile_cached(src, arch="sm_90")
            out[e.key] = hashlib.sha256(e.cubin).hexdigest()
        print(json.dumps(dict(cubins=out, stats=kernel_cache().stats())))
    """
    final = run_child(code, env=env)
    assert final["cubins"] == expected
    assert final["stats"]["disk_hits"] == 4
    assert final["stats"]["compiles"] == 0
    assert final["stats"]["entries"] == 4


# -- corrupted entries ---------------------------------------------------------------------------

def _corrupt(path: Path, how: str, other: Path | None = None) -> None:
    blob = path.read_bytes()
    n = int.from_bytes(blob[_HEAD - 4:_HEAD], "little")
    cubin_len = len(blob) - _HEAD - n
    assert n > 0 and cubin_len > 0
    if how == "truncated":
        path.write_bytes(blob[:len(blob) // 2])
    elif how == "flip_cubin":
        b = bytearray(blob)
        b[_HEAD + n + cubin_len // 2] ^= 0x01
        path.write_bytes(bytes(b))
    elif how == "flip_metadata":
        b = bytearray(blob)
        b[_HEAD + n // 2] ^= 0x20
        path.write_bytes(bytes(b))
    elif how == "garbage":
        path.write_bytes(b"not a cache entry, just some bytes " * 40)
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "other_key":          # a valid envelope, but of another key
        path.write_bytes(other.read_bytes())
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["truncated", "flip_cubin", "flip_metadata", "garbage", "empty",
                                 "other_key"])
def test_corrupted_entry_is_detected_dropped_and_rebuilt(cache_dir, how):
    src = kernel("corrupt_me", "x[threadIdx.x] += 1.0f;")
    good = compile_cached(src, arch=ARCH, cache=KernelCache(cache_dir))
    other = compile_cached(kernel("bystander"), arch=ARCH, cache=KernelCache(cache_dir))
    path = entry_path(cache_dir, good.key)
    _corrupt(path, how, entry_path(cache_dir, other.key))
    assert path.read_bytes() != pack_entry(good.meta, good.cubin)

    c = KernelCache(cache_dir)
    assert c.lookup(good.key) == (None, None)
    s = c.stats()
    assert s["corrupted"] == 1
    assert s["misses"] == 1 and s["disk_hits"] == 0
    assert not path.exists(), "the corrupted file was left in place"
    assert entry_path(cache_dir, other.key).is_file(), "a healthy entry was dropped"

    rebuilt = compile_cached(src, arch=ARCH, cache=c)
    assert c.stats()["compiles"] == 1
    assert rebuilt.cubin == good.cubin
    meta, cubin = unpack_entry(path.read_bytes())
    assert meta["key"] == good.key and cubin == good.cubin

    fresh = KernelCache(cache_dir)
    entry, level = fresh.lookup(good.key)
    assert level == "disk" and entry.cubin == good.cubin
    assert fresh.stats()["corrupted"] == 0


# -- a directory that cannot be written ----------------------------------------------------------

_READONLY_CHILD = """
import json, os, warnings
probe = os.path.join(os.environ["GPUNB_CACHE_DIR"], "probe")
try:
    with open(probe, "w"):
        pass
except OSError:
    writable = False
else:
    writable = True
    os.unlink(probe)
if writable:
    print(json.dumps(dict(writable=True)))
    raise SystemExit(0)
import gpunb
from gpunb.core.build.cached import compile_cached
from gpunb.core.build.cache import kernel_cache
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    entries = [compile_cached('extern "C" __global__ void ro_%d(float* x) { x[0] = %d.0f; }' % (i, i),
                              arch="sm_90") for i in range(3)]
cache = kernel_cache()
entry, level = cache.lookup(entries[0].key)
print(json.dumps(dict(
    writable=False,
    uid=os.getuid(),
    cache_warnings=sum(issubclass(w.category, gpunb.CacheWarning) for w in caught),
    messages=[str(w.message) for w in caught],
    sizes=[len(e.cubin) for e in entries],
    level=level,
    stats=cache.stats(),
    listing=sorted(os.listdir(os.environ["GPUNB_CACHE_DIR"])),
)))
"""


def _can_run_python_as(uid: int, gid: int, cwd: str) -> bool:
    try:
        r = subprocess.run([sys.executable, "-c", "import gpunb.core.build.cached"], env=child_env(),
                           cwd=cwd, user=uid, group=gid, extra_groups=[], capture_output=True,
                           timeout=60)
    except OSError:
        return False
    return r.returncode == 0


def _drop_dac_capabilities():
    # Runs in the child between fork and exec: drop the capabilities that let root ignore file
    # permissions from the bounding set, so the exec'd interpreter obeys mode bits as root.
    libc = ctypes.CDLL(None, use_errno=True)
    pr_capbset_drop = 24
    for cap in (1, 2, 3):   # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
        if libc.prctl(pr_capbset_drop, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def test_readonly_directory_degrades_to_memory_with_one_warning():
    base = Path(tempfile.mkdtemp(prefix="gpunb-ro-"))
    try:
        base.chmod(0o755)                      # traversable by an unprivileged child
        d = base / "kernels"
        d.mkdir()
        d.chmod(0o555)
        env = child_env(GPUNB_CACHE_DIR=d, HOME=base)
        kwargs: dict = {}
        if os.geteuid() == 0:
            if _can_run_python_as(65534, 65534, str(base)):
                kwargs = dict(user=65534, group=65534, extra_groups=[])
            else:
                # The interpreter or the venv is not reachable by nobody (here: a pyenv Python
                # under /root). Stay root but without the permission-bypassing capabilities.
                kwargs = dict(preexec_fn=_drop_dac_capabilities)
        try:
            out = run_child(_READONLY_CHILD, env=env, cwd=str(base), **kwargs)
        except (OSError, subprocess.SubprocessError) as e:
            pytest.skip(f"cannot start an unprivileged child here: {e}")
        if out["writable"]:
            pytest.skip("cannot make a directory read-only for the child in this environment")
        assert out["cache_warnings"] == 1, out["messages"]
        assert str(d) in out["messages"][0]
        assert all(size > 0 for size in out["sizes"])
        s = out["stats"]
        assert s["memory_only"] is True
        assert s["compiles"] == 3
        assert out["level"] == "memory"
        assert s["memory_hits"] == 1
        assert out["listing"] == [], "something was written into the read-only directory"
    finally:
        for p in (base / "kernels", base):
            if p.exists():
                p.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


# -- a full disk ---------------------------------------------------------------------------------

_FULL_DISK_CHILD = """
import json, os, resource, signal, warnings
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
import gpunb
from gpunb.core.build.cached import compile_cached
from gpunb.core.build.cache import kernel_cache
from gpunb.core.runtime import nvrtc
nvrtc.version()
cache = kernel_cache()
cache.lookup("0" * 64)                          # opens the store before the limit bites
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    entries = [compile_cached('extern "C" __global__ void full_%d(float* x) { x[0] = %d.0f; }' % (i, i),
                              arch="sm_90") for i in range(3)]
entry, level = cache.lookup(entries[1].key)
print(json.dumps(dict(
    cache_warnings=sum(issubclass(w.category, gpunb.CacheWarning) for w in caught),
    messages=[str(w.message) for w in caught],
    sizes=[len(e.cubin) for e in entries],
    level=level,
    stats=cache.stats(),
)))
"""


def test_file_size_limit_degrades_to_memory_with_one_warning(cache_dir):
    out = run_child(_FULL_DISK_CHILD, env=child_env(GPUNB_CACHE_DIR=cache_dir))
    assert min(out["sizes"]) > 1000, "the cubins must not fit under the file-size limit"
    assert out["cache_warnings"] == 1, out["messages"]
    s = out["stats"]
    assert s["memory_only"] is True
    assert s["compiles"] == 3 and s["disk_errors"] >= 1
    assert out["level"] == "memory"
    assert entry_files(cache_dir) == [], "a partial entry reached entries/"
    assert list((cache_dir / "tmp").iterdir()) == [], "a partial temp file was left behind"


def test_no_space_left_degrades_to_memory_with_one_warning(cache_dir, monkeypatch):
    from gpunb.core.runtime.store import Store

    def full(self, key, value):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Store, "put", full)
    c = KernelCache(cache_dir)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = compile_cached(kernel("nospace_a"), arch=ARCH, cache=c)
        b = compile_cached(kernel("nospace_b"), arch=ARCH, cache=c)
    msgs = [str(w.message) for w in caught if issubclass(w.category, gpunb.CacheWarning)]
    assert len(msgs) == 1, msgs
    assert "No space left on device" in msgs[0]
    assert a.cubin and b.cubin
    s = c.stats()
    assert s["memory_only"] is True and s["disk_errors"] == 1 and s["compiles"] == 2
    assert c.lookup(a.key)[1] == "memory"
    assert compile_cached(kernel("nospace_b"), arch=ARCH, cache=c).cubin == b.cubin
    assert c.stats()["compiles"] == 2
    assert entry_files(cache_dir) == []


def test_unreadable_entries_warn_once(cache_dir, monkeypatch):
    # Every read fails (an I/O error on a dying disk, say): each compile still works, and the
    # user hears about it once, not once per kernel.
    from gpunb.core.runtime.store import Store

    def broken(self, key):
        raise OSError(errno.EIO, "Input/output error")

    c = KernelCache(cache_dir)
    monkeypatch.setattr(Store, "get", broken)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = [compile_cached(kernel(f"eio_{i}"), arch=ARCH, cache=c) for i in range(3)]
    msgs = [str(w.message) for w in caught if issubclass(w.category, gpunb.CacheWarning)]
    assert len(msgs) == 1, msgs
    assert all(e.cubin for e in built)
    s = c.stats()
    assert s["compiles"] == 3 and s["disk_errors"] == 3 and s["memory_only"] is True
    assert c.lookup(built[0].key)[1] == "memory"


# -- eviction ------------------------------------------------------------------------------------

def test_eviction_keeps_recently_used_entries_under_the_cap(tmp_path):
    d = tmp_path / "kernels"
    progs = []
    for i in range(5):
        src = kernel(f"evict_{i}", f"x[threadIdx.x] = x[threadIdx.x] * {i + 3}.0f;")
        p = compile_program(src, (), ARCH)
        progs.append((key_of(src), p.cubin, {"source": src, "kernels": [f"evict_{i}"]}))
    sizes = [len(pack_entry(dict(m, key=k, schema=cache_mod.SCHEMA, size=len(c), created=0.0), c))
             for k, c, m in progs]
    cap = int(2.5 * max(sizes))
    assert 3 * min(sizes) > cap >= 2 * max(sizes) + 100

    writer = KernelCache(d, max_bytes=cap)
    past = time.time() - 100_000
    clock = iter(range(100))

    def set_atime(key):
        # Deterministic recency: every use gets the next tick of a clock far in the past (file
        # timestamps from the kernel's coarse clock cannot order quick successive operations).
        p = entry_path(d, key)
        st = p.stat()
        os.utime(p, ns=(int((past + next(clock)) * 1e9), st.st_mtime_ns))

    def touch(key):
        before = entry_path(d, key).stat().st_atime
        entry, level = KernelCache(d, max_bytes=cap).lookup(key)   # fresh: no memory layer
        assert level == "disk"
        assert entry_path(d, key).stat().st_atime > before, "a disk hit did not refresh atime"
        set_atime(key)

    def present():
        return {i for i, (k, _, _) in enumerate(progs) if entry_path(d, k).is_file()}

    keys = [k for k, _, _ in progs]
    writer.put(keys[0], progs[0][1], progs[0][2]); set_atime(keys[0])
    writer.put(keys[1], progs[1][1], progs[1][2]); set_atime(keys[1])
    assert present() == {0, 1}
    for i in (2, 3, 4):
        touch(keys[0])                               # the early entry stays in use
        writer.put(keys[i], progs[i][1], progs[i][2])
        assert present() == {0, i}, f"after writing entry {i}"
        set_atime(keys[i])
    total = sum(p.stat().st_size for p in entry_files(d))
    assert total <= cap
    fresh = KernelCache(d, max_bytes=cap)
    assert fresh.lookup(keys[0])[1] == "disk" and fresh.lookup(keys[4])[1] == "disk"
    assert fresh.lookup(keys[1]) == (None, None)
    assert fresh.stats()["entries"] == 2


# -- keys ----------------------------------------------------------------------------------------

def test_key_is_the_same_from_any_working_directory(tmp_path):
    src = kernel("cwd_key")
    code = f"""
        import json
        from gpunb.core.build.cached import cache_key
        from gpunb.core.build.compiler import nvrtc_options
        final, arch = nvrtc_options(["-DN=4", "--use_fast_math"], "sm_90")
        print(json.dumps(dict(key=cache_key({src!r}, final, arch))))
    """
    keys = set()
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        keys.add(run_child(code, cwd=tmp_path / name)["key"])
    keys.add(key_of(src, ["-DN=4", "--use_fast_math"]))
    assert len(keys) == 1


def test_key_is_the_same_in_two_cache_directories(tmp_path):
    src = kernel("two_dirs")
    a = compile_cached(src, arch=ARCH, cache=KernelCache(tmp_path / "a"))
    b = compile_cached(src, arch=ARCH, cache=KernelCache(tmp_path / "b"))
    assert a.key == b.key
    assert a.cubin == b.cubin


def test_key_changes_with_what_determines_the_binary():
    src = kernel("keyed")
    base = key_of(src)
    assert len(base) == 64 and int(base, 16) >= 0
    assert key_of(src) == base
    assert key_of(src, arch="90") == base and key_of(src, arch=(9, 0)) == base
    variants = {
        "source": key_of(src.replace("2.0f", "3.0f")),
        "option": key_of(src, ["-DN=4"]),
        "another option value": key_of(src, ["-DN=5"]),
        "std": key_of(src, ["-std=c++20"]),
        "arch": key_of(src, arch="sm_80"),
        "name expression": key_of(src, name_expressions=["keyed"]),
        "header given by name": key_of('#include "x.h"\n' + src, headers={"x.h": "#define X 1"}),
    }
    variants["header content"] = key_of('#include "x.h"\n' + src, headers={"x.h": "#define X 2"})
    assert base not in variants.values(), [k for k, v in variants.items() if v == base]
    assert len(set(variants.values())) == len(variants)


def test_key_covers_header_content_not_its_directory(tmp_path):
    src = '#include "scale.h"\n' + kernel("hdr_scale", "x[threadIdx.x] *= SCALE;")
    a, b = tmp_path / "A", tmp_path / "B"
    a.mkdir()
    b.mkdir()
    (a / "scale.h").write_text("#define SCALE 2.0f\n")
    (b / "scale.h").write_text("#define SCALE 2.0f\n")
    k_a = key_of(src, ["-I", str(a)])
    assert key_of(src, ["-I", str(b)]) == k_a, "an identical header elsewhere changed the key"
    assert key_of(src, [f"-I{b}"]) == k_a
    assert key_of(src, [f"--include-path={b}"]) == k_a
    assert key_of(src, ["-I", str(a)]) != key_of(src), "the header is not in the key"

    (a / "scale.h").write_text("#define SCALE 3.0f\n")
    k_a3 = key_of(src, ["-I", str(a)])
    assert k_a3 != k_a, "changing the header did not change the key"

    # headers reached from headers count too
    (a / "scale.h").write_text('#include "inner.h"\n#define SCALE INNER\n')
    (a / "inner.h").write_text("#define INNER 2.0f\n")
    k_inner = key_of(src, ["-I", str(a)])
    (a / "inner.h").write_text("#define INNER 4.0f\n")
    assert key_of(src, ["-I", str(a)]) != k_inner

    # and the compiled result follows: no stale cubin for a changed header
    c = KernelCache(tmp_path / "kc")
    one = compile_cached(src, ["-I", str(a)], ARCH, cache=c)
    (a / "inner.h").write_text("#define INNER 8.0f\n")
    two = compile_cached(src, ["-I", str(a)], ARCH, cache=c)
    assert one.key != two.key and one.cubin != two.cubin
    assert c.stats()["compiles"] == 2


def test_key_record_holds_no_absolute_path(tmp_path):
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "scale.h").write_text("#define SCALE 2.0f\n")
    src = '#include "scale.h"\n' + kernel("pathfree", "x[threadIdx.x] *= SCALE;")
    final, arch = nvrtc_options(["-I", str(inc), f"--include-path={inc}", f"-I{inc}", "-DN=1"], ARCH)
    record = key_record(src, final, arch)
    text = json.dumps(record)
    assert str(tmp_path) not in text
    assert record["headers"] and record["headers"][0][0] == "scale.h"
    assert "-DN=1" in record["options"]

    e = compile_cached(src, ["-I", str(inc)], ARCH, cache=KernelCache(tmp_path / "kc"))
    assert str(tmp_path) not in e.key


def test_header_next_to_the_program_is_in_the_key(tmp_path, monkeypatch):
    # NVRTC resolves a quoted #include against the directory of the program's name ("kernel.cu":
    # the working directory) with no -I option. Changing such a header must not return a stale
    # cubin from the cache.
    monkeypatch.chdir(tmp_path)
    src = '#include "local_scale.h"\n' + kernel("local_hdr", "x[threadIdx.x] *= SCALE;")
    (tmp_path / "local_scale.h").write_text("#define SCALE 2.0f\n")
    c = KernelCache(tmp_path / "kc")
    compile_cached(src, arch=ARCH, cache=c)
    (tmp_path / "local_scale.h").write_text("#define SCALE 3.0f\n")
    now = compile_cached(src, arch=ARCH, cache=c)
    assert now.cubin == compile_program(src, (), ARCH).cubin, \
        "compile_cached returned a cubin built from the old header"


# -- metadata and inspection ---------------------------------------------------------------------

def test_entries_find_stats_clear(cache_dir):
    c = KernelCache(cache_dir)
    a = compile_cached(kernel("meta_alpha"), ["-DN=1"], ARCH, cache=c)
    b = compile_cached(kernel("meta_beta"), arch=ARCH, cache=c)

    view = KernelCache(cache_dir)           # a reader that compiled nothing sees the disk records
    recs = {r["key"]: r for r in view.entries()}
    assert set(recs) == {a.key, b.key}
    ra = recs[a.key]
    for field in ("key", "kernels", "source", "options", "arch", "nvrtc", "compile_seconds",
                  "size", "bytes", "created", "last_used"):
        assert field in ra, field
    assert ra["kernels"] == ["meta_alpha"]
    assert ra["source"] == kernel("meta_alpha")
    assert "-DN=1" in ra["options"] and f"--gpu-architecture={ARCH}" in ra["options"]
    assert ra["arch"] == ARCH
    assert ra["nvrtc"].startswith("nvrtc-")
    assert ra["size"] == len(a.cubin)
    assert ra["bytes"] == entry_path(cache_dir, a.key).stat().st_size > ra["size"]
    assert ra["compile_seconds"] > 0
    assert 0 < ra["created"] <= time.time() + 1 and ra["last_used"] > 0

    assert [r["key"] for r in view.find("meta_alpha")] == [a.key]
    assert [r["key"] for r in view.find(b.key[:12])] == [b.key]
    assert view.find("no_such_kernel") == []

    s = view.stats()
    for field in ("memory_hits", "disk_hits", "misses", "compiles", "compile_seconds", "entries",
                  "bytes", "corrupted", "disk_errors", "max_bytes", "directory", "memory_only"):
        assert field in s, field
    assert s["entries"] == 2
    assert s["bytes"] == sum(p.stat().st_size for p in entry_files(cache_dir))
    cs = c.stats()
    assert cs["compiles"] == 2 and cs["misses"] == 2
    assert cs["compile_seconds"] == pytest.approx(a.meta["compile_seconds"] + b.meta["compile_seconds"])

    assert c.lookup(a.key)[1] == "memory"
    assert c.clear() == 2
    assert entry_files(cache_dir) == []
    assert c.entries() == []
    assert c.stats()["entries"] == 0 and c.stats()["bytes"] == 0
    assert c.lookup(a.key) == (None, None), "clear() left the entry in memory"
    assert c.clear() == 0


def test_find_a_cpp_kernel_by_its_name(cache_dir):
    # A kernel without extern "C" has a mangled symbol (_Z9cpp_scalePf); find() promises the
    # entries "that hold a kernel named" the text, which for a user is the name in the source.
    c = KernelCache(cache_dir)
    e = compile_cached('__global__ void cpp_scale(float* x) { x[0] *= 2.0f; }\n', arch=ARCH, cache=c)
    assert e.kernels and e.kernels[0].startswith("_Z")
    assert [r["key"] for r in c.find("cpp_scale")] == [e.key]
