"""Mathematical functions (NumPy's reference: "Mathematical functions"): the elementwise
ufuncs (``ufuncs``: one per line of the op table), sums and products (``sumprod``) and
``clip`` (``misc``)."""
