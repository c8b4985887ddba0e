"""Building kernels: NVRTC (``compiler``: ``compile(source, options, arch) -> bytes``), the
kernel cache (``cache``: memory and disk), compiling through it (``cached``:
``compile_cached``, the cache key), what a cubin holds (``cubin``) and a source declares
(``signature``), PTX/SASS/resources (``inspection``), and precompiling in parallel
(``warm``)."""
