"""One Dask worker per GPU on this machine (as ``dask_cuda.LocalCUDACluster``, without it)."""

from __future__ import annotations

import os

from distributed import LocalCluster


def _devices(devices) -> list[str]:
    if devices is None:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is not None:
            return [d.strip() for d in visible.split(",") if d.strip()]
        from gpunb.cuda.runtime import getDeviceCount     # cuInit only: no context is made

        return [str(i) for i in range(getDeviceCount())]
    if isinstance(devices, (int, str)):
        devices = [devices]
    return [str(d) for d in devices]


class LocalGPUCluster(LocalCluster):
    """A ``distributed.LocalCluster`` with one worker process per GPU.

    The constructing thread gets gpunb's CUDA context (where a GPU is), so that results
    arriving from the workers are usable there. Worker ``i`` starts with ``CUDA_VISIBLE_DEVICES`` listing ``devices[i]`` first (then the
    others, as dask-cuda does), so its gpunb arrays, kernels and memory pool live on that
    GPU, which it sees as device 0. Each worker has one thread (one stream of kernels per GPU;
    more threads only interleave launches) and registers gpunb with Dask before its first
    task (the ``gpunb.dask.hooks`` preload).

    Parameters
    ----------
    devices : int, str or list of them, optional
        The GPUs, as CUDA ordinals or UUIDs; default the visible ones
        (``CUDA_VISIBLE_DEVICES``, else every GPU).
    threads_per_worker : int, default 1
    processes : bool, default True
        False runs the one worker in this process, on its current GPU: only for one device
        (a process cannot hide GPUs from itself after CUDA has started).
    **kwargs
        ``distributed.LocalCluster``'s (``dashboard_address``, ``memory_limit``, ...).

    Examples
    --------
    >>> from distributed import Client
    >>> cluster = LocalGPUCluster()              # doctest: +SKIP
    >>> client = Client(cluster)                 # doctest: +SKIP
    >>> client.dashboard_link                    # doctest: +SKIP
    """

    def __init__(self, devices=None, *, threads_per_worker=1, processes=True, **kwargs):
        self._gpus = _devices(devices)
        if not self._gpus:
            raise ValueError("LocalGPUCluster needs at least one GPU (no device is visible)")
        if not processes and len(self._gpus) > 1:
            raise ValueError(f"processes=False runs one worker in this process, on one GPU, "
                             f"not {len(self._gpus)}: use processes=True")
        self._pin = processes
        preload = kwargs.pop("preload", None) or []
        preload = [preload] if isinstance(preload, str) else list(preload)
        super().__init__(n_workers=0, threads_per_worker=threads_per_worker,
                         processes=processes, preload=preload + ["gpunb.dask.hooks"], **kwargs)
        self.scale(len(self._gpus))
        if not self.asynchronous:
            self.sync(self._correct_state)

    @property
    def devices(self) -> list[str]:
        """The GPUs, one per worker, in worker order."""
        return list(self._gpus)

    def new_worker_spec(self):
        ((name, spec),) = super().new_worker_spec().items()
        options = dict(spec["options"])
        if self._pin:       # the first GPU no worker has (a replaced worker's), else round robin
            taken = [s["options"].get("env", {}).get("CUDA_VISIBLE_DEVICES", "").split(",")[0]
                     for s in self.worker_spec.values()]
            free = [i for i, g in enumerate(self._gpus) if g not in taken]
            i = free[0] if free else len(self.worker_spec) % len(self._gpus)
            order = self._gpus[i:] + self._gpus[:i]
            options["env"] = {**(options.get("env") or {}), "CUDA_VISIBLE_DEVICES": ",".join(order),
                              "GPUNB_DASK_WORKER": "1"}
        return {name: {**spec, "options": options}}
