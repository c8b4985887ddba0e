"""Slow-build warnings and events, settings, the lazy import, the no-GPU error, the CLI."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import gpunb
from tests.conftest import libcuda_loadable
from gpunb import CompileError, GPUUnavailableError
from gpunb.core import events
from gpunb.core.build.cached import compile_cached
from gpunb.core.build.cache import kernel_cache, set_kernel_cache
from gpunb.core.config import DEFAULT_MAX_BYTES, Config

ARCH = "sm_90"
REPO = Path(__file__).resolve().parents[1]


def fresh_source(name: str = "fresh") -> str:
    """A kernel no cache has seen: the unique constant changes the source, hence the key."""
    return (f'extern "C" __global__ void {name}(float* x) '
            f'{{ x[threadIdx.x] = {uuid.uuid4().int % 10**9}.0f; }}\n')


def gpunb_records(caplog, level=logging.WARNING):
    return [r for r in caplog.records if r.name == "gpunb" and r.levelno == level]


# -- the slow-build warning ------------------------------------------------------------------

def test_slow_compile_warns_once_naming_kernel_and_cache(cache_dir, monkeypatch, caplog):
    monkeypatch.setenv("GPUNB_SLOW_COMPILE_SECONDS", "0.001")
    src = fresh_source("slowpoke")
    with caplog.at_level(logging.WARNING, logger="gpunb"):
        compile_cached(src, (), arch=ARCH)
    (rec,) = gpunb_records(caplog)
    msg = rec.getMessage()
    assert "slowpoke" in msg and "sm_90" in msg
    assert "one-time" in msg
    assert str(cache_dir) in msg
    assert "GPUNB_SLOW_COMPILE_SECONDS=off" in msg and "cache warm" in msg

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="gpunb"):
        entry = compile_cached(src, (), arch=ARCH)           # warm: a memory hit
    assert entry.cubin.startswith(b"\x7fELF")
    assert gpunb_records(caplog) == []


def test_slow_compile_display_name(cache_dir, monkeypatch, caplog):
    monkeypatch.setenv("GPUNB_SLOW_COMPILE_SECONDS", "0.001")
    with caplog.at_level(logging.WARNING, logger="gpunb"):
        compile_cached(fresh_source(), (), arch=ARCH, display_name="my big module")
    (rec,) = gpunb_records(caplog)
    assert "my big module" in rec.getMessage()


@pytest.mark.parametrize("value", ["off", "OFF", "never", "0"])
def test_slow_compile_warning_can_be_silenced(cache_dir, monkeypatch, caplog, value):
    monkeypatch.setenv("GPUNB_SLOW_COMPILE_SECONDS", value)
    with caplog.at_level(logging.DEBUG, logger="gpunb"):
        compile_cached(fresh_source(), (), arch=ARCH)
    assert [r for r in caplog.records if r.name == "gpunb"] == []
    assert kernel_cache().stats()["compiles"] == 1


def test_slow_warning_names_memory_when_cache_dir_unusable(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("GPUNB_CACHE_DIR", str(blocker / "kernels"))
    monkeypatch.setenv("GPUNB_SLOW_COMPILE_SECONDS", "0.001")
    set_kernel_cache(None)
    with pytest.warns(gpunb.CacheWarning), caplog.at_level(logging.WARNING, logger="gpunb"):
        compile_cached(fresh_source(), (), arch=ARCH)
    (rec,) = gpunb_records(caplog)
    assert "in memory" in rec.getMessage()


# -- events ----------------------------------------------------------------------------------

@pytest.fixture
def quiet(monkeypatch):
    monkeypatch.setenv("GPUNB_SLOW_COMPILE_SECONDS", "off")


def test_cold_compile_events_then_memory_hit_then_disk_hit(cache_dir, quiet):
    src = fresh_source("evented")
    seen = []
    with events.subscribed(seen.append):
        entry = compile_cached(src, (), arch=ARCH)
    assert [type(e) for e in seen] == [events.CacheMiss, events.CompileStarted,
                                       events.CompileFinished]
    miss, started, finished = seen
    assert miss.key == started.key == finished.key == entry.key
    assert miss.name == started.name == finished.name == "evented"
    assert started.arch == finished.arch == "sm_90"
    assert finished.error is None

    seen.clear()
    with events.subscribed(seen.append):
        compile_cached(src, (), arch=ARCH)
    assert seen == [events.CacheHit(entry.key, "evented", "memory", time=seen[0].time)]

    set_kernel_cache(None)                      # a new process's view: only the disk has it
    seen.clear()
    with events.subscribed(seen.append):
        compile_cached(src, (), arch=ARCH)
    assert [(type(e), getattr(e, "level", None)) for e in seen] == [(events.CacheHit, "disk")]

    # unsubscribed: nothing more arrives
    compile_cached(src, ("-DX=1",), arch=ARCH)
    assert len(seen) == 1


def test_failed_compile_finishes_with_error(cache_dir, quiet):
    seen = []
    with events.subscribed(seen.append), pytest.raises(CompileError) as info:
        compile_cached('extern "C" __global__ void broken() { undefined_thing; }\n', (), arch=ARCH)
    assert [type(e) for e in seen] == [events.CacheMiss, events.CompileStarted,
                                       events.CompileFinished]
    assert seen[-1].name == "broken"
    assert seen[-1].error == info.value.log
    assert "undefined_thing" in seen[-1].error
    assert kernel_cache().stats()["compiles"] == 0


def test_raising_subscriber_does_not_break_compiling(cache_dir, quiet, caplog):
    def broken_view(event):
        raise RuntimeError("the view broke")

    seen = []
    with events.subscribed(broken_view), events.subscribed(seen.append), \
            caplog.at_level(logging.ERROR, logger="gpunb"):
        entry = compile_cached(fresh_source(), (), arch=ARCH)
    assert entry.cubin.startswith(b"\x7fELF")
    assert len(seen) == 3                                  # the others still hear every event
    errors = gpunb_records(caplog, logging.ERROR)
    assert len(errors) == 3
    assert all(isinstance(r.exc_info[1], RuntimeError) for r in errors)
    assert "broken_view" in errors[0].getMessage()


def test_subscribe_is_idempotent_and_unsubscribe_tolerant():
    seen = []
    events.subscribe(seen.append)
    events.subscribe(seen.append)
    try:
        events.emit(events.CacheMiss("k", "n"))
    finally:
        events.unsubscribe(seen.append)
    events.unsubscribe(seen.append)          # unknown now: ignored
    events.emit(events.CacheMiss("k", "n"))
    assert len(seen) == 1


def test_build_scope_warns_once_for_nested_builds(cache_dir, monkeypatch, caplog):
    monkeypatch.setenv("GPUNB_SLOW_COMPILE_SECONDS", "0.001")
    with caplog.at_level(logging.WARNING, logger="gpunb"):
        with events.build_scope("the whole batch", 0.001, cache_dir):
            compile_cached(fresh_source("one"), (), arch=ARCH)
            compile_cached(fresh_source("two"), (), arch=ARCH)
    (rec,) = gpunb_records(caplog)
    assert "the whole batch" in rec.getMessage()


# -- config ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["lots", "-5", "0", "12Q", "", "1e400", "inf"])
def test_bad_cache_max_bytes(tmp_path, text):
    env = {"GPUNB_CACHE_DIR": str(tmp_path), "GPUNB_CACHE_MAX_BYTES": text or " "}
    with pytest.raises(ValueError, match="GPUNB_CACHE_MAX_BYTES"):
        Config.from_env(env)


@pytest.mark.parametrize("text, expected", [
    ("512M", 512 * 1024**2), ("512m", 512 * 1024**2), ("512MB", 512 * 1024**2),
    ("2G", 2 * 1024**3), ("2GiB", 2 * 1024**3), ("1.5K", 1536), ("1048576", 1048576),
    (" 3 T ", 3 * 1024**4),
])
def test_cache_max_bytes_parses(tmp_path, text, expected):
    env = {"GPUNB_CACHE_DIR": str(tmp_path), "GPUNB_CACHE_MAX_BYTES": text}
    assert Config.from_env(env).cache_max_bytes == expected


@pytest.mark.parametrize("text", ["soon", "-1", "1s", "2,5"])
def test_bad_slow_compile_seconds(tmp_path, text):
    env = {"GPUNB_CACHE_DIR": str(tmp_path), "GPUNB_SLOW_COMPILE_SECONDS": text}
    with pytest.raises(ValueError, match="GPUNB_SLOW_COMPILE_SECONDS"):
        Config.from_env(env)


@pytest.mark.parametrize("text", ["nan", "inf", "1e999"])
def test_non_finite_slow_compile_seconds(tmp_path, text):
    # nan made every compile warn at once; inf crashed the timer thread (OverflowError from
    # threading). Either refuse them or read them as "never warn".
    env = {"GPUNB_CACHE_DIR": str(tmp_path), "GPUNB_SLOW_COMPILE_SECONDS": text}
    try:
        config = Config.from_env(env)
    except ValueError as e:
        assert "GPUNB_SLOW_COMPILE_SECONDS" in str(e)
    else:
        assert config.slow_compile_seconds is None


@pytest.mark.parametrize("text, expected", [
    ("off", None), ("Never", None), ("none", None), ("no", None), ("false", None), ("0", None),
    ("3.5", 3.5), ("10", 10.0),
])
def test_slow_compile_seconds_parses(tmp_path, text, expected):
    env = {"GPUNB_CACHE_DIR": str(tmp_path), "GPUNB_SLOW_COMPILE_SECONDS": text}
    assert Config.from_env(env).slow_compile_seconds == expected


def test_config_defaults_and_frozen(tmp_path):
    c = Config.from_env({"GPUNB_CACHE_DIR": str(tmp_path)})
    assert c.cache_dir == tmp_path
    assert c.cache_max_bytes == DEFAULT_MAX_BYTES == 2 * 1024**3
    assert c.slow_compile_seconds == 2.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.cache_max_bytes = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.cache_dir = tmp_path / "elsewhere"
    d = Config.from_env({})
    assert d.cache_dir.name == "kernels" and "gpunb" in str(d.cache_dir)


def test_config_validates_direct_construction(tmp_path):
    assert Config("~/somewhere").cache_dir == Path.home() / "somewhere"
    with pytest.raises(ValueError, match="cache_max_bytes"):
        Config(tmp_path, cache_max_bytes=0)
    with pytest.raises(ValueError, match="slow_compile_seconds"):
        Config(tmp_path, slow_compile_seconds=-1)
    assert Config(tmp_path, slow_compile_seconds=0).slow_compile_seconds is None


# -- lazy import (subprocesses: this process has long since loaded CUDA libraries) -----------

def run_python(code: str, cache: Path, **env_extra) -> dict:
    env = dict(os.environ, GPUNB_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
               **env_extra)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


PROBE = r"""
import json, re, sys
def probe():
    maps = open("/proc/self/maps").read()
    return {"libcuda": bool(re.search(r"/libcuda\.so", maps)), "libnvrtc": "libnvrtc" in maps,
            "cuda_modules": sorted(m for m in sys.modules if m == "cuda" or m.startswith("cuda."))}
"""


def test_import_gpunb_loads_no_cuda(tmp_path):
    out = run_python(PROBE + r"""
import gpunb
first = probe()
m = gpunb.RawModule(code='extern "C" __global__ void k(float* x) { x[0] = 1; }')
k = m.get_function("k")
second = probe()
print(json.dumps({"first": first, "second": second, "numpy": "numpy" in sys.modules}))
""", tmp_path / "cache")
    for state in (out["first"], out["second"]):
        assert state == {"libcuda": False, "libnvrtc": False, "cuda_modules": []}


def test_warm_cache_hit_in_fresh_process_does_not_load_nvrtc(tmp_path):
    cache = tmp_path / "cache"
    body = PROBE + r"""
from gpunb.core.build.cached import compile_cached
from gpunb.core.build.cache import kernel_cache
compile_cached('extern "C" __global__ void warmed(float* x) { x[0] = 2; }', (), "sm_90")
print(json.dumps(dict(probe(), **kernel_cache().stats())))
"""
    cold = run_python(body, cache)
    assert cold["compiles"] == 1 and cold["libnvrtc"]          # the probe can see NVRTC
    warm = run_python(body, cache)
    assert warm["disk_hits"] == 1 and warm["compiles"] == 0
    assert not warm["libnvrtc"] and not warm["libcuda"]


# -- no GPU ----------------------------------------------------------------------------------





def test_device_info_raises_gpu_unavailable(no_gpu):
    from gpunb.core.runtime import driver

    with pytest.raises(GPUUnavailableError) as info:
        driver.device_info()
    err = info.value
    assert isinstance(err, RuntimeError) and isinstance(err, gpunb.GPUNBError)
    assert err.reason == no_gpu and err.reason in str(err)
    if not libcuda_loadable():
        assert "driver library" in err.reason and "libcuda.so.1" in err.reason
    msg = str(err)
    assert "Compiling kernels for a named architecture" in msg
    assert "kernel cache still work" in msg
    # the same answer every time, and through every entry point that needs a device
    with pytest.raises(GPUUnavailableError, match=re.escape(err.reason)):
        gpunb.device_info()
    with pytest.raises(GPUUnavailableError):
        driver.current_arch()
    with pytest.raises(GPUUnavailableError):
        gpunb.synchronize()
    assert driver.driver_version() is None or isinstance(driver.driver_version(), tuple)


# -- the CLI ---------------------------------------------------------------------------------

def cli(*args, cache: Path, cwd: Path | None = None):
    env = dict(os.environ, GPUNB_CACHE_DIR=str(cache), GPUNB_SLOW_COMPILE_SECONDS="off",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "gpunb", *args], capture_output=True, text=True,
                          env=env, cwd=cwd or REPO, timeout=300)


@pytest.fixture(scope="module")
def demo_cache(tmp_path_factory):
    """A cache directory after one `python -m gpunb demo`, and that run's output."""
    cache = tmp_path_factory.mktemp("cli") / "kernels"
    return cache, cli("demo", cache=cache)


def test_cli_info(tmp_path, no_gpu):
    cache = tmp_path / "kernels"
    r = cli("info", cache=cache)
    assert r.returncode == 0, r.stderr
    from gpunb.core.runtime import nvrtc

    major, minor = nvrtc.version()
    assert f"NVRTC: {major}.{minor}" in r.stdout
    assert "GPU: none" in r.stdout and no_gpu in r.stdout
    assert f"kernel cache: {cache}" in r.stdout
    assert "sm_90" in r.stdout                     # the archs NVRTC compiles for
    assert not cache.exists()                      # info writes nothing


def test_cli_info_json(tmp_path, no_gpu):
    r = cli("info", "--json", cache=tmp_path / "kernels")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["gpunb"] == gpunb.__version__
    assert info["cache_dir"] == str(tmp_path / "kernels")
    assert info["gpu"] is None and info["gpu_unavailable"] == no_gpu
    assert "sm_90" in info["nvrtc_archs"]
    assert re.fullmatch(r"\d+\.\d+", info["nvrtc"])


def test_cli_demo_without_gpu(demo_cache, no_gpu):
    cache, r = demo_cache
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "No GPU here" in out and no_gpu in out
    assert "laplace_step" in out and "vector_add" in out and "sm_90" in out
    assert f"kernel cache: {cache}" in out
    assert "entries: 1," in out
    assert "1 compiles" in out


def test_cli_cache_status_json(demo_cache):
    cache, _ = demo_cache
    r = cli("cache", "status", "--json", cache=cache)
    assert r.returncode == 0, r.stderr
    status = json.loads(r.stdout)
    assert status["entries"] == 1
    assert status["directory"] == str(cache)
    assert status["bytes"] > 0 and status["memory_only"] is False
    text = cli("cache", "status", cache=cache).stdout
    assert f"kernel cache: {cache}" in text and "entries: 1," in text


def test_cli_cache_list(demo_cache):
    cache, _ = demo_cache
    r = cli("cache", "list", cache=cache)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:3] == ["key", "kernels", "arch"]
    assert "laplace_step, vector_add" in r.stdout and "sm_90" in r.stdout


def test_cli_cache_list_json(demo_cache):
    cache, _ = demo_cache
    r = cli("cache", "list", "--json", cache=cache)
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(r.stdout)
    assert {"key", "kernels", "compile_seconds", "arch", "bytes"} <= set(row)
    assert row["kernels"] == ["laplace_step", "vector_add"]
    assert len(row["key"]) == 64 and row["arch"] == "sm_90"
    assert "source" not in row
    (with_source,) = json.loads(cli("cache", "list", "--json", "--source", cache=cache).stdout)
    assert "vector_add" in with_source["source"]


def test_cli_cache_warm_named_arch(tmp_path):
    cache = tmp_path / "kernels"
    from gpunb.core.kernels.standard import standard_modules

    n = len(standard_modules())          # the demo and the standard array kernels
    assert n > 100
    first = cli("cache", "warm", "--arch", "sm_80", cache=cache)
    assert first.returncode == 0, first.stderr
    assert f"{n} compiled, 0 already cached, 0 failed for sm_80" in first.stdout
    assert "demo: compiled" in first.stderr
    assert "reduce_sum_afloat32_to_float32_o1r1: compiled" in first.stderr
    second = cli("cache", "warm", "--arch", "sm_80", cache=cache)
    assert second.returncode == 0, second.stderr
    assert f"0 compiled, {n} already cached, 0 failed for sm_80" in second.stdout
    assert "demo: cached" in second.stderr
    rows = json.loads(cli("cache", "list", "--json", cache=cache).stdout)
    assert len(rows) == n and {r["arch"] for r in rows} == {"sm_80"}


def test_cli_cache_warm_json(tmp_path):
    from gpunb.core.kernels.standard import standard_modules

    r = cli("cache", "warm", "--arch", "sm_90", "--json", cache=tmp_path / "kernels")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["arch"] == "sm_90" and rep["failed"] == {}
    assert sorted(rep["compiled"]) == sorted(m.name for m in standard_modules())


def test_cli_cache_warm_without_arch_and_gpu(tmp_path, no_gpu):
    r = cli("cache", "warm", cache=tmp_path / "kernels")
    assert r.returncode == 2
    assert no_gpu in r.stderr
    assert "--arch" in r.stderr and "name a target" in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_cache_warm_file_with_error(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void bad(float* x) {\n  x[0] = 1\n}\n')
    good = tmp_path / "good.cu"
    good.write_text('extern "C" __global__ void good(float* x) { x[0] = 1; }\n')
    r = cli("cache", "warm", "--no-standard", "--arch", "sm_90", str(bad), str(good),
            cache=tmp_path / "kernels")
    assert r.returncode == 1, r.stderr
    assert "1 compiled, 0 already cached, 1 failed for sm_90" in r.stdout
    assert "bad.cu:" in r.stdout
    assert 'error: expected a ";"' in r.stdout
    assert "> 3 | }" in r.stdout
    assert "bad.cu: FAILED" in r.stderr


def test_cli_cache_warm_own_file(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "scale.h").write_text("#define SCALE 3.0f\n")
    good = tmp_path / "good.cu"
    good.write_text('#include "inc/scale.h"\nextern "C" __global__ void good(float* x) '
                    '{ x[0] *= SCALE; }\n')
    cache = tmp_path / "kernels"
    r = cli("cache", "warm", "--arch", "sm_90", "--no-standard", str(good), cache=cache)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 compiled" in r.stdout
    rows = json.loads(cli("cache", "list", "--json", cache=cache).stdout)
    assert [r["kernels"] for r in rows] == [["good"]]


def test_cli_cache_clear(tmp_path):
    cache = tmp_path / "kernels"
    good = tmp_path / "good.cu"
    good.write_text('extern "C" __global__ void good(float* x) { x[0] = 1; }\n')
    assert cli("cache", "warm", "--no-standard", "--arch", "sm_90", str(good), cache=cache).returncode == 0
    assert json.loads(cli("cache", "status", "--json", cache=cache).stdout)["entries"] == 1
    r = cli("cache", "clear", cache=cache)
    assert r.returncode == 0, r.stderr
    assert f"removed 1 entries from {cache}" in r.stdout
    assert json.loads(cli("cache", "status", "--json", cache=cache).stdout)["entries"] == 0
    assert json.loads(cli("cache", "list", "--json", cache=cache).stdout) == []
    again = cli("cache", "clear", "--json", cache=cache)
    assert json.loads(again.stdout) == {"removed": 0, "directory": str(cache)}


def test_cli_usage_errors(tmp_path):
    assert cli(cache=tmp_path).returncode == 2
    r = cli("cache", "list", "--sort", "colour", cache=tmp_path)
    assert r.returncode == 2 and "colour" in r.stderr
    r = cli("cache", "warm", "--arch", "compute_90", cache=tmp_path / "kernels")
    assert r.returncode == 2 and "compute_90" in r.stderr and "Traceback" not in r.stderr


# -- first touch -------------------------------------------------------------------------------

@pytest.mark.gpu
def test_first_array_imports_neither_cuda_core_nor_bindings(tmp_path):
    """The first array, its copy back and a synchronize go through ctypes on libcuda: with the
    background import switched off, cuda.core and cuda.bindings' driver stay unimported; the
    first ufunc then needs cuda.bindings' launch, and still no cuda.core."""
    out = run_python(PROBE + r"""
import numpy as np
import gpunb
from gpunb.core.runtime import early
early.preload = lambda: None
x = np.arange(10, dtype=np.float32)
g = gpunb.asarray(x)
back = g.get()
gpunb.synchronize()
first = probe()["cuda_modules"]
s = (g + g).get()
second = probe()["cuda_modules"]
print(json.dumps({"core": [any(m.startswith("cuda.core") for m in ms) for ms in (first, second)],
                  "bindings_driver": ["cuda.bindings.driver" in ms for ms in (first, second)],
                  "same": back.tolist() == x.tolist() and s.tolist() == (x + x).tolist(),
                  "used": gpunb.get_default_memory_pool().used_bytes() > 0}))
""", tmp_path / "cache")
    assert out == {"core": [False, False], "bindings_driver": [False, True], "same": True, "used": True}


@pytest.mark.gpu
def test_default_stream_handle_matches_cuda_core():
    from gpunb.core.runtime import driver

    gp_ctx = driver.context()
    h = int(gp_ctx.default_stream.handle)       # cuda.core's Stream, made now
    # the legacy default stream is CU_STREAM_LEGACY (1) or the null handle (0): the same stream
    assert h == gp_ctx.default_handle or (h == 0 and gp_ctx.default_handle == 1)
