"""Streams, events and DLPack.

The CPU tests export and import DLPack capsules of arrays that view a made-up address (nothing
is allocated or dereferenced) and exercise the current-stream plumbing through external stream
handles; the GPU tests run work on streams and exchange arrays with CuPy and PyTorch.
"""

import ctypes
import gc
import subprocess
import sys
import threading
import weakref

import numpy as np
import pytest

import gpunb as gp
from gpunb.core import interop
from gpunb.core.dtypes import SUPPORTED
from gpunb.core.errors import GPUUnavailableError
from gpunb.core.interop import from_dlpack
from gpunb.core.ndarray import MemoryPointer, ndarray
from gpunb.core.runtime import driver
from gpunb.core.runtime.stream import (Event, ExternalStream, Stream, current_stream_handle,
                                       get_current_stream, get_elapsed_time, order_stream)
from tests import data

ADDRESS = 0x10000
VERSIONS = [None, (1, 0), (1, 3)]
# gpunb's capsules are NumPy's (retargeted to CUDA): versioned ones from NumPy 2.1 on.
NUMPY_VERSIONED = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


class Owner:
    """Stands in for the buffer that owns an array's memory."""


def fake(shape, dtype="float32", order="C"):
    """A gpunb array viewing ADDRESS (no allocation) and a weakref to its memory's owner."""
    dt = np.dtype(dtype)
    owner = Owner()
    strides = np.empty(shape, dt, order=order).strides if 0 not in shape else \
        np.empty(shape, dt).strides
    a = ndarray._view(MemoryPointer(ADDRESS, owner, 0), shape, strides, dt, owner)
    return a, weakref.ref(owner)


def managed_of(capsule):
    """The DLManagedTensor(Versioned) inside an unconsumed capsule."""
    for name, struct in ((b"dltensor_versioned", interop._DLManagedTensorVersioned),
                         (b"dltensor", interop._DLManagedTensor)):
        if interop._capsule_is_valid(id(capsule), name):
            return struct.from_address(interop._capsule_get_pointer(id(capsule), name))
    raise AssertionError(f"not an unconsumed DLPack capsule: {capsule!r}")


def capsule_name(capsule) -> str:
    return repr(capsule).split('"')[1]


def collect():
    gc.collect()


# -- DLPack export: the struct --------------------------------------------------------------

@pytest.mark.parametrize("max_version", VERSIONS)
@pytest.mark.parametrize("dtype", SUPPORTED, ids=str)
def test_export_struct_every_dtype(dtype, max_version):
    a, _ = fake((3, 4), dtype)
    cap = a.__dlpack__(stream=-1, max_version=max_version)
    versioned = max_version is not None and NUMPY_VERSIONED
    assert capsule_name(cap) == ("dltensor_versioned" if versioned else "dltensor")
    m = managed_of(cap)
    if versioned:
        assert m.version.major == 1 and m.flags == 0
    t = m.dl_tensor
    assert t.data == ADDRESS and t.byte_offset == 0
    assert (t.device.device_type, t.device.device_id) == (2, 0)
    assert t.ndim == 2 and list(t.shape[:2]) == [3, 4]
    assert not t.strides or list(t.strides[:2]) == [4, 1]     # NULL: C-contiguous
    code = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}[dtype.kind]
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (code, 8 * dtype.itemsize, 1)


def test_export_strides_count_elements():
    a, _ = fake((4, 5, 6), "complex128")
    v = a[::-1, 1::2, ::-3]
    cap = v.__dlpack__(stream=-1)       # the struct lives as long as the capsule
    t = managed_of(cap).dl_tensor
    assert t.data == v.data.ptr
    assert list(t.shape[:3]) == list(v.shape)
    assert list(t.strides[:3]) == [s // 16 for s in v.strides] == [-30, 12, -3]


def test_export_0d():
    a, _ = fake((), "int64")
    cap = a.__dlpack__(stream=-1)
    t = managed_of(cap).dl_tensor
    assert t.ndim == 0 and t.data == ADDRESS


def test_export_rejects_strides_that_are_not_whole_elements():
    a, _ = fake((4, 6), "int8")
    v = ndarray._view(a.data, (4, 1), (6, 4), np.dtype("int32"), a)   # what .view(int32) of a[:, :4] gives
    with pytest.raises(BufferError, match="multiple of the itemsize 4"):
        v.__dlpack__(stream=-1)
    ok = ndarray._view(a.data, (1, 2), (6, 4), np.dtype("int32"), a)   # size-1 axis: any stride
    b = from_dlpack(ok.__dlpack__(stream=-1))
    assert b.shape == (1, 2) and b.strides[1] == 4 and b.data.ptr == ADDRESS


@pytest.mark.parametrize("stream", [0, -2, 1.0, "1", True])
def test_export_rejects_bad_stream(stream):
    a, _ = fake((3,))
    with pytest.raises((TypeError, ValueError)):
        a.__dlpack__(stream=stream)


def test_export_default_streams_need_no_gpu():
    # Nothing was launched: there is nothing to order, so no GPU is touched.
    a, _ = fake((3,))
    for stream in (None, 1, 2, -1):
        assert capsule_name(a.__dlpack__(stream=stream)) == "dltensor"


def test_export_devices():
    a, _ = fake((3,))
    assert a.__dlpack_device__() == (2, 0)
    assert capsule_name(a.__dlpack__(dl_device=(2, 0), stream=-1)) == "dltensor"
    with pytest.raises(BufferError, match="kDLCUDA"):
        a.__dlpack__(dl_device=(2, 1), stream=-1)
    with pytest.raises(BufferError, match="kDLROCM"):
        a.__dlpack__(dl_device=(10, 0), stream=-1)
    with pytest.raises(ValueError, match="copy=False"):
        a.__dlpack__(dl_device=(1, 0), copy=False)


# -- DLPack round trip and lifetime ---------------------------------------------------------

@pytest.mark.parametrize("max_version", VERSIONS)
@pytest.mark.parametrize("dtype", SUPPORTED, ids=str)
def test_roundtrip_every_dtype(dtype, max_version):
    a, alive = fake((2, 3, 4), dtype)
    b = from_dlpack(a.__dlpack__(stream=-1, max_version=max_version))
    assert (b.data.ptr, b.shape, b.strides, b.dtype) == (a.data.ptr, a.shape, a.strides, a.dtype)
    assert b.data.device_id == 0 and b.base is not None
    del a
    collect()
    assert alive() is not None      # b keeps the exporter's memory alive
    del b
    collect()
    assert alive() is None


@pytest.mark.parametrize("index", [
    (slice(None, None, -1),), (slice(1, None, 2), Ellipsis, 0), (Ellipsis, slice(None, None, -2)),
    (-1, slice(None), slice(None, None, -3)), (slice(2, 2),), (0, 0, 0), ()])
@pytest.mark.parametrize("order", ["C", "F"])
def test_roundtrip_views(index, order):
    a, alive = fake((4, 5, 6), "float64", order)
    v = a[index]
    for kwargs in ({}, {"max_version": (1, 0)}):
        b = from_dlpack(v.__dlpack__(stream=-1, **kwargs))
        assert (b.data.ptr, b.shape, b.strides, b.dtype) == (v.data.ptr, v.shape, v.strides, v.dtype)
    del a, v, b
    collect()
    assert alive() is None


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (1,), (1, 1)])
def test_roundtrip_0d_and_empty(shape):
    a, alive = fake(shape, "int16")
    b = from_dlpack(a)      # the protocol path: a.__dlpack__(stream=..., max_version=(1, 0))
    assert (b.shape, b.strides, b.dtype, b.size) == (a.shape, a.strides, a.dtype, a.size)
    del a, b
    collect()
    assert alive() is None


def test_from_dlpack_of_a_gpunb_array_is_a_view():
    a, alive = fake((5, 7), "complex64")
    v = a.T[::2]
    b = from_dlpack(v)
    assert (b.data.ptr, b.shape, b.strides, b.dtype) == (v.data.ptr, v.shape, v.strides, v.dtype)
    c = b[1:]           # views of the import keep the tensor too
    del a, v, b
    collect()
    assert alive() is not None
    del c
    collect()
    assert alive() is None


def test_cupy_older_spellings():
    """CuPy's ``x.toDlpack()`` and ``cupy.fromDlpack(capsule)``: the same capsule and import."""
    a, _ = fake((3, 4), "float32")
    b = gp.fromDlpack(a.toDlpack())
    assert gp.fromDlpack is gp.from_dlpack
    assert (b.data.ptr, b.shape, b.strides, b.dtype) == (a.data.ptr, a.shape, a.strides, a.dtype)


@pytest.mark.parametrize("max_version", VERSIONS)
def test_unconsumed_capsule_frees(max_version):
    a, alive = fake((3,))
    cap = a.__dlpack__(stream=-1, max_version=max_version)
    del a
    collect()
    assert alive() is not None      # the capsule owns the export until it is consumed or dropped
    del cap
    collect()
    assert alive() is None


def test_capsule_outlives_import():
    a, alive = fake((3,))
    cap = a.__dlpack__(stream=-1)
    b = from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor"
    del a, b
    collect()
    assert alive() is None          # the consumer owned the tensor; the used capsule holds nothing
    del cap
    collect()


def test_capsules_and_imports_dropped_while_an_exception_propagates():
    # The interpreter drops a call's evaluated arguments while the exception is pending; a
    # Python (ctypes) capsule destructor or deleter would crash it there.
    code = """if True:
        import gc, weakref
        import numpy as np
        from gpunb.core.interop import from_dlpack
        from gpunb.core.ndarray import MemoryPointer, ndarray

        class Owner: pass
        def f(*args): pass
        for how in ("unconsumed", "consumed", "imported", "versioned"):
            o = Owner()
            alive = weakref.ref(o)
            a = ndarray._view(MemoryPointer(0x10000, o), (3,), (8,), np.dtype("float64"), o)
            del o
            cap = a.__dlpack__(stream=-1, max_version=(1, 0) if how == "versioned" else None)
            del a
            try:
                if how == "consumed":
                    b = from_dlpack(cap)
                    f(cap, 1 / 0)
                elif how == "imported":
                    f(from_dlpack(cap), 1 / 0)
                else:
                    f(cap, 1 / 0)
            except ZeroDivisionError:
                pass
            else:
                raise AssertionError("the exception was lost")
            cap = b = None
            gc.collect()
            assert alive() is None, how
        print("ok")
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok" and not out.stderr, out


def test_capsule_consumed_once():
    a, _ = fake((3,))
    for kwargs in ({}, {"max_version": (1, 0)}):
        cap = a.__dlpack__(stream=-1, **kwargs)
        b = from_dlpack(cap)
        with pytest.raises(BufferError, match="already consumed"):
            from_dlpack(cap)
        assert b.shape == (3,)


# -- DLPack import of hand-made tensors ------------------------------------------------------

class HandMade:
    """A DLPack producer in ctypes with a deleter that counts its calls."""

    def __init__(self, shape=(2, 3), strides=None, code=2, bits=32, lanes=1, device=(2, 0),
                 versioned=False, flags=0, byte_offset=0, version=(1, 0)):
        self.calls = 0
        self._deleter = interop._DELETER(self._delete)    # kept alive by self
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * len(shape))(*strides)
        if versioned:
            self.m = interop._DLManagedTensorVersioned()
            self.m.version.major, self.m.version.minor = version
            self.m.flags = flags
        else:
            self.m = interop._DLManagedTensor()
        t = self.m.dl_tensor
        t.data = ADDRESS
        t.device.device_type, t.device.device_id = device
        t.ndim = len(shape)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, lanes
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        if self.strides is not None:
            t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = byte_offset
        self.m.deleter = ctypes.cast(self._deleter, ctypes.c_void_p).value
        self.name = b"dltensor_versioned" if versioned else b"dltensor"

    def _delete(self, address):
        assert address == ctypes.addressof(self.m)
        self.calls += 1

    def capsule(self):
        # No destructor: the test drops the capsule and counts the deleter's calls itself.
        return interop._capsule_new(ctypes.addressof(self.m), self.name, None)


@pytest.mark.parametrize("versioned", [False, True])
def test_import_calls_deleter_exactly_once(versioned):
    h = HandMade(shape=(4, 6), strides=(1, 4), byte_offset=8, versioned=versioned)
    cap = h.capsule()
    b = from_dlpack(cap)
    assert b.shape == (4, 6) and b.strides == (4, 16) and b.dtype == np.float32
    assert b.data.ptr == ADDRESS + 8
    views = [b[1:], b.T, b[::-1][0]]
    del b, cap
    collect()
    assert h.calls == 0
    del views
    collect()
    assert h.calls == 1


def test_import_null_strides_are_c_contiguous():
    b = from_dlpack(HandMade(shape=(2, 3, 4), code=5, bits=128).capsule())
    assert b.dtype == np.complex128 and b.strides == (192, 64, 16)


def test_import_managed_memory():
    b = from_dlpack(HandMade(device=(13, 0)).capsule())
    assert b.data.device_id == 0


@pytest.mark.parametrize("code, bits, lanes, name", [
    (4, 16, 1, "bfloat16"), (10, 8, 1, "float8_e4m3fn"), (2, 8, 1, "float8"), (0, 128, 1, "int128"),
    (2, 32, 4, "float32 x4 lanes"), (6, 1, 1, "bool1"), (3, 64, 1, "opaque handle")])
def test_import_rejects_unsupported_dtype(code, bits, lanes, name):
    h = HandMade(code=code, bits=bits, lanes=lanes)
    cap = h.capsule()
    with pytest.raises(BufferError, match=f"dtype {name} is not supported"):
        from_dlpack(cap)
    assert capsule_name(cap) == "dltensor"      # not consumed: its owner still frees it
    assert h.calls == 0


@pytest.mark.parametrize("device, name", [((1, 0), "kDLCPU"), ((3, 0), "kDLCUDAHost"),
                                          ((10, 1), "kDLROCM"), ((99, 0), "device type 99")])
def test_import_rejects_other_devices(device, name):
    cap = HandMade(device=device).capsule()
    with pytest.raises(BufferError, match=name):
        from_dlpack(cap)
    assert capsule_name(cap) == "dltensor"


def test_import_rejects_host_arrays_with_a_hint():
    x = np.arange(3.0)
    with pytest.raises(BufferError, match=r"kDLCPU.*gpunb\.asarray"):
        from_dlpack(x)
    with pytest.raises(BufferError, match=r"kDLCPU.*gpunb\.asarray"):
        from_dlpack(x.__dlpack__())


def test_import_read_only_and_versions():
    h = HandMade(versioned=True, flags=1)
    with pytest.raises(BufferError, match="read-only"):
        from_dlpack(h.capsule())
    with pytest.raises(BufferError, match="DLPack 2.0"):
        from_dlpack(HandMade(versioned=True, version=(2, 0)).capsule())
    b = from_dlpack(HandMade(versioned=True, version=(1, 3), flags=2).capsule())   # IS_COPIED
    assert b.shape == (2, 3)


def test_import_rejects_non_dlpack_objects():
    with pytest.raises(TypeError, match="no __dlpack__"):
        from_dlpack([1, 2, 3])
    with pytest.raises(TypeError, match="not a DLPack capsule"):
        from_dlpack(interop._capsule_new(1, b"something_else", None))
    a, _ = fake((3,))
    with pytest.raises(ValueError, match="device must be"):
        from_dlpack(a, device="gpu")
    with pytest.raises(BufferError, match="kDLCPU"):
        from_dlpack(a, device=(1, 0))
    with pytest.raises(BufferError, match=r"\(kDLCUDA, id 1\)"):      # the producer refuses
        from_dlpack(a, device="cuda:1")
    with pytest.raises(BufferError, match="not on the requested device 1"):
        from_dlpack(a.__dlpack__(stream=-1), device="cuda:1")
    assert from_dlpack(a, device=0).shape == (3,)


def test_import_asks_for_the_current_stream():
    seen = []

    class Producer:
        def __init__(self, legacy=False):
            self.legacy = legacy
            self.a, _ = fake((2,))

        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, *, stream=None, **kwargs):
            if self.legacy and kwargs:
                raise TypeError("unexpected keyword")
            seen.append((stream, kwargs))
            return self.a.__dlpack__(stream=-1, **kwargs)

    from_dlpack(Producer())
    assert seen[-1] == (1, {"max_version": (1, 0)})
    with ExternalStream(0x5000):
        from_dlpack(Producer(legacy=True))
    assert seen[-1] == (0x5000, {})


# -- streams without a GPU -------------------------------------------------------------------

def test_stream_and_event_need_a_gpu(no_gpu):
    with pytest.raises(GPUUnavailableError):
        Stream()
    with pytest.raises(GPUUnavailableError):
        Stream(non_blocking=True, priority=-1)
    with pytest.raises(GPUUnavailableError):
        Event()


def test_null_stream_touches_nothing():
    assert repr(Stream.null) == "<gpunb.Stream null>"
    assert get_current_stream() is Stream.null
    assert Stream.null == Stream.null


def test_current_stream_handle(monkeypatch):
    monkeypatch.delenv("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", raising=False)
    monkeypatch.setattr(driver, "active", None)       # gpunb has used no device yet
    assert current_stream_handle() == 1
    monkeypatch.setenv("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "1")
    assert current_stream_handle() == 2
    monkeypatch.setenv("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "0")
    assert current_stream_handle() == 1


def test_with_stream_sets_the_current_stream_per_thread():
    s1, s2 = ExternalStream(0x1000), ExternalStream(0x2000)
    assert driver._current.stream is None
    with s1 as entered:
        assert entered is s1 and get_current_stream() is s1
        assert int(driver.as_stream(None).handle) == 0x1000     # what every launch uses
        assert current_stream_handle() == 0x1000
        with s2:
            assert get_current_stream() is s2 and int(driver.as_stream(None).handle) == 0x2000
            with Stream.null:
                assert get_current_stream() is Stream.null and driver._current.stream is None
            assert get_current_stream() is s2
            other = []
            t = threading.Thread(target=lambda: other.append(
                (get_current_stream(), driver._current.stream, current_stream_handle())))
            t.start()
            t.join()
            assert other[0][:2] == (Stream.null, None)
        assert get_current_stream() is s1
    assert get_current_stream() is Stream.null and driver._current.stream is None


def test_use_and_stream_identity():
    s = ExternalStream(0x3000)
    try:
        assert s.use() is s and get_current_stream() is s
        assert s.ptr == 0x3000 and s.__cuda_stream__() == (0, 0x3000)
        assert s == ExternalStream(0x3000) and s != ExternalStream(0x3001)
        assert hash(s) == hash(ExternalStream(0x3000))
        assert driver.as_stream(s) is s._core_stream()
        assert repr(s) == "<gpunb.ExternalStream 0x3000>"
        assert ExternalStream(s).ptr == 0x3000      # anything with __cuda_stream__
    finally:
        Stream.null.use()
    assert get_current_stream() is Stream.null
    with pytest.raises(TypeError):
        ExternalStream(None)


def test_order_stream_without_work_is_a_no_op(monkeypatch):
    monkeypatch.setattr(driver, "active", None)       # gpunb has used no device yet
    for consumer in (None, 1, 2, -1, 0x1234):
        order_stream(consumer)      # gpunb has queued nothing: touches no GPU


def test_lazy_import():
    code = ("import sys, gpunb; gpunb.ndarray; import gpunb.core.interop, gpunb.core.runtime.stream;"
            "a = [m for m in sys.modules if m.startswith('cuda')]; assert not a, a")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- GPU -------------------------------------------------------------------------------------

gpu = pytest.mark.gpu


def _gp():
    import gpunb

    return gpunb


def _rand(shape, dtype, seed=0):
    return data.rand(shape, dtype, rng=np.random.default_rng(seed), scale=3, bound=100)


@gpu
def test_gpu_with_stream_runs_work_on_it():
    gp = _gp()
    x = _rand((1000, 257), "float32")
    g = gp.asarray(x)
    s = Stream(non_blocking=True)
    s.wait_event(Stream.null.record())   # a non-blocking stream waits for the upload explicitly
    with s:
        assert get_current_stream() is s
        assert driver.as_stream(None) is s._core_stream()
        y = gp.sqrt(gp.abs(g)) * 2 + 1
        h = y.get()             # copies on s and waits for s
    s.synchronize()
    assert s.done and s.query()
    np.testing.assert_allclose(h, np.sqrt(np.abs(x)) * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(y.get(), h)


@gpu
def test_gpu_nested_streams_restore():
    gp = _gp()
    s1, s2 = Stream(), Stream(non_blocking=True)
    with s1:
        a = gp.arange(10, dtype="int64") * 3
        with s2:
            s2.wait_event(s1.record())
            b = a + 1
            assert get_current_stream() is s2
        assert get_current_stream() is s1
        s1.wait_event(s2.record())
        c = b * 2
    assert get_current_stream() is Stream.null
    np.testing.assert_array_equal(c.get(), (np.arange(10) * 3 + 1) * 2)
    assert s1 != s2 and s1 == s1 and Stream.null.ptr in (0, 1, 2)


@gpu
def test_gpu_events_time_work():
    gp = _gp()
    x = gp.ones(1 << 24, dtype="float32")
    start, end = Event(), Event()
    start.record()
    for _ in range(5):
        x = gp.sqrt(x) + 1
    end.record()
    end.synchronize()
    assert start.done and end.done and end.query()
    t = get_elapsed_time(start, end)
    assert t > 0
    assert end - start == pytest.approx(t)
    s = Stream()
    e = s.record()
    e.synchronize()
    assert Event(disable_timing=True, block=True).ptr != 0


@gpu
def test_gpu_dlpack_orders_the_consumer_stream():
    # The producer's stream is gpunb's current one at export: the consumer's waits for it.
    gp = _gp()
    n = 1 << 22
    s, consumer = Stream(non_blocking=True), Stream(non_blocking=True)
    with s:
        y = gp.arange(n, dtype="float64") * 0.5
        legacy = y.__dlpack__(stream=1)
        other = y.__dlpack__(stream=consumer.ptr)
        same = y.__dlpack__(stream=s.ptr)
    np.testing.assert_array_equal(from_dlpack(legacy).get(), np.arange(n) * 0.5)   # on legacy
    with consumer:
        h = from_dlpack(other).get()
    np.testing.assert_array_equal(h, np.arange(n) * 0.5)
    with s:
        np.testing.assert_array_equal(from_dlpack(same).get(), np.arange(n) * 0.5)


@gpu
@pytest.mark.parametrize("dtype", SUPPORTED, ids=str)
def test_gpu_dlpack_roundtrip_gpunb(dtype):
    gp = _gp()
    x = _rand((6, 5), dtype)
    g = gp.asarray(x)
    for v, e in ((g, x), (g[::-1, 1::2], x[::-1, 1::2]), (g.T, x.T)):
        b = from_dlpack(v)
        assert b.data.ptr == v.data.ptr and b.strides == v.strides
        np.testing.assert_array_equal(b.get(), e)
    b = from_dlpack(g)
    b[...] = gp.asarray(x[::-1])
    np.testing.assert_array_equal(g.get(), x[::-1])


@gpu
@pytest.mark.parametrize("dtype", SUPPORTED, ids=str)
def test_gpu_dlpack_cupy_both_ways(dtype):
    cupy = pytest.importorskip("cupy")
    gp = _gp()
    x = _rand((8, 6), dtype)
    g = gp.asarray(x)
    for v, e in ((g, x), (g[::-2, 1:], x[::-2, 1:]), (g.T, x.T)):
        c = cupy.from_dlpack(v)
        assert c.data.ptr == v.data.ptr
        assert c.strides == v.strides and c.dtype == v.dtype
        np.testing.assert_array_equal(cupy.asnumpy(c), e)
    c = cupy.from_dlpack(g)
    c[...] = cupy.asarray(x[::-1])          # written through CuPy, read through gpunb
    cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(g.get(), x[::-1])

    cx = cupy.asarray(x)
    for cv, e in ((cx, x), (cx[1::2, 1:], x[1::2, 1:]), (cx.T, x.T)):
        b = from_dlpack(cv)
        assert b.data.ptr == cv.data.ptr and b.strides == cv.strides
        np.testing.assert_array_equal(b.get(), e)
    # CuPy 14 exports a negative stride divided as unsigned ((2**64 - 4) // 4 elements):
    # gpunb must import it correctly where CuPy gets it right, and refuse it otherwise.
    neg = cx[1::2, ::-1]
    try:
        b = from_dlpack(neg)
    except BufferError as err:
        assert "implausible strides" in str(err)
    else:
        assert b.strides == neg.strides
        np.testing.assert_array_equal(b.get(), x[1::2, ::-1])
    b = from_dlpack(cx)
    b[...] = gp.asarray(x[::-1])    # written through gpunb, read through CuPy
    driver.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(cx), x[::-1])


@gpu
def test_gpu_dlpack_cupy_lifetime():
    cupy = pytest.importorskip("cupy")
    gp = _gp()
    g = gp.arange(100, dtype="int32")
    alive = weakref.ref(g)
    c = cupy.from_dlpack(g)
    del g
    collect()
    assert alive() is not None
    np.testing.assert_array_equal(cupy.asnumpy(c), np.arange(100))
    del c
    collect()
    assert alive() is None


_TORCH_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32",
                 "float64", "complex64", "complex128"]


@gpu
@pytest.mark.parametrize("dtype", _TORCH_DTYPES)
def test_gpu_dlpack_torch_both_ways(dtype):
    try:
        import torch
    except Exception as e:      # absent, or installed but failing to import (seen on a GPU box)
        pytest.skip(f"PyTorch is not usable here: {type(e).__name__}: {e}")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA here")
    gp = _gp()
    x = _rand((8, 6), dtype)
    g = gp.asarray(x)
    for v, e in ((g, x), (g[::2, 1:], x[::2, 1:]), (g.T, x.T)):   # torch has no negative strides
        t = torch.from_dlpack(v)
        assert t.data_ptr() == v.data.ptr
        assert tuple(s * t.element_size() for s in t.stride()) == v.strides
        np.testing.assert_array_equal(t.cpu().numpy(), e)
    t = torch.from_dlpack(g)
    t.copy_(torch.from_numpy(np.ascontiguousarray(x[::-1])).cuda())
    torch.cuda.synchronize()
    np.testing.assert_array_equal(g.get(), x[::-1])

    tx = torch.from_numpy(x).cuda()
    for tv, e in ((tx, x), (tx[1::2, 2:], x[1::2, 2:]), (tx.t(), x.T)):
        b = from_dlpack(tv)
        assert b.data.ptr == tv.data_ptr()
        np.testing.assert_array_equal(b.get(), e)
    b = from_dlpack(tx)
    b[...] = gp.asarray(x[::-1])
    driver.synchronize()
    np.testing.assert_array_equal(tx.cpu().numpy(), x[::-1])


@gpu
def test_gpu_dlpack_to_host_numpy():
    if np.lib.NumpyVersion(np.__version__) < "2.1.0":
        pytest.skip("numpy.from_dlpack(device='cpu') needs NumPy 2.1")
    gp = _gp()
    x = _rand((4, 5), "float32")
    g = gp.asarray(x)
    np.testing.assert_array_equal(np.from_dlpack(g[::-1], device="cpu"), x[::-1])
