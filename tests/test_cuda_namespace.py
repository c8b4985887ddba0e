"""CuPy's doors that CuPy code walks through: ``gpunb.cuda`` (devices, streams, runtime
queries), ``gpunb.testing`` (NumPy's assertions on GPU arrays), ``get_array_module`` and
``show_config``. Without a GPU: what must work anyway and the errors that name the cause; on
the GPU: the answers against the driver's own."""

import numpy as np
import pytest

import gpunb as gp
from gpunb.core.errors import GPUUnavailableError
from gpunb.core.ndarray import MemoryPointer, ndarray

gpu = pytest.mark.gpu


def fake(shape=(3,), dtype="float32"):
    dt = np.dtype(dtype)
    return ndarray._view(MemoryPointer(0x10000), shape, np.empty(shape, dt).strides, dt, None)


# -- anywhere --------------------------------------------------------------------------------

def test_cuda_names_are_gpunbs_own_objects():
    assert gp.cuda.Stream is gp.Stream and gp.cuda.Event is gp.Event
    assert gp.cuda.ExternalStream is gp.ExternalStream
    assert gp.cuda.get_current_stream is gp.get_current_stream
    assert gp.cuda.get_elapsed_time is gp.get_elapsed_time
    assert gp.cuda.MemoryPool is gp.MemoryPool
    assert "cuda" in dir(gp) and "testing" in dir(gp)


def test_get_array_module_picks_by_argument():
    assert gp.get_array_module(np.ones(3), 1.0) is np
    assert gp.get_array_module() is np
    assert gp.get_array_module(np.ones(3), fake()) is gp

    class Foreign:          # another library's GPU array (CuPy, torch): gpunb handles it
        __cuda_array_interface__ = {"shape": (1,), "typestr": "<f4", "data": (0x10000, False), "version": 3}

    assert gp.get_array_module(Foreign()) is gp


def test_show_config_names_versions_and_cache(capsys):
    gp.show_config()
    text = capsys.readouterr().out
    import numpy
    assert "NumPy:" in text and numpy.__version__ in text
    assert gp.__version__ in text and "NVRTC:" in text
    assert str(gp.kernel_cache().directory) in text


@pytest.mark.parametrize("name, args", [
    ("assert_allclose", (np.array([1.0, 2.0]), np.array([1.0, 2.5]))),
    ("assert_array_equal", (np.array([1, 2]), np.array([1, 3]))),
    ("assert_array_almost_equal", (np.array([1.0]), np.array([1.1]))),
    ("assert_array_less", (np.array([1, 5]), np.array([2, 3]))),
    ("assert_equal", (np.array([1]), np.array([2]))),
])
def test_testing_fails_as_numpy_does(name, args):
    with pytest.raises(AssertionError) as ours:
        getattr(gp.testing, name)(*args)
    with pytest.raises(AssertionError) as theirs:
        getattr(np.testing, name)(*args)
    assert str(ours.value) == str(theirs.value)


def test_testing_passes_where_numpy_does():
    gp.testing.assert_allclose(np.array([1.0, np.nan]), np.array([1.0 + 1e-9, np.nan]), rtol=1e-6)
    gp.testing.assert_array_equal([1, 2], np.array([1, 2]))
    gp.testing.assert_array_max_ulp(np.float32([1.0]), np.float32([1.0]))
    gp.testing.assert_array_list_equal([np.ones(2)], [np.ones(2)])
    with pytest.raises(AssertionError, match="List size is different"):
        gp.testing.assert_array_list_equal([np.ones(2)], [])


def test_without_a_gpu_device_queries_name_the_cause(no_gpu):
    assert gp.cuda.is_available() is False
    assert gp.cuda.runtime.getDeviceCount() == 0
    with pytest.raises(GPUUnavailableError, match="No usable CUDA GPU"):
        gp.cuda.Device(0)
    with pytest.raises(GPUUnavailableError):
        gp.cuda.runtime.getDeviceProperties(0)


def test_runtime_version_is_nvrtcs():
    from gpunb.core.runtime import nvrtc

    major, minor = nvrtc.identity().split("-")[1].split(".")[:2]
    assert gp.cuda.runtime.runtimeGetVersion() == int(major) * 1000 + int(minor) * 10


def test_allocator_forms_without_a_gpu():
    """CuPy's allocator API: set_allocator(None) is the default state (nothing touched before a
    device is in use), a pool over a custom allocator hands out what it returns, bad
    allocators are TypeErrors."""
    from gpunb.core.runtime.memory import MemoryPointer

    gp.cuda.set_allocator(None)
    with pytest.raises(TypeError, match="callable"):
        gp.cuda.set_allocator(3)
    made = []

    def mine(n):
        made.append(n)
        return MemoryPointer(4096 * len(made), None)
    pool = gp.cuda.MemoryPool(mine)
    assert pool.malloc(0).ptr == 4096 and pool.malloc(100).ptr == 8192 and made == [1, 100]
    assert pool.used_bytes() == 0 and pool.total_bytes() == 0
    with pytest.raises(TypeError, match="allocator must be"):
        gp.cuda.MemoryPool("x")
    assert gp.cuda.memory.malloc_managed is gp.cuda.malloc_managed
    with pytest.raises(NotImplementedError, match="external pool"):
        gp.cuda.MemoryAsyncPool(pool_handles=12345)
    assert isinstance(gp.cuda.MemoryAsyncPool(), gp.MemoryPool)


# -- on the GPU ------------------------------------------------------------------------------

@gpu
def test_device_answers_match_the_driver():
    from gpunb.core.runtime import driver

    info = driver.device_info(0)
    d = gp.cuda.Device(0)
    assert d.id == 0 and int(d) == 0 and d == gp.cuda.Device() and repr(d) == "<CUDA Device 0>"
    assert d.compute_capability == "".join(map(str, info.compute_capability))
    attrs = d.attributes
    assert attrs["MultiProcessorCount"] == info.multiprocessor_count
    assert attrs["WarpSize"] == 32 and attrs["MaxThreadsPerBlock"] >= 1024
    free, total = d.mem_info
    assert 0 < free <= total == info.total_memory
    props = gp.cuda.runtime.getDeviceProperties(0)
    assert props["name"] == info.name.encode() and props["totalGlobalMem"] == info.total_memory
    assert (props["major"], props["minor"]) == info.compute_capability
    assert gp.cuda.runtime.deviceGetAttribute("MultiProcessorCount", 0) == info.multiprocessor_count
    with pytest.raises(ValueError, match="unknown device attribute"):
        gp.cuda.runtime.deviceGetAttribute("NoSuchThing", 0)
    assert gp.cuda.runtime.getDeviceCount() >= 1 and gp.cuda.is_available()
    assert gp.cuda.runtime.memGetInfo()[1] == info.total_memory
    v = driver.driver_version()
    assert gp.cuda.runtime.driverGetVersion() == v[0] * 1000 + v[1] * 10
    assert ":" in d.pci_bus_id


@gpu
def test_device_context_streams_and_events_as_cupy_code_uses_them():
    n = gp.cuda.runtime.getDeviceCount()
    with pytest.raises(ValueError, match=f"device {n} does not exist"):
        gp.cuda.Device(n)
    with gp.cuda.Device(0) as d:
        assert gp.cuda.runtime.getDevice() == 0 == gp.cuda.get_device_id()
        x = gp.arange(10.0)
        d.synchronize()
    gp.cuda.Stream.null.synchronize()
    s = gp.cuda.Stream(non_blocking=True)
    start, end = gp.cuda.Event(), gp.cuda.Event()
    with s:
        start.record()
        y = x * 2
        end.record()
    end.synchronize()
    assert end.done and gp.cuda.get_elapsed_time(start, end) >= 0
    np.testing.assert_array_equal(y.get(), np.arange(10.0) * 2)
    gp.cuda.runtime.setDevice(0)
    gp.cuda.runtime.deviceSynchronize()


@gpu
def test_alloc_backs_an_array_and_testing_reads_gpu_arrays():
    mem = gp.cuda.alloc(40)
    a = gp.ndarray((10,), np.float32, memptr=mem)
    a[...] = 3
    gp.testing.assert_array_equal(a, np.full(10, 3, np.float32))
    gp.testing.assert_allclose(a, gp.full(10, 3.0000001, np.float32), rtol=1e-6)
    with pytest.raises(AssertionError):
        gp.testing.assert_array_equal(a, gp.zeros(10, np.float32))
    with pytest.raises(ValueError, match="negative size"):
        gp.cuda.alloc(-1)
    assert gp.get_array_module(a) is gp
    with gp.cuda.profile():
        (a + 1).get()


def test_ptds_nvtx_and_memory_pointer_arithmetic_without_a_gpu():
    assert repr(gp.cuda.Stream.ptds) == "<gpunb.Stream ptds>" and gp.cuda.Stream.ptds is gp.Stream.ptds
    # without a profiler (or without any NVTX library) the annotations are silent no-ops
    assert gp.cuda.nvtx.available in (None, "nvtx", "libnvToolsExt")
    gp.cuda.nvtx.RangePush("outer", id_color=2)
    gp.cuda.nvtx.Mark("here")
    gp.cuda.nvtx.RangePop()
    owner = object()
    p = MemoryPointer(0x10000, owner, 0)
    q = p + 64
    assert q.ptr == 0x10040 and q.mem is owner and (q - 64).ptr == p.ptr and (64 + p).ptr == q.ptr
    with pytest.raises(TypeError, match="host memory must be an address"):
        p.copy_to_host("nowhere", 4)
    with pytest.raises(ValueError, match="size must not be negative"):
        p.copy_from_host(0x20000, -1)
    with pytest.raises(ValueError, match="C-contiguous"):
        p.copy_from_host(np.zeros((4, 4))[:, ::2], 8)


@gpu
def test_memory_pointer_copies_memset_and_ptds_as_cupy_code_uses_them():
    import ctypes

    host = np.arange(16, dtype=np.float32)
    mem = gp.cuda.Memory(host.nbytes)
    assert mem.size == 64 and mem.ptr and mem.device_id == 0
    p = gp.cuda.MemoryPointer(mem.ptr, mem, 0)
    p.copy_from_host(host.ctypes.data, host.nbytes)
    back = np.empty_like(host)
    p.copy_to_host(ctypes.c_void_p(back.ctypes.data), back.nbytes)
    np.testing.assert_array_equal(back, host)
    a = gp.zeros(16, np.float32)
    a.data.copy_from_device(p + 8, 32)          # elements 2..9 into a[0:8]
    np.testing.assert_array_equal(a.get()[:8], host[2:10])
    a.data.copy_from(back, 16)                 # host memory by a NumPy array
    a.data.memset(0, 4)
    expect = back.copy()
    expect[8:] = 0
    expect[0] = 0
    np.testing.assert_array_equal(a.get()[:4], expect[:4])
    s = gp.cuda.Stream(non_blocking=True)
    p.memset_async(0, 64, stream=s)
    p.copy_to_host_async(back, 64, stream=s)
    s.synchronize()
    assert not back.any()
    with gp.cuda.Stream.ptds as st:
        assert gp.cuda.get_current_stream() is st and st.ptr == 2
        y = gp.arange(5.0) * 3
    gp.cuda.Stream.ptds.synchronize()
    np.testing.assert_array_equal(y.get(), np.arange(5.0) * 3)
