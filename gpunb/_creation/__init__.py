"""Array creation (NumPy's reference: "Array creation routines"): new arrays from shapes
(``basic``), from existing data (``from_data``) and numerical ranges (``ranges``)."""
