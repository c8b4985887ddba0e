"""The array API standard (https://data-apis.org/array-api/) on gpunb: the device object and
its checks (:mod:`.devices`), the inspection API ``gpunb.__array_namespace_info__()``
(:mod:`.info`) and the functions whose standard names or signatures differ from NumPy's
(:mod:`.names`). ``gpunb`` itself is the namespace: ``x.__array_namespace__()`` returns it.
"""
