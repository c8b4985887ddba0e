"""Real NVRTC compiles on a machine without a GPU: arch spellings, options, CompileError."""

from __future__ import annotations


import pytest

import gpunb
from tests.conftest import libcuda_loadable
from gpunb import CompileError, GPUNBError, GPUUnavailableError
from gpunb.core.build.compiler import compile_program, normalize_arch, nvrtc_options
from gpunb.core.errors import parse_log_locations
from gpunb.core.build.cubin import read_kernels

ARCH = "sm_90"
SIMPLE = 'extern "C" __global__ void k(float* x) { x[0] = 1.0f; }\n'
VALUE_SRC = 'extern "C" __global__ void k(int* x) { x[0] = VALUE; }\n'
# line 2 holds the error; 'VALUE' starts at column 9 (0-based)
ERR_SRC = 'extern "C" __global__ void k(int* x) {\n  x[0] = VALUE;\n}\n'
CXX20_SRC = '__device__ consteval int two() { return 2; }\nextern "C" __global__ void k(int* x) { x[0] = two(); }\n'


def _compile_error(source, options=(), **kw) -> CompileError:
    with pytest.raises(CompileError) as info:
        compile_program(source, options, ARCH, **kw)
    return info.value


def _marked(rendered: str):
    """The '>'-marked source lines of a rendered error, each with the line after it."""
    lines = rendered.splitlines()
    return [(line, lines[i + 1] if i + 1 < len(lines) else "")
            for i, line in enumerate(lines) if line.startswith("> ")]


# -- compiling -------------------------------------------------------------------------------

def test_compile_returns_elf_cubin_with_the_kernel():
    cubin = gpunb.compile(SIMPLE, (), ARCH)
    assert isinstance(cubin, bytes)
    assert cubin.startswith(b"\x7fELF")
    assert "k" in read_kernels(cubin)


def test_compile_program_reports_arch_and_options():
    prog = compile_program(SIMPLE, ("-DUNUSED=1",), 90)
    assert prog.arch == "sm_90"
    assert prog.options == ("-std=c++17", "-DUNUSED=1", "--gpu-architecture=sm_90")
    assert prog.cubin.startswith(b"\x7fELF")


@pytest.mark.parametrize("arch, expected", [
    ("sm_90", "sm_90"), (90, "sm_90"), ("90", "sm_90"), ((9, 0), "sm_90"), ("9.0", "sm_90"),
    ("sm_90a", "sm_90a"), (" SM_80 ", "sm_80"), ((12, 0), "sm_120"), ("10.0", "sm_100"),
    ("sm_100f", "sm_100f"),
])
def test_normalize_arch_spellings(arch, expected):
    assert normalize_arch(arch) == expected


@pytest.mark.parametrize("arch", ["compute_90", "foo", "", "sm_9", "sm_90x", (9,), "sm_ninety"])
def test_normalize_arch_rejects(arch):
    with pytest.raises(ValueError) as info:
        normalize_arch(arch)
    msg = str(info.value)
    assert repr(arch) in msg
    assert "sm_90" in msg          # says what a good spelling looks like


def test_virtual_arch_rejected_saying_why():
    with pytest.raises(ValueError, match="compute_90") as info:
        gpunb.compile(SIMPLE, (), "compute_90")
    assert "virtual" in str(info.value)
    with pytest.raises(ValueError, match="compute_90"):
        gpunb.compile(SIMPLE, ("-arch=compute_90",), None)


def test_arch_spellings_compile_to_the_same_target():
    a = compile_program(SIMPLE, (), (9, 0))
    b = compile_program(SIMPLE, (), "9.0")
    assert a.arch == b.arch == "sm_90"
    assert a.cubin == b.cubin


def test_arch_specific_target_compiles():
    prog = compile_program(SIMPLE, (), "sm_90a")
    assert prog.arch == "sm_90a"
    assert "--gpu-architecture=sm_90a" in prog.options
    assert prog.cubin.startswith(b"\x7fELF")


def test_default_std_added_once():
    final, arch = nvrtc_options(("-DX=1",), ARCH)
    assert arch == ARCH
    assert final == ["-std=c++17", "-DX=1", "--gpu-architecture=sm_90"]


@pytest.mark.parametrize("user", [("-std=c++20",), ("--std=c++20",)])
def test_user_std_replaces_default(user):
    final, _ = nvrtc_options(user, ARCH)
    assert not any("c++17" in o for o in final)
    assert [o for o in final if "std" in o] == ["-std=c++20"]
    # and NVRTC really uses it: consteval is C++20
    assert compile_program(CXX20_SRC, user, ARCH).cubin.startswith(b"\x7fELF")


def test_default_std_is_cxx17_for_real():
    err = _compile_error(CXX20_SRC)
    assert "-std=c++17" in err.options


def test_std_as_two_tokens_is_accepted():
    # gpunb recognises "-std c++20" (and so adds no default), so the compile must work too.
    final, _ = nvrtc_options(("-std", "c++20"), ARCH)
    assert not any("c++17" in o for o in final)
    prog = compile_program(CXX20_SRC, ("-std", "c++20"), ARCH)
    assert prog.cubin.startswith(b"\x7fELF")


def test_user_define_passes_through_and_changes_the_cubin():
    three = gpunb.compile(VALUE_SRC, ("-DVALUE=3",), ARCH)
    four = gpunb.compile(VALUE_SRC, ("-DVALUE=4",), ARCH)
    assert three.startswith(b"\x7fELF") and four.startswith(b"\x7fELF")
    assert three != four
    err = _compile_error(VALUE_SRC)
    assert "VALUE" in err.log


def test_arch_in_options_is_used_without_a_gpu():
    for opts in (("-arch=sm_80",), ("-arch", "sm_80"), ("--gpu-architecture=sm_80",),
                 ("--gpu-architecture", "sm_80")):
        prog = compile_program(SIMPLE, opts, None)
        assert prog.arch == "sm_80"
        assert [o for o in prog.options if "arch" in o] == ["--gpu-architecture=sm_80"]


def test_same_arch_twice_is_fine_and_given_once():
    final, arch = nvrtc_options(("--gpu-architecture=sm_90",), (9, 0))
    assert arch == "sm_90"
    assert [o for o in final if "arch" in o] == ["--gpu-architecture=sm_90"]


def test_conflicting_arch_raises():
    with pytest.raises(ValueError, match="architecture given twice") as info:
        gpunb.compile(SIMPLE, ("-arch=sm_80",), "sm_90")
    assert "sm_80" in str(info.value) and "sm_90" in str(info.value)


def test_arch_option_without_value_raises():
    with pytest.raises(ValueError, match="needs a value"):
        nvrtc_options(("-arch",), None)


def test_options_as_one_string_raise_type_error():
    with pytest.raises(TypeError, match="sequence of strings"):
        gpunb.compile(SIMPLE, "-DVALUE=3", ARCH)


def test_non_str_option_raises_type_error():
    with pytest.raises(TypeError, match="every option must be a str"):
        gpunb.compile(SIMPLE, ("-DX=1", 3), ARCH)


def test_source_must_be_str():
    with pytest.raises(TypeError, match="source must be a str"):
        gpunb.compile(SIMPLE.encode(), (), ARCH)


def test_in_memory_headers_and_name_expressions():
    src = '#include "val.h"\ntemplate <typename T> __global__ void fill(T* x) { x[0] = T(VALUE); }\n'
    prog = compile_program(src, (), ARCH, headers={"val.h": "#define VALUE 7\n"},
                           name_expressions=["fill<float>", "fill<int>"])
    assert set(prog.lowered_names) == {"fill<float>", "fill<int>"}
    kernels = read_kernels(prog.cubin)
    for symbol in prog.lowered_names.values():
        assert symbol.startswith("_Z") and symbol in kernels


# -- CompileError ----------------------------------------------------------------------------

def test_compile_error_carries_log_options_source_and_name():
    err = _compile_error(ERR_SRC, ("-DOTHER=1",))
    assert isinstance(err, GPUNBError)
    assert 'identifier "VALUE" is undefined' in err.log
    assert err.log.startswith("kernel.cu(2): error")
    assert err.options == ("-std=c++17", "-DOTHER=1", "--gpu-architecture=sm_90")
    assert err.source == ERR_SRC
    assert err.name == "kernel.cu"
    text = str(err)
    assert err.log in text
    assert "options: -std=c++17 -DOTHER=1 --gpu-architecture=sm_90" in text
    assert text.startswith("NVRTC could not compile kernel.cu (1 error)")


def test_compile_error_marks_the_line_and_column():
    err = _compile_error(ERR_SRC)
    assert err.error_lines() == [(2, ERR_SRC.splitlines()[1].index("VALUE"))]
    marked = _marked(str(err))
    assert len(marked) == 1
    line, caret = marked[0]
    assert line == "> 2 |   x[0] = VALUE;"
    assert caret.rstrip().endswith("^")
    assert caret.index("^") == line.index("VALUE")
    # context lines around it, unmarked
    text = str(err)
    assert "  1 | extern \"C\" __global__ void k(int* x) {" in text
    assert "  3 | }" in text


def test_compile_error_line_offset_shifts_shown_numbers():
    err = _compile_error(ERR_SRC, line_offset=40)
    assert err.line_offset == 40
    (line, caret), = _marked(str(err))
    assert line.startswith("> 42 | ")
    assert caret.index("^") == line.index("VALUE")
    assert "41 | extern" in str(err)
    # the log itself is NVRTC's, unchanged
    assert err.log.startswith("kernel.cu(2): error")


def test_render_traceback_returns_the_rendered_lines():
    err = _compile_error(ERR_SRC)
    lines = err._render_traceback_()
    assert isinstance(lines, list) and all(isinstance(s, str) for s in lines)
    assert lines == str(err).splitlines()
    i = lines.index("> 2 |   x[0] = VALUE;")
    assert lines[i + 1] == "    |          ^"


def test_several_errors_each_marked_with_gap():
    src = ('extern "C" __global__ void k(float* x) {\n  x[0] = A;\n  x[1] = B;\n'
           + "\n" * 5 + '  x[2] = C;\n}\n')
    err = _compile_error(src)
    lines = src.splitlines()
    assert err.error_lines() == [(2, 9), (3, 9), (9, 9)]
    text = str(err)
    assert "(3 errors)" in text.splitlines()[0]
    marked = _marked(text)
    assert [m[0].split("|")[0].split()[1] for m in marked] == ["2", "3", "9"]
    for (line, caret), k in zip(marked, (2, 3, 9)):
        assert line.endswith(lines[k - 1])
        assert caret.index("^") == line.index("= ") + 2   # under A, B, C
    assert "..." in text   # lines 5..7 are not all shown


def test_catastrophic_error_is_located():
    src = '#include "missing_header.h"\nextern "C" __global__ void k() {}\n'
    err = _compile_error(src)
    assert "missing_header.h" in err.log
    assert [line for line, _ in err.error_lines()] == [1]
    (line, _), = _marked(str(err))
    assert line.startswith("> 1 | #include")


def test_caret_lines_up_under_tab_indented_source():
    # Kernels indented with tabs are common; the caret must sit under the offending token when
    # the rendered text is shown (tabs expanded, as a terminal or notebook does).
    src = 'extern "C" __global__ void k(int* x) {\n\tx[0] = VALUE;\n}\n'
    err = _compile_error(src)
    (line, caret), = _marked(str(err))
    assert caret.expandtabs().index("^") == line.expandtabs().index("VALUE")


def test_parse_log_locations_ignores_warnings_and_other_files():
    log = ("kernel.cu(3): warning #177-D: variable \"y\" was declared but never referenced\n"
           "      int y;\n          ^\n\n"
           "other.h(5): error: something\n  bad\n  ^\n\n"
           "kernel.cu(7): error: expected a \";\"\n  }\n  ^\n\n"
           "kernel.cu(9): error: no caret here\n")
    assert parse_log_locations(log, "kernel.cu", "") == [(7, 0), (9, None)]


def test_compile_error_with_unlocated_log_still_renders():
    err = CompileError("nvrtc: error: unrecognized option --bogus found", ["--bogus"], SIMPLE)
    assert err.error_lines() == []
    text = str(err)
    assert text.startswith("NVRTC could not compile kernel.cu")
    assert "unrecognized option --bogus" in text
    assert "options: --bogus" in text
    assert "source:" not in text


def test_unknown_option_is_a_compile_error():
    err = _compile_error(SIMPLE, ("--no-such-nvrtc-option",))
    assert "--no-such-nvrtc-option" in err.log


# -- no GPU ----------------------------------------------------------------------------------





def test_compile_without_arch_needs_a_gpu(no_gpu):
    with pytest.raises(GPUUnavailableError) as info:
        gpunb.compile(SIMPLE)
    err = info.value
    assert isinstance(err, RuntimeError)
    assert err.reason == no_gpu
    msg = str(err)
    if not libcuda_loadable():
        assert "no NVIDIA driver library" in msg and "libcuda" in msg
    assert "named architecture" in msg
    assert "kernel cache still work" in msg


def test_compiling_leaves_the_interpreters_byte_singletons_alone():
    # an empty NVRTC log has size 1; a log buffer made as b" " * 1 is CPython's shared b" "
    # object, and NVRTC's terminating NUL written into it turned every b" " (and text the
    # interpreter encodes through it, such as print's separators) into b"\x00"
    for i in range(3):
        gpunb.compile(f'extern "C" __global__ void k{i}() {{}}', (), "sm_90")
    assert b" " == bytes([32]) and b" " * 1 == bytes([32])
    assert " ".encode() == bytes([32])


def test_nvrtc_wheel_version_read_without_importlib_metadata():
    """The cache key's NVRTC identity comes from the wheel's .dist-info name on sys.path: the
    same answer importlib.metadata gives (which a first kernel no longer imports)."""
    import importlib.metadata

    from gpunb.core.runtime import nvrtc

    try:
        want = importlib.metadata.version("nvidia-cuda-nvrtc")
    except importlib.metadata.PackageNotFoundError:
        want = None
    assert nvrtc._wheel_version() == want
