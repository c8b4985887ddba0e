"""``%%cuda`` and the ``gpunb`` IPython extension in an InteractiveShell, against a temporary
kernel cache; :mod:`gpunb.core.build.inspection` (PTX, SASS, resources). GPU tests launch ``%%cuda``
kernels and compare with NumPy."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import gpunb
from gpunb import CompileError, GPUUnavailableError, RawKernel
from gpunb.core.build import inspection
from gpunb.core.build.cache import KernelCache, kernel_cache, set_kernel_cache
from gpunb.magics import cuda as cuda_magics
from gpunb.magics import load_ipython_extension, registered, unload_ipython_extension
from gpunb.magics.cuda import CellModule, CudaMagics, python_name

ARCH = "sm_90"

SAXPY = """\
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""

TEMPLATE = """\
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
__global__ void fill_one(int* out) { out[threadIdx.x] = 1; }
"""

STENCIL = """\
extern "C" __global__ void laplace(const float* u, float* out, int ny, int nx) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    int i = y * nx + x;
    out[i] = u[i - 1] + u[i + 1] + u[i - nx] + u[i + nx] - 4.0f * u[i];
}
"""

# a cell whose third line (the %%cuda line is line 1) is wrong
BROKEN = """\
extern "C" __global__ void broken(float* x) {
    x[0] = undefined_name;
}
"""

# many live values: squeezed into 24 registers, ptxas spills
HEAVY = r"""
extern "C" __global__ void heavy(const float* x, float* y) {
    float a[40];
#pragma unroll
    for (int k = 0; k < 40; k++) a[k] = x[threadIdx.x + k * 64];
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < 40; k++) s += a[k] * a[39 - k] + a[(k * 7) % 40];
#pragma unroll
    for (int k = 0; k < 40; k++) y[threadIdx.x + k * 64] = a[k] * s;
}
"""

BOUND_NAMES = ("saxpy", "axpy_float", "axpy_double", "fill_one", "laplace", "broken", "mod",
               "needs_n", "from_header", "cxx20", "heavy", "k")


def fake_widget_hooks(monkeypatch) -> list:
    """Replace gpunb.widgets.install/uninstall by recorders: these tests see only what %%cuda
    itself displays (the widgets have their own tests)."""
    import gpunb.widgets

    calls = []
    monkeypatch.setattr(gpunb.widgets, "install", lambda ip: calls.append(("install", ip)),
                        raising=False)
    monkeypatch.setattr(gpunb.widgets, "uninstall", lambda ip: calls.append(("uninstall", ip)),
                        raising=False)
    return calls


@pytest.fixture
def shell(tmp_path, monkeypatch):
    old = set_kernel_cache(KernelCache(tmp_path / "kernels", 64 * 1024**2))
    fake_widget_hooks(monkeypatch)
    sh = InteractiveShell.instance()
    for name in BOUND_NAMES:
        sh.user_ns.pop(name, None)
    load_ipython_extension(sh)
    yield sh
    unload_ipython_extension(sh)
    for name in BOUND_NAMES:
        sh.user_ns.pop(name, None)
    set_kernel_cache(old)


def cuda(sh, line, cell):
    """Run the cell magic; returns the rich outputs it displayed (their data dicts)."""
    with capture_output() as cap:
        sh.run_cell_magic("cuda", line, cell)
    return [o.data for o in cap.outputs], cap.stdout


def plain(outputs) -> str:
    return "\n".join(o.get("text/plain", "") for o in outputs)


def stats():
    return kernel_cache().stats()


# -- binding --------------------------------------------------------------------------------

def test_binds_extern_c_kernel_and_reports_the_compile(shell):
    out, _ = cuda(shell, f"--arch {ARCH}", SAXPY)
    k = shell.user_ns["saxpy"]
    assert isinstance(k, RawKernel) and k.name == "saxpy"
    assert len(out) == 1
    text = out[0]["text/plain"]
    assert text.startswith("%%cuda: saxpy;") and f"compiled for {ARCH} in" in text
    assert "<b>saxpy</b>" in out[0]["text/html"]
    assert stats()["compiles"] == 1
    assert k.info(ARCH).param_sizes == (4, 8, 8, 4)     # the bound kernel sees the cubin


def test_second_run_is_a_cache_hit_and_force_recompiles(shell):
    cuda(shell, f"--arch {ARCH}", SAXPY)
    first = shell.user_ns["saxpy"]
    out, _ = cuda(shell, f"--arch {ARCH}", SAXPY)
    assert f"loaded from the kernel cache (memory) for {ARCH}" in plain(out)
    assert stats()["compiles"] == 1 and stats()["memory_hits"] >= 1
    assert shell.user_ns["saxpy"] is not first          # re-running a cell binds anew
    out, _ = cuda(shell, f"--arch {ARCH} --force", SAXPY)
    assert stats()["compiles"] == 2
    assert f"compiled for {ARCH}" in plain(out)


def test_module_binds_one_object(shell):
    out, _ = cuda(shell, f'--arch {ARCH} --module mod --instantiate "axpy<float>"', SAXPY + TEMPLATE)
    mod = shell.user_ns["mod"]
    assert isinstance(mod, CellModule) and isinstance(mod, gpunb.RawModule)
    for name in ("saxpy", "axpy_float", "fill_one"):
        assert name not in shell.user_ns
        assert isinstance(getattr(mod, name), RawKernel)
    assert mod.axpy_float.name == "axpy<float>"
    assert mod["axpy<float>"] is mod.axpy_float is mod["axpy_float"]
    assert mod["saxpy"] is mod.saxpy
    assert set(mod.kernels) == {"saxpy", "fill_one", "axpy_float"}
    assert "axpy_float" in dir(mod) and "axpy<float>" in mod
    with pytest.raises(AttributeError, match="no kernel 'nope'.*saxpy"):
        mod.nope
    with pytest.raises(KeyError):
        mod["axpy<double>"]
    assert "axpy_float (axpy<float>)" in repr(mod)
    assert plain(out).startswith("%%cuda: mod with ")
    assert mod.axpy_float.info(ARCH).param_sizes == (4, 8, 8, 4)


def test_instantiate_binds_template_instances(shell):
    cuda(shell, f'--arch {ARCH} --instantiate "axpy<float>" --instantiate "axpy<double>"', TEMPLATE)
    f, d = shell.user_ns["axpy_float"], shell.user_ns["axpy_double"]
    assert (f.name, d.name) == ("axpy<float>", "axpy<double>")
    assert f.info(ARCH).param_sizes == (4, 8, 8, 4)
    assert d.info(ARCH).param_sizes == (8, 8, 8, 4)
    assert [p.dtype for p in d.parameters(ARCH)] == ["float64", "float64", "float64", "int32"]
    assert "axpy" not in shell.user_ns                   # the template itself is no kernel
    assert shell.user_ns["fill_one"].name == "fill_one"  # plain C++ kernels are bound too


@pytest.mark.parametrize("expr, name", [
    ("axpy<float>", "axpy_float"),
    ("ns::scale<double, 4>", "ns_scale_double_4"),
    ("fill<float*>", "fill_float_ptr"),
    ("k<unsigned int>", "k_unsigned_int"),
    ("k< float >", "k_float"),
    ("kernel", "kernel"),
    ("lambda", "lambda_"),
])
def test_python_name_rule(expr, name):
    assert python_name(expr) == name


def test_instance_names_that_collide_are_a_usage_error(shell):
    with pytest.raises(UsageError, match="both be bound as 'k_float'"):
        cuda(shell, '--arch sm_90 --instantiate "k<float>" --instantiate "k< float >"', TEMPLATE)
    with pytest.raises(UsageError, match="already the name of 'fill_one'"):
        cuda(shell, '--arch sm_90 --instantiate "fill<one>"',
             TEMPLATE + "template <int N> __global__ void fill(int* o) { o[0] = N; }\n"
                        "constexpr int one = 1;\n")


# -- options ---------------------------------------------------------------------------------

NEEDS_N = 'extern "C" __global__ void needs_n(float* x) { x[threadIdx.x] = N * SCALE; }\n'


def test_defines(shell):
    with pytest.raises(CompileError, match="identifier \"N\" is undefined"):
        cuda(shell, f"--arch {ARCH}", NEEDS_N)
    cuda(shell, f"--arch {ARCH} -D N=4 -DSCALE=2.5f", NEEDS_N)
    assert shell.user_ns["needs_n"].name == "needs_n"
    (record,) = kernel_cache().find("needs_n")
    assert "-DN=4" in record["options"] and "-DSCALE=2.5f" in record["options"]
    # 4 * 2.5f == 10.0f, stored as its bits: 0x41200000 == 1092616192
    assert "1092616192" in inspection.ptx(cuda_magics.CELL_HEADER + NEEDS_N, record["options"], ARCH)


def test_include_directory(shell, tmp_path):
    hdr = tmp_path / "hdr"
    hdr.mkdir()
    (hdr / "twice.cuh").write_text("__device__ inline float twice(float v) { return 2.0f * v; }\n")
    cell = ('#include "twice.cuh"\n'
            'extern "C" __global__ void from_header(float* x) { x[0] = twice(x[0]); }\n')
    with pytest.raises(CompileError, match="twice.cuh"):
        cuda(shell, f"--arch {ARCH}", cell)
    cuda(shell, f'--arch {ARCH} -I "{hdr}"', cell)
    assert shell.user_ns["from_header"].name == "from_header"
    (record,) = kernel_cache().find("from_header")
    assert record["headers"] == ["twice.cuh"]
    # the header's content is in the key: editing it recompiles
    (hdr / "twice.cuh").write_text("__device__ inline float twice(float v) { return v + v; }\n")
    before = stats()["compiles"]
    cuda(shell, f"--arch {ARCH} -I {hdr}", cell)
    assert stats()["compiles"] == before + 1


CXX20 = ("template <class T> concept Small = sizeof(T) <= 4;\n"
         "template <Small T> __device__ T twice(T v) { return v + v; }\n"
         'extern "C" __global__ void cxx20(float* x) { x[0] = twice(x[0]); }\n')


@pytest.mark.parametrize("std", ["c++20", "20"])
def test_std(shell, std):
    with pytest.raises(CompileError):
        cuda(shell, f"--arch {ARCH}", CXX20)      # gpunb's default is C++17
    cuda(shell, f"--arch {ARCH} --std {std}", CXX20)
    (record,) = kernel_cache().find("cxx20")
    assert "-std=c++20" in record["options"]


def test_opt_values_may_start_with_a_dash(shell):
    cuda(shell, f'--arch {ARCH} --opt -lineinfo --opt "--use_fast_math --maxrregcount=32"', SAXPY)
    (record,) = kernel_cache().find("saxpy")
    assert {"-lineinfo", "--use_fast_math", "--maxrregcount=32"} <= set(record["options"])


# -- --show ----------------------------------------------------------------------------------

def test_show_source(shell):
    out, _ = cuda(shell, f"--arch {ARCH} --show source", SAXPY)
    assert len(out) == 2
    assert out[1]["text/plain"] == "source:\n" + SAXPY.rstrip()
    assert "<span" in out[1]["text/html"] and "saxpy" in out[1]["text/html"]


def test_show_ptx(shell):
    out, _ = cuda(shell, f"--arch {ARCH} --show ptx", SAXPY)
    text = out[1]["text/plain"]
    assert text.startswith(f"PTX ({ARCH}):") and ".visible .entry saxpy(" in text
    assert ".target sm_90" in text


def test_show_sass(shell):
    found = inspection.find_disassembler()
    if found is None:
        with pytest.raises(inspection.DisassemblerNotFoundError,
                           match="pip install nvidia-cuda-nvdisasm"):
            cuda(shell, f"--arch {ARCH} --show sass", SAXPY)
        pytest.skip("no nvdisasm or cuobjdump (pip install nvidia-cuda-nvdisasm): only the error "
                    "was checked")
    out, _ = cuda(shell, f"--arch {ARCH} --show sass", SAXPY)
    text = out[1]["text/plain"]
    assert text.startswith(f"SASS ({ARCH}):") and "EXIT" in text and "saxpy" in text


def test_show_sass_without_a_disassembler(shell, monkeypatch):
    monkeypatch.setattr(inspection, "find_disassembler", lambda: None)
    monkeypatch.setattr(inspection, "_sass_memo", {})
    with pytest.raises(FileNotFoundError, match="nvdisasm or cuobjdump"):
        cuda(shell, f"--arch {ARCH} --show sass", SAXPY)
    assert "saxpy" in shell.user_ns        # the compile succeeded: its kernels are bound


def test_show_resources(shell):
    out, _ = cuda(shell, f'--arch {ARCH} --show resources --instantiate "axpy<double>"', TEMPLATE)
    text = out[1]["text/plain"]
    assert text.splitlines()[0] == f"resources per kernel ({ARCH})"
    assert "registers" in text and "spill stores" in text
    assert "axpy<double> (_Z4axpyIdEvT_PKS0_PS0_i)" in text
    assert "<table" in out[1]["text/html"] and "axpy&lt;double&gt;" in out[1]["text/html"]


def test_show_several_in_order_and_quiet(shell):
    out, _ = cuda(shell, f"--arch {ARCH} --show ptx --show source --show ptx", SAXPY)
    assert [o["text/plain"].split(":")[0] for o in out[1:]] == [f"PTX ({ARCH})", "source"]
    out, stdout = cuda(shell, f"--arch {ARCH} --quiet", SAXPY)
    assert out == [] and stdout == ""
    out, _ = cuda(shell, f"--arch {ARCH} -q --show source", SAXPY)
    assert len(out) == 1 and out[0]["text/plain"].startswith("source:")


# -- errors ------------------------------------------------------------------------------------

def test_compile_error_has_cell_line_numbers_and_binds_nothing(shell):
    cuda(shell, f"--arch {ARCH}", SAXPY)
    before = shell.user_ns["saxpy"]
    with capture_output() as cap:
        result = shell.run_cell(f"%%cuda --arch {ARCH}\n" + SAXPY + BROKEN)
    err = result.error_in_exec
    assert isinstance(err, CompileError)
    # the cell: line 1 %%cuda, 2-5 the first kernel, 6 `extern ... broken`, 7 the bad line
    text = err.render()
    assert "cell.cu(7): error: identifier \"undefined_name\" is undefined" in text
    assert "> 7 |     x[0] = undefined_name;" in text
    assert "  6 | extern \"C\" __global__ void broken(float* x) {" in text
    assert err.error_lines() == [(7, 11)]
    assert "undefined_name" in cap.stdout + cap.stderr      # IPython showed the render
    assert "broken" not in shell.user_ns and shell.user_ns["saxpy"] is before


@pytest.mark.parametrize("line, cell, match", [
    ("--show bogus", SAXPY, "invalid choice: 'bogus'"),
    ("", "  \n\n", "needs CUDA C\\+\\+ in the cell"),
    ("--module 2x", SAXPY, "not a valid Python name"),
    ("--module class", SAXPY, "not a valid Python name"),
    ("-D 4X=1", SAXPY, "NAME or NAME=VALUE"),
    ("-D", SAXPY, "expected one argument"),
    ("--std c++17x", SAXPY, "C\\+\\+ standard"),
    ("--arch compute_90", SAXPY, "not a real GPU architecture"),
    ("--arch sm_90 --opt=-arch=sm_80", SAXPY, "architecture given twice"),
    ("-I /no/such/dir", SAXPY, "no such directory"),
    ("--unknown", SAXPY, "unrecognized arguments"),
    ('--opt "unclosed', SAXPY, "No closing quotation"),
])
def test_usage_errors(shell, line, cell, match):
    with pytest.raises(UsageError, match=match):
        cuda(shell, line, cell)


def test_usage_error_through_run_cell(shell):
    with capture_output():
        result = shell.run_cell("%%cuda --show nothing\n" + SAXPY)
    assert isinstance(result.error_in_exec, UsageError)
    assert "saxpy" not in shell.user_ns


def test_without_a_gpu(shell, no_gpu):
    out, _ = cuda(shell, "", SAXPY)
    assert f"note: no GPU found, so the target is {inspection.DEFAULT_ARCH}" in plain(out)
    with pytest.raises(GPUUnavailableError, match="launching a kernel needs one"):
        shell.user_ns["saxpy"](1, 32, (np.float32(1), None, None, 4))
    with capture_output():
        result = shell.run_cell("saxpy(1, 32, (1.0, None, None, 4))")
    assert isinstance(result.error_in_exec, GPUUnavailableError)


def test_help_lists_the_options(shell):
    doc = shell.find_cell_magic("cuda").__doc__
    for opt in ("--arch", "--std", "-D NAME[=VALUE]", "-I DIR", "--opt", "--module", "--instantiate",
                "--show", "--force", "--quiet", "source,ptx,sass,resources"):
        assert opt in doc


# -- the extension -------------------------------------------------------------------------------

@pytest.fixture
def bare_shell(tmp_path, monkeypatch):
    """The shell with gpunb not loaded, and fake widget hooks that count their calls."""
    old = set_kernel_cache(KernelCache(tmp_path / "kernels", 64 * 1024**2))
    sh = InteractiveShell.instance()
    calls = fake_widget_hooks(monkeypatch)
    unload_ipython_extension(sh)
    sh.extension_manager.loaded.discard("gpunb")
    yield sh, calls
    sh.run_line_magic("unload_ext", "gpunb")
    sh.extension_manager.loaded.discard("gpunb")
    sh.user_ns.pop("saxpy", None)
    set_kernel_cache(old)


def ours(sh, kind):
    return {name: fn.__self__ for name, fn in sh.magics_manager.magics[kind].items()
            if type(getattr(fn, "__self__", None)).__module__.startswith("gpunb.")}


def test_load_reload_unload(bare_shell):
    sh, calls = bare_shell
    assert ours(sh, "cell") == {} and ours(sh, "line") == {}
    sh.run_line_magic("load_ext", "gpunb")
    first = registered(sh)
    assert isinstance(first[0], CudaMagics)
    assert set(ours(sh, "cell")) == {"cuda", "gputimeit"}
    try:
        from gpunb.magics.gpucache import GpuCacheMagics
    except ImportError:
        GpuCacheMagics = None
    if GpuCacheMagics is not None:
        assert set(ours(sh, "line")) == {"gpucache", "gputimeit"}
        assert sh.magics_manager.registry["GpuCacheMagics"] is first[1]
    assert calls == [("install", sh)]
    sh.run_line_magic("load_ext", "gpunb")             # already loaded: nothing happens
    assert registered(sh) == first and len(calls) == 1

    sh.run_line_magic("reload_ext", "gpunb")
    second = registered(sh)
    assert len(second) == len(first) and not set(map(id, second)) & set(map(id, first))
    assert ours(sh, "cell")["cuda"] is second[0]
    assert sh.magics_manager.registry["CudaMagics"] is second[0]
    assert calls[1:] == [("uninstall", sh), ("install", sh)]
    if GpuCacheMagics is not None:
        assert not first[1].recorder.recording          # closed on unload
    with capture_output():
        sh.run_cell_magic("cuda", f"--arch {ARCH} -q", SAXPY)
    assert "saxpy" in sh.user_ns

    sh.run_line_magic("unload_ext", "gpunb")
    assert ours(sh, "cell") == {} and ours(sh, "line") == {}
    assert "CudaMagics" not in sh.magics_manager.registry
    assert "GpuCacheMagics" not in sh.magics_manager.registry
    assert registered(sh) == [] and calls[-1] == ("uninstall", sh)
    assert sh.find_cell_magic("cuda") is None


def test_load_twice_directly_registers_once(bare_shell):
    sh, _ = bare_shell
    gpunb.load_ipython_extension(sh)
    gpunb.load_ipython_extension(sh)
    # %%cuda and %%gputimeit once each (and %gpucache where installed)
    assert len(registered(sh)) in (2, 3) and set(ours(sh, "cell")) == {"cuda", "gputimeit"}
    gpunb.unload_ipython_extension(sh)
    assert ours(sh, "cell") == {} and registered(sh) == []
    gpunb.unload_ipython_extension(sh)                 # unloading again is harmless


def test_load_with_the_real_widgets(tmp_path):
    widgets = pytest.importorskip("gpunb.widgets")
    if not all(hasattr(widgets, f) for f in ("install", "uninstall", "installed")):
        pytest.skip("gpunb.widgets has no install/uninstall/installed yet")
    old = set_kernel_cache(KernelCache(tmp_path / "kernels", 64 * 1024**2))
    sh = InteractiveShell.instance()
    try:
        load_ipython_extension(sh)
        assert widgets.installed(sh) is not None
        with capture_output():
            sh.run_cell_magic("cuda", f"--arch {ARCH} -q", SAXPY)
        assert isinstance(sh.user_ns["saxpy"], RawKernel)
    finally:
        unload_ipython_extension(sh)
        sh.user_ns.pop("saxpy", None)
        set_kernel_cache(old)
    assert widgets.installed(sh) is None and sh.find_cell_magic("cuda") is None


def test_import_gpunb_stays_light():
    code = ("import sys, gpunb; assert callable(gpunb.load_ipython_extension); "
            "heavy = [m for m in ('IPython', 'ipywidgets', 'gpunb.magics') if m in sys.modules]; "
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- inspection ----------------------------------------------------------------------------------

def test_resources_report_spills():
    res = inspection.resources(HEAVY, ["--maxrregcount=24"], ARCH)
    (r,) = res.values()
    assert set(inspection.RESOURCE_KEYS) <= set(r)
    assert r["name"] == "heavy" and r["registers"] <= 24
    assert r["spill_stores"] > 0 and r["spill_loads"] > 0 and r["local_bytes"] > 0
    roomy = inspection.resources(HEAVY, [], ARCH)["heavy"]
    assert roomy["spill_stores"] == roomy["spill_loads"] == 0
    assert roomy["registers"] > 24
    text = inspection.resources_text(res)
    assert text.splitlines()[-1].split() == ["heavy", str(r["registers"]), "0", "B",
                                            f"{r['local_bytes']}", "B", f"{r['spill_stores']}", "B",
                                            f"{r['spill_loads']}", "B"]


def test_resources_shared_memory_and_templates():
    src = TEMPLATE.replace("y[i] += a * x[i];",
                           "{ __shared__ T tile[100]; tile[threadIdx.x % 100] = x[i]; "
                           "__syncthreads(); y[i] += a * tile[(i + 1) % 100]; }")
    res = inspection.resources(src, (), ARCH, ["axpy<double>"])
    r = res["_Z4axpyIdEvT_PKS0_PS0_i"]
    assert r["name"] == "axpy<double>" and r["shared_bytes"] == 800
    assert res["_Z8fill_onePi"]["name"] == "fill_one"


def test_parse_ptxas_log():
    log = """\
ptxas info    : 0 bytes gmem
ptxas info    : Function properties for helper
ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
"""
    assert inspection.parse_ptxas_log(log) == {
        "helper": {"stack_bytes": 16, "spill_stores": 8, "spill_loads": 4},
        "k": {"stack_bytes": 0, "spill_stores": 0, "spill_loads": 0, "registers": 10}}


def test_resources_text_unknown_values_and_html():
    res = {"k": {"name": "k", "registers": None, "shared_bytes": 0, "local_bytes": 0,
                 "spill_stores": None, "spill_loads": None}}
    last = inspection.resources_text(res).splitlines()[-1]
    assert last.split() == ["k", "?", "0", "B", "0", "B", "?", "?"]
    assert "<td" in inspection.resources_html(res)
    assert inspection.resources_text({}) == "(no kernels)"


def test_resolve_arch():
    assert inspection.resolve_arch((), "90") == ("sm_90", None)
    assert inspection.resolve_arch(("-arch=sm_80",)) == ("sm_80", None)


def test_resolve_arch_without_gpu(no_gpu):
    arch, note = inspection.resolve_arch()
    assert arch == inspection.DEFAULT_ARCH and note.startswith("no GPU found")


def test_sass_errors(monkeypatch):
    with pytest.raises(TypeError):
        inspection.sass("not bytes")
    monkeypatch.setattr(inspection, "find_disassembler", lambda: None)
    with pytest.raises(inspection.DisassemblerNotFoundError) as info:
        inspection.sass(b"\x7fELF not cached")
    assert isinstance(info.value, FileNotFoundError) and isinstance(info.value, gpunb.GPUNBError)
    monkeypatch.setattr(inspection, "find_disassembler", lambda: ("nvdisasm", sys.executable))
    with pytest.raises(RuntimeError, match="failed with exit status"):
        inspection.sass(b"\x7fELF also not cached")   # the 'tool' cannot read it


def test_ptx_compile_error_is_compile_error():
    with pytest.raises(CompileError):
        inspection.ptx(BROKEN, (), ARCH)


# -- on a GPU ------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_saxpy_on_gpunb_arrays(shell):
    cuda(shell, "", SAXPY)
    rng = np.random.default_rng(0)
    n = 10_000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    gx, gy = gpunb.asarray(x), gpunb.asarray(y)
    shell.user_ns["saxpy"]((n + 255) // 256, 256, (np.float32(2.5), gx, gy, n))
    # atol: the GPU contracts a*x+y into one FMA (one rounding), NumPy rounds twice
    np.testing.assert_allclose(gpunb.asnumpy(gy), 2.5 * x + y, rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
def test_stencil_2d(shell):
    cuda(shell, "--module mod", STENCIL)
    rng = np.random.default_rng(1)
    ny, nx = 70, 131
    u = rng.standard_normal((ny, nx)).astype(np.float32)
    gu, gout = gpunb.asarray(u), gpunb.zeros((ny, nx), dtype=np.float32)
    shell.user_ns["mod"].laplace(((nx + 15) // 16, (ny + 15) // 16), (16, 16), (gu, gout, ny, nx))
    want = np.zeros_like(u)
    want[1:-1, 1:-1] = u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1] - 4 * u[1:-1, 1:-1]
    np.testing.assert_allclose(gpunb.asnumpy(gout), want, rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
def test_template_instance_on_gpu(shell):
    cuda(shell, '--instantiate "axpy<double>"', TEMPLATE)
    x, y = np.arange(1000.0), np.ones(1000)
    gx, gy = gpunb.asarray(x), gpunb.asarray(y)
    shell.user_ns["axpy_double"](4, 256, (0.5, gx, gy, 1000))
    np.testing.assert_allclose(gpunb.asnumpy(gy), 0.5 * x + 1)


@pytest.mark.gpu
def test_cupy_arguments(shell):
    cp = pytest.importorskip("cupy")
    cuda(shell, "", SAXPY)
    x = cp.arange(512, dtype=cp.float32)
    y = cp.ones(512, dtype=cp.float32)
    shell.user_ns["saxpy"](2, 256, (np.float32(3), x, y, 512))
    np.testing.assert_allclose(cp.asnumpy(y), 3 * np.arange(512, dtype=np.float32) + 1)
