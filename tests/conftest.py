import os

import pytest


def _gpu_reason():
    from gpunb.core.errors import GPUUnavailableError
    from gpunb.core.runtime import driver

    try:
        driver.device_info()
    except GPUUnavailableError as e:
        return e.reason
    return None


def pytest_collection_modifyitems(config, items):
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    reason = _gpu_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {reason}")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)


def libcuda_loadable() -> bool:
    """Whether a driver library is present (the reason for no GPU may be another)."""
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


@pytest.fixture
def no_gpu():
    """The reason there is no usable GPU; skips the test where one is present."""
    reason = _gpu_reason()
    if reason is None:
        pytest.skip("a usable GPU is present")
    return reason


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh kernel cache directory, used by this process's default cache and by child
    processes (through GPUNB_CACHE_DIR)."""
    from gpunb.core.build import cache

    d = tmp_path / "kernels"
    monkeypatch.setenv("GPUNB_CACHE_DIR", str(d))
    old = cache.set_kernel_cache(None)
    yield d
    cache.set_kernel_cache(old)


@pytest.fixture(autouse=True)
def _isolated_default_cache(tmp_path_factory, monkeypatch):
    # No test writes into the user's real cache directory.
    if "GPUNB_CACHE_DIR" not in os.environ:
        monkeypatch.setenv("GPUNB_CACHE_DIR", str(tmp_path_factory.mktemp("default-cache")))
    from gpunb.core.build import cache

    old = cache.set_kernel_cache(None)
    yield
    cache.set_kernel_cache(old)


ARCH = "sm_90"
