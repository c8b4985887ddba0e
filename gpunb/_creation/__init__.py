"""Array creation (NumPy's reference: "Array creation routines"): new arrays from shapes
(``basic``), from existing data (``from_data``), numerical ranges (``ranges``), coordinate
grids (``grids``) and matrices (``matrices``)."""
