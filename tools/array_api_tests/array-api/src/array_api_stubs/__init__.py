# Vendored by gpunb: only the 2024.12 and 2025.12 stubs (the upstream file also imports
# 2021.12-2023.12 and the draft, which gpunb does not vendor).
from . import _2024_12, _2025_12
