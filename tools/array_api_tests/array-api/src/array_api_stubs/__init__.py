# Vendored by gpunb: only the 2025.12 stubs, the latest standard (the upstream file also imports
# 2021.12-2024.12 and the draft, which gpunb does not vendor).
from . import _2025_12
