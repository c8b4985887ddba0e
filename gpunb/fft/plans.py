"""cuFFT plans for :mod:`gpunb.fft`: made once per layout, kept in an LRU cache with a size cap.

A plan is keyed by (device, stream, cuFFT type, sizes, input and output layouts, batch): a
lookup is one dict access, so a repeated call costs one exec call more than its argument
checks (CuPy's plan cache works the same way). Each plan is bound to the stream it was made
for (``cufftSetStream``) and takes its work area from gpunb's memory pool
(``cufftSetAutoAllocation(0)`` + ``cufftSetWorkArea``), so that memory shows in the pool and
is freed, stream-ordered, when the plan is evicted.

This is the only module of :mod:`gpunb.fft` that calls cuFFT; nvmath is imported on the
first plan (through :mod:`gpunb.core.runtime.mathlibs`), never at import.
"""

from __future__ import annotations

from collections import OrderedDict

from ..core.runtime import driver, mathlibs, memory

# cuFFT's types (cufftType) and the exec binding of each: (kind, double precision) -> (type, exec)
TYPES = {("c2c", False): (0x29, "exec_c2c"), ("c2c", True): (0x69, "exec_z2z"),
         ("r2c", False): (0x2a, "exec_r2c"), ("r2c", True): (0x6a, "exec_d2z"),
         ("c2r", False): (0x2c, "exec_c2r"), ("c2r", True): (0x6c, "exec_z2d")}
FORWARD, INVERSE = -1, 1    # CUFFT_FORWARD, CUFFT_INVERSE

DEFAULT_SIZE = 16           # plans kept (CuPy's default)


class Plan:
    """One cuFFT plan: ``handle``, its work area (a pool block, kept while the plan lives) and
    ``run(idata, odata[, direction])``, the bound exec binding."""

    __slots__ = ("key", "handle", "work", "nbytes", "run", "c2c", "_destroy")

    def __init__(self, key, handle, work, nbytes, run, c2c, destroy):
        self.key, self.handle, self.work, self.nbytes = key, handle, work, nbytes
        self.run, self.c2c, self._destroy = run, c2c, destroy

    def close(self) -> None:
        if self.handle is not None:
            handle, self.handle = self.handle, None
            self._destroy(handle)
            self.work = None    # back to the pool, ordered after the plan's last exec


class PlanCache:
    """The cuFFT plan cache (CuPy's ``cupy.fft.config.get_plan_cache()`` interface).

    ``size``: the most plans kept (0 disables caching: each plan is destroyed after its
    call); ``memsize``: the most bytes of work area the cached plans hold (-1: no limit).
    Least recently used plans go first. ``hits``, ``misses`` and ``made`` count lookups and
    plans created in this process.
    """

    def __init__(self, size: int = DEFAULT_SIZE, memsize: int = -1):
        self._plans: OrderedDict = OrderedDict()
        self._size = size
        self._memsize = memsize
        self._bytes = 0
        self.hits = 0
        self.misses = 0
        self.made = 0
        self.evicted = 0

    # -- the hot path ---------------------------------------------------------------------------

    def lookup(self, key):
        """The cached plan of ``key`` (counted as a hit, made most recent) or None."""
        plan = self._plans.get(key)
        if plan is not None:
            self.hits += 1
            self._plans.move_to_end(key)
        return plan

    def add(self, plan: Plan) -> bool:
        """Keep ``plan`` (a miss was counted by the caller) and evict past the caps. False when
        the cache keeps nothing (size 0, or the plan alone is over ``memsize``): the caller
        closes the plan after its call."""
        self.misses += 1
        self.made += 1
        if self._size == 0 or (self._memsize >= 0 and plan.nbytes > self._memsize):
            return False
        self._plans[plan.key] = plan
        self._bytes += plan.nbytes
        self._evict()
        return True

    def _evict(self) -> None:
        plans = self._plans
        while plans and (len(plans) > self._size
                         or (self._memsize >= 0 and self._bytes > self._memsize)):
            _, old = plans.popitem(last=False)
            self._bytes -= old.nbytes
            self.evicted += 1
            old.close()

    # -- CuPy's interface -----------------------------------------------------------------------

    def get_size(self) -> int:
        return self._size

    def set_size(self, size: int) -> None:
        size = int(size)
        if size < 0:
            raise ValueError("the plan cache size must be >= 0")
        self._size = size
        self._evict()

    def get_curr_size(self) -> int:
        return len(self._plans)

    def get_memsize(self) -> int:
        return self._memsize

    def set_memsize(self, memsize: int) -> None:
        memsize = int(memsize)
        if memsize < -1:
            raise ValueError("the plan cache memsize must be >= 0, or -1 for no limit")
        self._memsize = memsize
        self._evict()

    def get_curr_memsize(self) -> int:
        return self._bytes

    def clear(self) -> None:
        """Destroy every cached plan (the counters stay)."""
        plans, self._plans, self._bytes = self._plans, OrderedDict(), 0
        for plan in plans.values():
            plan.close()

    def summary(self) -> dict:
        return {"plans": len(self._plans), "bytes": self._bytes, "hits": self.hits,
                "misses": self.misses, "made": self.made, "evicted": self.evicted,
                "size": self._size, "memsize": self._memsize}

    def status_line(self) -> str:
        s = self.summary()
        cap = "no limit" if s["memsize"] < 0 else f"{s['memsize']:,} bytes"
        return (f"FFT plans: {s['plans']} of {s['size']} (hits {s['hits']}, misses {s['misses']}, "
                f"evicted {s['evicted']}; work areas {s['bytes']:,} bytes, cap {cap})")

    def show_info(self) -> None:
        print("gpunb cuFFT plan cache")
        print(f"  {self.status_line()}")
        for key, plan in self._plans.items():
            dev, stream, typ, n, *_rest, batch = key
            kind = {v[0]: k for k, v in TYPES.items()}.get(typ, (str(typ),))[0]
            print(f"  device {dev}, stream 0x{stream:x}: {kind} n={n} batch={batch}, "
                  f"work area {plan.nbytes:,} bytes")

    def __len__(self) -> int:
        return len(self._plans)

    def __repr__(self) -> str:
        return f"<gpunb.fft plan cache: {self.status_line()}>"


cache = PlanCache()


def key_of(kind_type: int, n, inembed, istride, idist, onembed, ostride, odist, batch):
    """The plan key of a layout on the current device and stream."""
    ctx = driver.active or driver.context()
    return (ctx.ordinal, driver.current_stream()[1], kind_type, n, inembed, istride, idist,
            onembed, ostride, odist, batch)


def make(key, double: bool, kind: str) -> tuple[Plan, bool]:
    """A new plan for ``key`` (as :func:`key_of` built it), bound to the current stream with
    its work area from the pool; returns (plan, kept in the cache)."""
    cufft = mathlibs.module("cufft")
    _, stream, typ, n, inembed, istride, idist, onembed, ostride, odist, batch = key
    with mathlibs.errors("cuFFT plan"):
        handle = cufft.create()
        try:
            cufft.set_auto_allocation(handle, 0)
            nbytes = cufft.make_plan_many64(handle, len(n), list(n), list(inembed), istride, idist,
                                            list(onembed), ostride, odist, typ, batch)
            work = None
            if nbytes:
                work = memory.get_default_memory_pool().malloc(nbytes)
                cufft.set_work_area(handle, int(work.ptr))
            cufft.set_stream(handle, stream)
        except BaseException:
            cufft.destroy(handle)
            raise
    plan = Plan(key, handle, work, int(nbytes), getattr(cufft, TYPES[(kind, double)][1]),
                kind == "c2c", cufft.destroy)
    return plan, cache.add(plan)


def get_plan_cache() -> PlanCache:
    return cache
