"""gpunb's core pipeline, one module per stage, imports flowing one way:

``raw`` (RawModule/RawKernel) -> ``build`` (compile through the cache) -> ``compiler`` (NVRTC
compile) and ``cache`` (disk and memory) -> ``runtime`` (the only module that imports
cuda.core / cuda.bindings). ``events`` carries compile and cache events to the views.
"""
